"""giskard-checks 1.0.6 names and printing: statuses, interaction equality, ``builtin`` and
``judges`` modules, the legacy ``generator=`` field, ``RegoPolicy``. Each behaviour was
observed black-box on giskard-checks; the code here is ours."""

from __future__ import annotations

import builtins
import importlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from scenarist import (
    CheckStatus,
    Equals,
    Groundedness,
    Interaction,
    RegoPolicy,
    Scenario,
    ScenarioStatus,
    Suite,
    TestCaseStatus,
    Trace,
)
from scenarist.model.trace import Span

pytestmark = pytest.mark.anyio

POLICY = """package shop

allow if input.role == "admin"
deny := input.role == "guest"
limit := 3
"""


@pytest.mark.parametrize("enum", [CheckStatus, TestCaseStatus, ScenarioStatus])
def test_statuses_print_as_giskard_but_stay_their_plain_values(enum: Any) -> None:
    for member in enum:
        shown = f"{enum.__name__}.{member.name}"
        assert f"{member}" == str(member) == format(member) == shown
        assert f"{member:>30}" == shown.rjust(30)
        assert member == member.value and hash(member) == hash(member.value)
        assert json.dumps({"s": member}) == json.dumps({"s": member.value})
        assert enum(member.value) is member


async def test_reports_run_logs_and_json_keep_the_plain_status_values() -> None:
    suite = Suite(name="plain")
    suite.append(
        Scenario(name="bad").interact(inputs="a", outputs="b").check(Equals(expected_value="x"))
    )
    result = await suite.run(verbose=False)
    dumped = result.model_dump(mode="json")
    assert dumped["results"][0]["status"] == "fail"
    assert dumped["results"][0]["steps"][0]["results"][0]["status"] == "fail"
    assert result.to_hub_format()["results"][0]["status"] == "fail"
    assert "CheckStatus" not in result.to_junit_xml()
    assert f"{result.results[0].status}" == "ScenarioStatus.FAIL"


async def test_a_final_trace_interaction_equals_the_one_built_by_hand() -> None:
    result = await Scenario(name="eq").interact(inputs="hi", outputs=lambda inputs: "yo").run()
    (observed,) = result.final_trace.interactions
    assert observed.started_at is not None and observed.duration_ms is not None
    assert observed == Interaction(inputs="hi", outputs="yo")
    assert observed == Interaction[str, str](inputs="hi", outputs="yo")
    assert result.final_trace == Trace(interactions=[Interaction(inputs="hi", outputs="yo")])
    assert observed != Interaction(inputs="hi", outputs="yo!")
    assert observed != Interaction(inputs="hi", outputs="yo", metadata={"k": 1})


def test_interaction_equality_ignores_timing_and_spans_only() -> None:
    span = Span(span_id="1", name="llm", kind="llm")
    timed = Interaction(
        inputs="q", outputs="a", spans=[span], started_at=datetime.now(UTC), duration_ms=12.5
    )
    plain = Interaction(inputs="q", outputs="a")
    assert timed == plain and hash(timed) == hash(plain)
    failed = Interaction(inputs="q", outputs="a", error={"message": "boom", "type": "E"})
    assert failed != plain  # what the system answered (or failed with) is still compared


def test_builtin_and_judges_import_as_giskard_modules() -> None:
    builtin = importlib.import_module("scenarist.builtin")
    for name in ("Equals", "AllOf", "JsonValid", "RegexMatching", "SemanticSimilarity"):
        assert getattr(builtin, name) is getattr(importlib.import_module("scenarist"), name)
    assert builtin.RegoPolicy is RegoPolicy
    judges = importlib.import_module("scenarist.judges")
    for name in ("Groundedness", "LLMJudge", "BaseLLMCheck", "LLMCheckResult", "Toxicity"):
        assert hasattr(judges, name)


def test_llm_checks_accept_the_legacy_generator_field() -> None:
    check = Groundedness(generator="openai/gpt-4o-mini", context="ctx")
    assert check.judge == "openai/gpt-4o-mini"
    loaded = Groundedness.model_validate(
        {"kind": "groundedness", "generator": None, "context": "c"}
    )
    assert loaded.judge is None
    with pytest.raises(ValueError, match="judge= or its legacy name generator=, not both"):
        Groundedness(generator="openai/a", judge="openai/b", context="ctx")


async def _rego(rule: str, outputs: Any, **extra: Any) -> Any:
    trace = await Trace.from_interactions(Interaction(inputs="q", outputs=outputs))
    return await RegoPolicy(policy=POLICY, rule=rule, **extra).run(trace)


async def test_rego_policy_verdicts() -> None:
    passed = await _rego("data.shop.allow", {"role": "admin"})
    assert (passed.status, passed.message) == ("pass", "Rule 'data.shop.allow' evaluated to true.")
    assert passed.details["input"] == {"role": "admin"} and passed.details["value"] is True
    undefined = await _rego("data.shop.allow", {"role": "guest"})
    assert (undefined.status, undefined.message) == ("fail", "Rule 'data.shop.allow' is undefined.")
    false = await _rego("data.shop.deny", {"role": "admin"})
    assert (false.status, false.message) == ("fail", "Rule 'data.shop.deny' evaluated to false.")
    number = await _rego("data.shop.limit", "anything")
    assert number.status == "error"
    assert number.message == "Rule 'data.shop.limit' returned float, expected bool or undefined."
    missing = await _rego("data.shop.allow", {"role": "admin"}, target_key="trace.last.outputs.x")
    assert (missing.status, missing.message) == (
        "error",
        "No value found for key 'trace.last.outputs.x'.",
    )


async def test_rego_policy_data_document_and_round_trip() -> None:
    policy = "package acl\n\nallow if input.user in data.users\n"
    check = RegoPolicy(policy=policy, rule="data.acl.allow", data={"users": ["ann"]})
    trace = await Trace.from_interactions(Interaction(inputs="q", outputs={"user": "ann"}))
    assert (await check.run(trace)).passed
    again = RegoPolicy.model_validate(check.model_dump(mode="json"))
    assert again == check and (await again.run(trace)).passed


def test_rego_policy_is_checked_when_built(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=r"Invalid Rego policy or data: .*unclosed"):
        RegoPolicy(policy="package p\nallow if {", rule="data.p.allow")
    assert capfd.readouterr().out == ""  # the engine's own printout is captured
    with pytest.raises(ValueError, match=r"Rule path must start with 'data\.'"):
        RegoPolicy(policy=POLICY, rule="shop.allow")


def test_rego_policy_without_its_extra_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_import = builtins.__import__

    def no_regopy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "regopy":
            raise ImportError("No module named 'regopy'", name="regopy")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_regopy)
    with pytest.raises(ImportError, match=r"pip install 'scenarist\[rego\]'"):
        RegoPolicy(policy=POLICY, rule="data.shop.allow")
