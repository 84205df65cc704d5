"""Each scenario result reports its replay verdict: calls replayed, missed, made live."""

from __future__ import annotations

import io
from pathlib import Path

import openai
import pytest
from rich.console import Console

from scenarist import Scenario, StringMatching
from scenarist.errors import ReplayMissError
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM


def agent_for(url: str):  # type: ignore[no-untyped-def]
    def agent(inputs: str) -> str:
        with openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0) as llm:
            reply = llm.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": inputs}]
            )
            return reply.choices[0].message.content or ""

    return agent


def test_scenario_results_carry_the_replay_verdict(tmp_path: Path) -> None:
    tape = tmp_path / "support.jsonl"
    scenario = Scenario("support").interact("refund?").check(StringMatching(keyword="5 days"))
    with FakeLLMServer(ScriptedLLM([Reply("Refunds take 5 days.")])) as server:
        url = server.openai_url
        with cassette(tape, mode="record"):
            live = scenario.run_sync(target=agent_for(url))
    assert live.passed and live.replay_verdict is None  # a live run has no replay verdict
    with cassette(tape, mode="replay"):
        replayed = scenario.run_sync(target=agent_for(url))
    assert replayed.passed
    assert replayed.replay_verdict == {"replayed": 1, "missed": 0, "refused": 0, "live": 0}
    console = Console(file=io.StringIO(), width=140, color_system=None, record=True)
    replayed.print_report(console=console)
    # run inside a cassette: the footer gives its certificate, the guarantee included
    expected = "replay: 1 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)"
    assert expected in console.export_text()


def test_a_miss_is_counted_and_the_scenario_does_not_pass(tmp_path: Path) -> None:
    tape = tmp_path / "empty.jsonl"
    with FakeLLMServer(ScriptedLLM([Reply("x")])) as server:
        url = server.openai_url
        with cassette(tape, mode="record"):
            pass
        scenario = Scenario("drift").interact("new question").check(StringMatching(keyword="x"))
        with pytest.raises(ReplayMissError), cassette(tape, mode="replay"):
            result = scenario.run_sync(target=agent_for(url), return_exception=True)
        assert server.requests == []
    assert result.status == "error"
