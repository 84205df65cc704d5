"""Veval code that runs unchanged on scenarist (import and client construction changed):
Veval's construction orders, keywords, members and fields, each with its failure path.
The side-venv tests in ``tests/compat/veval_sdk/`` prove the surface against the real SDK;
these pin the behaviour without it."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist import (
    Client,
    ClientOptions,
    ItemRunResult,
    ReplayOptions,
    RequestError,
    RunContext,
    ScenarioItem,
    ScenarioRunResult,
    SendError,
    SnapshotAlignmentRow,
    SnapshotChange,
    SnapshotData,
    SnapshotOptions,
    SnapshotStep,
    TraceAssert,
    TraceRecord,
    compare_snapshots,
)
from scenarist.errors import ReplayDivergenceError, ReplayError, ReplayNoMockError, UserError
from scenarist.model.trace import Span, SpanError
from scenarist.store.memory import MemoryStore
from scenarist.testing import TestClient

pytestmark = pytest.mark.anyio

RECORDED = {
    "trace_id": "tr_rec",
    "agent_name": "support",
    "input": "refund?",
    "output": "on its way",
    "completed_at": "2026-11-30T10:00:01+00:00",
    "total_cost_usd": 0.002,
    "steps": [
        {"step_id": "s1", "name": "classify", "type": "llm", "input": "refund?",
         "output": "refund", "cost_usd": 0.002},
        {"step_id": "s2", "name": "answer", "type": "custom", "input": "refund",
         "output": "on its way"},
    ],
}  # fmt: skip


async def agent(ctx: RunContext) -> Any:
    intent = await ctx.track_step_async("classify", ctx.input, step=lambda: "live intent")
    return await ctx.track_step_async("answer", intent, step=lambda: "live answer")


def test_run_context_takes_veval_order_and_never_sets_input_from_a_trace_id() -> None:
    assert (RunContext("tr_1").trace_id, RunContext("tr_1").input) == ("tr_1", None)
    ctx = RunContext("tr_2", {"q": 1})
    assert (ctx.trace_id, ctx.input) == ("tr_2", {"q": 1})
    assert RunContext(input="q").input == "q" and RunContext().trace_id.startswith("tr_")
    with pytest.raises(TypeError, match=r"the first argument is the trace id.*input="):
        RunContext({"question": "refund?"})  # type: ignore[arg-type]


def test_run_context_has_veval_members() -> None:
    ctx = RunContext("tr_1")
    ctx.set_metadata("channel", "email")
    assert ctx.trace_meta is ctx.metadata and ctx.trace_meta == {"channel": "email"}
    assert ctx.judgments == [] and ctx.replay_fidelity is None
    ctx.record_judgment("is polite", 0.9, True, "kind words")
    assert ctx.judgments == [
        {"criteria": "is polite", "score": 0.9, "passed": True, "reasoning": "kind words"}
    ]


def test_track_step_takes_step_or_the_older_fn_keyword_once() -> None:
    ctx = RunContext("tr_1")
    with ctx.recorder:
        assert ctx.track_step("a", 1, step=lambda: "by step") == "by step"
        assert ctx.track_step("b", 2, fn=lambda: "by fn") == "by fn"
        assert ctx.track_step("c", 3, lambda: "positional") == "positional"
        with pytest.raises(TypeError, match="takes the step function once"):
            ctx.track_step("d", 4, step=lambda: 1, fn=lambda: 2)
        with pytest.raises(TypeError, match="takes the step function once"):
            ctx.track_step("e", 5)
    assert [s.name for s in ctx.steps] == ["a", "b", "c"]


async def test_load_mock_outputs_serves_the_recorded_steps() -> None:
    ctx = RunContext("tr_new", "refund?")
    ctx.load_mock_outputs(RECORDED)
    assert ctx.is_replay
    with ctx.recorder:
        assert await agent(ctx) == "on its way"
    fidelity = ctx.replay_fidelity
    assert fidelity is not None and (fidelity.matched, fidelity.is_faithful) == (2, True)
    for veval_or_ours in (RuntimeError, ValueError):  # Veval raises RuntimeError
        with pytest.raises(veval_or_ours, match=r"^Replay trace 'tr_rec' has no steps\."):
            RunContext("tr_x").load_mock_outputs({**RECORDED, "steps": []})


def test_load_mock_outputs_lenient_serves_diverged_calls_and_runs_unrecorded_ones() -> None:
    """Veval's ``strict=False``: a changed input is still served the recording (reported as
    diverged), a step the recording lacks runs; strict, the changed input is served too (as
    in Veval) and the unrecorded step fails; ``on_divergence="fail"`` fails the changed
    input."""
    ran: list[str] = []

    def steps(ctx: RunContext) -> list[str]:
        first = ctx.track_step("classify", "a changed question", lambda: ran.append("c") or "x")
        return [first, ctx.track_step("unrecorded", first, lambda: ran.append("u") or "live")]

    recording = {**RECORDED, "steps": RECORDED["steps"][:1]}
    ctx = RunContext("tr_lenient")
    ctx.load_mock_outputs(recording, strict=False)
    with ctx.recorder:
        served = steps(ctx)
    assert served == [RECORDED["steps"][0]["output"], "live"] and ran == ["u"]
    fidelity = ctx.replay_fidelity
    # the unrecorded step runs bound to nothing, as in Veval: it counts nowhere
    assert fidelity is not None and [b.outcome for b in fidelity.bindings] == ["diverged"]
    assert (fidelity.matched, fidelity.diverged, fidelity.live) == (0, 1, 0)
    strict = RunContext("tr_strict")
    strict.load_mock_outputs(recording)
    with strict.recorder, pytest.raises(ReplayNoMockError, match="step 'unrecorded'"):
        steps(strict)
    assert [(s.name, s.output) for s in strict.steps] == [("classify", "refund")]
    assert strict.replay_fidelity is not None and strict.replay_fidelity.diverged == 1
    ours = RunContext("tr_fail")
    ours.load_mock_outputs(recording, on_divergence="fail")
    with ours.recorder, pytest.raises(ReplayDivergenceError, match="step 'classify'"):
        steps(ours)
    assert ran == ["u"] and ours.steps == []  # nothing ran, nothing was served


def test_trace_and_step_read_under_veval_names() -> None:
    record = TraceRecord.from_dict(RECORDED)
    assert record.completed_at == record.ended_at is not None
    assert record.total_cost_usd == 0.002 and record.project_id == ""
    step = record.steps[0]
    assert (step.step_id, step.parent_step_id, step.type) == ("s1", None, "llm")
    step.set_metadata("checked", True)
    assert step.metadata["checked"] is True
    assert TraceRecord.from_dict(record.model_dump(mode="json")) == record  # ours too
    assert str(SpanError(message="down", type="ValueError")) == "down"


def test_a_failed_steps_error_compares_and_searches_as_its_message() -> None:
    """Veval's ``step.error`` is a string; ported code compares it and searches it."""
    error = SpanError(message="KeyError: 'order_id'", type="KeyError")
    assert error == "KeyError: 'order_id'" and error != "KeyError"
    assert "order_id" in error and "timeout" not in error  # not the model's field names
    assert "message" not in error and "type" not in error
    assert error == SpanError(message="KeyError: 'order_id'", type="KeyError")
    assert error != SpanError(message="KeyError: 'order_id'", type="ValueError")
    assert len({error, "KeyError: 'order_id'"}) == 1  # hashes as its message
    with pytest.raises(TypeError):
        1 in error  # noqa: B015 - as a string refuses it
    assert error.to_dict() == {"message": "KeyError: 'order_id'", "type": "KeyError"}


def test_a_failed_steps_error_is_veval_string_and_keeps_its_type() -> None:
    error = SpanError("KeyError: 'order_id'", "KeyError")
    assert isinstance(error, str) and error.lower() == "keyerror: 'order_id'"
    assert json.dumps({"error": error}) == '{"error": "KeyError: \'order_id\'"}'
    assert (error.message, error.type, str(error)) == (error, "KeyError", error)
    assert type(error.message) is str and type(str(error)) is str
    with pytest.raises(AttributeError, match="immutable"):
        error.type = "ValueError"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(error)).type == "KeyError"
    with pytest.raises(TypeError, match="message must be a string"):
        SpanError(42)  # type: ignore[arg-type]


def test_a_span_error_serialises_as_before_and_loads_from_veval_text() -> None:
    span = Span(span_id="s1", name="lookup", status="error", error=SpanError("boom", "KeyError"))
    dumped = span.model_dump(mode="json")
    assert dumped["error"] == {"message": "boom", "type": "KeyError"}  # the run log's form
    again = Span.model_validate_json(span.model_dump_json())
    assert again.error == span.error and again.error is not None
    assert again.error.type == "KeyError"
    assert Span(span_id="s2", name="x", error="timeout").error == SpanError("timeout")
    record = TraceRecord(trace_id="tr_1", status="error", error="agent gave up")
    assert record.error is not None and record.error.type is None
    with pytest.raises(ValidationError):
        Span(span_id="s3", name="x", error={"text": "no message"})


def test_errors_take_veval_status() -> None:
    error = RequestError("Loading trace failed with status 401", 401)
    assert (error.status, error.status_code) == (401, 401)
    assert SendError("boom", status_code=503).status == 503
    assert RequestError("offline").status is None
    assert isinstance(ReplayError("x"), RuntimeError)  # what Veval raises


def test_veval_types_build_positionally() -> None:
    item = ScenarioItem("refund", None, "Where is my refund?")
    assert (item.name, item.trace_id, item.input) == ("refund", None, "Where is my refund?")
    result = ItemRunResult(item, ["MaxSteps: expected at most 1 steps, got 2"])
    assert not result.passed and ItemRunResult(item).passed
    empty = ItemRunResult(failures=["Agent threw exception: boom"])  # Veval: all optional
    assert (empty.item, empty.passed, empty.context) == (ScenarioItem(), False, None)
    assert ItemRunResult().passed and ItemRunResult().item is not ItemRunResult().item
    run = ScenarioRunResult([result])
    assert (run.fail_count, run.scenario_name, run.run_id.startswith("run_")) == (1, "", True)
    options = ReplayOptions(True, [], None, True)
    assert (options.mock_llm_responses, options.live_model_steps) == (True, True)
    assert SnapshotOptions(True, True, {"b", "a"}).ignore_steps == ["a", "b"]
    step = SnapshotStep("classify", "llm", "q", "refund")
    assert (step.kind, step.type, step.output) == ("llm", "llm", "refund")
    change = SnapshotChange("InputChanged", "classify", 2, 0, 0, "a", "b", "- a\n+ b")
    assert (change.kind, change.detail, change.label) == (
        "InputChanged",
        "- a\n+ b",
        "'classify' (call #2)",
    )
    row = SnapshotAlignmentRow("match", "classify", 0, 1, True)
    assert (row.status, row.kind, row.expected_index, row.actual_index) == (
        "changed",
        "match",
        0,
        1,
    )
    with pytest.raises(TypeError, match="at most 5 positional"):
        ScenarioItem("a", None, "b", [], False, "extra")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for 'name'"):
        ScenarioItem("a", name="b")  # type: ignore[misc]


def test_snapshot_data_reads_veval_fields_and_names_only_baselines() -> None:
    data = SnapshotData.from_dict(
        {"id": "snap_1", "name": "base", "source_trace_id": "tr_1", "version": 2,
         "created_at": None, "steps": [{"name": "classify", "type": "llm", "input": "q"}]}
    )  # fmt: skip
    assert (data.id, data.source_trace_id, data.version, data.step_count) == (
        "snap_1",
        "tr_1",
        2,
        0,  # Veval's: the stored count, 0 when the JSON gives none
    )
    assert data.has_step_content and data.step_order == ["classify"]
    legacy = SnapshotData(name="legacy", step_order=["classify", "answer"], step_count=2)
    assert not legacy.has_step_content
    assert [s.name for s in legacy.ordered_steps()] == ["classify", "answer"]
    now = SnapshotData(steps=[SnapshotStep("classify", input="changed"), SnapshotStep("answer")])
    diff = compare_snapshots(legacy, now)
    assert not diff.has_changes and not diff.compared_content  # names only: sequence only
    assert (
        compare_snapshots(legacy, SnapshotData())
        .summary()
        .endswith(
            "  (legacy snapshot: step inputs were not recorded, so only the sequence was compared)"
        )
    )


def test_snapshot_diff_has_veval_fields_and_summary_keyword() -> None:
    base = SnapshotData(steps=[SnapshotStep("plan", input=1), SnapshotStep("answer")])
    now = SnapshotData(steps=[SnapshotStep("plan", input=2), SnapshotStep("search")])
    diff = compare_snapshots(base, now)
    assert [s.name for s in diff.expected_steps] == ["plan", "answer"]
    assert [s.name for s in diff.actual_steps] == ["plan", "search"]
    assert (diff.added_steps, diff.removed_steps, diff.order_changes) == (
        ["search"],
        ["answer"],
        [],
    )
    assert diff.alignment == diff.rows and diff.compared_content
    changed = next(c for c in diff.changes if c.kind == "InputChanged")
    assert (changed.expected, changed.actual, changed.occurrence) == ("1", "2", 1)
    assert diff.summary(snapshot_name="base").startswith("Snapshot 'base': ")
    assert diff.summary(name="base") == diff.summary("base")


async def test_client_takes_options_and_compares_snapshots_in_both_forms() -> None:
    client = Client(ClientOptions(api_key="vk_test"), store=MemoryStore())
    with pytest.raises(TypeError, match="api_key must be a string or ClientOptions"):
        Client(42)  # type: ignore[arg-type]
    assert "vk_test" not in repr(ClientOptions(api_key="vk_test"))
    seen: dict[str, RunContext] = {}

    async def remember(ctx: RunContext) -> Any:
        seen["ctx"] = ctx
        return await agent(ctx)

    await client.run_async("support", remember, input="refund?")
    ctx = seen["ctx"]
    saved = await client.save_snapshot_async(snapshot_name="base", source=ctx)
    assert (await client.get_snapshot_async(snapshot_name="base")) == saved
    assert (await client.get_snapshot_async(name="base")) == saved
    veval_form = await client.compare_snapshot_async("base", saved, ctx)
    older_form = await client.compare_snapshot_async("base", ctx, SnapshotOptions())
    by_name = await client.compare_snapshot_async("base", None, ctx)
    assert not veval_form.has_changes and not older_form.has_changes and not by_name.has_changes
    with pytest.raises(TypeError, match="needs the run to compare"):
        await client.compare_snapshot_async("base", saved)
    with pytest.raises(TypeError, match="snapshot's name once"):
        await client.get_snapshot_async("base", name="base")


async def test_test_client_takes_options_and_reports_the_last_run() -> None:
    client = TestClient(ClientOptions(api_key="vk_test"))
    assert (client.last_status, client.last_error) == (None, None)
    with pytest.raises(TypeError, match="allow_live_llm_calls=True"):
        TestClient(True)

    async def broken(ctx: RunContext) -> None:
        raise ValueError("the order service is down")

    with pytest.raises(ValueError, match="down"):
        await client.run_async("support", broken, input="q")
    assert (client.last_status, client.last_error) == ("error", "the order service is down")
    assert await client.run_async("support", agent, input="q") == "live answer"
    assert (client.last_status, client.last_error) == ("success", None)


async def test_test_client_with_replay_replays_runs_like_vevals_test_sdk() -> None:
    client = TestClient().with_replay(TraceRecord.from_dict(RECORDED))
    assert await client.run_async("support", agent, input="refund?") == "on its way"

    async def partial(ctx: RunContext) -> Any:
        return await ctx.track_step_async("classify", ctx.input, step=lambda: "x")

    with pytest.raises(ReplayError, match="Replay never called 1 recorded step"):
        await client.run_async("support", partial, input="refund?")
    assert client.last_status == "error"
    baseline = SnapshotData(steps=[SnapshotStep("classify")])
    assert client.with_snapshot(snapshot_name="s", snapshot=baseline) is client
    assert client.with_snapshot(name="t", snapshot=baseline) is client
    assert client.get_snapshot("s") == client.get_snapshot("t") == baseline


def test_trace_assert_takes_veval_keywords() -> None:
    client = TestClient()
    assert TraceAssert.judge(client, criteria="is polite").criteria == "is polite"
    assert TraceAssert.judge(criteria="is polite", threshold=0.5).threshold == 0.5
    check = TraceAssert.judge("is polite", "openai/gpt-4o-mini")
    assert (check.criteria, check.judge) == ("is polite", "openai/gpt-4o-mini")
    with pytest.raises(UserError, match="by keyword"):
        TraceAssert.judge("is polite", "openai/gpt-4o-mini", 0.5)
    by_sdk = TraceAssert.matches_snapshot(snapshot_or_sdk=client, snapshot_name="base")
    assert by_sdk.snapshot_name == "base"
    inline = TraceAssert.matches_snapshot(SnapshotData(), SnapshotOptions(compare_outputs=True))
    assert inline.snapshot is not None and inline.options.compare_outputs
    with pytest.raises(UserError, match="give the snapshot once"):
        TraceAssert.matches_snapshot(SnapshotData(), "base")


def test_stepdata_and_tracedata_construct_as_in_veval() -> None:
    step = Span(
        step_id="classify", name="classify", type="llm", input="q", output="a", status="success"
    )
    assert (step.span_id, step.kind, step.step_id, step.type) == (
        "classify",
        "llm",
        "classify",
        "llm",
    )
    child = Span("lookup", "classify", "lookup", "tool", None, None, "error", "timeout")
    assert (child.parent_step_id, child.kind, child.status, child.error) == (
        "classify",
        "tool",
        "error",
        "timeout",
    )
    assert Span().span_id == "" and Span().name == ""  # Veval's defaults
    record = TraceRecord(
        trace_id="tr_1",
        input="q",
        status="error",
        error="agent gave up",
        project_id="proj",
        total_cost_usd=0.5,
        steps=[step, child],
    )
    assert (record.error, record.project_id, record.total_cost_usd) == (
        "agent gave up",
        "proj",
        0.5,
    )
    assert [s.name for s in record.spans] == ["classify", "lookup"]
    assert TraceRecord("tr_2", "support", "", "in", "out").output == "out"
    priced = TraceRecord(steps=[Span(name="x", cost_usd=0.25)])
    # a hand-built record has no total unless given (Veval's server computes it); the
    # steps' cost is cost_usd
    assert (priced.total_cost_usd, priced.cost_usd) == (None, 0.25)
    assert TraceRecord(total_cost_usd=9.0, steps=priced.steps).total_cost_usd == 9.0
    with pytest.raises(ValidationError, match="total_cost_usd must be a number"):
        TraceRecord(total_cost_usd="a lot")
    # what is left out has Veval's defaults: StepData's status "", TraceData's "running"
    assert (Span().status, Span(name="x").status) == ("", "")
    bare = TraceRecord()
    assert (bare.status, bare.agent_name, bare.total_cost_usd) == ("running", "", None)
    with pytest.raises(TypeError, match="at most 13 positional"):
        TraceRecord(*range(14))


def test_span_has_veval_step_builder_methods() -> None:
    root = Span(span_id="root", name="agent", status="running", started_at=datetime.now(UTC))
    child = root.create_step("lookup")
    assert (child.parent_step_id, child.status, root.children) == ("root", "running", [child])
    assert child.step_id and child.step_id != root.step_id and child.started_at is not None
    child.complete({"order": 42})
    assert (child.status, child.output, child.completed_at is not None) == (
        "success",
        {"order": 42},
        True,
    )
    assert isinstance(child.duration_ms, int) and child.duration_ms >= 0
    root.fail("timeout")
    assert (root.status, root.error) == ("error", "timeout")
    assert root.error is not None and root.error.type is None
    unstarted = Span(name="x")
    unstarted.complete()
    assert unstarted.duration_ms is None and unstarted.ended_at is not None
    with pytest.raises(TypeError, match="name must be a string"):
        root.create_step(None)  # type: ignore[arg-type]


def test_vevaloptions_warns_about_project_id_as_veval_does() -> None:
    from scenarist import VevalOptions

    options = VevalOptions(api_key="vk_test")
    assert (options.api_key, options.project_id, options.flush_batch_size) == ("vk_test", "", 50)
    assert isinstance(options, ClientOptions)
    with pytest.warns(DeprecationWarning, match=r"^VevalOptions\.project_id is deprecated"):
        VevalOptions(api_key="vk_test", project_id="proj")
    assert "vk_test" not in repr(options)
