"""TraceAssert: Veval's assertions as checks over spans, with Veval's messages."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist import Scenario, TraceAssert
from scenarist.checks import (
    AllOf,
    Check,
    MaxCost,
    MaxDuration,
    NoErrors,
    OutputContains,
    SpanCheck,
    ToolArgs,
)
from scenarist.errors import SerializationError
from scenarist.model.results import CheckStatus
from scenarist.model.trace import Interaction, Span, SpanError, Trace
from scenarist.replay import SnapshotData, SnapshotStep
from scenarist.veval.trace_assert import CustomAssertion, TraceAssertionFn

from .conftest import CheckRunner

_ids = iter(range(1_000_000))


def span(name: str, kind: str = "custom", **fields: Any) -> Span:
    """A span with a fresh id; ``children`` may be given as a list of spans."""
    return Span(span_id=f"s{next(_ids)}", name=name, kind=kind, **fields)


def turn(
    *spans: Span,
    outputs: Any = "done",
    duration_ms: float | None = 100.0,
    error: SpanError | None = None,
) -> Interaction[Any, Any]:
    return Interaction(
        inputs="in", outputs=outputs, spans=spans, duration_ms=duration_ms, error=error
    )


def trace_of(*interactions: Interaction[Any, Any]) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace()
    for interaction in interactions:
        trace = trace.with_interaction(interaction)
    return trace


@pytest.fixture
def agent_trace() -> Trace[Any, Any]:
    """Two turns: classify (llm) + search (tool, nested under 'plan'), then answer (llm)."""
    return trace_of(
        turn(
            span("classify", "llm", cost_usd=0.1, tokens_in=10, tokens_out=2, output="billing"),
            span(
                "plan",
                children=[span("search", "tool", input={"q": "refund"}, output="doc: refunds")],
            ),
            outputs="first answer",
            duration_ms=250.0,
        ),
        turn(
            span("answer", "llm", cost_usd=0.2, tokens_in=30, tokens_out=8, output="ok"),
            outputs="Your refund is on its way.",
            duration_ms=150.0,
        ),
    )


# -- no_errors ---------------------------------------------------------------------------


def test_no_errors_passes_on_a_clean_trace(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    result = run(TraceAssert.no_errors(), agent_trace)
    assert result.passed
    assert result.message == "NoErrors: no errors in 4 step(s)."


def test_no_errors_lists_failed_steps_with_veval_wording(run: CheckRunner) -> None:
    trace = trace_of(
        turn(
            span("a", status="error", error=SpanError(message="boom")),
            span("p", children=[span("b", status="error")]),
            span("c"),
        )
    )
    result = run(TraceAssert.no_errors(), trace)
    assert result.failed
    assert result.message == "NoErrors: found 2 step(s) with error status: a, b"
    assert [e["name"] for e in result.details["error_steps"]] == ["a", "b"]
    assert result.details["error_steps"][0]["error"] == "boom"


def test_no_errors_looks_at_steps_only_by_default_as_veval(run: CheckRunner) -> None:
    trace = trace_of(
        turn(span("ok"), error=SpanError(message="outside any step", type="ValueError"))
    )
    result = run(TraceAssert.no_errors(), trace)
    assert result.passed
    assert result.details["agent_errors"] == []


def test_no_errors_sees_an_agent_error_outside_any_step_on_request(run: CheckRunner) -> None:
    trace = trace_of(
        turn(span("ok"), error=SpanError(message="outside any step", type="ValueError"))
    )
    result = run(TraceAssert.no_errors(agent_errors=True), trace)
    assert result.failed
    assert result.message == "NoErrors: found 1 agent error(s): ValueError: outside any step"
    assert result.details["agent_errors"] == [
        {"interaction": 0, "type": "ValueError", "message": "outside any step"}
    ]


def test_no_errors_reports_steps_and_agent_errors_together(run: CheckRunner) -> None:
    trace = trace_of(
        turn(span("a", status="error"), error=SpanError(message="kaboom", type="RuntimeError")),
        turn(error=SpanError(message="no type")),
    )
    assert run(TraceAssert.no_errors(), trace).message == (
        "NoErrors: found 1 step(s) with error status: a"
    )
    assert run(TraceAssert.no_errors(agent_errors=True), trace).message == (
        "NoErrors: found 1 step(s) with error status: a; "
        "found 2 agent error(s): RuntimeError: kaboom; no type"
    )


def test_no_errors_leaves_a_failed_call_inside_a_step_to_the_step(run: CheckRunner) -> None:
    """Veval sees the step; the call the capture recorded in it is the step's to report,
    failed with it or handled (a retry); a failed call outside any step counts."""
    captured = {"url": "http://127.0.0.1/v1/chat/completions", "provider": "openai"}

    def call(**fields: Any) -> Span:
        return span("openai.chat.completions", "llm", metadata=captured, **fields)

    failed_step = span("ask", status="error", children=[call(status="error")])
    retried = span("retry", children=[call(status="error"), call()])
    trace = trace_of(turn(failed_step, retried, call(status="error")))
    result = run(TraceAssert.no_errors(), trace)
    assert result.message == (
        "NoErrors: found 2 step(s) with error status: ask, openai.chat.completions"
    )
    assert [e["span_id"] for e in result.details["error_steps"]] == [
        failed_step.span_id,
        trace.interactions[0].spans[-1].span_id,
    ]


# -- max_steps / min_steps ---------------------------------------------------------------


def test_max_steps_counts_nested_spans(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.max_steps(4), agent_trace).passed
    result = run(TraceAssert.max_steps(3), agent_trace)
    assert result.failed
    assert result.message == "MaxSteps: expected at most 3 steps, got 4"
    assert result.details["steps"] == ["classify", "plan", "search", "answer"]
    assert result.metrics[0].name == "steps"
    assert result.metrics[0].value == 4


def test_max_steps_zero_on_an_empty_trace_passes(run: CheckRunner) -> None:
    result = run(TraceAssert.max_steps(0), Trace())
    assert result.passed
    assert result.message == "MaxSteps: 0 step(s), at most 0."


def test_min_steps(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.min_steps(4), agent_trace).passed
    result = run(TraceAssert.min_steps(5), agent_trace)
    assert result.failed
    assert result.message == "MinSteps: expected at least 5 steps, got 4"


# -- step_exists -------------------------------------------------------------------------


def test_step_exists_finds_nested_steps(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    result = run(TraceAssert.step_exists("search"), agent_trace)
    assert result.passed
    assert result.message == "StepExists: step 'search' found 1 time(s)."


@pytest.mark.parametrize("name", ["missing", "Classify", "it's"])
def test_step_exists_fails_with_veval_wording(
    agent_trace: Trace[Any, Any], run: CheckRunner, name: str
) -> None:
    result = run(TraceAssert.step_exists(name), agent_trace)
    assert result.failed
    assert result.message == f"StepExists: step '{name}' not found"


# -- max_cost ----------------------------------------------------------------------------


def test_max_cost_adds_floats_as_veval(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    # 0.1 + 0.2 == 0.30000000000000004 in floats: Veval fails max_cost(0.3) here, and so
    # does the default.
    result = run(TraceAssert.max_cost(0.3), agent_trace)
    assert result.failed
    assert result.message == "MaxCost: expected at most 0.3, got 0.30000000000000004"
    assert run(TraceAssert.max_cost(0.31), agent_trace).message == (
        "MaxCost: cost 0.30000000000000004, at most 0.31."
    )


def test_max_cost_exact_uses_decimal_arithmetic(
    agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    result = run(TraceAssert.max_cost(0.3, exact=True), agent_trace)
    assert result.passed
    assert result.message == "MaxCost: cost 0.3, at most 0.3."
    assert result.metrics[0].name == "cost_usd"
    assert result.metrics[0].value == pytest.approx(0.3)
    assert result.details["costs"] == [
        {"step": "classify", "cost_usd": 0.1, "recorded": False},
        {"step": "answer", "cost_usd": 0.2, "recorded": False},
    ]


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (0.25, "MaxCost: expected at most 0.25, got 0.3"),
        (0.05, "MaxCost: expected at most 0.05, got 0.3"),
        (0, "MaxCost: expected at most 0, got 0.3"),
        (Decimal("0.10"), "MaxCost: expected at most 0.10, got 0.3"),
        ("0.29999", "MaxCost: expected at most 0.29999, got 0.3"),
        (1e-08, "MaxCost: expected at most 0.00000001, got 0.3"),
    ],
)
def test_max_cost_fails_with_veval_wording(
    agent_trace: Trace[Any, Any], run: CheckRunner, limit: Any, message: str
) -> None:
    result = run(TraceAssert.max_cost(limit, exact=True), agent_trace)
    assert result.failed
    assert result.message == message
    veval = run(TraceAssert.max_cost(limit), agent_trace)
    assert veval.message == message.replace("got 0.3", "got 0.30000000000000004")


def test_max_cost_many_small_costs_add_up_exactly(run: CheckRunner) -> None:
    trace = trace_of(turn(*[span(f"c{i}", "llm", cost_usd=0.1) for i in range(10)]))
    assert sum([0.1] * 10) != 1.0
    assert run(TraceAssert.max_cost(1, exact=True), trace).passed
    result = run(TraceAssert.max_cost(0.99, exact=True), trace)
    assert result.message == "MaxCost: expected at most 0.99, got 1.0"
    assert run(TraceAssert.max_cost(0.99), trace).message == (
        f"MaxCost: expected at most 0.99, got {sum([0.1] * 10)}"
    )


def test_max_cost_unknown_llm_cost_is_an_error_on_request(run: CheckRunner) -> None:
    trace = trace_of(
        turn(span("a", "llm", cost_usd=0.01), span("b", "llm"), span("c", "llm"), span("t"))
    )
    result = run(TraceAssert.max_cost(0.1, unknown_cost="error"), trace)
    assert result.errored
    assert result.message == (
        "MaxCost: cost unknown for 2 llm step(s): b, c; record their cost_usd, "
        "or pass unknown_cost='ignore' to count them as zero"
    )
    assert result.details["unknown_cost_steps"] == ["b", "c"]


def test_max_cost_unknown_cost_counts_as_zero_by_default_as_veval(run: CheckRunner) -> None:
    trace = trace_of(turn(span("a", "llm", cost_usd=0.01), span("b", "llm")))
    result = run(TraceAssert.max_cost(0.1), trace)
    assert result.passed
    assert result.details["unknown_cost_steps"] == ["b"]


def test_max_cost_fails_when_known_costs_already_exceed(run: CheckRunner) -> None:
    trace = trace_of(turn(span("a", "llm", cost_usd=0.5), span("b", "llm")))
    result = run(TraceAssert.max_cost(0.1, unknown_cost="error"), trace)
    assert result.failed
    assert result.message == "MaxCost: expected at most 0.1, got 0.5"


def test_max_cost_prefers_the_recorded_cost_of_replayed_steps(run: CheckRunner) -> None:
    trace = trace_of(
        turn(
            span("served", "llm", cost_usd=0.0, metadata={"recorded_cost_usd": 0.04}),
            span("served_unpriced", "llm", metadata={"recorded_cost_usd": "0.02"}),
            span("live", "llm", cost_usd=0.01),
        )
    )
    result = run(TraceAssert.max_cost(0.05, exact=True), trace)
    assert result.failed
    assert result.message == "MaxCost: expected at most 0.05, got 0.07"
    assert [c["recorded"] for c in result.details["costs"]] == [True, True, False]


@pytest.mark.parametrize("bad", ["a lot", True, [0.1], "NaN"])
def test_max_cost_a_recorded_cost_that_is_not_a_number_is_an_error(
    run: CheckRunner, bad: Any
) -> None:
    trace = trace_of(turn(span("served", "llm", metadata={"recorded_cost_usd": bad})))
    result = run(TraceAssert.max_cost(1), trace)
    assert result.errored
    assert result.message is not None
    assert result.message.startswith("MaxCost: step 'served' has a cost that is not ")
    assert repr(bad) in result.message


def test_max_cost_non_llm_spans_without_cost_count_as_zero(run: CheckRunner) -> None:
    trace = trace_of(turn(span("tool", "tool"), span("x")))
    result = run(TraceAssert.max_cost(0), trace)
    assert result.passed
    assert result.message == "MaxCost: cost 0, at most 0."


# -- max_tokens / max_llm_calls ----------------------------------------------------------


def test_max_tokens(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.max_tokens(50), agent_trace).passed
    result = run(TraceAssert.max_tokens(49), agent_trace)
    assert result.failed
    assert result.message == "MaxTokens: expected at most 49 tokens, got 50"
    assert {m.name: m.value for m in result.metrics} == {
        "tokens": 50,
        "tokens_in": 40,
        "tokens_out": 10,
    }


def test_max_tokens_unknown_usage_is_an_error_unless_ignored(run: CheckRunner) -> None:
    trace = trace_of(turn(span("a", "llm", tokens_in=5), span("b", "llm"), span("tool", "tool")))
    result = run(TraceAssert.max_tokens(100), trace)
    assert result.errored
    assert result.message == (
        "MaxTokens: token usage unknown for 1 llm step(s): b; record tokens_in/tokens_out, "
        "or pass unknown_tokens='ignore' to count them as zero"
    )
    assert run(TraceAssert.max_tokens(100, unknown_tokens="ignore"), trace).passed


def test_max_llm_calls(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.max_llm_calls(2), agent_trace).passed
    result = run(TraceAssert.max_llm_calls(1), agent_trace)
    assert result.failed
    assert result.message == "MaxLlmCalls: expected at most 1 LLM calls, got 2"
    assert result.details["llm_calls"] == ["classify", "answer"]


# -- max_duration / step_duration --------------------------------------------------------


def test_max_duration_sums_step_durations_as_veval(run: CheckRunner) -> None:
    # Two parallel 300 ms steps (one with a nested 50 ms step) inside a 320 ms run, and a
    # step with no duration (zero): Veval reports 650 ms.
    trace = trace_of(
        turn(
            span("a", duration_ms=300.0, children=[span("a1", duration_ms=50.0)]),
            span("b", duration_ms=300.0),
            span("running"),
            duration_ms=320.0,
        )
    )
    result = run(TraceAssert.max_duration(500), trace)
    assert result.failed
    assert result.message == "MaxDuration: expected at most 500ms, got 650ms"
    passed = run(TraceAssert.max_duration(650), trace)
    assert passed.message == "MaxDuration: steps took 650ms, at most 650ms."
    assert run(TraceAssert.max_duration(1), Trace()).passed  # no steps: 0 ms, as in Veval


def test_max_duration_wall_is_wall_clock_not_the_sum_of_spans(run: CheckRunner) -> None:
    # Two parallel 300 ms steps inside a 320 ms run: Veval would report 600 ms.
    trace = trace_of(
        turn(span("a", duration_ms=300.0), span("b", duration_ms=300.0), duration_ms=320.0)
    )
    result = run(TraceAssert.max_duration(500, measure="wall"), trace)
    assert result.passed
    assert result.message == "MaxDuration: 320ms, at most 500ms."
    assert result.metrics[0].value == 320.0


def test_max_duration_sums_interactions(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    result = run(TraceAssert.max_duration(399.5, measure="wall"), agent_trace)
    assert result.failed
    assert result.message == "MaxDuration: expected at most 399.5ms, got 400ms"
    assert result.details["interactions"] == [
        {"interaction": 0, "duration_ms": 250.0, "queued_ms": 0.0},
        {"interaction": 1, "duration_ms": 150.0, "queued_ms": 0.0},
    ]


def test_max_duration_formats_fractions(run: CheckRunner) -> None:
    trace = trace_of(turn(duration_ms=731.2504))
    assert run(TraceAssert.max_duration(10, measure="wall"), trace).message == (
        "MaxDuration: expected at most 10ms, got 731.25ms"
    )


def test_max_duration_unknown_is_an_error(run: CheckRunner) -> None:
    trace = trace_of(turn(), turn(duration_ms=None), turn(duration_ms=None))
    result = run(TraceAssert.max_duration(1000, measure="wall"), trace)
    assert result.errored
    assert result.message == (
        "MaxDuration: wall-clock duration unknown: interaction(s) 1, 2 recorded no duration_ms"
    )


def test_max_duration_without_interactions_is_an_error(run: CheckRunner) -> None:
    result = run(TraceAssert.max_duration(1000, measure="wall"), Trace())
    assert result.errored
    assert result.message == (
        "MaxDuration: the trace has no interactions, so there is no duration to check"
    )


def test_step_duration_checks_the_slowest_matching_step(run: CheckRunner) -> None:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    trace = trace_of(
        turn(
            span("search", "tool", duration_ms=120.0),
            span("search", "tool", started_at=start, ended_at=start + timedelta(seconds=0.25)),
        )
    )
    assert run(TraceAssert.step_duration("search", 250), trace).passed
    result = run(TraceAssert.step_duration("search", 200), trace)
    assert result.failed
    assert result.message == "StepDuration: expected step 'search' to take at most 200ms, got 250ms"
    assert result.details["durations_ms"] == [120.0, 250.0]


def test_step_duration_missing_step_fails_and_unknown_duration_errors(run: CheckRunner) -> None:
    trace = trace_of(turn(span("search", "tool")))
    missing = run(TraceAssert.step_duration("fetch", 10), trace)
    assert missing.failed
    assert missing.message == "StepDuration: step 'fetch' not found"
    unknown = run(TraceAssert.step_duration("search", 10), trace)
    assert unknown.errored
    assert unknown.message == "StepDuration: duration unknown for 1 of 1 step(s) named 'search'"


# -- output_contains ---------------------------------------------------------------------


def test_output_contains_reads_the_final_output(
    agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    result = run(TraceAssert.output_contains("refund is on", where="final"), agent_trace)
    assert result.passed
    assert result.message == "OutputContains: the final output contains 'refund is on'."
    # the first turn's output and step outputs are not the final output
    for text in ("first answer", "doc: refunds"):
        failed = run(TraceAssert.output_contains(text, where="final"), agent_trace)
        assert failed.failed
        assert failed.message == f"OutputContains: the final output does not contain '{text}'"


def test_output_contains_is_case_sensitive(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.output_contains("REFUND", where="final"), agent_trace).failed


@pytest.mark.parametrize(
    ("output", "text", "passed"),
    [
        ({"answer": "refund ok"}, "refund", True),
        ({"answer": "refund ok"}, "'answer'", True),  # str() of a dict, as Veval reads it
        (42, "42", True),
        (None, "None", False),
        (None, "", True),
    ],
)
def test_output_contains_reads_non_strings_as_text(
    run: CheckRunner, output: Any, text: str, passed: bool
) -> None:
    final = TraceAssert.output_contains(text, where="final")
    result = run(final, trace_of(turn(outputs=output)))
    assert result.passed is passed


def test_output_contains_searches_step_outputs_by_default_as_veval(
    agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    result = run(TraceAssert.output_contains("refunds"), agent_trace)
    assert result.passed
    assert result.details["matched_step"] == "search"
    failed = run(TraceAssert.output_contains("refund is on"), agent_trace)
    assert failed.failed
    assert failed.message == "OutputContains: no step output contains 'refund is on'"


def test_output_contains_skips_none_step_outputs(run: CheckRunner) -> None:
    trace = trace_of(turn(span("n", output=None)))
    assert run(TraceAssert.output_contains("None"), trace).failed
    # an empty answer and no step output: Veval finds no output containing ''
    assert run(TraceAssert.output_contains(""), trace_of(turn(outputs=""))).failed
    assert run(TraceAssert.output_contains("", where="final"), trace_of(turn(outputs=""))).passed


def test_output_contains_older_steps_flag_spells_where(run: CheckRunner) -> None:
    assert TraceAssert.output_contains("x", steps=False).where == "final"
    assert TraceAssert.output_contains("x", steps=True).where == "steps"
    older = {"kind": "trace_output_contains", "expected": "x", "steps": False}
    loaded = Check.model_validate(older)
    assert isinstance(loaded, OutputContains)
    assert loaded.where == "final"
    with pytest.raises(ValidationError, match="steps must be true or false"):
        Check.model_validate({"kind": "trace_output_contains", "expected": "x", "steps": "no"})


def test_output_contains_without_interactions_is_an_error(run: CheckRunner) -> None:
    result = run(TraceAssert.output_contains("x", where="final"), Trace())
    assert result.errored
    assert result.message == (
        "OutputContains: the trace has no interactions, so there is no final output"
    )


# -- tools -------------------------------------------------------------------------------


@pytest.fixture
def tool_trace() -> Trace[Any, Any]:
    return trace_of(
        turn(
            span("plan", "llm", cost_usd=0.0, tokens_in=1, tokens_out=1),
            span("search", "tool", input={"q": "refund policy", "limit": 5}),
            span("search", "tool", input='{"q": "refund status", "limit": 3}'),
            span("lookup", "custom"),
            span("book", "tool", input="not json", status="error"),
        )
    )


def test_tool_called(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    result = run(TraceAssert.tool_called("search"), tool_trace)
    assert result.passed
    assert result.message == "ToolCalled: tool 'search' was called 2 time(s)."
    assert run(TraceAssert.tool_called("book"), tool_trace).passed  # failed, but called


@pytest.mark.parametrize("name", ["lookup", "plan", "pay"])
def test_tool_called_needs_a_tool_span(
    tool_trace: Trace[Any, Any], run: CheckRunner, name: str
) -> None:
    result = run(TraceAssert.tool_called(name), tool_trace)
    assert result.failed
    assert result.message == f"ToolCalled: no tool step named '{name}' was found"
    assert result.details["tool_calls"] == ["search", "search", "book"]


def test_tool_not_called(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.tool_not_called("lookup"), tool_trace).passed
    result = run(TraceAssert.tool_not_called("search"), tool_trace)
    assert result.failed
    assert result.message == "ToolNotCalled: tool 'search' was called 2 time(s)"


def test_tool_call_count(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.tool_call_count("search", 2), tool_trace).passed
    assert run(TraceAssert.tool_call_count("pay", 0), tool_trace).passed
    result = run(TraceAssert.tool_call_count("search", 1), tool_trace)
    assert result.failed
    assert result.message == "ToolCallCount: expected tool 'search' to be called 1 time(s), got 2"


@pytest.mark.parametrize(
    ("names", "mode", "passed"),
    [
        (["search", "book"], "subsequence", True),
        (["search", "search"], "subsequence", True),
        (["book", "search"], "subsequence", False),
        (["search", "search", "book"], "exact", True),
        (["search", "book"], "exact", False),
    ],
)
def test_tool_order(
    tool_trace: Trace[Any, Any], run: CheckRunner, names: list[str], mode: Any, passed: bool
) -> None:
    assert run(TraceAssert.tool_order(names, mode=mode), tool_trace).passed is passed


def test_tool_order_messages(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    assert run(TraceAssert.tool_order(["book", "search"]), tool_trace).message == (
        "ToolOrder: expected tool calls [book, search] in this order, got [search, search, book]"
    )
    assert run(TraceAssert.tool_order(["search", "book"], "exact"), tool_trace).message == (
        "ToolOrder: expected tool calls exactly [search, book], got [search, search, book]"
    )


def test_tool_args_values_and_json_string_inputs(
    tool_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    assert run(TraceAssert.tool_args("search", {"q": "refund policy"}), tool_trace).passed
    assert run(
        TraceAssert.tool_args("search", {"q": "refund status", "limit": 3}), tool_trace
    ).passed
    result = run(TraceAssert.tool_args("search", {"q": "refund status", "limit": 5}), tool_trace)
    assert result.failed
    assert result.message == (
        "ToolArgs: no call of tool 'search' matched {'q': 'refund status', 'limit': 5} "
        "(2 call(s) checked; they had {'q': 'refund policy', 'limit': 5}, "
        "{'q': 'refund status', 'limit': 3})"
    )
    assert run(TraceAssert.tool_args("search", {"missing": None}), tool_trace).failed
    assert run(TraceAssert.tool_args("book", {"x": 1}), tool_trace).failed  # not a mapping


def test_tool_args_predicates(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    def small(limit: Any) -> bool:
        return bool(limit < 4)

    check = TraceAssert.tool_args("search", {"q": lambda q: "status" in q, "limit": small})
    assert run(check, tool_trace).passed
    failed = run(TraceAssert.tool_args("search", {"limit": lambda n: n > 10}), tool_trace)
    assert failed.failed
    assert failed.message == (
        "ToolArgs: no call of tool 'search' matched {'limit': '<predicate <lambda>>'} "
        "(2 call(s) checked; they had {'q': 'refund policy', 'limit': 5}, "
        "{'q': 'refund status', 'limit': 3})"
    )


def test_tool_args_predicate_problems_are_errors(
    tool_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    raising = run(TraceAssert.tool_args("search", {"q": lambda q: q.nope}), tool_trace)
    assert raising.errored
    assert raising.message == (
        "ToolArgs: the predicate for argument 'q' raised AttributeError: "
        "'str' object has no attribute 'nope'"
    )
    not_bool = run(TraceAssert.tool_args("search", {"q": lambda q: q}), tool_trace)
    assert not_bool.errored
    assert not_bool.message == (
        "ToolArgs: the predicate for argument 'q' must return a bool, got str: 'refund policy'"
    )


def test_tool_args_without_calls(tool_trace: Trace[Any, Any], run: CheckRunner) -> None:
    result = run(TraceAssert.tool_args("pay", {"amount": 1}), tool_trace)
    assert result.failed
    assert result.message == "ToolArgs: no tool step named 'pay' was found"


def test_tool_args_with_predicates_cannot_be_written_to_json() -> None:
    check = TraceAssert.tool_args("search", {"q": "x", "limit": lambda n: n < 4})
    with pytest.raises(SerializationError, match=r"predicates for 'limit'"):
        check.model_dump(mode="json")
    with pytest.raises(SerializationError):
        check.model_dump_json()
    assert check.to_spec() == {
        "kind": "trace_tool_args",
        "tool_name": "search",
        "args": {"q": "x", "limit": "<predicate <lambda>>"},
    }
    assert check.model_dump()["args"]["q"] == "x"  # Python mode keeps the predicate


# -- custom ------------------------------------------------------------------------------


def test_custom_message_fails_none_and_empty_pass(
    agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    def few_steps(trace: Trace[Any, Any]) -> str | None:
        n = len(trace.spans)
        return None if n < 3 else f"FewSteps: {n} steps"

    result = run(TraceAssert.custom(few_steps), agent_trace)
    assert result.failed
    assert result.message == "FewSteps: 4 steps"
    assert run(TraceAssert.custom(lambda trace: None), agent_trace).passed
    assert run(TraceAssert.custom(lambda trace: ""), agent_trace).passed  # falsy, as in Veval


def test_custom_accepts_async_functions(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    async def slow(trace: Trace[Any, Any]) -> str | None:
        await asyncio.sleep(0)
        return "Slow: too slow"

    assert run(TraceAssert.custom(slow), agent_trace).message == "Slow: too slow"


@pytest.mark.parametrize("returned", [True, False, 0, 42, ["x"]])
def test_custom_non_message_return_is_an_error(
    agent_trace: Trace[Any, Any], run: CheckRunner, returned: Any
) -> None:
    def odd(trace: Trace[Any, Any]) -> Any:
        return returned

    result = run(TraceAssert.custom(odd), agent_trace)
    assert result.errored
    assert result.message == (
        "Custom assertion 'odd' must return a failure message (str) or None, "
        f"but got {type(returned).__name__}: {returned!r}"
    )


def test_custom_satisfies_the_protocol_and_cannot_be_written_to_json() -> None:
    def fn(trace: Trace[Any, Any]) -> str | None:
        return None

    assertion: TraceAssertionFn = fn
    check = TraceAssert.custom(assertion, name="mine")
    assert isinstance(check, CustomAssertion)
    assert check.kind == "trace_custom"
    with pytest.raises(SerializationError, match=r"TraceAssert\.custom 'mine' wraps"):
        check.model_dump(mode="json")
    with pytest.raises(SerializationError):
        check.model_dump_json()
    assert check.to_spec() == {"kind": "trace_custom"}


def test_custom_rejects_a_non_callable() -> None:
    with pytest.raises(ValidationError, match="fn"):
        TraceAssert.custom("not a function")  # type: ignore[arg-type]


# -- interaction narrowing ---------------------------------------------------------------


def test_interaction_narrows_every_assertion(
    agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    assert run(TraceAssert.max_steps(1, interaction=-1), agent_trace).passed
    assert run(TraceAssert.step_exists("search", interaction=-1), agent_trace).failed
    assert run(TraceAssert.step_exists("search", interaction=0), agent_trace).passed
    assert run(TraceAssert.tool_called("search", interaction=1), agent_trace).failed
    cost = run(TraceAssert.max_cost(0.15, interaction=0), agent_trace)
    assert cost.passed
    assert cost.details["interaction"] == 0
    duration = run(TraceAssert.max_duration(200, measure="wall", interaction=0), agent_trace)
    assert duration.message == "MaxDuration: expected at most 200ms, got 250ms"
    output = run(TraceAssert.output_contains("first", where="final", interaction=0), agent_trace)
    assert output.passed
    assert run(TraceAssert.output_contains("refunds", interaction=1), agent_trace).failed


def test_interaction_narrows_agent_errors(run: CheckRunner) -> None:
    trace = trace_of(turn(error=SpanError(message="early")), turn())
    assert run(TraceAssert.no_errors(agent_errors=True, interaction=-1), trace).passed
    assert run(TraceAssert.no_errors(agent_errors=True, interaction=0), trace).failed


@pytest.mark.parametrize("index", [2, -3])
def test_interaction_out_of_range_is_an_error(
    agent_trace: Trace[Any, Any], run: CheckRunner, index: int
) -> None:
    result = run(TraceAssert.max_steps(1, interaction=index), agent_trace)
    assert result.errored
    assert result.message == (
        f"MaxSteps: no interaction at index {index}; the trace has 2 interaction(s)."
    )


# -- construction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: TraceAssert.max_steps(-1), "max_steps"),
        (lambda: TraceAssert.max_steps(1.5), "max_steps"),
        (lambda: TraceAssert.max_steps("3"), "max_steps"),
        (lambda: TraceAssert.max_steps(True), "max_steps"),
        (lambda: TraceAssert.min_steps(-2), "min_steps"),
        (lambda: TraceAssert.max_cost(-0.01), "max_cost_usd"),
        (lambda: TraceAssert.max_cost(float("nan")), "max_cost_usd"),
        (lambda: TraceAssert.max_cost("cheap"), "max_cost_usd"),
        (lambda: TraceAssert.max_cost(0.1, unknown_cost="skip"), "unknown_cost"),
        (lambda: TraceAssert.max_duration(-5), "max_ms"),
        (lambda: TraceAssert.max_duration(float("inf")), "max_ms"),
        (lambda: TraceAssert.max_tokens(-1), "max_tokens"),
        (lambda: TraceAssert.max_llm_calls(None), "max_calls"),
        (lambda: TraceAssert.step_exists(3), "step_name"),
        (lambda: TraceAssert.step_duration("s", -1), "max_ms"),
        (lambda: TraceAssert.output_contains(None), "expected"),
        (lambda: TraceAssert.tool_called(["a"]), "tool_name"),
        (lambda: TraceAssert.tool_call_count("a", -1), "count"),
        (lambda: TraceAssert.tool_order([]), "tool_names"),
        (lambda: TraceAssert.tool_order(["a"], mode="loose"), "mode"),
        (lambda: TraceAssert.tool_args("a", {}), "args"),
        (lambda: TraceAssert.tool_args("a", {1: "x"}), "args"),
        (lambda: TraceAssert.no_errors(interaction="last"), "interaction"),
    ],
)
def test_construction_validates_and_names_the_field(build: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        build()
    assert info.value.errors()[0]["loc"][0] == field


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValidationError, match="max_step"):
        Check.model_validate({"kind": "trace_max_steps", "max_step": 3})


def test_veval_keyword_names_are_accepted() -> None:
    assert TraceAssert.max_steps(max=3) == TraceAssert.max_steps(3)
    assert TraceAssert.step_exists(step_name="a").step_name == "a"
    assert TraceAssert.max_cost(max_cost=0.1).max_cost_usd == Decimal("0.1")
    assert TraceAssert.max_duration(max_ms=10).max_ms == 10
    assert TraceAssert.output_contains(expected="x").expected == "x"
    assert TraceAssert.tool_called(tool_name="t").tool_name == "t"


# -- serialisation -----------------------------------------------------------------------

SERIALISABLE: list[Check] = [
    TraceAssert.no_errors(),
    TraceAssert.no_errors(interaction=-1, name="clean"),
    TraceAssert.max_steps(3),
    TraceAssert.min_steps(1, description="did something"),
    TraceAssert.step_exists("classify"),
    TraceAssert.max_cost(0.1),
    TraceAssert.max_cost(Decimal("0.30"), unknown_cost="error", exact=True, interaction=0),
    TraceAssert.no_errors(agent_errors=True),
    TraceAssert.max_duration(399.5),
    TraceAssert.max_duration(399.5, measure="wall"),
    TraceAssert.step_duration("search", 200),
    TraceAssert.output_contains("refund"),
    TraceAssert.output_contains("refund", where="final"),
    TraceAssert.tool_called("search"),
    TraceAssert.max_tokens(49, unknown_tokens="ignore"),
    TraceAssert.max_llm_calls(2),
    TraceAssert.tool_not_called("pay"),
    TraceAssert.tool_call_count("search", 1),
    TraceAssert.tool_order(["classify", "answer"], mode="exact"),
    TraceAssert.tool_args("search", {"q": "refund", "limit": [1, 2]}),
    TraceAssert.matches_snapshot(SnapshotData(name="base", steps=[SnapshotStep(name="classify")])),
]


@pytest.mark.parametrize("check", SERIALISABLE, ids=lambda c: c.kind)
def test_json_round_trip_keeps_the_check_and_its_verdict(
    check: Check, agent_trace: Trace[Any, Any], run: CheckRunner
) -> None:
    data = check.model_dump(mode="json")
    assert data["kind"] == check.kind
    rebuilt = Check.model_validate(json.loads(json.dumps(data)))
    assert type(rebuilt) is type(check)
    assert rebuilt == check
    before, after = run(check, agent_trace), run(rebuilt, agent_trace)
    assert (after.status, after.message) == (before.status, before.message)
    assert Check.model_validate_json(check.model_dump_json()) == check


def test_every_trace_kind_is_registered_and_a_span_check() -> None:
    kinds = {k for k in Check.kinds() if k.startswith("trace_")}
    # trace_judge (an LLM judge check) is tested in tests/judges/
    assert kinds == {c.kind for c in SERIALISABLE} | {"trace_custom", "trace_judge"}
    # trace_matches_snapshot is async (it may read the store), so not a SpanCheck
    not_span_checks = {"trace_custom", "trace_matches_snapshot", "trace_judge"}
    assert all(issubclass(Check.kind_class(k), SpanCheck) for k in kinds - not_span_checks)


def test_to_spec_drops_defaults_that_were_not_given() -> None:
    assert TraceAssert.max_steps(3).to_spec() == {"kind": "trace_max_steps", "max_steps": 3}
    assert TraceAssert.max_cost(0.1).model_dump(mode="json")["max_cost_usd"] == "0.1"


# -- inside a scenario and a composite ---------------------------------------------------


def _agent(question: str) -> Interaction[Any, Any]:
    return Interaction(
        inputs=question,
        outputs=f"Answer to {question}: refunds take 5 days.",
        duration_ms=42.0,
        spans=[
            span("classify", "llm", cost_usd=0.001, tokens_in=20, tokens_out=3),
            span(
                "retrieve",
                "retrieval",
                children=[span("search", "tool", input={"q": question})],
            ),
        ],
    )


def test_trace_assertions_run_in_a_scenario() -> None:
    result = (
        Scenario("refund")
        .interact("where is my refund?", outputs=_agent)
        .check(TraceAssert.no_errors())
        .check(TraceAssert.max_cost(0.10))
        .check(TraceAssert.step_exists("search"))
        .check(TraceAssert.tool_args("search", {"q": "where is my refund?"}))
        .check(TraceAssert.output_contains("5 days", where="final"))
        .check(TraceAssert.max_duration(1000))
        .run_sync()
    )
    assert result.passed, result
    statuses = [c.status for step in result.steps for c in step.results]
    assert statuses == [CheckStatus.PASS] * 6


def test_trace_assertion_failure_shows_in_a_scenario() -> None:
    result = (
        Scenario("budget")
        .interact("q", outputs=_agent)
        .check(TraceAssert.max_steps(2))
        .check(TraceAssert.custom(lambda trace: None))
        .run_sync()
    )
    assert not result.passed
    failed = [c for step in result.steps for c in step.results if c.failed]
    assert [c.message for c in failed] == ["MaxSteps: expected at most 2 steps, got 3"]


def test_trace_assertions_compose(agent_trace: Trace[Any, Any], run: CheckRunner) -> None:
    both = AllOf(checks=[TraceAssert.max_cost(1), TraceAssert.tool_called("pay")])
    result = run(both, agent_trace)
    assert result.failed
    assert result.message is not None
    assert "ToolCalled: no tool step named 'pay' was found" in result.message


def test_public_classes_are_the_factory_results() -> None:
    assert isinstance(TraceAssert.no_errors(), NoErrors)
    assert isinstance(TraceAssert.max_cost(1), MaxCost)
    assert isinstance(TraceAssert.max_duration(1), MaxDuration)
    assert isinstance(TraceAssert.output_contains("x"), OutputContains)
    assert isinstance(TraceAssert.tool_args("t", {"a": 1}), ToolArgs)
