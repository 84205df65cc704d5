from __future__ import annotations

from typing import Any

import pytest
from pydantic import computed_field

from scenarist import Interaction, Span, Trace
from scenarist.model.trace import InteractionLog


def _trace(*pairs: tuple[Any, Any]) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace()
    for inputs, outputs in pairs:
        trace = trace.with_interaction(Interaction(inputs=inputs, outputs=outputs))
    return trace


def test_trace_with_interaction_leaves_the_original_unchanged() -> None:
    first = _trace(("a", "1"))
    second = first.with_interaction(Interaction(inputs="b", outputs="2"))
    branch = first.with_interaction(Interaction(inputs="c", outputs="3"))
    assert [i.inputs for i in first.interactions] == ["a"]
    assert [i.inputs for i in second.interactions] == ["a", "b"]
    assert [i.inputs for i in branch.interactions] == ["a", "c"]


def test_trace_append_shares_storage_instead_of_copying() -> None:
    trace = _trace(*[(str(i), i) for i in range(50)])
    longer = trace.with_interaction(Interaction(inputs="x", outputs=0))
    assert longer.interactions._items is trace.interactions._items  # amortised O(1)


def test_trace_last_is_none_when_empty_and_the_newest_interaction_otherwise() -> None:
    assert Trace().last is None
    assert _trace(("a", 1), ("b", 2)).last == Interaction(inputs="b", outputs=2)


def test_trace_is_immutable() -> None:
    trace = _trace(("a", 1))
    with pytest.raises(Exception, match="frozen"):
        trace.annotations = {}  # type: ignore[misc]
    with pytest.raises(Exception, match="frozen"):
        trace.last.outputs = 2  # type: ignore[misc, union-attr]


def test_interaction_log_compares_and_slices_like_a_list() -> None:
    log = InteractionLog([1, 2, 3]).appended(4)
    assert log == [1, 2, 3, 4]
    assert log[1:3] == [2, 3]
    assert log[-1] == 4
    with pytest.raises(IndexError, match=r"^list index out of range$"):  # a list's message
        log[4]


def test_trace_json_round_trip_keeps_interactions_and_annotations() -> None:
    trace = _trace(("hi", {"answer": "hello"})).model_copy(update={"annotations": {"user": 7}})
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again == trace
    assert again.last is not None and again.last.outputs == {"answer": "hello"}


def _span(name: str, kind: str = "custom", **kw: Any) -> Span:
    return Span(span_id=name, name=name, kind=kind, **kw)


def test_trace_span_views_flatten_nested_spans_in_pre_order() -> None:
    root = _span(
        "agent",
        "agent",
        children=[
            _span("plan", "llm", tokens_in=10, tokens_out=5, cost_usd=0.01),
            _span("search", "tool", status="error"),
        ],
    )
    second = _span("answer", "llm", tokens_in=3, tokens_out=2, cost_usd=0.02)
    trace = (
        Trace()
        .with_interaction(Interaction(inputs="q", outputs="a", spans=[root], duration_ms=5.0))
        .with_interaction(Interaction(inputs="q2", outputs="b", spans=[second], duration_ms=2.5))
    )
    assert [s.name for s in trace.spans] == ["agent", "plan", "search", "answer"]
    assert [s.name for s in trace.llm_calls] == ["plan", "answer"]
    assert [s.name for s in trace.tool_calls] == ["search"]
    assert [s.name for s in trace.errors] == ["search"]
    assert trace.tokens_in == 13 and trace.tokens_out == 7
    assert trace.cost_usd == pytest.approx(0.03)
    assert trace.duration_ms == 7.5


def test_trace_cost_is_none_when_no_span_has_a_cost() -> None:
    trace = Trace().with_interaction(Interaction(inputs="q", outputs="a", spans=[_span("s")]))
    assert trace.cost_usd is None


class TranscriptTrace(Trace[str, str]):
    @computed_field  # type: ignore[prop-decorator]
    @property
    def transcript(self) -> str:
        return "\n".join(f"{i.inputs} -> {i.outputs}" for i in self.interactions)


def test_trace_subclass_keeps_its_type_when_appending() -> None:
    trace = TranscriptTrace().with_interaction(Interaction(inputs="a", outputs="b"))
    assert isinstance(trace, TranscriptTrace)
    assert trace.transcript == "a -> b"
