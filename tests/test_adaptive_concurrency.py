"""``max_concurrency="auto"``: AIMD on the agent's LLM calls, bounded by the cap."""

from __future__ import annotations

import asyncio
import io
import threading

import httpx2
import pytest

from scenarist import Scenario, Suite
from scenarist.checks import StringMatching
from scenarist.engine._progress import Progress
from scenarist.engine.adaptive import DEFAULT_AUTO_CAP, AdaptiveConcurrency
from scenarist.engine.suite import validate_concurrency
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio


def test_grows_by_one_per_round_of_successes_up_to_the_cap() -> None:
    level = AdaptiveConcurrency(cap=4, initial=2)
    levels = []
    for _ in range(12):
        level.succeeded()
        levels.append(level.level)
    # two successes at level 2, three at level 3, then the cap holds
    assert levels == [2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]
    assert level.peak == 4


def test_halves_on_congestion_once_per_round_never_below_the_minimum() -> None:
    level = AdaptiveConcurrency(cap=16, initial=8, minimum=2)
    level.congested()
    assert level.level == 4
    for _ in range(4):  # the same burst: ignored until a round of 4 calls has passed
        level.congested()
    assert level.level == 4
    level.congested()
    assert level.level == 2
    for _ in range(10):
        level.congested()
    assert level.level == 2  # the minimum
    assert level.decreases == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cap": 0}, "cap must be an int >= 1"),
        ({"initial": 2.5}, "initial must be an int >= 1"),
        ({"cap": 2, "minimum": 3}, r"minimum \(3\) exceeds cap \(2\)"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AdaptiveConcurrency(**kwargs)  # type: ignore[arg-type]


def test_auto_means_the_default_cap_and_other_text_is_refused() -> None:
    auto = validate_concurrency("auto")
    assert isinstance(auto, AdaptiveConcurrency)
    assert auto.cap == DEFAULT_AUTO_CAP
    with pytest.raises(TypeError, match=r"positive integer \(or 'auto'\), got 'fast'"):
        validate_concurrency("fast")


async def test_slots_hold_the_level_and_a_raise_lets_a_waiter_in() -> None:
    level = AdaptiveConcurrency(cap=3, initial=1)
    release = asyncio.Event()
    inside: list[int] = []
    most = [0]

    async def task(n: int) -> None:
        async with level.slot():
            inside.append(n)
            most[0] = max(most[0], level.active)
            await release.wait()

    tasks = [asyncio.create_task(task(n)) for n in range(3)]
    await asyncio.sleep(0.01)
    assert (inside, level.active) == ([0], 1)
    level.succeeded()  # one success at level 1: level 2, one waiter wakes
    await asyncio.sleep(0.01)
    assert len(inside) == 2
    release.set()
    await asyncio.gather(*tasks)
    assert most[0] == 2
    assert level.active == 0


async def test_a_suite_on_auto_backs_off_on_5xx_and_shows_its_level() -> None:
    lock = threading.Lock()
    seen = [0]

    def provider(request: FakeRequest) -> Reply:
        with lock:
            seen[0] += 1
            number = seen[0]
        if number <= 2:
            return Reply(status=503, error="overloaded")
        return Reply(f"answer to {request.text}")

    suite = Suite(
        name="auto",
        scenarios=[
            Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"q{i}"))
            for i in range(12)
        ],
    )
    lines = io.StringIO()
    auto = AdaptiveConcurrency(cap=6, initial=4)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:

            async def agent(inputs: str) -> str:
                response = await http.post(
                    server.openai_url + "/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": inputs}]},
                )
                response.raise_for_status()
                return str(response.json()["choices"][0]["message"]["content"])

            progress = Progress(suite.scenarios, plain_lines=True, stream=lines, concurrency=auto)
            async for index, result in suite.iter_results(
                agent, return_exception=True, parallel=True, max_concurrency=auto
            ):
                progress.advance(index, result)
    assert len(server.requests) == 12
    assert auto.decreases >= 1  # the 503s halved it
    assert auto.peak <= 6
    shown = [
        line.rsplit("concurrency ", 1)[1].split(" · ")[0] for line in lines.getvalue().splitlines()
    ]
    assert len(shown) >= 10  # a line each tenth of the run (and each interval), the last too
    assert all(int(level) <= 6 and total == "6" for level, total in (s.split("/") for s in shown))
    assert shown[-1] == f"{auto.level}/6"
