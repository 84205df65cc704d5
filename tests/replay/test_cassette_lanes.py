"""Cassette lanes: parallel scenarios sending the same prompt under one cassette each
replay exactly their own recorded responses, whatever the timing (random delays)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import openai
import pytest
from tests.replay.cassette_support import ConnectionCounter, echo_script

from scenarist import Client, RunContext, Scenario, ScenarioItem, Suite
from scenarist.errors import ReplayMissError
from scenarist.replay import cassette
from scenarist.replay import cassette_lane as lane
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer

pytestmark = pytest.mark.anyio

PROMPT = "What is the refund policy?"
N = 20


def jittery_agent(base_url: str, rng: random.Random) -> Any:
    """Two calls with the same prompt, each after a random pause (the timing varies)."""

    async def agent(ctx: RunContext) -> list[str]:
        answers = []
        async with openai.AsyncOpenAI(
            api_key="sk-test", base_url=base_url, max_retries=0, timeout=60
        ) as llm:
            for _ in range(2):
                await asyncio.sleep(rng.random() / 200)
                reply = await llm.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": PROMPT}]
                )
                answers.append(reply.choices[0].message.content or "")
        return answers

    return agent


ITEMS = [ScenarioItem(name=f"customer-{i}", input=PROMPT) for i in range(N)]


async def _outputs(client: Client, agent: Any) -> dict[str, Any]:
    result = await client.run_scenario_async("lanes", agent, items=ITEMS, max_concurrency=N)
    assert [r.failures for r in result.results] == [[]] * N
    return {str(r.item.name): r.output for r in result.results}


async def test_parallel_items_each_replay_their_own_responses(tmp_path: Path) -> None:
    path = tmp_path / "lanes.jsonl"
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server, cassette(path, "record"):
        recorded = await _outputs(client, jittery_agent(server.openai_url, random.Random(1)))
    answers = [a for pair in recorded.values() for a in pair]
    assert len(set(answers)) == 2 * N  # every recorded response is distinct
    lanes = {json.loads(line).get("lane") for line in path.read_text().splitlines()[1:]}
    assert lanes == {f"lanes:item:customer-{i}" for i in range(N)}
    for seed in (2, 3, 4):  # other timings: the arrival order differs from the recording
        with ConnectionCounter() as nowhere, cassette(path, "replay") as tape:
            replayed = await _outputs(
                client, jittery_agent(nowhere.openai_url, random.Random(seed))
            )
        assert replayed == recorded
        assert nowhere.connections == 0
        assert tape.stats.faithful and tape.stats.replayed == 2 * N


def test_parallel_suite_scenarios_each_replay_their_own_responses(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"

    def suite(base_url: str, seed: int, outputs: dict[str, str]) -> Suite:
        rng = random.Random(seed)
        delays = {i: rng.random() / 200 for i in range(N)}

        def target(i: int) -> Any:
            async def answer(question: str) -> str:
                await asyncio.sleep(delays[i])
                async with openai.AsyncOpenAI(
                    api_key="sk-test", base_url=base_url, max_retries=0, timeout=60
                ) as llm:
                    reply = await llm.chat.completions.create(
                        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
                    )
                outputs[f"s{i}"] = reply.choices[0].message.content or ""
                return outputs[f"s{i}"]

            return answer

        scenarios = [Scenario(f"s{i}").interact(PROMPT, target(i)) for i in range(N)]
        return Suite(name="lanes", scenarios=scenarios)

    recorded: dict[str, str] = {}
    with FakeLLMServer(echo_script()) as server, cassette(path, "record"):
        suite(server.openai_url, 1, recorded).run_sync(parallel=True, verbose=False)
    assert len(set(recorded.values())) == N
    for seed in (5, 6):
        replayed: dict[str, str] = {}
        with ConnectionCounter() as nowhere, cassette(path, "replay") as tape:
            result = suite(nowhere.openai_url, seed, replayed).run_sync(
                parallel=True, verbose=False
            )
        assert (result.failed_count, result.errored_count) == (0, 0)
        assert replayed == recorded
        assert nowhere.connections == 0 and tape.stats.faithful


async def test_a_lane_never_takes_another_lanes_recording(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    with FakeLLMServer(echo_script()) as server, cassette(path, "record"), lane("alice"):
        await jittery_agent(server.openai_url, random.Random(0))(RunContext("q"))
    with ConnectionCounter() as nowhere:
        with pytest.raises(ReplayMissError) as caught, cassette(path, "replay") as tape:  # noqa: SIM117
            with lane("bob"):
                await jittery_agent(nowhere.openai_url, random.Random(0))(RunContext("q"))
        assert nowhere.connections == 0
    assert (tape.stats.missed, tape.stats.replayed, tape.stats.unused) == (1, 0, 2)
    message = str(caught.value)
    assert "recorded, but by other scenarios or items ('alice'), not by 'bob'" in message


async def test_calls_recorded_outside_any_lane_replay_in_any(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    with FakeLLMServer(echo_script()) as server, cassette(path, "record"):
        live = await jittery_agent(server.openai_url, random.Random(0))(RunContext("q"))
    assert all("lane" not in json.loads(line) for line in path.read_text().splitlines()[1:])
    with ConnectionCounter() as nowhere, cassette(path, "replay"), lane("anyone"):
        assert await jittery_agent(nowhere.openai_url, random.Random(0))(RunContext("q")) == live
