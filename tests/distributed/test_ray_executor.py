"""RayExecutor on a local Ray (two CPUs, loopback only): order, dead workers, cassettes,
trace-backed items, the shared rate limit, and the error when workers cannot import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.distributed import agents

from scenarist import Scenario, Suite
from scenarist.checks import StringMatching
from scenarist.distributed.ray import RayExecutor
from scenarist.engine.rate_limits import RateLimit, RateLimiter
from scenarist.errors import ReplayMissError, UserError
from scenarist.model.items import ScenarioItem
from scenarist.replay import cassette
from scenarist.store.memory import MemoryStore
from scenarist.testing import FakeLLMServer, FakeRequest, ManualClock, Reply, ScriptedLLM
from scenarist.veval.client import Client

pytestmark = [pytest.mark.ray, pytest.mark.anyio, pytest.mark.usefixtures("ray_cluster")]


def echo_suite(count: int) -> Suite:
    return Suite(
        name="ray",
        scenarios=[
            Scenario(f"s{i}", tags=[f"n:{i}"])
            .interact(f"q{i}")
            .check(StringMatching(keyword=f"q{i}"))
            for i in range(count)
        ],
    )


async def test_results_stream_as_batches_finish_and_keep_scenario_order(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "release"
    suite = Suite(
        name="held",
        scenarios=[
            Scenario(f"s{i}").interact(f"q{i} {marker}").check(StringMatching(keyword=f"q{i}"))
            for i in range(12)
        ],
    )
    executor = RayExecutor(batch_size=3)
    seen: list[int] = []
    async for index, result in suite.iter_results(agents.held, executor=executor):
        assert result.scenario_name == f"s{index}"
        seen.append(index)
        if len(seen) == 3:  # other batches came back while the first one is held
            marker.write_text("go")
    assert 0 not in seen[:3]
    assert sorted(seen) == list(range(12))
    assert executor.last_batches == 4

    result = await suite.run(
        agents.held, parallel=True, max_concurrency=3, executor=executor, verbose=False
    )
    assert [r.scenario_name for r in result.results] == [f"s{i}" for i in range(12)]
    assert result.passed_count == 12, [r.format_failures() for r in result.results]
    first = result.results[0]
    assert first.final_trace.interactions[0].outputs == "echo q0"


async def test_a_dead_worker_costs_only_its_batch(tmp_path: Path) -> None:
    inputs = ["a", "b", "c", f"die-once:{tmp_path / 'marker'}", "d", "e", "f", "die-always", "g"]
    suite = Suite(
        name="dying",
        scenarios=[Scenario(f"s{i}").interact(text) for i, text in enumerate(inputs)],
    )
    result = await suite.run(
        agents.dying, return_exception=True, executor=RayExecutor(batch_size=3), verbose=False
    )
    statuses = [r.status.value for r in result.results]
    # batch 2 died once and passed on its retry; batch 3 died twice: ERROR, never dropped
    assert statuses == ["pass"] * 6 + ["error"] * 3
    message = result.results[7].steps[0].error
    assert message is not None
    assert "the Ray worker running this batch died and its retry died too" in message.message
    assert (tmp_path / "marker").read_text() == "died"


async def test_cassettes_travel_with_batches_and_a_miss_fails_like_a_local_run(
    tmp_path: Path,
) -> None:
    tape_path = tmp_path / "calls.jsonl"
    with FakeLLMServer(ScriptedLLM(lambda r: Reply(f"answer {r.text}"))) as server:

        def llm_suite(count: int) -> Suite:
            return Suite(
                name="taped",
                scenarios=[
                    Scenario(f"s{i}")
                    .interact(f"{server.openai_url} q{i}")
                    .check(StringMatching(keyword=f"answer q{i}"))
                    for i in range(count)
                ],
            )

        # recorded on the workers, written back into the driver's cassette file
        with cassette(tape_path, "record"):
            recorded = await llm_suite(2).run(
                agents.ask_llm, executor=RayExecutor(batch_size=1), verbose=False
            )
        assert recorded.passed_count == 2
        assert len(server.requests) == 2
        assert len(tape_path.read_text().splitlines()) == 3  # the header and two calls

        with pytest.raises(ReplayMissError, match="q2"), cassette(tape_path, "replay") as tape:
            replayed = await llm_suite(3).run(
                agents.ask_llm,
                return_exception=True,
                executor=RayExecutor(batch_size=2),
                verbose=False,
            )
        assert len(server.requests) == 2  # replay never called the provider
    assert [r.status.value for r in replayed.results] == ["pass", "pass", "error"]
    stats = tape.stats
    assert (stats.replayed, stats.missed, stats.unused) == (2, 1, 0)


async def test_the_rate_limit_is_one_budget_for_every_worker() -> None:
    answered = [0]

    def provider(request: FakeRequest) -> Reply:
        answered[0] += 1
        if answered[0] == 1:  # the provider pushes back once: the whole run pauses
            return Reply(status=429, headers={"retry-after": "5"})
        return Reply(f"answer {request.text}")

    limiter = RateLimiter([RateLimit("openai/*", requests=6, burst=3)], clock=ManualClock())
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        suite = Suite(
            name="limited",
            scenarios=[Scenario(f"s{i}").interact(f"{server.openai_url} q{i}") for i in range(12)],
        )
        result = await suite.run(
            agents.ask_llm,
            parallel=True,
            max_concurrency=6,
            executor=RayExecutor(batch_size=6),
            rate_limits=limiter,
            verbose=False,
        )
        assert len(server.requests) == 13  # twelve calls and one retry
    assert result.passed_count == 12, [r.format_failures() for r in result.results]
    stats = result.rate_limits
    # one budget (burst 3) for both workers' 13 turns; two budgets would delay far fewer
    assert (stats.requests, stats.delayed) == (13, 10)
    assert (stats.throttled, stats.retried, stats.gave_up) == (1, 1, 0)


async def test_trace_backed_items_replay_on_workers_and_traces_come_back() -> None:
    store = MemoryStore()
    client = Client(store=store)
    first = await client.run_scenario_async(
        "support", agents.tracked_agent, items=[ScenarioItem(name="recorded", input="refund?")]
    )
    trace_id = first.results[0].trace_id
    assert trace_id is not None
    result = await client.run_scenario_async(
        "support",
        agents.tracked_agent,
        items=[
            ScenarioItem(name="replayed", trace_id=trace_id),
            ScenarioItem(name="live", input="hi"),
        ],
        executor=RayExecutor(batch_size=1),
    )
    assert [r.passed for r in result.results] == [True, True], [r.failures for r in result.results]
    live = result.results[1]
    assert live.trace_id is not None
    assert live.output == "answer from notes on hi"
    assert await store.get_trace(live.trace_id) is not None  # stored on the driver
    assert result.results[0].output == "answer from notes on refund?"


async def test_an_agent_the_workers_cannot_import_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "only_here_agent.py").write_text("def agent(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here_agent  # type: ignore[import-not-found]

    suite = echo_suite(2)
    with pytest.raises(UserError, match=r"cannot import 'only_here_agent'.*runtime_env"):
        await suite.run(only_here_agent.agent, executor=RayExecutor(), verbose=False)
    sys.modules.pop("only_here_agent", None)


SUITE_FILE = """
from scenarist import Scenario, Suite
from scenarist.checks import StringMatching


async def agent(inputs):  # defined in a file loaded by path: it travels by value
    return f"echo {inputs}"


suite = Suite(name="cli-ray", target=agent)
for i in range(5):
    suite.append(Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"q{i}")))
suite.append(Scenario("fails").interact("x").check(StringMatching(keyword="nope")))
"""


def test_scenarist_run_with_ray_streams_every_result_into_the_run_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from scenarist.cli.app import app
    from scenarist.formats.runlog import read_jsonl

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    (tmp_path / "ray_suite_file.py").write_text(SUITE_FILE)
    result = CliRunner().invoke(
        app, ["run", "ray_suite_file.py", "--ray", "local", "--parallel", "2"]
    )
    assert result.exit_code == 1, result.output
    assert "5 passed, 1 failed" in result.output
    (log_path,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    log = read_jsonl(log_path)
    assert [r.result.scenario_name for r in log.scenarios] == [f"s{i}" for i in range(5)] + [
        "fails"
    ]
