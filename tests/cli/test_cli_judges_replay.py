"""``scenarist run`` with an agent, a judge and a simulated user on the official SDK against
the fake server: recorded serially, replayed with ``--parallel 4`` with the server stopped;
the run-level replay tally; a replay miss said as such; vacuous passes and
``--fail-on-vacuous``."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import Result

from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

SUITE = """
import os

import openai

from scenarist import Conformity, Scenario, Suite, UserSimulator
from scenarist.providers import OpenAIProvider

URL = os.environ["FAKE_LLM_URL"]


async def agent(inputs):
    question = inputs + os.environ.get("AGENT_SUFFIX", "")  # read per call: a code change
    async with openai.AsyncOpenAI(base_url=URL, api_key="k", max_retries=0) as llm:
        reply = await llm.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": question}]
        )
    return reply.choices[0].message.content


def judge():
    return OpenAIProvider("smollm2", base_url=URL, api_key="k")


suite = Suite(name="support", target=agent)
for n in range(4):
    suite.append(
        Scenario(f"polite_{n}")
        .interact(f"Where is my order? ({n})")
        .check(Conformity(rule=f"Stay polite, case {n}.", judge=judge()))
    )
suite.append(
    Scenario("simulated")
    .interact(inputs=UserSimulator(persona="A customer whose parcel is late.", generator=judge()))
    .check(Conformity(rule="Stay polite in the chat.", judge=judge()))
)
"""


def llama_cpp_like(request: FakeRequest) -> Reply:
    """Refuses json_schema like llama-cpp-python; answers verdicts, turns and chat."""
    response_format = request.body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return Reply(status=500, error="('body', 'response_format', 'type') json_object")
    properties = set((response_format.get("schema") or {}).get("properties", {}))
    if "passed" in properties:
        verdict = {"passed": True, "reason": "The reply apologises and stays courteous."}
        return Reply(json.dumps(verdict))
    if "goal_reached" in properties:
        said = "User:" in request.text
        turn = {"goal_reached": said, "message": "" if said else "My parcel is late."}
        return Reply(json.dumps(turn))
    return Reply(f"Sorry about that: {request.text}")


@pytest.fixture
def recorded(cli: Cli, write: Write, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = write("support_suite.py", SUITE)
    with FakeLLMServer(ScriptedLLM(llama_cpp_like)) as server:
        monkeypatch.setenv("FAKE_LLM_URL", server.openai_url)
        result = cli("run", str(path), "--record")
        assert result.exit_code == 0, result.output + result.stderr
    # 5 agents' first answers, 5 verdicts probing json_schema then json_object, 2 turns
    assert "cassettes: 1 (0 replayed, 1 recorded)" in result.stdout
    assert "LLM calls (agents, judges, simulated users): 0 replayed, 0 missed, 19 live" in (
        result.stdout
    )
    yield path
    sys.modules.pop("support_suite", None)  # imported in this process by the CLI


def test_a_serial_recording_replays_with_parallel_4_and_says_so(cli: Cli, recorded: Path) -> None:
    result = cli("run", str(recorded), "--replay", "--parallel", "4")
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        "LLM calls (agents, judges, simulated users): 19 replayed, 0 missed, 0 live, 0 unused"
        in (result.stdout)
    )
    assert result.stdout.strip().splitlines()[-1].startswith("scenarist: PASSED (exit 0)")


def test_a_subset_replays_from_a_serial_recording(cli: Cli, recorded: Path) -> None:
    result = cli("run", str(recorded), "--replay", "-k", "polite_3 or simulated")
    assert result.exit_code == 0, result.output + result.stderr
    # polite_3: its agent call and the verdict (refused json_schema, then json_object);
    # simulated: two turns and one verdict (two requests each) and the agent's answer
    assert (
        "LLM calls (agents, judges, simulated users): 10 replayed, 0 missed, 0 live, 9 unused"
        in (result.stdout)
    )


def test_a_replay_miss_is_not_called_a_file_that_could_not_be_loaded(
    cli: Cli, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_SUFFIX", " And my refund?")  # the agent's request changed
    result = cli("run", str(recorded), "--replay")
    assert result.exit_code == 2
    last = result.stdout.strip().splitlines()[-1]
    assert "could not be loaded" not in last
    assert "1 file(s) stopped by their cassette (a replay miss" in last
    assert "re-record with --record" in last
    assert "Replay miss" in result.stderr
    assert re.search(
        r"LLM calls \(agents, judges, simulated users\): \d+ replayed, [1-9]\d* missed",
        (result.stdout),
    )


EMPTY = """
from scenarist import Scenario, StringMatching

empty = Scenario("empty")
checked = Scenario("checked").interact("hi", outputs="hi").check(StringMatching(keyword="hi"))
"""


def test_an_empty_scenario_passes_flagged_vacuous_unless_fail_on_vacuous(
    cli: Cli, write: Write, home: Path
) -> None:
    path = write("empty_suite.py", EMPTY)
    junit = home / "out.xml"
    result = cli("run", str(path), "--junit", str(junit))
    assert result.exit_code == 0
    assert "Vacuous passes (nothing was tested): empty; --fail-on-vacuous fails them" in (
        result.stdout
    )
    xml = junit.read_text(encoding="utf-8")
    assert xml.count('<property name="vacuous" value="true" />') == 1
    (log,) = (home / "home" / "runs").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    flags = {r["result"]["scenario_name"]: r["vacuous"] for r in lines if "result" in r}
    assert flags == {"empty": True, "checked": False}
    assert lines[-1]["record_type"] == "footer" and lines[-1]["vacuous"] == [0]

    strict = cli("run", str(path), "--fail-on-vacuous")
    assert strict.exit_code == 1
    last = strict.stdout.strip().splitlines()[-1]
    assert last.startswith("scenarist: FAILED (exit 1): 1 scenario(s) passed with no interaction")
    assert "(--fail-on-vacuous)" in last
