"""The structured-output mode is configuration, never remembered state: replays in any order.

The fake server plays llama-cpp-python: a ``json_schema`` response format is refused with
its 500, JSON mode is answered. One judge adapter is shared by three scenarios. Recorded
serially, the tape replays reversed, as a subset and in parallel with zero misses, because
every call sends the requests its own recording holds (an adapter that remembered the
fallback sent ``json_object`` first in the later scenarios, so a replay that began with
another scenario missed). With the mode configured, no request is refused at all.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from tests.replay.cassette_support import ConnectionCounter

from scenarist import CheckStatus, Conformity, Scenario, Suite
from scenarist.errors import ProviderError
from scenarist.model.results import SuiteResult
from scenarist.providers import OpenAIProvider
from scenarist.providers.resolve import resolve_provider
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

LLAMA_CPP_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)
NAMES = ["first", "second", "third"]


def llama_cpp_like(request: FakeRequest) -> Reply:
    kind = (request.body.get("response_format") or {}).get("type")
    if kind == "json_schema":
        return Reply(status=500, error=LLAMA_CPP_REJECTION)
    rule = request.body["messages"][-1]["content"]
    which = next(name for name in NAMES if f"rule {name}" in rule)
    reason = f"The {which} answer follows its rule."
    return Reply(json.dumps({"passed": True, "reason": reason}))


def suite(judge: Any, names: list[str] = NAMES) -> Suite:
    scenarios = [
        Scenario(name)
        .interact(inputs="q", outputs=f"answer {name}")
        .check(Conformity(rule=f"rule {name}", judge=judge))
        for name in names
    ]
    return Suite(name="modes", scenarios=scenarios)


def verdicts(result: SuiteResult) -> dict[str, tuple[CheckStatus, str | None]]:
    return {
        r.scenario_name: (r.steps[0].results[0].status, r.steps[0].results[0].message)
        for r in result.results
    }


@pytest.fixture
def tape(tmp_path: Path) -> tuple[Path, dict[str, tuple[CheckStatus, str | None]]]:
    path = tmp_path / "modes.jsonl"
    with FakeLLMServer(ScriptedLLM(llama_cpp_like)) as server:
        judge = OpenAIProvider("smollm2", base_url=server.openai_url, api_key="unused")
        with cassette(path, mode="record"):
            live = suite(judge).run_sync()
        kinds = [r.body["response_format"]["type"] for r in server.requests]
    # each call probes on its own: nothing learnt by the first scenario changes the others
    assert kinds == ["json_schema", "json_object"] * 3
    assert all(status is CheckStatus.PASS for status, _ in verdicts(live).values())
    return path, verdicts(live)


@pytest.mark.parametrize(
    ("names", "parallel"),
    [
        pytest.param(NAMES[::-1], False, id="reversed"),
        pytest.param(["third"], False, id="subset"),
        pytest.param(["second", "third"], False, id="subset-of-two"),
        pytest.param(NAMES, True, id="parallel"),
    ],
)
def test_a_serial_tape_replays_in_any_order_subset_or_concurrency(
    tape: tuple[Path, dict[str, tuple[CheckStatus, str | None]]],
    names: list[str],
    parallel: bool,
) -> None:
    path, live = tape
    with ConnectionCounter() as port:
        # a fresh adapter, as in a new process (pytest -k, scenarist run --parallel 4)
        judge = OpenAIProvider("smollm2", base_url=port.openai_url, api_key="unused")
        with cassette(path, mode="replay") as replay:
            result = suite(judge, names).run_sync(parallel=parallel, max_concurrency=4)
        assert port.connections == 0
    stats = replay.stats
    assert (stats.missed, stats.live, stats.refused) == (0, 0, 0)
    assert stats.replayed == 2 * len(names)
    assert verdicts(result) == {name: live[name] for name in names}


def test_a_configured_mode_sends_no_refused_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCENARIST_LLAMACPP_STRUCTURED_OUTPUT", "json_object")
    with FakeLLMServer(ScriptedLLM(llama_cpp_like)) as server:
        monkeypatch.setenv("SCENARIST_LLAMACPP_BASE_URL", server.openai_url)
        judge = resolve_provider("llamacpp/smollm2")
        assert isinstance(judge, OpenAIProvider) and judge.structured_mode == "json_object"
        result = suite(judge).run_sync()
        kinds = [r.body["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_object"] * 3  # no wasted 500, not even for a fresh adapter
    assert all(status is CheckStatus.PASS for status, _ in verdicts(result).values())


def test_an_explicit_mode_the_server_refuses_names_the_setting() -> None:
    with FakeLLMServer(ScriptedLLM(llama_cpp_like)) as server:
        judge = OpenAIProvider(
            "smollm2", base_url=server.openai_url, api_key="unused", structured_mode="json_schema"
        )
        result = suite(judge, ["first"]).run_sync(return_exception=True)
        assert len(server.requests) == 1  # no silent fallback when a mode was chosen
    check = result.results[0].steps[0].results[0]
    assert check.status is CheckStatus.ERROR
    assert "refused response_format 'json_schema'" in (check.message or "")
    assert "set SCENARIST_OPENAI_STRUCTURED_OUTPUT to one the server accepts" in (
        check.message or ""
    )


def test_auto_fallback_warns_once_with_the_setting(caplog: pytest.LogCaptureFixture) -> None:
    with FakeLLMServer(ScriptedLLM(llama_cpp_like)) as server:
        judge = OpenAIProvider("smollm2", provider="warned", base_url=server.openai_url)
        with caplog.at_level(logging.WARNING, logger="scenarist.providers"):
            suite(judge).run_sync()
    warnings = [r.getMessage() for r in caplog.records if r.name == "scenarist.providers"]
    assert len(warnings) == 1
    assert "set SCENARIST_WARNED_STRUCTURED_OUTPUT=json_object" in warnings[0]


@pytest.mark.parametrize(
    ("env", "argument", "message"),
    [
        ("jsonschema", None, "SCENARIST_OPENAI_STRUCTURED_OUTPUT='jsonschema' is not"),
        (None, "strict", "structured_mode='strict' is not"),
    ],
)
def test_an_unknown_mode_is_an_error_naming_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, env: str | None, argument: Any, message: str
) -> None:
    if env is not None:
        monkeypatch.setenv("SCENARIST_OPENAI_STRUCTURED_OUTPUT", env)
    with pytest.raises(ProviderError, match=message) as caught:
        OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", structured_mode=argument)
    assert "auto, json_schema, json_object, instruction" in str(caught.value)
