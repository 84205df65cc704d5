from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.limits import HANG_S

import scenarist
from scenarist import Equals, FnCheck, ScenarioItem, StringMatching
from scenarist.errors import EmptyRecordingError
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore, SqlStore
from scenarist.tracing import RunContext, TraceRecord, step
from scenarist.veval.client import Client
from scenarist.veval.default_client import set_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def client() -> Client:
    return Client(store=MemoryStore())


async def echo_agent(ctx: RunContext) -> str:
    async with step("classify", input=ctx.input, kind="llm") as handle:
        handle.set_meta("cost_usd", 0.001)
        await asyncio.sleep(0)
    return f"echo: {ctx.input}"


async def test_run_async_returns_the_output_and_stores_the_trace(client: Client) -> None:
    assert await client.run_async("echo", echo_agent, input="hi") == "echo: hi"
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    assert (record.agent_name, record.input, record.output, record.status) == (
        "echo",
        "hi",
        "echo: hi",
        "success",
    )
    assert [s.name for s in record.spans] == ["classify"]
    assert record.cost_usd == pytest.approx(0.001)
    assert record.total_cost_usd == pytest.approx(0.001)  # sent with the run, as Veval's SDK
    assert await client.get_trace_async(record.trace_id) == record


async def test_a_run_whose_steps_cost_nothing_has_no_total(client: Client) -> None:
    """Veval's SDK sends ``total_cost or None``: a zero total is no total, whether the
    steps were priced at 0 or not priced at all; the steps' cost stays 0."""

    async def free_agent(ctx: RunContext) -> str:
        async with step("classify", input=ctx.input, kind="llm") as handle:
            handle.set_meta("cost_usd", 0)
        ctx.track_step("answer", ctx.input, lambda: "done")
        return "done"

    await client.run_async("free", free_agent, input="hi")
    await client.run_async("plain", lambda ctx: ctx.track_step("a", None, lambda: 1))
    free, plain = client.store.traces.values()  # type: ignore[attr-defined]
    assert (free.total_cost_usd, free.cost_usd) == (None, 0.0)
    assert (plain.total_cost_usd, plain.cost_usd) == (None, None)
    stored = await client.get_trace_async(free.trace_id)
    assert stored is not None and stored.total_cost_usd is None


async def test_a_hand_built_trace_is_stored_with_its_total(client: Client) -> None:
    """Veval's server computes the total of a trace sent without one; so does the store."""
    steps = [scenarist.Span(span_id="s1", status="success", cost_usd=0.5)]
    hand_built = TraceRecord(trace_id="tr_hand", status="success", steps=steps)
    await client.store.save_trace(hand_built)
    assert hand_built.total_cost_usd is None  # the caller's record is left as built
    stored = await client.get_trace_async("tr_hand")
    assert stored is not None and stored.total_cost_usd == 0.5
    priced = TraceRecord(trace_id="tr_priced", total_cost_usd=3.0, steps=steps)
    await client.store.save_trace(priced)
    assert await client.get_trace_async("tr_priced") is priced


async def test_run_async_stores_a_failed_run_and_reraises(client: Client) -> None:
    def broken(ctx: RunContext) -> str:
        ctx.track_step("ok", None, lambda: 1)
        raise RuntimeError("agent down")

    with pytest.raises(RuntimeError, match="agent down"):
        await client.run_async("broken", broken, input="x")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    assert record.status == "error"
    assert record.error is not None and record.error.message == "agent down"
    assert [s.name for s in record.spans] == ["ok"]


def test_run_rejects_a_callback_that_is_not_callable(client: Client) -> None:
    with pytest.raises(TypeError, match="callback must be a function"):
        client.run("x", "not callable", input=1)  # type: ignore[arg-type]


def _items(*inputs: Any) -> list[ScenarioItem]:
    return [ScenarioItem(name=f"item {i}", input=value) for i, value in enumerate(inputs)]


async def test_run_scenario_runs_items_with_scenario_and_item_assertions(client: Client) -> None:
    items = _items("a", "b")
    items[1].assertions.append(Equals(expected_value="echo: a", name="expects_a"))
    result = await client.run_scenario_async(
        "echo-scenario",
        echo_agent,
        scenario_assertions=[StringMatching(keyword="echo")],
        items=items,
    )
    assert [r.passed for r in result.results] == [True, False]
    assert result.results[1].failures == ["Expected value equal to 'echo: a' but got 'echo: b'"]
    assert (result.pass_count, result.fail_count, result.passed) == (1, 1, False)
    assert all(r.trace_id and r.trace_id.startswith("tr_") for r in result.results)
    assert result.results[0].output == "echo: a"
    assert result.results[0].cost_usd == pytest.approx(0.001)


async def test_agent_exception_fails_only_its_item(client: Client) -> None:
    async def agent(ctx: RunContext) -> str:
        if ctx.input == "boom":
            raise ValueError("exploded outside any step")
        return "fine"

    result = await client.run_scenario_async(
        "isolation", agent, [Equals(expected_value="fine")], items=_items("ok", "boom", "ok too")
    )
    assert [r.passed for r in result.results] == [True, False, True]
    assert result.results[1].failures[0] == "Agent threw exception: exploded outside any step"
    (summary,) = client.store.runs  # type: ignore[attr-defined]
    assert [i.passed for i in summary.items] == [True, False, True]


async def test_an_assertion_that_raises_fails_only_its_item(client: Client) -> None:
    def picky(trace: Any) -> bool:
        if trace.last.inputs == "bad":
            raise KeyError("no such field")
        return True

    result = await client.run_scenario_async(
        "raising-assertion",
        echo_agent,
        [FnCheck(fn=picky, name="picky")],
        items=_items("good", "bad"),
    )
    assert [r.passed for r in result.results] == [True, False]
    assert result.results[1].failures == [
        "[ERROR] Check 'picky' failed with error: 'no such field'"
    ]


@pytest.mark.parametrize(
    ("items", "reason"),
    [
        ([], "Scenario 'empty' was run with items=[]: nothing was tested"),
        (None, "Scenario 'empty' has no items: pass items=[...] or add items"),
    ],
)
async def test_zero_items_is_not_a_pass_and_says_why(
    client: Client, items: Any, reason: str
) -> None:
    result = await client.run_scenario_async("empty", echo_agent, items=items)
    assert not result.passed
    assert result.error is not None
    assert result.error.startswith(reason)
    (summary,) = client.store.runs  # type: ignore[attr-defined]
    assert summary.passed is False
    assert summary.error == result.error
    with pytest.raises(AssertionError, match="0/0 passed"):
        result.assert_passed()


async def test_items_none_fetches_the_scenario_items_from_the_store(client: Client) -> None:
    await client.store.save_items("stored", _items("x", "y"))
    result = await client.run_scenario_async("stored", echo_agent, [StringMatching(keyword="echo")])
    assert result.passed
    assert [r.output for r in result.results] == ["echo: x", "echo: y"]


async def test_item_without_input_or_trace_fails_and_empty_string_is_an_input(
    client: Client,
) -> None:
    items = [ScenarioItem(name="nothing"), ScenarioItem(name="empty", input="")]
    result = await client.run_scenario_async("inputs", echo_agent, items=items)
    assert result.results[0].failures == ["ScenarioItem must have either trace_id or input"]
    assert result.results[1].passed and result.results[1].output == "echo: "


async def test_trace_backed_item_without_steps_fails_and_never_calls_the_agent(
    client: Client,
) -> None:
    called: list[Any] = []

    def agent(ctx: RunContext) -> str:
        called.append(ctx.input)
        return "live"

    empty = TraceRecord(trace_id="tr_empty", input="q", output="a")
    await client.store.save_trace(empty)
    items = [
        ScenarioItem(name="recorded", trace_id="tr_empty", input="ignored"),
        ScenarioItem(name="missing", trace_id="tr_nowhere"),
    ]
    result = await client.run_scenario_async("replay", agent, items=items)
    assert called == []
    assert (
        result.results[0]
        .failures[0]
        .startswith("Replay trace 'tr_empty' has no steps. Cannot mock LLM calls")
    )
    assert result.results[1].failures[0].startswith("trace 'tr_nowhere' not found — ")
    assert not result.passed
    veval_text = (
        "Replay trace 'tr_empty' has no steps. Cannot mock LLM calls. Ensure the trace was "
        "recorded with steps before using it for replay."
    )
    assert result.results[0].failures[0].startswith(veval_text)
    mocked = ReplayOptions(mock_llm_responses=True)
    with pytest.raises(RuntimeError) as raised:  # a mocked replay_async raises, as Veval's
        await client.replay_async("tr_empty", agent, mocked)
    assert isinstance(raised.value, EmptyRecordingError)
    assert str(raised.value).startswith(veval_text) and called == []


async def test_max_concurrency_overlaps_items_and_keeps_item_order(client: Client) -> None:
    in_flight = peak = 0
    meeting = asyncio.Barrier(4)  # passed only by four items in flight at once

    async def agent(ctx: RunContext) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.wait_for(meeting.wait(), timeout=HANG_S)
        await asyncio.sleep(0.01 * (5 - int(ctx.input) % 5))  # finish out of order
        in_flight -= 1
        return str(ctx.input)

    result = await client.run_scenario_async(
        "parallel", agent, items=_items(*range(12)), max_concurrency=4
    )
    assert peak == 4
    assert [r.output for r in result.results] == [str(i) for i in range(12)]


async def test_run_summary_links_items_to_traces_with_run_id_and_timing(client: Client) -> None:
    result = await client.run_scenario_async("summary", echo_agent, items=_items("a"))
    (summary,) = await client.store.list_scenario_runs("summary")
    assert summary.run_id == result.run_id and summary.run_id.startswith("run_")
    assert summary.items[0].trace_id == result.results[0].trace_id
    assert summary.items[0].trace_id in client.store.traces  # type: ignore[attr-defined]
    assert summary.ended_at >= summary.started_at
    assert summary.duration_ms > 0


def test_run_scenario_sync_twin_works_inside_and_outside_a_loop(client: Client) -> None:
    assert client.run_scenario("sync", echo_agent, items=_items("a")).passed

    async def inside() -> bool:
        return client.run_scenario("sync", echo_agent, items=_items("b")).passed

    assert asyncio.run(inside())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"agent": "nope"}, TypeError, "agent must be a function"),
        ({"scenario_assertions": [lambda t: None]}, TypeError, "TraceAssert.custom"),
        ({"scenario_name": ""}, TypeError, "scenario_name must be a non-empty string"),
        ({"max_concurrency": 0}, ValueError, "max_concurrency must be greater than 0"),
    ],
)
def test_run_scenario_bad_arguments_fail_early(
    client: Client, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"scenario_name": "bad", "agent": echo_agent, "items": _items("a")}
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        client.run_scenario(**arguments)


def test_default_client_keeps_runs_in_the_database_the_server_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarist.store.sql.store import SqlStore
    from scenarist.veval.default_client import get_client

    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_URL", raising=False)
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    set_client(None)
    try:
        result = scenarist.run_scenario("fresh-machine", echo_agent, items=_items("hello"))
        assert isinstance(get_client().store, SqlStore)
    finally:
        set_client(None)
    assert result.passed
    assert (tmp_path / "home" / "scenarist.db").is_file()  # the file `scenarist serve` opens
    store = SqlStore()  # a fresh handle on the same default database
    runs = store.list_scenario_runs
    (summary,) = asyncio.run(runs("fresh-machine"))
    assert summary.items[0].trace_id == result.results[0].trace_id
    trace = asyncio.run(store.get_trace(result.results[0].trace_id or ""))
    assert trace is not None and trace.output == "echo: hello"


def test_without_the_server_extra_the_default_is_still_the_one_database(tmp_path: Path) -> None:
    """FastAPI missing changes nothing about where runs go: the SQL store is core."""
    code = (
        "import sys, asyncio\n"
        "sys.modules['fastapi'] = None  # as if scenarist[server] were not installed\n"
        "from scenarist.store.default import default_store\n"
        "from scenarist.tracing import TraceRecord\n"
        "store = default_store()\n"
        "asyncio.run(store.save_trace(TraceRecord(trace_id='tr_local', input='q')))\n"
        "print(type(store).__name__)\n"
    )
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path / "home")}
    env.pop("SCENARIST_DATABASE_URL", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "SqlStore", out.stderr
    db = sqlite3.connect(tmp_path / "home" / "scenarist.db")
    (document,) = db.execute("SELECT document FROM traces").fetchone()
    assert json.loads(document)["trace_id"] == "tr_local"


def test_a_configured_server_url_makes_the_client_use_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scenarist.store.remote import RemoteStore

    monkeypatch.setenv("SCENARIST_URL", "http://127.0.0.1:8480")
    monkeypatch.setenv("SCENARIST_API_KEY", "sk_scen_test")
    client = Client()
    assert isinstance(client.store, RemoteStore)


async def test_sql_store_round_trips_non_json_values(tmp_path: Path) -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    store = SqlStore(tmp_path / "s.db")
    client = Client(store=store)

    def agent(ctx: RunContext) -> dict[str, Any]:
        ctx.track_step("bytes", {"blob": b"\x00\x01"}, lambda: Opaque())
        return {"when": __import__("datetime").date(2026, 1, 2), "tags": {"b", "a"}}

    await client.run_async("odd", agent, input=("tuple", 1))
    (summary,) = (await store.search_traces(agent_name="odd")).items
    record = await store.get_trace(summary.trace_id)
    assert record is not None
    assert record.input == ["tuple", 1]
    assert record.output == {"when": "2026-01-02", "tags": ["a", "b"]}
    span = record.spans[0]
    assert span.output == {
        "__repr__": "<opaque>",
        "__type__": f"{Opaque.__module__}.{Opaque.__qualname__}",
    }


def test_a_server_url_without_an_http_library_names_the_remote_extra(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['httpx2'] = None; sys.modules['httpx'] = None\n"
        "from scenarist import Client\n"
        "try:\n"
        "    Client()\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    env = {**os.environ, "SCENARIST_URL": "http://127.0.0.1:8480", "SCENARIST_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.startswith("UserError a scenarist server at 'http://127.0.0.1:8480'"), (
        out.stdout + out.stderr
    )
    assert "pip install 'scenarist[remote]'" in out.stdout
