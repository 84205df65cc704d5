"""Judges inside real runs: a Scenario, a Veval-style item, a real SDK adapter, bad setups."""

from __future__ import annotations

import json
import sys

import pytest

from scenarist import CheckStatus, Conformity, Groundedness, Scenario, TraceAssert
from scenarist.testing.fake_providers import FakeLLMServer

from .conftest import FakeProvider, verdict


def test_groundedness_in_a_scenario_with_a_fake_judge() -> None:
    judge = FakeProvider(verdict(False, "The 60-day window is not in the context.", 0.2))
    result = (
        Scenario("refund policy")
        .interact(
            inputs="How long do I have to return shoes?",
            outputs="You have 60 days.",
            metadata={"context": "Returns are accepted within 30 days."},
        )
        .check(Groundedness(name="grounded", judge=judge))
        .run_sync()
    )
    assert result.status == "fail"
    check = result.steps[0].results[0]
    assert check.status is CheckStatus.FAIL
    assert check.message == "The 60-day window is not in the context."
    assert check.details["check_name"] == "grounded"
    assert check.details["check_kind"] == "groundedness"
    assert "<answer>\nYou have 60 days.\n</answer>" in judge.prompt


def test_judge_with_the_openai_adapter_against_a_fake_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = json.dumps({"passed": True, "reason": "Courteous from start to end.", "score": 0.95})
    with FakeLLMServer([reply]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        result = (
            Scenario("polite")
            .interact(inputs="hi", outputs="Hello! How can I help?")
            .check(Conformity(rule="Be polite.", judge="openai/gpt-4o-mini"))
            .run_sync()
        )
        assert len(server.requests) == 1
    check = result.steps[0].results[0]
    assert check.status is CheckStatus.PASS, check.message
    assert check.message == "Courteous from start to end."
    assert check.details["judge"]["name"] == "openai/gpt-4o-mini"
    assert check.details["judge"]["calls"] == 1


def test_missing_api_key_is_an_error_saying_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SCENARIST_OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    result = (
        Scenario("no key")
        .interact(inputs="hi", outputs="hello")
        .check(Conformity(rule="Be polite.", judge="openai/gpt-4o-mini"))
        .run_sync()
    )
    check = result.steps[0].results[0]
    assert check.status is CheckStatus.ERROR
    assert "set the OPENAI_API_KEY environment variable" in check.message
    assert check.details["exception_type"] == "ProviderError"


def test_missing_sdk_is_an_error_saying_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic → ImportError
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    result = (
        Scenario("no sdk")
        .interact(inputs="hi", outputs="hello")
        .check(TraceAssert.judge("Is polite", model="anthropic/claude-haiku-4-5"))
        .run_sync()
    )
    check = result.steps[0].results[0]
    assert check.status is CheckStatus.ERROR
    assert check.message.startswith("Judge: evaluation failed — ")
    assert "pip install 'scenarist[anthropic]'" in check.message


@pytest.mark.anyio
async def test_trace_assert_judge_as_a_veval_item_assertion(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from scenarist import Client, ScenarioItem

    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    judge = FakeProvider(verdict(False, "The reply is rude.", 0.3))
    client = Client()

    async def agent(ctx: object) -> str:
        return "go away"

    run = await client.run_scenario_async(
        "politeness",
        agent,
        [TraceAssert.judge("Is polite", model=judge)],
        items=[ScenarioItem(input="hi")],
    )
    assert run.results[0].failures == ["Judge: Is polite (score 0.30) — The reply is rude."]
