"""Snapshots: alignment, diffs and summaries, storage, and TraceAssert.matches_snapshot."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from scenarist import Scenario, TraceAssert
from scenarist.checks import Check
from scenarist.errors import SerializationError, UserError
from scenarist.model.results import CheckResult, CheckStatus
from scenarist.model.trace import Interaction, Span, Trace
from scenarist.replay import (
    SnapshotData,
    SnapshotDiff,
    SnapshotOptions,
    SnapshotStep,
    compare_snapshot,
    compare_snapshot_async,
    compare_snapshots,
    get_snapshot,
    get_snapshot_async,
    load_snapshot,
    load_snapshot_async,
    save_snapshot,
    save_snapshot_async,
)
from scenarist.store import MemoryStore, SqlStore, Store
from scenarist.tracing import RunContext, TraceRecord
from scenarist.veval import MatchesSnapshot
from scenarist.veval.client import Client
from scenarist.veval.default_client import set_client

_ids = iter(range(1_000_000))


def span(name: str, kind: str = "custom", **fields: Any) -> Span:
    return Span(span_id=f"s{next(_ids)}", name=name, kind=kind, **fields)


def snap(*steps: str | tuple[str, Any] | tuple[str, Any, Any], name: str = "base") -> SnapshotData:
    """Steps as ``"name"``, ``("name", input)`` or ``("name", input, output)``."""
    made = []
    for step in steps:
        parts = (step,) if isinstance(step, str) else step
        made.append(
            SnapshotStep(
                name=parts[0],
                input=parts[1] if len(parts) > 1 else None,
                output=parts[2] if len(parts) > 2 else None,
            )
        )
    return SnapshotData(name=name, steps=made)


def check_on(check: Check, trace: Trace[Any, Any]) -> CheckResult:
    async def run() -> CheckResult:
        result = check.run(trace)
        return await result if inspect.isawaitable(result) else result

    return anyio.run(run)


def kinds(diff: SnapshotDiff) -> list[tuple[str, str, int | None, int | None]]:
    return [(c.kind, c.step_name, c.baseline_index, c.current_index) for c in diff.changes]


# -- alignment -----------------------------------------------------------------------------


def test_a_snapshot_leaves_out_the_captured_calls_inside_steps() -> None:
    """The step stands for the SDK call made inside it (Veval's snapshot, ``max_steps``); a
    call made outside any step is a step of its own (an agent with no tracked steps)."""
    captured = {"url": "http://127.0.0.1/v1/chat/completions", "provider": "openai"}

    def call() -> Span:
        return span("openai.chat.completions", "llm", metadata=captured)

    roots = [span("classify", "llm", children=[call()]), call()]
    assert SnapshotData.from_spans(roots).step_order == ["classify", "openai.chat.completions"]
    names_only = SnapshotData(name="legacy", step_order=["classify", "openai.chat.completions"])
    assert not compare_snapshots(names_only, SnapshotData.from_spans(roots)).has_changes


def test_compare_identical_sequences_has_no_changes() -> None:
    base = snap(("plan", 1), ("search", {"q": "x"}), ("answer", 2))
    diff = compare_snapshots(base, base)
    assert not diff.has_changes
    assert [r.status for r in diff.rows] == ["same"] * 3
    assert diff.summary("base") == "Snapshot 'base': no changes."


def test_compare_reports_an_insertion() -> None:
    diff = compare_snapshots(snap("a", "b"), snap("a", "x", "b"))
    assert kinds(diff) == [("Added", "x", None, 1)]
    assert [(r.baseline_index, r.current_index, r.status) for r in diff.rows] == [
        (0, 0, "same"),
        (None, 1, "added"),
        (1, 2, "same"),
    ]


def test_compare_reports_a_deletion() -> None:
    diff = compare_snapshots(snap("a", "b", "c"), snap("a", "c"))
    assert kinds(diff) == [("Removed", "b", 1, None)]
    assert diff.summary("s") == "Snapshot 's': 1 change(s)\n  - removed 'b' (was at position 1)"


def test_compare_reports_a_move_once() -> None:
    diff = compare_snapshots(snap("a", "b", "c"), snap("b", "c", "a"))
    assert kinds(diff) == [("Moved", "a", 0, 2)]
    assert [r.status for r in diff.rows] == ["removed", "same", "same", "added"]
    assert diff.summary() == "Snapshot: 1 change(s)\n  ~ moved 'a' from position 0 to 2"
    assert [c for c in diff.changes if c.kind == "Moved"] == diff.changes  # as Veval users filter


def test_a_moved_step_is_a_move_whatever_its_content() -> None:
    diff = compare_snapshots(snap(("a", 1), ("b", 1)), snap(("b", 1), ("a", 2)))
    assert kinds(diff) == [("Moved", "b", 1, 0), ("InputChanged", "a", 0, 1)]
    diff = compare_snapshots(snap(("a", 1), ("b", 1), "c"), snap(("b", 1), "c", ("a", 2)))
    assert kinds(diff) == [("Moved", "a", 0, 2)]
    content = SnapshotOptions(alignment="content")
    diff = compare_snapshots(snap(("a", 1), ("b", 1)), snap(("b", 1), ("a", 2)), content)
    assert sorted(kinds(diff)) == [("Added", "a", None, 1), ("Removed", "a", 0, None)]


def test_changes_follow_the_rows_with_a_move_where_the_step_is_now() -> None:
    diff = compare_snapshots(snap("z", "a", "b"), snap("b", ("a", 9)))
    assert kinds(diff) == [
        ("Moved", "b", 2, 0),
        ("Removed", "z", 0, None),
        ("InputChanged", "a", 1, 1),
    ]
    assert [(r.kind, r.step_name) for r in diff.alignment] == [
        ("added", "b"),
        ("removed", "z"),
        ("match", "a"),
        ("removed", "b"),
    ]


def test_repeated_names_the_first_calls_stay_matched() -> None:
    base = snap(("search", "first"), ("search", "second"), "answer")
    diff = compare_snapshots(base, snap(("search", "second"), "answer"))
    assert kinds(diff) == [("InputChanged", "search", 0, 0), ("Removed", "search", 1, None)]
    assert diff.summary().endswith("  - removed 'search' (call #2) (was at position 1)")


def test_content_alignment_keeps_the_call_whose_content_matches() -> None:
    base = snap(("search", "first"), ("search", "second"), "answer")
    options = SnapshotOptions(alignment="content")
    diff = compare_snapshots(base, snap(("search", "second"), "answer"), options)
    assert kinds(diff) == [("Removed", "search", 0, None)]
    moved = compare_snapshots(snap("a", "b", "c"), snap("b", "c", "a"), options)
    assert kinds(moved) == [("Moved", "a", 0, 2)]
    assert moved.rows[-1].status == "moved"


def test_repeated_names_extra_call_is_an_addition() -> None:
    base = snap(("llm", "p"), ("tool", "t"), ("llm", "p2"))
    diff = compare_snapshots(base, snap(("llm", "p"), ("tool", "t"), ("tool", "t"), ("llm", "p2")))
    assert kinds(diff) == [("Added", "tool", None, 2)]


def test_input_change_has_a_compact_line_diff() -> None:
    diff = compare_snapshots(
        snap(("classify", {"q": "hi", "lang": "en"})),
        snap(("classify", {"q": "hello", "lang": "en"})),
    )
    assert kinds(diff) == [("InputChanged", "classify", 0, 0)]
    change = diff.changes[0]
    assert (change.expected, change.actual) == ("lang: en\nq: hi", "lang: en\nq: hello")
    assert change.detail == "  lang: en\n- q: hi\n+ q: hello"
    assert diff.rows[0].status == "changed" and diff.rows[0].input_changed
    as_json = compare_snapshots(
        snap(("classify", {"q": "hi", "lang": "en"})),
        snap(("classify", {"q": "hello", "lang": "en"})),
        SnapshotOptions(value_format="json"),
    ).changes[0]
    assert as_json.expected == '{"lang":"en","q":"hi"}'
    assert as_json.diff == '    "lang": "en",\n-   "q": "hi"\n+   "q": "hello"\n  }'


def test_string_values_diff_line_by_line() -> None:
    diff = compare_snapshots(
        snap(("p", "line 1\nline 2\nline 3")), snap(("p", "line 1\nline two\nline 3"))
    )
    assert diff.summary("p") == (
        "Snapshot 'p': 1 change(s)\n"
        "  ~ input changed for 'p'\n"
        "        line 1\n"
        "      - line 2\n"
        "      + line two\n"
        "        line 3"
    )


def test_values_that_print_alike_are_equal_as_text_but_not_as_json() -> None:
    assert not compare_snapshots(snap(("a", "1")), snap(("a", 1))).has_changes
    as_json = SnapshotOptions(value_format="json")
    diff = compare_snapshots(snap(("a", "1")), snap(("a", 1)), as_json)
    assert diff.changes[0].diff == '- "1"\n+ 1'


def test_outputs_are_compared_only_when_asked() -> None:
    base, now = snap(("a", 1, "yes")), snap(("a", 1, "no"))
    assert not compare_snapshots(base, now).has_changes
    diff = compare_snapshots(base, now, SnapshotOptions(compare_outputs=True))
    assert kinds(diff) == [("OutputChanged", "a", 0, 0)]
    assert diff.changes[0].diff == "- yes\n+ no"


def test_inputs_can_be_left_out() -> None:
    options = SnapshotOptions(compare_inputs=False)
    assert not compare_snapshots(snap(("a", 1)), snap(("a", 2)), options).has_changes
    assert kinds(compare_snapshots(snap("a"), snap("b"), options)) == [
        ("Added", "b", None, 0),
        ("Removed", "a", 0, None),
    ]


def test_ignore_steps_leaves_them_out_and_numbers_the_rest() -> None:
    base = snap("a", ("noise", 1), "b")
    now = snap(("noise", 2), "a", "noise", "b", "c")
    diff = compare_snapshots(base, now, SnapshotOptions(ignore_steps=["noise"]))
    assert kinds(diff) == [("Added", "c", None, 2)]
    assert [s.name for s in diff.actual_steps] == ["a", "b", "c"]


def test_ignore_fields_by_name_at_any_depth_and_by_path() -> None:
    base = snap(("a", {"q": "x", "ts": 1, "meta": {"ts": 2, "id": 7}}))
    now = snap(("a", {"q": "x", "ts": 5, "meta": {"ts": 3, "id": 8}}))
    assert (
        kinds(compare_snapshots(base, now, SnapshotOptions(ignore_fields=["ts"])))[0][0]
        == "InputChanged"
    )
    assert not compare_snapshots(
        base, now, SnapshotOptions(ignore_fields=["ts", "meta.id"])
    ).has_changes
    assert not compare_snapshots(base, now, SnapshotOptions(ignore_fields={"ts", "id"})).has_changes


def test_normalize_rewrites_values_before_comparing() -> None:
    seen: list[tuple[str, Any]] = []

    def mask_ids(step_name: str, value: Any) -> Any:
        seen.append((step_name, value))
        return {**value, "id": "<id>"} if isinstance(value, dict) else value

    base, now = snap(("create", {"id": "u1", "n": 1})), snap(("create", {"id": "u2", "n": 1}))
    assert compare_snapshots(base, now).has_changes
    assert not compare_snapshots(base, now, SnapshotOptions(normalize=mask_ids)).has_changes
    assert seen[0] == ("create", {"id": "u1", "n": 1})


def test_summary_counts_and_cuts_long_diffs() -> None:
    base = snap(("a", list(range(20))), "b")
    diff = compare_snapshots(base, snap(("a", list(range(100, 120))), "b", "c"))
    detail = (diff.changes[0].diff or "").split("\n")
    assert len(detail) == 13 and detail[-1] == "  … 28 more line(s)"  # Veval's cut
    text = diff.summary("long")
    assert text.splitlines()[0] == "Snapshot 'long': 2 change(s)"
    assert "        … 28 more line(s)" in text and text.endswith("  + added 'c' at position 2")
    shorter = diff.summary("long", max_diff_lines=3)
    assert shorter.splitlines()[2:6] == [
        "      - - 0",
        "      - - 1",
        "      - - 2",
        "        … 10 more line(s)",
    ]


def test_values_show_as_veval_text() -> None:
    value = {
        "z": None,
        "a": True,
        "nested": {"k": {}, "list": [1, "x", {"b": [2.0]}]},
        "empty": [],
        "note": "two\nlines",
        "blank": "",
    }
    diff = compare_snapshots(snap(("s", "before")), snap(("s", value)))
    assert diff.changes[0].actual == (
        "a: true\n"
        "blank: \n"
        "empty: []\n"
        "nested:\n"
        "  k: {}\n"
        "  list:\n"
        "    - 1\n"
        "    - x\n"
        "    -\n"
        "      b:\n"
        "        - 2.0\n"
        "note: |\n"
        "  two\n"
        "  lines\n"
        "z: null"
    )
    assert diff.changes[0].expected == "before"  # a top-level string as it is


def test_a_stored_snapshot_of_schema_version_1_reads_with_its_step_count() -> None:
    old = {"schema_version": 1, "name": "s", "steps": [{"name": "a"}, {"name": "b"}]}
    data = SnapshotData.model_validate(old)
    assert (data.step_count, data.schema_version) == (2, 2)
    assert SnapshotData.from_dict({"steps": [{"name": "a"}]}).step_count == 0  # Veval's JSON
    assert SnapshotData.from_spans([span("a"), span("b")]).step_count == 2


def test_stored_changes_with_the_old_kinds_still_load() -> None:
    old = {
        "changes": [
            {"kind": "input_changed", "step_name": "a"},
            {"kind": "moved", "step_name": "b"},
        ]
    }
    diff = SnapshotDiff.model_validate(old)
    assert [c.kind for c in diff.changes] == ["InputChanged", "Moved"]


def test_veval_index_names_are_aliases() -> None:
    change = compare_snapshots(snap("a", "b"), snap("b", "a")).changes[0]
    assert (change.expected_index, change.actual_index) == (
        change.baseline_index,
        change.current_index,
    )


def test_a_long_trace_with_one_change_aligns_quickly() -> None:
    base = snap(*[(f"step{i % 7}", i) for i in range(3000)])
    steps = [(f"step{i % 7}", i) for i in range(3000)]
    steps[1500] = ("step1500", "new")
    diff = compare_snapshots(base, snap(*steps))
    assert sorted(c.kind for c in diff.changes) == ["Added", "Removed"]


# -- building and JSON -----------------------------------------------------------------------


def _nested_spans() -> list[Span]:
    return [
        span("classify", "llm", input={"q": "refund?"}, output="billing"),
        span("plan", children=[span("search", "tool", input={"q": "refund"}, output=["d1"])]),
    ]


def test_snapshot_from_a_record_is_pre_order_with_depth() -> None:
    record = TraceRecord(trace_id="tr_1", steps=_nested_spans())
    data = SnapshotData.from_source(record, name="base")
    assert (data.name, data.trace_id) == ("base", "tr_1")
    assert [(s.name, s.kind, s.depth, s.parent_index) for s in data.steps] == [
        ("classify", "llm", 0, None),
        ("plan", "custom", 0, None),
        ("search", "tool", 1, 1),
    ]
    assert SnapshotData.from_trace(record.to_trace()).steps == data.steps
    assert SnapshotData.from_trace(record.to_trace()).trace_id == "tr_1"


def test_a_step_built_without_a_type_has_none_as_in_veval() -> None:
    """Veval's ``SnapshotStep.type`` defaults to ``None``; a snapshot taken from a run
    keeps each span's kind. The kind is never compared: a step without one matches a run's
    step of any kind, and it survives JSON and ``from_dict`` as ``None``."""
    bare = SnapshotStep(name="plan", input={"q": 1})
    assert (bare.kind, bare.type) == (None, None)
    assert SnapshotStep("plan", None, {"q": 1}).type is None
    loaded = SnapshotData.from_dict(
        {"steps": [{"name": "plan", "input": {"q": 1}}, {"name": "go", "type": None}]}
    )
    assert [s.type for s in loaded.steps] == [None, None]
    names_only = SnapshotData(names_only=["plan", "go"])
    assert [s.type for s in names_only.ordered_steps()] == [None, None]
    assert SnapshotData.model_validate_json(loaded.model_dump_json()).steps == loaded.steps
    record = TraceRecord(
        trace_id="tr_1", steps=[span("plan", "tool", input={"q": 1}), span("go", "llm")]
    )
    run = SnapshotData.from_record(record)
    assert [s.type for s in run.steps] == ["tool", "llm"]
    diff = compare_snapshots(loaded, run)
    assert not diff.has_changes and diff.summary("typed") == "Snapshot 'typed': no changes."
    changed = TraceRecord(trace_id="tr_2", steps=[span("plan", "tool", input={"q": 2})])
    drifted = compare_snapshots(loaded, changed)
    assert [c.kind for c in drifted.changes] == ["InputChanged", "Removed"]


def test_snapshot_from_a_run_context() -> None:
    ctx = RunContext(input="q", trace_id="tr_ctx")
    ctx.track_step("lookup", {"id": 3}, lambda: {"found": True})
    data = SnapshotData.from_context(ctx)
    assert data.trace_id == "tr_ctx"
    assert [(s.name, s.input, s.output) for s in data.steps] == [
        ("lookup", {"id": 3}, {"found": True})
    ]


def test_snapshot_round_trips_through_json() -> None:
    data = SnapshotData.from_record(TraceRecord(trace_id="tr_2", steps=_nested_spans()), name="x")
    again = SnapshotData.model_validate_json(data.model_dump_json())
    assert again == data
    assert not compare_snapshots(data, again, SnapshotOptions(compare_outputs=True)).has_changes


def test_snapshot_accepts_veval_field_names() -> None:
    data = SnapshotData.model_validate(
        {
            "name": "v",
            "source_trace_id": "tr_v",
            "steps": [{"name": "a", "type": "llm", "input": 1}],
        }
    )
    assert (data.trace_id, data.steps[0].kind) == ("tr_v", "llm")


def test_compare_rejects_what_it_cannot_read() -> None:
    with pytest.raises(UserError, match="SnapshotData, TraceRecord, RunContext or Trace"):
        compare_snapshots(snap("a"), ["a"])  # type: ignore[arg-type]


def test_options_with_normalize_refuse_json() -> None:
    options = SnapshotOptions(normalize=lambda name, value: value)
    with pytest.raises(SerializationError, match="normalize"):
        options.model_dump_json()
    assert SnapshotOptions(ignore_steps={"b", "a"}).model_dump(mode="json") == {
        "compare_inputs": True,
        "compare_outputs": False,
        "ignore_steps": ["a", "b"],
        "ignore_fields": [],
        "value_format": "text",
        "alignment": "names",
    }


# -- storage ---------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    yield SqlStore(tmp_path / "scenarist.db")


@pytest.mark.anyio
async def test_store_save_get_and_load(store: Store) -> None:
    record = TraceRecord(trace_id="tr_s", steps=_nested_spans())
    await store.save_trace(record)
    saved = await save_snapshot_async(store, "support", "tr_s")
    assert (saved.name, saved.trace_id, saved.step_names) == (
        "support",
        "tr_s",
        ["classify", "plan", "search"],
    )
    assert await get_snapshot_async(store, "support") == saved
    assert await get_snapshot_async(store, "other") is None
    loaded = await load_snapshot_async(store, "tr_s")
    assert loaded is not None and loaded.steps == saved.steps and loaded.name is None
    assert await load_snapshot_async(store, "tr_missing") is None
    diff = await compare_snapshot_async(store, "support", record.to_trace())
    assert not diff.has_changes


@pytest.mark.anyio
async def test_store_save_replaces_and_accepts_any_source(store: Store) -> None:
    await save_snapshot_async(store, "s", snap("a"))
    await save_snapshot_async(store, "s", TraceRecord(trace_id="tr_r", steps=[span("b")]))
    got = await get_snapshot_async(store, "s")
    assert got is not None and got.step_names == ["b"] and got.name == "s"


@pytest.mark.anyio
async def test_store_errors_name_the_fix(store: Store) -> None:
    with pytest.raises(UserError, match="no trace 'tr_nope' in the store"):
        await save_snapshot_async(store, "s", "tr_nope")
    with pytest.raises(UserError, match=r"no snapshot named 'gone'.*save_snapshot"):
        await compare_snapshot_async(store, "gone", snap("a"))
    with pytest.raises(UserError, match="non-empty string"):
        await save_snapshot_async(store, "", snap("a"))


def test_sync_twins(store: Store) -> None:
    save_snapshot(store, "s", snap("a", "b"))
    got = get_snapshot(store, "s")
    assert got is not None and got.step_names == ["a", "b"]
    assert load_snapshot(store, "tr_none") is None
    assert kinds(compare_snapshot(store, "s", snap("a"))) == [("Removed", "b", 1, None)]


def test_sql_store_persists_snapshots_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "scenarist.db"
    save_snapshot(SqlStore(path), "s", snap(("a", {"k": [1, 2]})))
    got = get_snapshot(SqlStore(path), "s")  # another store object, another event loop
    assert got is not None and got.steps[0].input == {"k": [1, 2]}


# -- TraceAssert.matches_snapshot -----------------------------------------------------------


def _agent(question: str) -> Interaction[Any, Any]:
    return Interaction(
        inputs=question,
        outputs="done",
        spans=[
            span("classify", "llm", input=question),
            span("search", "tool", input={"q": question}),
        ],
    )


def _drifted(question: str) -> Interaction[Any, Any]:
    return Interaction(
        inputs=question, outputs="done", spans=[span("search", "tool", input={"q": question})]
    )


BASELINE = SnapshotData(
    name="refund",
    steps=[
        SnapshotStep(name="classify", kind="llm", input="refund?"),
        SnapshotStep(name="search", kind="tool", input={"q": "refund?"}),
    ],
)


def _results(check: Check, outputs: Any = _agent) -> list[CheckResult]:
    result = Scenario("snap").interact("refund?", outputs=outputs).check(check).run_sync()
    return [c for step in result.steps for c in step.results]


def test_matches_snapshot_passes_in_a_scenario() -> None:
    [result] = _results(TraceAssert.matches_snapshot(BASELINE))
    assert result.status == CheckStatus.PASS
    assert result.message == "MatchesSnapshot: Snapshot 'refund': no changes."


def test_matches_snapshot_fails_on_drift_with_the_summary() -> None:
    [result] = _results(TraceAssert.matches_snapshot(BASELINE), outputs=_drifted)
    assert result.status == CheckStatus.FAIL
    assert result.message == (
        "MatchesSnapshot: Snapshot 'refund': 1 change(s)\n"
        "  - removed 'classify' (was at position 0)"
    )
    assert result.details["changes"][0]["kind"] == "Removed"


def test_matches_snapshot_by_name_uses_the_given_store() -> None:
    store = MemoryStore()
    save_snapshot(store, "refund", BASELINE)
    [ok] = _results(TraceAssert.matches_snapshot("refund", store=store))
    [bad] = _results(TraceAssert.matches_snapshot("refund", store=store), outputs=_drifted)
    assert (ok.status, bad.status) == (CheckStatus.PASS, CheckStatus.FAIL)


def test_matches_snapshot_missing_name_fails_with_veval_message() -> None:
    [result] = _results(TraceAssert.matches_snapshot("nothing", store=MemoryStore()))
    assert result.status == CheckStatus.FAIL
    assert result.message is not None
    assert result.message == (
        "MatchesSnapshot: no snapshot named 'nothing'. Save one with save_snapshot_async first."
    )


class _Snapshots:
    """A snapshot source of the user's own: only Veval's ``get_snapshot_async(name)``."""

    def __init__(self, saved: dict[str, Any], error: Exception | None = None) -> None:
        self.saved, self.error, self.asked = saved, error, list[str]()

    async def get_snapshot_async(self, name: str) -> Any:
        self.asked.append(name)
        if self.error is not None:
            raise self.error
        return self.saved.get(name)


def test_matches_snapshot_takes_any_object_with_get_snapshot_async() -> None:
    source = _Snapshots({"refund": BASELINE})
    [ok] = _results(TraceAssert.matches_snapshot(source, "refund"))
    [bad] = _results(TraceAssert.matches_snapshot(source, "refund"), outputs=_drifted)
    assert (ok.status, bad.status, source.asked) == (
        CheckStatus.PASS,
        CheckStatus.FAIL,
        ["refund", "refund"],
    )
    as_json = _Snapshots({"refund": BASELINE.model_dump(mode="json")})
    [from_dict] = _results(TraceAssert.matches_snapshot(as_json, "refund"))
    assert from_dict.status == CheckStatus.PASS
    [missing] = _results(TraceAssert.matches_snapshot(source, "other"))
    assert missing.status == CheckStatus.FAIL
    assert missing.message is not None
    assert missing.message.startswith("MatchesSnapshot: no snapshot named 'other'.")


def test_matches_snapshot_source_that_raises_fails_with_its_text() -> None:
    source = _Snapshots({}, RuntimeError("service down"))
    [result] = _results(TraceAssert.matches_snapshot(source, "refund"))
    assert result.status == CheckStatus.FAIL
    assert result.message == "MatchesSnapshot: could not load snapshot 'refund' — service down"
    assert result.details["error_type"] == "RuntimeError"
    odd = _Snapshots({"refund": ["not", "a", "snapshot"]})
    [wrong] = _results(TraceAssert.matches_snapshot(odd, "refund"))
    assert wrong.message == (
        "MatchesSnapshot: could not load snapshot 'refund' — the source answered list, "
        "not a SnapshotData"
    )


@pytest.fixture
def default_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_URL", raising=False)
    client = Client(store=MemoryStore())
    set_client(client)
    yield client
    set_client(None)


def test_matches_snapshot_by_name_defaults_to_the_default_client(default_client: Client) -> None:
    save_snapshot(default_client.store, "refund", BASELINE)
    check = Check.model_validate(
        json.loads(TraceAssert.matches_snapshot("refund").model_dump_json())
    )
    [result] = _results(check)
    assert result.status == CheckStatus.PASS


def test_matches_snapshot_veval_form_takes_a_client(default_client: Client) -> None:
    other = Client(store=MemoryStore())
    save_snapshot(other.store, "refund", BASELINE)
    [result] = _results(TraceAssert.matches_snapshot(other, "refund"))
    assert result.status == CheckStatus.PASS
    [result] = _results(TraceAssert.matches_snapshot(other, snapshot_name="missing"))
    assert result.status == CheckStatus.FAIL


def test_matches_snapshot_on_a_recorded_trace() -> None:
    record = TraceRecord(trace_id="tr_rec", steps=_nested_spans())
    baseline = SnapshotData.from_record(record, name="rec")
    check = TraceAssert.matches_snapshot(baseline, SnapshotOptions(compare_outputs=True))
    assert check_on(check, record.to_trace()).status == CheckStatus.PASS
    changed = TraceRecord(trace_id="tr_rec2", steps=[*_nested_spans()[:1], span("plan")])
    failed = check_on(check, changed.to_trace())
    assert failed.status == CheckStatus.FAIL
    assert failed.message == (
        "MatchesSnapshot: Snapshot 'rec': 1 change(s)\n  - removed 'search' (was at position 2)"
    )


def test_matches_snapshot_interaction_narrowing_and_range() -> None:
    trace: Trace[Any, Any] = Trace()
    trace = trace.with_interaction(_drifted("x")).with_interaction(_agent("refund?"))
    last = TraceAssert.matches_snapshot(BASELINE, interaction=-1)
    assert check_on(last, trace).status == CheckStatus.PASS
    assert check_on(TraceAssert.matches_snapshot(BASELINE), trace).status == CheckStatus.FAIL
    out_of_range = check_on(TraceAssert.matches_snapshot(BASELINE, interaction=5), trace)
    assert out_of_range.status == CheckStatus.ERROR
    assert out_of_range.message == (
        "MatchesSnapshot: no interaction at index 5; the trace has 2 interaction(s)."
    )


def test_matches_snapshot_misuse_raises_at_construction() -> None:
    with pytest.raises(UserError, match="a SnapshotData, a snapshot name, or a source"):
        TraceAssert.matches_snapshot(42)
    with pytest.raises(UserError, match="give the snapshot once"):
        TraceAssert.matches_snapshot("a", snapshot_name="b")
    with pytest.raises(UserError, match="needs the snapshot's name"):
        TraceAssert.matches_snapshot(Client(store=MemoryStore()))
    with pytest.raises(ValueError, match="exactly one of 'snapshot'"):
        MatchesSnapshot()


def test_matches_snapshot_json_round_trip_and_normalize_refusal() -> None:
    check = TraceAssert.matches_snapshot(BASELINE, SnapshotOptions(ignore_steps=["noise"]))
    assert Check.model_validate_json(check.model_dump_json()) == check
    assert TraceAssert.matches_snapshot("refund").to_spec() == {
        "kind": "trace_matches_snapshot",
        "snapshot_name": "refund",
        "options": {
            "compare_inputs": True,
            "compare_outputs": False,
            "ignore_steps": [],
            "ignore_fields": [],
            "value_format": "text",
            "alignment": "names",
        },
    }
    with_fn = TraceAssert.matches_snapshot("refund", SnapshotOptions(normalize=lambda n, v: v))
    with pytest.raises(SerializationError, match="normalize"):
        with_fn.model_dump_json()
    with pytest.raises(SerializationError, match="normalize"):
        with_fn.model_dump(mode="json")
    assert with_fn.to_spec()["snapshot_name"] == "refund"
