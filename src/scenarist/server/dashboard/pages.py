"""The dashboard's pages as data: one model and one context builder per page.

A builder takes the store and the page's parameters and returns the page model; the route
renders that model with a template, or returns it as JSON (the page's JSON twin). So what
the tests assert on JSON is exactly what the browser shows. Builders read through the
store's methods and :mod:`scenarist.store.sql.dashboard`; they hold no SQL.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from scenarist._status import DECIDED, pass_rate_of, summary_line
from scenarist._usage import token_spans
from scenarist._version import __version__
from scenarist.store.sql import dashboard as queries
from scenarist.store.sql.compare import PREVIOUS, StoredComparison, compare_stored_runs
from scenarist.store.sql.records import (
    HistoryPoint,
    RunSummary,
    ScenarioResultView,
    encode_cursor,
)
from scenarist.store.sql.store import SqlStore
from scenarist.trace import Span
from scenarist.tracing.record import TraceRecord
from scenarist.veval.items import ItemSummary, ScenarioItem

__all__ = [
    "Chart",
    "ChartSeries",
    "ComparePage",
    "HistoryPage",
    "InteractionView",
    "ItemView",
    "ItemsPage",
    "OverviewPage",
    "RunPage",
    "ScenarioTracePage",
    "SpanNode",
    "TagStats",
    "TracePage",
    "compare_page",
    "history_page",
    "items_page",
    "overview_page",
    "run_page",
    "scenario_trace_page",
    "trace_page",
]

STATUSES = ("pass", "fail", "error", "skip")
_ROLLING = 5  # the history chart's pass rate is over this many results


class ChartSeries(BaseModel):
    label: str
    values: list[float | None]


class Chart(BaseModel):
    """What ``static/dashboard.js`` draws: one x label per point, one series per line."""

    kind: Literal["line", "bar"]
    title: str
    y_label: str
    labels: list[str]
    series: list[ChartSeries]


class OverviewPage(BaseModel):
    """``/``: recent runs, pass rate and cost per run, newly broken and flaky scenarios."""

    name: str = "scenarist"
    version: str = __version__
    openapi: str = "/openapi.json"
    docs: str = "/docs"
    health: str = "/api/health"
    runs: list[RunSummary]
    next_cursor: str | None
    pass_rate_chart: Chart
    cost_chart: Chart
    broken: list[queries.BrokenScenario]
    flaky: list[queries.FlakyScenario]


class TagStats(BaseModel):
    tag: str
    total: int
    passed: int
    pass_rate: float | None


class RunPage(BaseModel):
    """``/runs/{run_id}``: the run's summary, its scenarios (filtered by ``status`` and
    ``tag``), pass rates by tag, the previous run of the same suite, and for a
    Veval-style run its items."""

    run: RunSummary
    summary: str
    environment: dict[str, Any]
    status_filter: str | None
    tag_filter: str | None
    status_counts: dict[str, int]
    tags: list[TagStats]
    scenarios: list[ScenarioResultView]
    items: list[ItemSummary]
    previous_run_id: str | None
    vacuous: list[int] = Field(default_factory=list)
    """Positions of the scenarios that passed with no interaction (the run log's footer)."""


class SpanNode(BaseModel):
    """One span of a trace, with its children, for the span tree."""

    name: str
    kind: str
    status: str
    error: str | None
    duration_ms: float | None
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    input: Any
    output: Any
    children: list[SpanNode] = Field(default_factory=list)


class TracePage(BaseModel):
    """``/traces/{trace_id}``: a stored agent run, its input, output and span tree."""

    trace_id: str
    agent_name: str | None
    status: str
    error: str | None
    started_at: datetime | None
    duration_ms: float | None
    cost_usd: float | None
    tokens_in: int
    tokens_out: int
    is_replay: bool
    input: Any
    output: Any
    metadata: dict[str, Any]
    span_count: int
    spans: list[SpanNode]


class InteractionView(BaseModel):
    inputs: Any
    outputs: Any
    error: str | None
    duration_ms: float | None
    spans: list[SpanNode]


class ScenarioTracePage(BaseModel):
    """``/runs/{run_id}/scenarios/{position}``: one scenario of a run, its checks and the
    trace it produced (interactions and their spans)."""

    run_id: str
    run_name: str | None
    scenario: ScenarioResultView
    interactions: list[InteractionView]
    annotations: dict[str, Any]


class HistoryPage(BaseModel):
    """``/scenarios/{name}``: one scenario across runs (newest first), a rolling pass
    rate, how flaky it is, and its latest failure messages."""

    scenario_name: str
    pass_rate: float | None
    points: list[HistoryPoint]
    next_cursor: str | None
    flips: int
    flaky_runs: int
    chart: Chart
    last_failures: list[queries.FailureMessage]
    item_count: int


class ItemView(BaseModel):
    item_id: str
    label: str
    name: str | None
    input: Any
    trace_id: str | None
    tags: list[str]
    assertion_count: int
    expected_output: Any


class ItemsPage(BaseModel):
    """``/items/{name}``: the items of a Veval-style scenario."""

    scenario_name: str
    items: list[ItemView]
    error: str | None = None


def _label(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else "?"


async def overview_page(
    store: SqlStore, *, cursor: str | None = None, limit: int = 30
) -> OverviewPage:
    page = await store.list_runs(cursor=cursor, limit=limit)
    oldest_first = list(reversed(page.items))
    labels = [_label(run.started_at or run.ingested_at) for run in oldest_first]
    names = list(dict.fromkeys(run.name or "(unnamed)" for run in oldest_first))
    pass_series = [
        ChartSeries(
            label=name,
            values=[
                round(run.pass_rate * 100, 2)
                if (run.name or "(unnamed)") == name and run.pass_rate is not None
                else None
                for run in oldest_first
            ],
        )
        for name in names
    ]
    cost = ChartSeries(label="cost (USD)", values=[run.cost_usd for run in oldest_first])
    broken, flaky = await queries.broken_and_flaky(store)
    return OverviewPage(
        runs=page.items,
        next_cursor=page.next_cursor,
        pass_rate_chart=Chart(
            kind="line",
            title="Pass rate per run",
            y_label="pass rate (%)",
            labels=labels,
            series=pass_series,
        ),
        cost_chart=Chart(
            kind="bar", title="Cost per run", y_label="USD", labels=labels, series=[cost]
        ),
        broken=broken,
        flaky=flaky,
    )


def _summary(run: RunSummary) -> str:
    """The terminal report's verdict line, in words."""
    parts = [
        summary_line(
            run.total_count,
            run.passed_count,
            run.failed_count,
            run.errored_count,
            run.skipped_count,
            run.pass_rate,
        )
    ]
    if run.duration_ms is not None:
        parts.append(f"{run.duration_ms / 1000:.2f} s")
    if run.cost_usd is not None:
        parts.append(f"${run.cost_usd:.4f}")
    if not run.complete:
        parts.append("incomplete")
    return " | ".join(parts)


async def run_page(
    store: SqlStore, run_id: str, *, status: str | None = None, tag: str | None = None
) -> RunPage | None:
    detail = await store.get_run(run_id)
    if detail is None:
        return None
    run = RunSummary.model_validate(detail.model_dump(include=set(RunSummary.model_fields)))
    by_tag: dict[str, list[ScenarioResultView]] = {}
    for scenario in detail.scenarios:
        for label in scenario.tags:
            by_tag.setdefault(label, []).append(scenario)
    tags = [
        TagStats(
            tag=label,
            total=len(members),
            passed=sum(s.status == "pass" for s in members),
            pass_rate=pass_rate_of(s.status for s in members),
        )
        for label, members in sorted(by_tag.items())
    ]
    shown = [
        s
        for s in detail.scenarios
        if (status is None or s.status == status) and (tag is None or tag in s.tags)
    ]
    previous_run_id = None
    if run.name is not None:
        before = encode_cursor(run.started_at or run.ingested_at, run.run_id)
        older = await store.list_runs(kind=run.kind, name=run.name, cursor=before, limit=1)
        previous_run_id = older.items[0].run_id if older.items else None
    document = detail.document
    items: list[ItemSummary] = []
    if run.kind == "scenario":
        items = [ItemSummary.model_validate(i) for i in document.get("items") or []]
    header = document.get("header") or {}
    return RunPage(
        run=run,
        summary=_summary(run),
        environment=header.get("environment") or {},
        status_filter=status,
        tag_filter=tag,
        status_counts=dict(Counter(s.status for s in detail.scenarios)),
        tags=tags,
        scenarios=shown,
        items=items,
        previous_run_id=previous_run_id,
        vacuous=[
            p for p in (document.get("footer") or {}).get("vacuous") or [] if isinstance(p, int)
        ],
    )


def _error_text(error: Any) -> str | None:
    if error is None:
        return None
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        return f"{kind}: {message}" if kind else str(message)
    return str(error)


def span_node(span: Span) -> SpanNode:
    error = span.error.model_dump() if span.error is not None else None
    return SpanNode(
        name=span.name,
        kind=span.kind,
        status=span.status,
        error=_error_text(error),
        duration_ms=span.duration_ms,
        model=span.model,
        tokens_in=span.tokens_in,
        tokens_out=span.tokens_out,
        cost_usd=span.cost_usd,
        input=span.input,
        output=span.output,
        children=[span_node(child) for child in span.children],
    )


async def trace_page(store: SqlStore, trace_id: str) -> TracePage | None:
    record: TraceRecord | None = await store.get_trace(trace_id)
    if record is None:
        return None
    spans = record.spans
    dumped = record.model_dump(mode="json", include={"input", "output", "metadata"})
    return TracePage(
        trace_id=record.trace_id,
        agent_name=record.agent_name,
        status=record.status,
        error=_error_text(record.error.model_dump() if record.error else None),
        started_at=record.started_at,
        duration_ms=record.duration_ms,
        cost_usd=record.cost_usd,
        tokens_in=sum(s.tokens_in or 0 for s in token_spans(record.steps)),
        tokens_out=sum(s.tokens_out or 0 for s in token_spans(record.steps)),
        is_replay=record.is_replay,
        input=dumped["input"],
        output=dumped["output"],
        metadata=dumped["metadata"],
        span_count=len(spans),
        spans=[span_node(root) for root in record.steps],
    )


def _interaction(data: dict[str, Any]) -> InteractionView:
    spans: list[SpanNode] = []
    for raw in data.get("spans") or []:
        try:
            spans.append(span_node(Span.model_validate(raw)))
        except ValidationError:  # a record from an older or foreign writer: show it raw
            spans.append(
                SpanNode(
                    name=str(raw.get("name", "?")) if isinstance(raw, dict) else "?",
                    kind="?",
                    status="?",
                    error=None,
                    duration_ms=None,
                    model=None,
                    tokens_in=None,
                    tokens_out=None,
                    cost_usd=None,
                    input=raw,
                    output=None,
                )
            )
    return InteractionView(
        inputs=data.get("inputs"),
        outputs=data.get("outputs"),
        error=_error_text(data.get("error")),
        duration_ms=data.get("duration_ms"),
        spans=spans,
    )


async def scenario_trace_page(
    store: SqlStore, run_id: str, position: int
) -> ScenarioTracePage | None:
    stored = await queries.scenario_result(store, run_id, position)
    if stored is None:
        return None
    trace = stored.document.result.final_trace if stored.document is not None else None
    dumped = trace.model_dump(mode="json", fallback=str) if trace is not None else {}
    return ScenarioTracePage(
        run_id=run_id,
        run_name=stored.run_name,
        scenario=stored.result,
        interactions=[_interaction(i) for i in dumped.get("interactions") or []],
        annotations=dumped.get("annotations") or {},
    )


async def history_page(
    store: SqlStore, scenario_name: str, *, cursor: str | None = None, limit: int = 50
) -> HistoryPage:
    history = await store.scenario_history(scenario_name, cursor=cursor, limit=limit)
    oldest_first = [p for p in reversed(history.points) if p.status in DECIDED]
    rolling: list[float | None] = []
    flips = 0
    for i, point in enumerate(oldest_first):
        recent = oldest_first[max(0, i - _ROLLING + 1) : i + 1]
        rate = pass_rate_of(p.status for p in recent)
        rolling.append(None if rate is None else round(100 * rate, 2))
        if i and (point.status == "pass") != (oldest_first[i - 1].status == "pass"):
            flips += 1
    chart = Chart(
        kind="line",
        title=f"Pass rate over the last {_ROLLING} results",
        y_label="pass rate (%)",
        labels=[_label(p.started_at) for p in oldest_first],
        series=[ChartSeries(label="pass rate", values=rolling)],
    )
    return HistoryPage(
        scenario_name=scenario_name,
        pass_rate=history.pass_rate,
        points=history.points,
        next_cursor=history.next_cursor,
        flips=flips,
        flaky_runs=sum(p.flaky for p in history.points),
        chart=chart,
        last_failures=await queries.failure_messages(store, scenario_name),
        item_count=len(await store.items_with_ids(scenario_name)),
    )


def _item_view(item_id: str, item: ScenarioItem) -> ItemView:
    dumped = item.model_dump(mode="json", include={"input", "expected_output"})
    return ItemView(
        item_id=item_id,
        label=item.label,
        name=item.name,
        input=dumped["input"],
        trace_id=item.trace_id,
        tags=item.tags,
        assertion_count=len(item.assertions),
        expected_output=dumped["expected_output"],
    )


async def items_page(store: SqlStore, scenario_name: str, *, error: str | None = None) -> ItemsPage:
    items = await store.items_with_ids(scenario_name)
    return ItemsPage(
        scenario_name=scenario_name,
        items=[_item_view(item_id, item) for item_id, item in items],
        error=error,
    )


class ComparePage(StoredComparison):
    """``/runs/{run_id}/compare?baseline=``: the run against a baseline (by default its
    previous run): fixed, broken, still failing, new, removed, skipped, flaky changes."""

    summary: str


def _compare_summary(result: StoredComparison) -> str:
    c = result.comparison
    counts = [
        (len(c.fixed), "fixed"),
        (len(c.broken), "broken"),
        (len(c.still_failing), "still failing"),
        (len(c.new), "new"),
        (len(c.removed), "removed"),
        (len(c.skipped), "skipped"),
        (len(c.flaky_changes), "flaky changes"),
        (c.unchanged_passing, "still passing"),
    ]
    rates = f"pass rate {_percent(c.baseline_pass_rate)} → {_percent(c.pass_rate)}"
    return " · ".join([", ".join(f"{n} {label}" for n, label in counts), rates])


def _percent(rate: float | None) -> str:
    return "–" if rate is None else f"{rate:.1%}"


async def compare_page(store: SqlStore, run_id: str, baseline: str = PREVIOUS) -> ComparePage:
    """Raises :class:`~scenarist.store.sql.compare.CompareError` when a run is missing."""
    result = await compare_stored_runs(store, run_id, baseline)
    return ComparePage(**dict(result), summary=_compare_summary(result))
