"""Judge and simulated-user calls go through the same cassettes as the agent's own calls.

A scenario is run once under ``cassette(path, mode="record")`` against the fake
OpenAI-compatible server: the agent's LLM call, the judge's verdict request and the
simulated user's turns all land in one file. The server is then stopped and the same
scenario runs under ``mode="replay"``: same verdict, same conversation, nothing reaches
any server. A rubric or answer that changed since the recording is a replay miss, so the
check is ERROR (never a stale PASS) and the network is still never called.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from tests.replay.cassette_support import ConnectionCounter

from scenarist import CheckStatus, Conformity, Groundedness, Scenario, TraceAssert, UserSimulator
from scenarist.checks.base import Check
from scenarist.errors import ReplayMissError
from scenarist.model.results import CheckResult, ScenarioResult
from scenarist.providers import OpenAIProvider
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

API_KEY = "sk-test"
MODEL = "gpt-4o-mini"
QUESTION = "How long do I have to return shoes?"
CONTEXT = "Returns are accepted within 30 days of delivery."
AGENT_ANSWER = "You have 30 days from delivery to return them."
VERDICT = {"passed": True, "reason": "The 30-day window is in the context.", "score": 0.9}


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SCENARIST_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)


def _schema_properties(request: FakeRequest) -> set[str]:
    """The properties of the JSON schema a structured request asks for (empty: plain chat)."""
    body = request.body if isinstance(request.body, dict) else {}
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    return set(schema.get("properties", {}))


def model_script() -> ScriptedLLM:
    """One fake model for three roles, told apart by what the request asks for:
    the judge (verdict schema), the simulated user (turn schema) and the agent (plain chat).
    The simulated user speaks twice, then reaches its goal."""
    user_turns = iter(
        [
            {"goal_reached": False, "message": "My order 12 arrived broken."},
            {"goal_reached": False, "message": "Yes, please refund it."},
        ]
    )

    def answer(request: FakeRequest) -> Reply:
        properties = _schema_properties(request)
        if "passed" in properties:
            return Reply(json.dumps(VERDICT), tokens_in=120, tokens_out=18)
        if "goal_reached" in properties:
            turn = next(user_turns, {"goal_reached": True, "message": ""})
            return Reply(json.dumps(turn), tokens_in=60, tokens_out=12)
        if request.text == QUESTION:
            return Reply(AGENT_ANSWER, tokens_in=20, tokens_out=11)
        return Reply(f"Sorry to hear that. About: {request.text}", tokens_in=15, tokens_out=9)

    return ScriptedLLM(answer)


def llm_agent(base_url: str, suffix: str = "") -> Callable[[str], Any]:
    """An agent that asks the model (through the official SDK) and returns its answer;
    ``suffix`` stands for a code change that alters the answer after the model call."""

    async def agent(inputs: str) -> str:
        async with openai.AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0) as llm:
            reply = await llm.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": inputs}]
            )
        return (reply.choices[0].message.content or "") + suffix

    return agent


def judge_at(base_url: str) -> OpenAIProvider:
    return OpenAIProvider(MODEL, api_key=API_KEY, base_url=base_url)


JudgeFactory = Callable[[str, str], Check]

JUDGES: dict[str, JudgeFactory] = {
    "groundedness": lambda url, context: Groundedness(
        name="grounded", judge=judge_at(url), context=context
    ),
    "trace_assert_judge": lambda url, context: TraceAssert.judge(
        f"The answer agrees with this policy: {context}", model=judge_at(url), name="grounded"
    ),
}


def refund_scenario(
    base_url: str, make_judge: JudgeFactory, *, context: str = CONTEXT, suffix: str = ""
) -> Scenario[Any, Any]:
    return (
        Scenario("refund window")
        .interact(inputs=QUESTION, outputs=llm_agent(base_url, suffix))
        .check(make_judge(base_url, context))
    )


def only_check(result: ScenarioResult) -> CheckResult:
    (step,) = result.steps
    (check,) = step.results
    return check


def comparable(check: CheckResult) -> dict[str, Any]:
    """What a re-judged verdict must reproduce (durations aside)."""
    return {
        "status": check.status,
        "message": check.message,
        "verdict": check.details["verdict"],
        "prompt": check.details["prompt"],
        "metrics": {m.name: m.value for m in check.metrics},
    }


Recorder = Callable[[JudgeFactory], tuple[Path, str, ScenarioResult]]


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Recorder]:
    """Record a refund scenario with the fake server up, then stop the server.

    Returns the cassette, the (now dead) base URL the scenario used, and the recorded
    result; the server's request log is checked not to grow afterwards.
    """
    servers: list[tuple[FakeLLMServer, int]] = []

    def record(make_judge: JudgeFactory) -> tuple[Path, str, ScenarioResult]:
        path = tmp_path / "refund.jsonl"
        with FakeLLMServer(model_script()) as server:
            url = server.openai_url
            with cassette(path, mode="record") as tape:
                result = refund_scenario(url, make_judge).run_sync()
            assert tape.stats.live == 2 and tape.stats.replayed == 0
            assert len(server.requests) == 2  # the agent's call and the judge's
        servers.append((server, len(server.requests)))
        return path, url, result

    yield record
    for server, count in servers:
        assert len(server.requests) == count, "a request reached the stopped server"


@pytest.mark.parametrize("kind", list(JUDGES))
def test_a_recorded_judge_verdict_replays_with_the_server_stopped(
    kind: str, recorded: Recorder
) -> None:
    path, url, live = recorded(JUDGES[kind])
    live_check = only_check(live)
    assert live_check.status is CheckStatus.PASS, live_check.message

    with cassette(path, mode="replay") as tape:
        replayed = refund_scenario(url, JUDGES[kind]).run_sync()
    assert tape.stats.to_dict() | {"path": ""} == {
        "path": "",
        "mode": "replay",
        "replayed": 2,
        "missed": 0,
        "live": 0,
        "unused": 0,
        "refused": 0,
    }
    assert comparable(only_check(replayed)) == comparable(live_check)
    assert replayed.final_trace.last is not None
    assert replayed.final_trace.last.outputs == AGENT_ANSWER
    assert replayed.replay_verdict == {"replayed": 1, "missed": 0, "refused": 0, "live": 0}


def test_replay_reaches_no_server_at_all(
    recorded: Recorder,
) -> None:
    """Pointing the replayed agent and judge at a port that counts connections: none."""
    path, _, live = recorded(JUDGES["groundedness"])
    with ConnectionCounter() as port, cassette(path, mode="replay") as tape:
        replayed = refund_scenario(port.openai_url, JUDGES["groundedness"]).run_sync()
    assert port.connections == 0
    assert tape.stats.faithful
    assert comparable(only_check(replayed)) == comparable(only_check(live))


CHANGES = [
    pytest.param({"context": "Returns are accepted within 14 days."}, id="changed-rubric"),
    pytest.param({"suffix": " Shipping is free."}, id="changed-answer"),
]


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_judge_request_fails_the_replayed_run_loudly(
    change: dict[str, str],
    recorded: Recorder,
) -> None:
    """By default a replay miss in a judge call raises out of the run, as one in the
    agent's own calls does: nothing stale can pass."""
    path, _, _ = recorded(JUDGES["groundedness"])
    with ConnectionCounter() as port:
        with pytest.raises(ReplayMissError) as miss, cassette(path, mode="replay") as tape:
            refund_scenario(port.openai_url, JUDGES["groundedness"], **change).run_sync()
        assert port.connections == 0
    assert "Nearest recorded request" in str(miss.value)
    assert "Rubric: GROUNDEDNESS" in str(miss.value)
    assert tape.stats.live == 0
    assert tape.stats.replayed == 1  # the agent's own call still matched
    assert tape.stats.missed == 1  # a miss is not retried
    assert tape.stats.unused == 1  # the recorded verdict was not served to a new question


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_judge_request_is_an_error_result_with_return_exception(
    change: dict[str, str],
    recorded: Recorder,
) -> None:
    path, _, _ = recorded(JUDGES["groundedness"])
    with ConnectionCounter() as port:
        # the cassette still raises the miss when it closes: a replay fails closed
        with pytest.raises(ReplayMissError), cassette(path, mode="replay") as tape:
            result = refund_scenario(port.openai_url, JUDGES["groundedness"], **change).run_sync(
                return_exception=True
            )
        assert port.connections == 0
    check = only_check(result)
    assert check.status is CheckStatus.ERROR
    assert result.status == "error"
    assert check.details["exception_type"] == "ReplayMissError"
    assert "Replay miss" in check.message
    assert tape.stats.live == 0 and tape.stats.missed == 1


def test_judge_calls_stay_out_of_the_agents_spans_and_cost(
    recorded: Recorder,
) -> None:
    _, _, live = recorded(JUDGES["groundedness"])
    trace = live.final_trace
    (agent_call,) = trace.llm_calls  # the judge's call is not a span of the agent
    assert agent_call.tokens_in == 20 and agent_call.tokens_out == 11
    assert trace.tokens_in == 20 and trace.tokens_out == 11
    assert live.cost_usd == agent_call.cost_usd
    assert agent_call.cost_usd is not None and agent_call.cost_usd > 0

    check = only_check(live)
    metrics = {m.name: m.value for m in check.metrics}
    assert metrics["judge_calls"] == 1
    assert metrics["judge_tokens_in"] == 120 and metrics["judge_tokens_out"] == 18
    assert metrics["judge_cost_usd"] > 0
    assert check.details["judge"]["name"] == f"openai/{MODEL}"


# -- a simulated user, recorded and replayed -------------------------------------------------


def simulated_refund(base_url: str, persona: str = "A customer whose order arrived broken.") -> Any:
    simulator = UserSimulator(persona=persona, generator=judge_at(base_url), max_steps=4)
    return (
        Scenario("simulated refund")
        .interact(inputs=simulator, outputs=llm_agent(base_url))
        .check(Conformity(rule="The assistant stays polite.", judge=judge_at(base_url)))
    )


def conversation(result: ScenarioResult) -> list[tuple[Any, Any]]:
    return [(i.inputs, i.outputs) for i in result.final_trace.interactions]


def test_a_simulated_conversation_replays_turn_for_turn(tmp_path: Path) -> None:
    path = tmp_path / "simulated.jsonl"
    with FakeLLMServer(model_script()) as server:
        url = server.openai_url
        with cassette(path, mode="record") as tape:
            live = simulated_refund(url).run_sync()
        # 3 simulator turns (the third reaches the goal), 2 agent answers, 1 verdict
        assert len(server.requests) == 6
        assert tape.stats.live == 6
    sent = len(server.requests)
    assert conversation(live) == [
        ("My order 12 arrived broken.", "Sorry to hear that. About: My order 12 arrived broken."),
        ("Yes, please refund it.", "Sorry to hear that. About: Yes, please refund it."),
    ]
    assert only_check(live).status is CheckStatus.PASS
    assert len(live.final_trace.llm_calls) == 2  # the agent's calls only

    with ConnectionCounter() as port:
        for base_url in (url, port.openai_url):  # the stopped server, then a counting port
            with cassette(path, mode="replay") as tape:
                replayed = simulated_refund(base_url).run_sync()
            assert tape.stats.faithful and tape.stats.replayed == 6
            assert conversation(replayed) == conversation(live)
            assert comparable(only_check(replayed)) == comparable(only_check(live))
        assert port.connections == 0
    assert len(server.requests) == sent


def test_a_changed_persona_is_an_input_generation_error_in_replay(tmp_path: Path) -> None:
    path = tmp_path / "simulated.jsonl"
    with FakeLLMServer(model_script()) as server, cassette(path, mode="record"):
        simulated_refund(server.openai_url).run_sync()
    with ConnectionCounter() as port:
        with pytest.raises(ReplayMissError), cassette(path, mode="replay") as tape:
            result = simulated_refund(port.openai_url, persona="Someone else.").run_sync(
                return_exception=True
            )
        assert port.connections == 0
    assert result.status == "error"
    (step,) = result.steps
    assert step.error is not None and step.error.phase == "input_generation"
    assert step.error.exception_type == "ReplayMissError"
    assert step.results[0].status is CheckStatus.SKIP  # the judge was never asked
    assert tape.stats.live == 0 and tape.stats.missed == 1
