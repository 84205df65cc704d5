"""Step-level replay: binding, divergence policies, fidelity, and trace-backed items."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from scenarist import Client, RunContext, ScenarioItem, TraceAssert, step
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.tracing import TraceRecord

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

pytestmark = pytest.mark.anyio


class Label(BaseModel):
    label: str
    confidence: float


calls: list[str] = []


@step(kind="llm")
def classify(question: str) -> Label:
    calls.append(f"classify:{question}")
    return Label(label="billing" if "refund" in question else "other", confidence=0.9)


async def agent(ctx: RunContext) -> str:
    label = classify(str(ctx.input))

    def lookup(handle: Any) -> list[str]:
        calls.append("lookup")
        handle.set_meta("type", "tool")
        return [f"doc about {label.label}"]

    docs = await ctx.track_step_async("lookup", {"label": label.label}, lookup)

    def answer(handle: Any) -> str:
        calls.append("answer")
        handle.set_meta("type", "llm")
        handle.set_meta("model", "gpt-4o-mini")
        handle.set_meta("cost_usd", 0.02)
        handle.set_meta("tokens_in", 40)
        handle.set_meta("tokens_out", 10)
        return f"{label.label}: {docs[0]}"

    return str(ctx.track_step("answer", docs, answer))


@pytest.fixture
async def recorded() -> tuple[Client, TraceRecord]:
    client = Client(store=MemoryStore())
    await client.run_async("support", agent, input="where is my refund?")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    calls.clear()
    return client, record


async def test_replay_serves_every_step_without_running_it(recorded: Any) -> None:
    client, record = recorded
    result = await client.replay_async(record, agent, MOCKED)
    assert result.passed, result.failures
    assert calls == []  # nothing ran live
    assert result.output == "billing: doc about billing"
    assert result.fidelity.is_faithful
    assert result.fidelity.matched == 3
    spans = result.replayed_record.spans
    assert all(s.metadata["_source"] == "replay" for s in spans)
    answer = spans[-1]
    assert (answer.cost_usd, answer.metadata["recorded_cost_usd"]) == (0.0, 0.02)
    assert (answer.kind, answer.model, answer.tokens_in) == ("llm", "gpt-4o-mini", 40)


async def test_bare_options_rerun_the_agent_live_as_veval_does(recorded: Any) -> None:
    """Veval's ``ReplayOptions()`` mocks nothing: the agent runs again on the recorded
    input, marked as a replay, with no fidelity report; an empty recording is no error."""
    client, record = recorded
    seen: list[bool] = []

    async def marked(ctx: RunContext) -> str:
        seen.append(ctx.is_replay)
        return await agent(ctx)

    result = await client.replay_async(record, marked)
    assert result.passed and result.output == "billing: doc about billing"
    assert calls == ["classify:where is my refund?", "lookup", "answer"]  # all live
    assert seen == [True] and result.fidelity is None
    empty = record.model_copy(update={"steps": []})
    assert (await client.replay_async(empty, lambda ctx: "ran")).output == "ran"


async def test_served_outputs_are_decoded_to_the_declared_return_type(recorded: Any) -> None:
    client, record = recorded
    seen: list[Any] = []

    async def inspecting_agent(ctx: RunContext) -> str:
        label = classify(str(ctx.input))
        seen.append(label)
        return await agent_tail(ctx, label)

    async def agent_tail(ctx: RunContext, label: Label) -> str:
        docs = await ctx.track_step_async("lookup", {"label": label.label}, list)
        return str(ctx.track_step("answer", docs, lambda: ""))

    result = await client.replay_async(record, inspecting_agent, MOCKED)
    assert result.passed, result.failures
    assert seen == [Label(label="billing", confidence=0.9)]


async def test_budget_assertions_on_a_replay_test_the_recorded_run(recorded: Any) -> None:
    client, record = recorded
    options = ReplayOptions(
        mock_llm_responses=True,
        assertions=[TraceAssert.max_cost(0.01)],  # the recorded run cost 0.02
    )
    result = await client.replay_async(record, agent, options)
    assert result.failures == ["MaxCost: expected at most 0.01, got 0.02"]


async def test_binding_prefers_an_identical_input_over_the_first_same_name_step() -> None:
    client = Client(store=MemoryStore())

    async def two_lookups(ctx: RunContext) -> list[Any]:
        first = await ctx.track_step_async("lookup", "a", lambda: "result a")
        second = await ctx.track_step_async("lookup", "b", lambda: "result b")
        return [first, second]

    await client.run_async("greedy", two_lookups, input=None)
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]

    async def reversed_order(ctx: RunContext) -> list[Any]:
        second = await ctx.track_step_async("lookup", "b", lambda: "live b")
        first = await ctx.track_step_async("lookup", "a", lambda: "live a")
        return [second, first]

    result = await client.replay_async(record, reversed_order, MOCKED)
    assert result.output == ["result b", "result a"]  # as Veval: identical input first
    assert result.fidelity.is_faithful


async def test_a_diverged_call_takes_the_next_unused_recording_or_its_own_position() -> None:
    """Veval's rule: a changed input gets the next unused same-name recording in recorded
    order; ``serve_same_position`` binds it to the recording at its own position, so a
    later unchanged call still matches."""
    client = Client(store=MemoryStore())

    async def three(ctx: RunContext) -> list[Any]:
        return [await ctx.track_step_async("lookup", q, lambda q=q: f"result {q}") for q in "abc"]

    await client.run_async("three", three, input=None)
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]

    async def late_first(ctx: RunContext) -> list[Any]:
        return [await ctx.track_step_async("lookup", q, lambda: "live") for q in "cza"]

    veval = await client.replay_async(record, late_first, MOCKED)
    assert veval.output == ["result c", "result a", "result b"]
    assert [(b.kind, b.recorded_index) for b in veval.fidelity.bindings] == [
        ("matched", 2),
        ("diverged", 0),
        ("diverged", 1),
    ]
    ours = await client.replay_async(
        record, late_first, ReplayOptions(mock_llm_responses=True, serve_same_position=True)
    )
    assert ours.output == ["result c", "result b", "result a"]
    assert [(b.kind, b.recorded_index) for b in ours.fidelity.bindings] == [
        ("matched", 2),
        ("diverged", 1),
        ("matched", 0),
    ]


async def _single_step_record(client: Client, value: Any) -> TraceRecord:
    async def once(ctx: RunContext) -> Any:
        return await ctx.track_step_async("fetch", value, lambda: "recorded output")

    await client.run_async("one", once, input=None)
    return list(client.store.traces.values())[-1]  # type: ignore[attr-defined]


async def test_string_one_is_not_number_one_and_divergence_fails_with_a_diff() -> None:
    client = Client(store=MemoryStore())
    record = await _single_step_record(client, {"id": 1})

    async def changed(ctx: RunContext) -> Any:
        return await ctx.track_step_async("fetch", {"id": "1"}, lambda: "live")

    result = await client.replay_async(
        record, changed, ReplayOptions(mock_llm_responses=True, on_divergence="fail")
    )
    assert not result.passed
    assert result.output is None and [b.kind for b in result.fidelity.bindings] == ["diverged"]
    (message,) = result.failures
    assert message.startswith("Replay threw exception: Replay diverged at step 'fetch': its input")
    assert '-  "id": 1' in message and '+  "id": "1"' in message
    assert "on_divergence='serve' or 'live'" in message


async def test_objects_match_the_text_a_veval_recording_holds_for_them() -> None:
    """Veval's SDK writes a step input with ``default=str``; a call with the same datetime
    or dataclass matches that text, and a JSON value still keeps its type."""
    import dataclasses
    from datetime import datetime

    @dataclasses.dataclass
    class Order:
        order_id: int

    when = datetime(2024, 5, 1, 9, 30)
    steps = [
        {"step_id": "1", "name": "schedule", "input": str(when), "output": "slot"},
        {"step_id": "2", "name": "load", "input": [str(Order(42)), "sms"], "output": "order"},
        {"step_id": "3", "name": "count", "input": "1", "output": "one"},
    ]
    recording = TraceRecord.from_dict({"trace_id": "tr_veval", "input": "q", "steps": steps})

    def agent(ctx: RunContext) -> list[Any]:
        slot = ctx.track_step("schedule", when, lambda: "live")
        order = ctx.track_step("load", (Order(42), "sms"), lambda: "live")
        return [slot, order, ctx.track_step("count", 1, lambda: "live")]

    result = await Client(store=MemoryStore()).replay_async(recording, agent, MOCKED)
    assert result.output == ["slot", "order", "one"]
    assert [b.kind for b in result.fidelity.bindings] == ["matched", "matched", "diverged"]


async def test_divergence_is_served_by_default_as_in_veval_and_live_on_request() -> None:
    client = Client(store=MemoryStore())
    record = await _single_step_record(client, "original")
    ran: list[str] = []

    async def changed(ctx: RunContext) -> Any:
        return await ctx.track_step_async("fetch", "edited", lambda: ran.append("c") or "live")

    served = await client.replay_async(record, changed, MOCKED)  # Veval: the recording, reported
    assert (served.passed, served.output, ran) == (True, "recorded output", [])
    assert [b.outcome for b in served.fidelity.bindings] == ["diverged"]
    (binding,) = served.fidelity.bindings
    assert (binding.recorded_input, binding.actual_input) == ("original", "edited")
    assert not served.fidelity.is_faithful
    live = await client.replay_async(
        record, changed, ReplayOptions(mock_llm_responses=True, on_divergence="live")
    )
    assert (live.passed, live.output, ran) == (True, "live", ["c"])
    assert [b.outcome for b in live.fidelity.bindings] == ["live"]


async def test_a_trace_backed_item_fails_on_divergence_where_replay_async_serves() -> None:
    """Spec 04 §4: in scenarios a changed input fails its item with a diff; the same
    recording through ``replay_async`` is served, as in Veval. Neither runs the step."""
    client = Client(store=MemoryStore())
    record = await _single_step_record(client, "original")
    ran: list[str] = []

    async def changed(ctx: RunContext) -> Any:
        return await ctx.track_step_async("fetch", "edited", lambda: ran.append("code") or "x")

    run = await client.run_scenario_async(
        "diverging", changed, items=[ScenarioItem(trace_id=record.trace_id)]
    )
    (item,) = run.results
    assert not item.passed and item.replay is not None
    assert item.failures[0].startswith("Replay threw exception: Replay diverged at step 'fetch'")
    assert '-"original"' in item.failures[0] and '+"edited"' in item.failures[0]
    assert [b.kind for b in item.replay.fidelity.bindings] == ["diverged"]
    replayed = await client.replay_async(record, changed, MOCKED)
    assert (replayed.passed, replayed.output) == (True, "recorded output")
    assert ran == []


async def test_a_step_with_no_recording_is_never_called_live_even_if_swallowed() -> None:
    client = Client(store=MemoryStore())
    record = await _single_step_record(client, "x")
    ran: list[str] = []

    async def extra_step(ctx: RunContext) -> Any:
        await ctx.track_step_async("fetch", "x", lambda: "")
        with contextlib.suppress(Exception):  # swallowed: the replay must still fail
            await ctx.track_step_async("call_llm", "prompt", lambda: ran.append("live"))
        return "done"

    result = await client.replay_async(record, extra_step, MOCKED)
    assert ran == []
    assert result.failures == [
        "Replay mode: no mock output for step 'call_llm'. Available steps: . "  # Veval's text
        "This would have made a real LLM call."
    ]


async def test_unused_recorded_steps_fail_the_replay(recorded: Any) -> None:
    client, record = recorded

    async def lazy(ctx: RunContext) -> str:
        classify(str(ctx.input))
        return "short cut"

    result = await client.replay_async(record, lazy, MOCKED)
    assert result.failures == [
        f"Replay never called 2 recorded step(s) from trace {record.trace_id}: 'lookup' "
        "(recorded step 2), 'answer' (recorded step 3). The agent skipped part of the recorded "
        "run, so its assertions may be passing on a path the recording does not cover."
    ]


async def test_live_model_steps_run_llm_steps_and_serve_the_rest(recorded: Any) -> None:
    client, record = recorded
    result = await client.replay_async(
        record, agent, ReplayOptions(mock_llm_responses=True, live_model_steps=True)
    )
    assert result.passed, result.failures
    assert calls == ["classify:where is my refund?", "answer"]  # llm steps live, tool served
    assert [b.outcome for b in result.fidelity.bindings] == ["live", "matched", "live"]


async def test_a_model_a_step_returned_is_served_as_that_model_from_stored_json() -> None:
    """Veval's ``track_step`` with a lambda has no return type; the recording names the
    model (an SDK message object, say), so a replay from the stored JSON gives it back."""
    client = Client(store=MemoryStore())

    def agent(ctx: RunContext) -> str:
        label = ctx.track_step("classify", ctx.input, lambda: Label(label="refund", confidence=1))
        return f"{label.label} at {label.confidence}"

    live = await client.run_async("support", agent, input="q")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    stored = TraceRecord.model_validate_json(record.model_dump_json())
    assert stored.steps[0].output == {"label": "refund", "confidence": 1.0}
    result = await client.replay_async(stored, agent, MOCKED)
    assert result.passed, result.failures
    assert result.output == live == "refund at 1.0"
    elsewhere = {"_output_type": "a_module_not_loaded:Label"}  # never imported for a trace
    unknown = stored.steps[0].model_copy(update={"metadata": elsewhere})
    served = await client.replay_async(
        stored.model_copy(update={"steps": [unknown]}),
        lambda ctx: ctx.track_step("classify", "q", int),
        MOCKED,
    )
    assert served.output == {"label": "refund", "confidence": 1.0}


async def test_live_model_steps_run_an_llm_step_whose_input_changed(recorded: Any) -> None:
    """A model step runs live whatever its input: once a model step before it answered
    anew, its input is bound to change, and that is no divergence."""
    client, record = recorded
    answer = record.steps[-1].model_copy(update={"input": ["the docs the recorded run found"]})
    changed = record.model_copy(update={"steps": [*record.steps[:-1], answer]})
    result = await client.replay_async(
        changed, agent, ReplayOptions(mock_llm_responses=True, live_model_steps=True)
    )
    assert result.passed, result.failures
    assert calls == ["classify:where is my refund?", "answer"]
    assert [b.outcome for b in result.fidelity.bindings] == ["live", "matched", "live"]
    mocked = await client.replay_async(
        changed, agent, ReplayOptions(mock_llm_responses=True, on_divergence="fail")
    )
    assert [b.outcome for b in mocked.fidelity.bindings][-1] == "diverged"
    assert not mocked.passed


async def test_live_model_steps_serve_a_tool_whose_input_a_live_model_step_changed() -> None:
    """Veval's live replay: the model step answers anew, the tool after it is called with
    that answer and still served from the recording (reported as diverged), never run."""
    client = Client(store=MemoryStore())
    recording = TraceRecord.from_dict(
        {
            "trace_id": "tr_live",
            "input": "q",
            "steps": [
                {"step_id": "1", "name": "classify", "type": "llm", "input": "q", "output": "a"},
                {"step_id": "2", "name": "lookup", "type": "tool", "input": "a", "output": 42},
            ],
        }
    )
    ran: list[str] = []

    def live_agent(ctx: RunContext) -> Any:
        intent = ctx.track_step("classify", ctx.input, lambda: ran.append("model") or "b")
        return ctx.track_step("lookup", intent, lambda: ran.append("tool") or 7)

    result = await client.replay_async(
        recording, live_agent, ReplayOptions(mock_llm_responses=True, live_model_steps=True)
    )
    assert (result.passed, result.output, ran) == (True, 42, ["model"])
    assert [b.kind for b in result.fidelity.bindings] == ["live", "diverged"]
    strict = ReplayOptions(mock_llm_responses=True, live_model_steps=True, on_divergence="fail")
    failed = await client.replay_async(recording, live_agent, strict)
    assert failed.failures[0].startswith("Replay threw exception: Replay diverged at step 'lookup'")
    assert ran == ["model", "model"]


async def test_trace_backed_items_replay_mocked_by_default(recorded: Any, tmp_path: Path) -> None:
    client, record = recorded
    path = tmp_path / "trace.json"
    path.write_text(record.model_dump_json())
    # 'classify' is an llm step without a cost: unknown cost is ignored here, as it must
    # be on the recorded run too (the replay keeps the recording's verdict, see below)
    result = await client.run_scenario_async(
        "replays",
        agent,
        [TraceAssert.no_errors(), TraceAssert.max_cost(0.05, unknown_cost="ignore")],
        items=[
            ScenarioItem(name="by id", trace_id=record.trace_id),
            ScenarioItem(name="inline", trace=record),
            ScenarioItem(name="from file", trace=path),
            ScenarioItem(
                name="over budget",
                trace_id=record.trace_id,
                assertions=[TraceAssert.max_cost(0.001)],
            ),
        ],
    )
    assert calls == []
    assert [r.passed for r in result.results] == [True, True, True, False]
    assert result.results[3].failures == ["MaxCost: expected at most 0.001, got 0.02"]
    first = result.results[0]
    assert first.cost_usd == 0.0  # nothing spent on a mocked replay
    assert first.replay is not None and first.replay.fidelity.is_faithful
    assert first.trace_id != record.trace_id  # the replayed run is stored as its own trace
    replayed = client.store.traces[first.trace_id]  # type: ignore[attr-defined]
    assert replayed.is_replay and replayed.metadata["replay_of"] == record.trace_id


async def test_a_broken_replay_fails_its_item_and_the_others_still_run(recorded: Any) -> None:
    client, record = recorded
    await client.store.save_trace(TraceRecord(trace_id="tr_empty"))
    result = await client.run_scenario_async(
        "mixed",
        agent,
        items=[
            ScenarioItem(name="empty", trace_id="tr_empty"),
            ScenarioItem(name="good", trace_id=record.trace_id),
            ScenarioItem(name="live", input="other question"),
        ],
    )
    assert [r.passed for r in result.results] == [False, True, True]
    assert result.results[0].failures[0].startswith("Replay trace 'tr_empty' has no steps.")


async def test_a_recording_with_unknown_span_kinds_is_accepted_and_replayed() -> None:
    client = Client(store=MemoryStore())

    async def agent_with_custom_kind(ctx: RunContext) -> Any:
        def lookup(handle: Any) -> str:
            handle.set_meta("type", "vector-search")  # not one of the usual kinds
            return "chunk"

        return await ctx.track_step_async("retrieve", ctx.input, lookup)

    await client.run_async("kinds", agent_with_custom_kind, input="q")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    assert record.spans[0].kind == "vector-search"
    result = await client.replay_async(record, agent_with_custom_kind, MOCKED)
    assert result.passed, result.failures
    assert result.replayed_record.spans[0].kind == "vector-search"


async def test_an_unknown_recorded_cost_stays_unknown_on_replay(recorded: Any) -> None:
    """The recorded run's 'classify' (an llm step) has no cost: MaxCost is ERROR there, so
    it is ERROR on the replay too (with unknown_cost="error"), not a pass on a served cost
    of zero."""
    client, record = recorded
    budget = TraceAssert.max_cost(0.05, unknown_cost="error")
    live = budget.run(record.to_trace())
    result = await client.replay_async(record, agent, MOCKED)
    assert result.replayed_record is not None
    replayed = budget.run(result.replayed_record.to_trace())
    assert (live.status, replayed.status) == ("error", "error")
    assert replayed.message == live.message
