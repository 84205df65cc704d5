"""The dashboard's pages as data: one model and one context builder per page.

A builder takes the store and the page's parameters and returns the page model; the route
renders that model with a template, or returns it as JSON (the page's JSON twin). So what
the tests assert on JSON is exactly what the browser shows. Builders read through the
store's methods and :mod:`scenarist.store.sql.dashboard`; they hold no SQL.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from scenarist._version import __version__
from scenarist.model.budget import BudgetReport
from scenarist.model.certificate import ReplayCertificate, trace_certificate
from scenarist.model.items import ItemSummary, ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.model.results import ScenarioResult
from scenarist.model.status import DECIDED, FAILING, pass_rate_of, summary_line
from scenarist.model.trace import Span
from scenarist.model.usage import token_spans
from scenarist.report._money import format_usd
from scenarist.report.diff import ValueDiff, check_diff
from scenarist.server.dashboard import trace_view
from scenarist.store.sql import dashboard as queries
from scenarist.store.sql.compare import (
    PREVIOUS,
    BaselineChoice,
    StoredComparison,
    compare_stored_runs,
    default_baseline,
)
from scenarist.store.sql.projects import ProjectActivity
from scenarist.store.sql.records import (
    CheckResultView,
    HistoryPoint,
    RunSummary,
    ScenarioResultView,
    encode_cursor,
)
from scenarist.store.sql.reviews import ReviewState, fold_reviews, reviewed_counts
from scenarist.store.sql.store import SqlStore

__all__ = [
    "Chart",
    "ChartSeries",
    "CheckKindStats",
    "CheckView",
    "ComparePage",
    "FailureGroup",
    "HistoryPage",
    "InteractionView",
    "ItemView",
    "ItemsPage",
    "OverviewPage",
    "RecentPage",
    "RunChoice",
    "RunPage",
    "ScenarioTracePage",
    "SpanNode",
    "SuitePage",
    "TagStats",
    "TracePage",
    "compare_page",
    "failure_groups",
    "failure_pattern",
    "history_page",
    "items_page",
    "overview_page",
    "recent_page",
    "run_page",
    "scenario_trace_page",
    "suite_page",
    "trace_page",
]

STATUSES = ("pass", "fail", "error", "skip")
_ROLLING = 5  # the history chart's pass rate is over this many results


class ChartSeries(BaseModel):
    label: str
    values: list[float | None]


class Chart(BaseModel):
    """What ``static/dashboard.js`` draws: one x label per point, one series per line.

    ``y_unit`` fixes the axis: ``percent`` is always 0-100 %, ``usd`` is money at its
    scale (``$0.000032``, never ``3.5E-5``). Lines are straight between points (no
    smoothing that overshoots 100 %), and the x labels are distinct."""

    kind: Literal["line", "bar"]
    title: str
    y_label: str
    y_unit: Literal["percent", "usd", "count"] = "count"
    labels: list[str]
    series: list[ChartSeries]
    note: str | None = None
    """What the chart leaves out and why (subset runs: not suite-wide points)."""


class RunFilters(BaseModel):
    """The overview's filters (``?suite=&branch=&since=&until=``); ``None`` is "any"."""

    suite: str | None = None
    branch: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.suite, self.branch, self.since, self.until))


class OverviewPage(BaseModel):
    """``/``: recent runs (filtered by suite, branch and date range), pass rate and cost
    per run, newly broken and flaky scenarios."""

    name: str = "scenarist"
    version: str = __version__
    openapi: str = "/openapi.json"
    docs: str = "/docs"
    health: str = "/api/health"
    filters: RunFilters
    suites: list[str]
    branches: list[str]
    runs: list[RunSummary]
    next_cursor: str | None
    pass_rate_chart: Chart
    cost_chart: Chart
    broken: list[queries.BrokenScenario]
    flaky: list[queries.FlakyScenario]
    broken_total: int = 0
    """How many broke in all (the list shows 10, then "and N more" links ``/broken``)."""
    flaky_total: int = 0
    """How many are flaky in all (the list shows 10, then "and N more" links ``/flaky``)."""
    elsewhere: list[ProjectActivity] = Field(default_factory=list)
    """When this project shows no run: the caller's other projects that hold runs."""


class SuitePage(BaseModel):
    """``/suites/{name}``: one suite's (or Veval-style scenario's) runs and its trend."""

    suite_name: str
    runs: list[RunSummary]
    next_cursor: str | None
    pass_rate: float | None
    """Over the runs shown that ran the whole suite: passed over decided scenarios."""
    pass_rate_chart: Chart
    cost_chart: Chart


class TagStats(BaseModel):
    tag: str
    total: int
    passed: int
    pass_rate: float | None


class CheckKindStats(BaseModel):
    """How the checks of one kind fared across a run's scenarios."""

    check_kind: str
    total: int
    failed: int
    errored: int


class FailureGroup(BaseModel):
    """Failing scenarios of a run with the same failure: the same check (or step error)
    and the same message once numbers and ids are masked (:func:`failure_pattern`)."""

    check: str | None
    """The failing check's name or kind (``None``: the step raised)."""
    status: str
    """``fail`` or ``error``: the worse of its members'."""
    pattern: str
    """The message with numbers and ids masked (``#``, ``<id>``)."""
    example: str
    """The first member's message as it was."""
    count: int
    positions: list[int]
    """Its scenarios' positions, in the page's sort order."""
    scenario_names: list[str]


class RunPage(BaseModel):
    """``/runs/{run_id}``: the run's summary, its scenarios (filtered by ``status``,
    ``tag`` and a ``q`` search of names, sorted by ``sort``), failures and errors first,
    the failing ones grouped by failure (``failure_groups``), pass rates by tag and by
    check kind, the previous run of the same suite, and for a Veval-style run its items
    (failed first too). The HTML folds the passing scenarios and the groups."""

    run: RunSummary
    summary: str
    environment: dict[str, Any]
    status_filter: str | None
    tag_filter: str | None
    search: str | None
    status_counts: dict[str, int]
    tags: list[TagStats]
    check_kinds: list[CheckKindStats]
    scenarios: list[ScenarioResultView]
    items: list[ItemSummary]
    previous_run_id: str | None
    compare_baseline: BaselineChoice | None = None
    """The compare link's baseline: the default rule (same branch, merge base, main)."""
    sort: str = "status"
    """``status`` (fail, error, skip, pass, then run order), ``name``, ``duration`` (longest
    first) or ``cost`` (dearest first)."""
    group: str = "message"
    """``message``: failing scenarios sharing a failure are folded into a group;
    ``none``: one row each."""
    failure_groups: list[FailureGroup] = Field(default_factory=list)
    """The shown failing scenarios by failure, largest group first (every group, also
    those of one; the HTML folds those of two or more)."""
    vacuous: list[int] = Field(default_factory=list)
    """Positions of the scenarios that passed with no interaction (the run log's footer)."""
    certificate: ReplayCertificate | None = None
    """The run's replay certificate (the run log's header, or a Veval-style run's
    record); ``None``: not a replay nor a recording."""
    budget: BudgetReport | None = None
    """The run's budget (the run log's header): limit, estimate, spend, what it stopped;
    ``None``: the run had none."""
    state: Literal["complete", "running", "incomplete"] = "complete"
    """``running``: no footer yet and a part arrived in the last :data:`LIVE_IDLE` (the
    page polls for more); ``incomplete``: no footer and nothing for longer (the client
    stopped: what arrived stays readable)."""
    reviews: dict[int, ReviewState] = Field(default_factory=dict)
    """The reviewed scenarios (by position): overrides, expected failures, comments."""
    reviewed_counts: dict[str, int] = Field(default_factory=dict)
    """The counts after review (``status_counts`` are the raw ones): each scenario under
    its reviewed verdict, expected failures apart (``expected``)."""


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
    ttft_ms: float | None = None
    input: Any
    output: Any
    children: list[SpanNode] = Field(default_factory=list)
    span_id: str = ""


class TraceLineage(BaseModel):
    """The trace page's links to the trace's original and its descendants.

    ``replay_of``: the trace this one replays (a replay's ``metadata.replay_of``).
    ``replays``: the stored replays of this trace, newest first, each with the verdicts
    of the scenario runs it was an item of. ``items``: the stored items made from this
    trace, each with its verdict in the newest run of its scenario. ``judged``: some
    scenario run judged this trace or a replay of it (the page's "no scenario run has
    judged this trace" shows only when it is false). ``replay_problem``: why an item
    made from this trace would error instead of replaying (``None`` when it replays).
    ``item_scenarios``: the scenarios with stored items, offered by the "make an item"
    form."""

    replay_of: str | None = None
    replays: list[queries.ReplayOfTrace] = Field(default_factory=list)
    items: list[queries.ItemFromTrace] = Field(default_factory=list)
    judged: bool = False
    replay_problem: str | None = None
    item_scenarios: list[str] = Field(default_factory=list)


class TracePage(BaseModel):
    """``/traces/{trace_id}``: a stored agent run. At the top, the verdicts of the items
    that ran it (which failed and why) with links to their run and the scenario's
    history; then its input and output, a waterfall of its spans to time scale, its LLM
    calls as chat, and the span tree with each span's raw input and output.

    ``status`` is the agent's own (it finished or raised); whether the run was *good*
    is the items' verdict, so a failed item never shows as a green "success"."""

    trace_id: str
    agent_name: str | None
    status: str
    error: str | None
    started_at: datetime | None
    duration_ms: float | None
    cost_usd: float | None
    tokens_in: int
    tokens_out: int
    llm_calls: int
    first_token_ms: float | None
    is_replay: bool
    input: Any
    output: Any
    metadata: dict[str, Any]
    span_count: int
    verdicts: list[queries.ItemVerdict]
    verdict: Literal["pass", "fail"] | None
    """``fail`` when any item that ran this trace failed, ``None`` when none is known."""
    waterfall: trace_view.Waterfall
    chats: list[trace_view.ChatView]
    spans: list[SpanNode]
    lineage: TraceLineage = Field(default_factory=TraceLineage)
    """Where the trace came from and where it went: the trace it replays, its replays
    and the items made from it, with their verdicts (:func:`trace_lineage`)."""
    certificate: ReplayCertificate | None = None
    """A replayed trace's certificate (its captured calls, the guarantee it ran under)."""


async def trace_lineage(
    store: SqlStore, record: TraceRecord, verdicts: list[queries.ItemVerdict]
) -> TraceLineage:
    """The :class:`TraceLineage` of ``record`` (every query scoped to the store's project)."""
    from scenarist.veval.agent_replay import replay_problem

    original = record.metadata.get("replay_of") if record.is_replay else None
    replays = await queries.replays_of(store, record.trace_id)
    items = await queries.items_from_trace(store, record.trace_id)
    judged = bool(verdicts) or any(r.verdicts for r in replays) or any(i.latest for i in items)
    return TraceLineage(
        replay_of=original if isinstance(original, str) and original else None,
        replays=replays,
        items=items,
        judged=judged,
        replay_problem=replay_problem(record),
        item_scenarios=await queries.item_scenario_names(store),
    )


class InteractionView(BaseModel):
    inputs: Any
    outputs: Any
    error: str | None
    duration_ms: float | None
    spans: list[SpanNode]
    waterfall: trace_view.Waterfall | None = None
    chats: list[trace_view.ChatView] = Field(default_factory=list)


class CheckView(CheckResultView):
    """A check verdict, with the expected-against-actual diff of a failed comparison."""

    diff: ValueDiff | None = None
    calibration: str | None = None
    """A calibrated judge's badge (``calibrated κ 0.82, agreement 90.0%, n=12, date``)."""


class StepErrorView(BaseModel):
    """A step that raised: what raised it, where in the user's code, the traceback."""

    step: int
    """From 1."""
    exception_type: str
    message: str
    what: str | None
    """``the agent call``, ``the input generator``, ``the outputs function``, ``a timeout``."""
    location: str | None
    """``agent.py:12 in lookup``: the user's own frame."""
    described: str
    traceback: str | None


class ScenarioTracePage(BaseModel):
    """``/runs/{run_id}/scenarios/{position}``: one scenario of a run, its checks (a
    failed comparison with its diff) and the trace it produced (interactions, their
    spans as a waterfall and a tree)."""

    run_id: str
    run_name: str | None
    scenario: ScenarioResultView
    checks: list[CheckView]
    interactions: list[InteractionView]
    annotations: dict[str, Any]
    errors: list[StepErrorView] = Field(default_factory=list)
    """The steps that raised, in order, each with its traceback."""
    vacuous_reason: str | None = None
    """Why a pass tested nothing (``ScenarioResult.vacuous_reason``), else ``None``."""
    review: ReviewState | None = None
    """People's review of this result (override, expected failure, comments, history)."""


class HistoryPage(BaseModel):
    """``/scenarios/{name}?suite=``: one scenario (project, suite, name) across runs
    (newest first), a rolling pass rate, how flaky it is, and its latest failure
    messages. Without ``suite`` (an older link), the one suite that holds the name;
    when several do, ``choose`` is true and the page lists them, with no points."""

    scenario_name: str
    suite_name: str | None
    """The suite shown (``""``: Veval-style runs and unnamed suites; ``None``: none
    chosen, see ``suites``)."""
    suites: list[str] = Field(default_factory=list)
    """Every suite holding a scenario of this name (``""``: Veval-style runs)."""
    choose: bool = False
    """No ``suite`` was given and several suites hold the name: pick one of ``suites``."""
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
    runs: list[queries.ScenarioRunItems] = Field(default_factory=list)
    """The newest runs of the scenario, each with the items it ran: items passed inline
    (``run_scenario(..., items=[...])``, never stored) are listed only here, under the
    run that used them (``inline``)."""


def _label(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else "?"


def _distinct_labels(times: Sequence[datetime | None]) -> list[str]:
    """One x label per point, never twice the same: minutes, then seconds where two
    points share a minute, then ``#2``, ``#3`` where they share a second too."""
    minutes = [_label(at) for at in times]
    clash = {m for m, n in Counter(minutes).items() if n > 1}
    labels = [
        at.strftime("%Y-%m-%d %H:%M:%S") if at is not None and m in clash else m
        for m, at in zip(minutes, times, strict=True)
    ]
    seen: Counter[str] = Counter()
    distinct = []
    for label in labels:
        seen[label] += 1
        distinct.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return distinct


def _run_charts(oldest_first: Sequence[RunSummary]) -> tuple[Chart, Chart]:
    """Pass rate (one line per suite, 0-100 %) and cost per run (money) over ``runs``.

    Subset runs (``RunSummary.subset``: a ``-k``/``--tag`` selection, or fewer scenarios
    than the suite's usual set) are left out of the pass rate, with a note saying so: 3
    scenarios failing of 3 is not the suite dropping to 0 %."""
    labels = _distinct_labels([run.started_at or run.ingested_at for run in oldest_first])
    whole = [run for run in oldest_first if not run.subset]
    names = list(dict.fromkeys(run.name or "(unnamed)" for run in whole))
    pass_series = [
        ChartSeries(
            label=name,
            values=[
                round(run.pass_rate * 100, 2)
                if (run.name or "(unnamed)") == name and run.pass_rate is not None
                else None
                for run in whole
            ],
        )
        for name in names
    ]
    left_out = len(oldest_first) - len(whole)
    note = None
    if left_out:
        runs = "run is" if left_out == 1 else "runs are"
        note = (
            f"{left_out} subset {runs} not drawn: they ran part of the suite "
            "(-k/--tag, or fewer scenarios than usual)"
        )
    cost = ChartSeries(label="cost (USD)", values=[run.cost_usd for run in oldest_first])
    return (
        Chart(
            kind="line",
            title="Pass rate per run",
            y_label="pass rate (%)",
            y_unit="percent",
            labels=_distinct_labels([run.started_at or run.ingested_at for run in whole]),
            series=pass_series,
            note=note,
        ),
        Chart(
            kind="bar",
            title="Cost per run",
            y_label="USD",
            y_unit="usd",
            labels=labels,
            series=[cost],
        ),
    )


async def overview_page(
    store: SqlStore,
    *,
    cursor: str | None = None,
    limit: int = 30,
    filters: RunFilters | None = None,
) -> OverviewPage:
    filters = filters or RunFilters()
    page = await queries.runs_page(
        store,
        name=filters.suite,
        branch=filters.branch,
        since=filters.since,
        until=filters.until,
        cursor=cursor,
        limit=limit,
    )
    pass_rate_chart, cost_chart = _run_charts(list(reversed(page.items)))
    recent = await queries.broken_and_flaky(store)
    facets = await queries.run_facets(store)
    return OverviewPage(
        filters=filters,
        suites=facets.names,
        branches=facets.branches,
        runs=page.items,
        next_cursor=page.next_cursor,
        pass_rate_chart=pass_rate_chart,
        cost_chart=cost_chart,
        broken=recent.broken,
        flaky=recent.flaky,
        broken_total=recent.broken_total,
        flaky_total=recent.flaky_total,
    )


class RecentPage(BaseModel):
    """``/broken`` and ``/flaky``: every scenario that broke recently, or every flaky one,
    within the newest 50 runs (the overview shows the first 10 of each)."""

    kind: Literal["broken", "flaky"]
    broken: list[queries.BrokenScenario] = Field(default_factory=list)
    flaky: list[queries.FlakyScenario] = Field(default_factory=list)
    total: int


async def recent_page(store: SqlStore, kind: Literal["broken", "flaky"]) -> RecentPage:
    recent = await queries.broken_and_flaky(store, limit=None)
    if kind == "broken":
        return RecentPage(kind=kind, broken=recent.broken, total=recent.broken_total)
    return RecentPage(kind=kind, flaky=recent.flaky, total=recent.flaky_total)


async def suite_page(
    store: SqlStore, name: str, *, cursor: str | None = None, limit: int = 50
) -> SuitePage:
    page = await queries.runs_page(store, name=name, cursor=cursor, limit=limit)
    pass_rate_chart, cost_chart = _run_charts(list(reversed(page.items)))
    whole = [run for run in page.items if not run.subset]  # subset runs: not suite-wide
    passed = sum(run.passed_count for run in whole)
    decided = sum(run.passed_count + run.failed_count + run.errored_count for run in whole)
    return SuitePage(
        suite_name=name,
        runs=page.items,
        next_cursor=page.next_cursor,
        pass_rate=passed / decided if decided else None,
        pass_rate_chart=pass_rate_chart,
        cost_chart=cost_chart,
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
        parts.append(format_usd(run.cost_usd))
    if not run.complete:
        parts.append(_run_state(run))
    return " | ".join(parts)


_ATTENTION = {"fail": 0, "error": 1, "skip": 2, "pass": 3}  # the run page's order
LIVE_IDLE = timedelta(minutes=10)
"""A run without its footer is ``running`` while its parts keep coming, at most this far
apart; after that the page calls it ``incomplete`` and stops polling."""


def _run_state(run: RunSummary) -> Literal["complete", "running", "incomplete"]:
    if run.complete:
        return "complete"
    return "running" if datetime.now(UTC) - run.ingested_at < LIVE_IDLE else "incomplete"


SORTS = ("status", "name", "duration", "cost")
GROUPINGS = ("message", "none")
_PATTERN_CHARS = 500
# Masked in failure messages before grouping, most specific first: UUIDs, long hex ids
# (trace, run, commit), ids with digits (``case_0042``, ``req-7f3a``), numbers.
_MASKS = (
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<id>",
    ),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b"), "<id>"),
    (re.compile(r"\d+(?:[.,]\d+)*"), "#"),
)


def failure_pattern(message: str) -> str:
    """``message`` with its ids and numbers masked and its spacing collapsed, so the
    same failure in 79 scenarios is one group: ``expected 42 got 7 (trace 9f3a…)`` and
    ``expected 40 got 3 (trace 1b2c…)`` both read ``expected # got # (trace <id>)``."""
    text = " ".join(message.split())
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text[:_PATTERN_CHARS]


def _first_failure(scenario: ScenarioResultView) -> tuple[str | None, str]:
    """The check (``None``: the step raised) and message a failing scenario is grouped by."""
    if scenario.error:
        return None, scenario.error
    for check in scenario.checks:
        if check.status in FAILING:
            return check.check_name or check.check_kind or "check", check.message or ""
    return None, ""


def failure_groups(scenarios: Sequence[ScenarioResultView]) -> list[FailureGroup]:
    """The failing ``scenarios`` grouped by check and :func:`failure_pattern`, largest
    group first (then the order of its first member)."""
    groups: dict[tuple[str | None, str], FailureGroup] = {}
    for scenario in scenarios:
        if scenario.status not in FAILING:
            continue
        check, message = _first_failure(scenario)
        key = (check, failure_pattern(message))
        group = groups.get(key)
        if group is None:
            group = groups[key] = FailureGroup(
                check=check,
                status=scenario.status,
                pattern=key[1],
                example=message,
                count=0,
                positions=[],
                scenario_names=[],
            )
        group.count += 1
        group.positions.append(scenario.position)
        group.scenario_names.append(scenario.scenario_name)
        if scenario.status == "error":
            group.status = "error"
    return sorted(groups.values(), key=lambda g: -g.count)  # stable: first seen first


def _sort_key(sort: str) -> Any:
    """The run page's order for ``sort`` (missing durations and costs last)."""
    if sort == "name":
        return lambda s: (s.scenario_name.casefold(), s.position)
    if sort == "duration":
        return lambda s: (s.duration_ms is None, -(s.duration_ms or 0), s.position)
    if sort == "cost":
        return lambda s: (s.cost_usd is None, -(s.cost_usd or 0), s.position)
    return lambda s: (_ATTENTION.get(s.status, 2), s.position)


def _check_kinds(scenarios: Sequence[ScenarioResultView]) -> list[CheckKindStats]:
    counts: dict[str, list[int]] = {}
    for scenario in scenarios:
        for check in scenario.checks:
            entry = counts.setdefault(check.check_kind or "check", [0, 0, 0])
            entry[0] += 1
            entry[1] += check.status == "fail"
            entry[2] += check.status == "error"
    rows = [
        CheckKindStats(check_kind=kind, total=t, failed=f, errored=e)
        for kind, (t, f, e) in counts.items()
    ]
    return sorted(rows, key=lambda r: (-(r.failed + r.errored), r.check_kind))


async def run_page(
    store: SqlStore,
    run_id: str,
    *,
    status: str | None = None,
    tag: str | None = None,
    search: str | None = None,
    sort: str = "status",
    group: str = "message",
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
    needle = search.casefold() if search else None
    shown = sorted(
        (
            s
            for s in detail.scenarios
            if (status is None or s.status == status)
            and (tag is None or tag in s.tags)
            and (needle is None or needle in s.scenario_name.casefold())
        ),
        key=_sort_key(sort),
    )
    previous_run_id = None
    if run.name is not None:
        before = encode_cursor(run.started_at or run.ingested_at, run.run_id)
        older = await store.list_runs(kind=run.kind, name=run.name, cursor=before, limit=1)
        previous_run_id = older.items[0].run_id if older.items else None
    document = detail.document
    items: list[ItemSummary] = []
    if run.kind == "scenario":
        items = [ItemSummary.model_validate(i) for i in document.get("items") or []]
        items = [i for i in items if needle is None or needle in i.name.casefold()]
        items.sort(key=lambda i: i.passed)  # failed items first, in their order
    header = document.get("header") or {}
    statuses = {s.position: s.status for s in detail.scenarios}
    named = {s.position: s.scenario_name for s in detail.scenarios}
    reviews = {
        position: fold_reviews(run_id, position, named[position], statuses[position], entries)
        for position, entries in (await store.review_entries(run_id)).items()
        if position in statuses
    }
    return RunPage(
        run=run,
        summary=_summary(run),
        environment=header.get("environment") or {},
        status_filter=status,
        tag_filter=tag,
        search=search,
        status_counts=dict(Counter(s.status for s in detail.scenarios)),
        tags=tags,
        check_kinds=_check_kinds(detail.scenarios),
        scenarios=shown,
        items=items,
        previous_run_id=previous_run_id,
        compare_baseline=await default_baseline(store, run.run_id),
        sort=sort,
        group=group,
        failure_groups=failure_groups(shown) if run.kind == "suite" else [],
        vacuous=[
            p for p in (document.get("footer") or {}).get("vacuous") or [] if isinstance(p, int)
        ],
        certificate=_stored_certificate(document),
        budget=_stored_budget(header),
        state=_run_state(run),
        reviews=reviews,
        reviewed_counts=reviewed_counts(statuses, reviews) if reviews else {},
    )


def _stored_budget(header: dict[str, Any]) -> BudgetReport | None:
    """A stored run's budget (a hand-made one that does not read is shown as none)."""
    found = header.get("budget")
    if not isinstance(found, dict):
        return None
    try:
        return BudgetReport.model_validate(found)
    except ValueError:
        return None


def _stored_certificate(document: dict[str, Any]) -> ReplayCertificate | None:
    """A stored run's certificate: the run log header's, or a Veval-style run's (an
    unreadable one, from a hand-made log, is shown as none rather than failing the page)."""
    found = (document.get("header") or {}).get("certificate") or document.get("certificate")
    if not isinstance(found, dict):
        return None
    try:
        return ReplayCertificate.model_validate(found)
    except ValueError:
        return None


def _error_text(error: Any) -> str | None:
    if error is None:
        return None
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        return f"{kind}: {message}" if kind else str(message)
    return str(error)


def span_node(span: Span) -> SpanNode:
    error = span.error.to_dict() if span.error is not None else None
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
        ttft_ms=trace_view.ttft_ms(span),
        input=span.input,
        output=span.output,
        children=[span_node(child) for child in span.children],
        span_id=span.span_id,
    )


async def trace_page(
    store: SqlStore, trace_id: str, *, run_id: str | None = None
) -> TracePage | None:
    """``run_id`` (the run page's links carry it) names the run whose item verdict to
    show; without it, the Veval-style runs around the trace's start are looked at."""
    record: TraceRecord | None = await store.get_trace(trace_id)
    if record is None:
        return None
    spans = record.spans
    dumped = record.model_dump(mode="json", include={"input", "output", "metadata"})
    verdicts = await queries.item_verdicts(store, trace_id, run_id=run_id, near=record.started_at)
    if run_id is not None and not verdicts:  # a stale or foreign ?run=: look around
        verdicts = await queries.item_verdicts(store, trace_id, near=record.started_at)
    chart = trace_view.waterfall(
        record.steps, started_at=record.started_at, duration_ms=record.duration_ms
    )
    counted = token_spans(record.steps)
    return TracePage(
        trace_id=record.trace_id,
        agent_name=record.agent_name,
        status=record.status,
        error=_error_text(record.error.to_dict() if record.error is not None else None),
        started_at=record.started_at,
        duration_ms=record.duration_ms,
        cost_usd=record.cost_usd,
        tokens_in=sum(s.tokens_in or 0 for s in counted),
        tokens_out=sum(s.tokens_out or 0 for s in counted),
        llm_calls=sum(s.kind == "llm" for s in spans),
        first_token_ms=trace_view.first_token_ms(chart, record.steps),
        is_replay=record.is_replay,
        input=dumped["input"],
        output=dumped["output"],
        metadata=dumped["metadata"],
        span_count=len(spans),
        verdicts=verdicts,
        verdict=None if not verdicts else ("pass" if all(v.passed for v in verdicts) else "fail"),
        waterfall=chart,
        chats=trace_view.chat_views(record.steps),
        spans=[span_node(root) for root in record.steps],
        lineage=await trace_lineage(store, record, verdicts),
        certificate=trace_certificate(record),
    )


def _interaction(data: dict[str, Any]) -> InteractionView:
    spans: list[SpanNode] = []
    parsed: list[Span] = []
    for raw in data.get("spans") or []:
        try:
            parsed.append(Span.model_validate(raw))
            spans.append(span_node(parsed[-1]))
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
        waterfall=trace_view.waterfall(parsed) if parsed else None,
        chats=trace_view.chat_views(parsed),
    )


async def scenario_trace_page(
    store: SqlStore, run_id: str, position: int
) -> ScenarioTracePage | None:
    stored = await queries.scenario_result(store, run_id, position)
    if stored is None:
        return None
    result = stored.document.result if stored.document is not None else None
    trace = result.final_trace if result is not None else None
    dumped = trace.model_dump(mode="json", fallback=str) if trace is not None else {}
    checks = []
    for check in stored.result.checks:
        diff = badge = None
        try:
            verdict = result.steps[check.step_index].results[check.check_index] if result else None
        except IndexError:
            verdict = None
        if verdict is not None and check.status in FAILING:
            diff = check_diff(verdict.details)
        if verdict is not None:
            badge = _calibration(verdict.details)
        checks.append(CheckView(**check.model_dump(), diff=diff, calibration=badge))
    return ScenarioTracePage(
        run_id=run_id,
        run_name=stored.run_name,
        scenario=stored.result,
        checks=checks,
        interactions=[_interaction(i) for i in dumped.get("interactions") or []],
        annotations=dumped.get("annotations") or {},
        errors=_step_errors(result),
        vacuous_reason=result.vacuous_reason if result is not None else None,
        review=fold_reviews(
            run_id,
            position,
            stored.result.scenario_name,
            stored.result.status,
            (await store.review_entries(run_id, [position])).get(position, []),
        ),
    )


def _calibration(details: dict[str, Any] | None) -> str | None:
    badge = (details or {}).get("calibration")
    if not isinstance(badge, dict) or "kappa" not in badge:
        return None
    from scenarist.judges.gate import badge_text

    return badge_text(badge)


def _step_errors(result: ScenarioResult | None) -> list[StepErrorView]:
    views = []
    for index, step in enumerate(result.steps if result is not None else [], start=1):
        if (error := step.error) is not None:
            origin = error.origin()
            views.append(
                StepErrorView(
                    step=index,
                    exception_type=error.exception_type,
                    message=error.message,
                    what=origin.what,
                    location=origin.location,
                    described=error.describe(),
                    traceback=error.traceback,
                )
            )
    return views


async def chosen_suite(
    store: SqlStore, scenario_name: str, suite: str | None
) -> tuple[str | None, list[str]]:
    """The suite whose ``scenario_name`` to show and every suite that holds it: the one
    given, else the only one (``None`` when several hold it: the caller must choose)."""
    suites = await store.scenario_suites(scenario_name)
    if suite is not None:
        return suite, suites
    return (suites[0] if len(suites) == 1 else None), suites


async def history_page(
    store: SqlStore,
    scenario_name: str,
    *,
    suite: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> HistoryPage:
    chosen, suites = await chosen_suite(store, scenario_name, suite)
    if chosen is None and len(suites) > 1:
        return HistoryPage(
            scenario_name=scenario_name,
            suite_name=None,
            suites=suites,
            choose=True,
            pass_rate=None,
            points=[],
            next_cursor=None,
            flips=0,
            flaky_runs=0,
            chart=Chart(kind="line", title="", y_label="", y_unit="percent", labels=[], series=[]),
            last_failures=[],
            item_count=len(await store.items_with_ids(scenario_name)),
        )
    history = await store.scenario_history(
        scenario_name, suite=chosen if chosen is not None else "", cursor=cursor, limit=limit
    )
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
        y_unit="percent",
        labels=[_label(p.started_at) for p in oldest_first],
        series=[ChartSeries(label="pass rate", values=rolling)],
    )
    return HistoryPage(
        scenario_name=scenario_name,
        suite_name=chosen if chosen is not None else "",
        suites=suites,
        pass_rate=history.pass_rate,
        points=history.points,
        next_cursor=history.next_cursor,
        flips=flips,
        flaky_runs=sum(p.flaky for p in history.points),
        chart=chart,
        last_failures=await queries.failure_messages(
            store, scenario_name, suite=chosen if chosen is not None else ""
        ),
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
        runs=await queries.scenario_runs_with_items(store, scenario_name),
    )


class RunChoice(BaseModel):
    """A run offered by the compare page's pickers."""

    run_id: str
    started_at: datetime | None
    git_branch: str | None
    pass_rate: float | None


class ComparePage(StoredComparison):
    """``/runs/{run_id}/compare?baseline=`` (and ``/compare?run=&baseline=``): the run
    against a baseline (by default per :func:`default_baseline`, said in
    ``baseline_choice.reason``): the significance sections, the changed scenarios with
    both outputs, failing checks and deltas, the unchanged ones folded; ``choices``: the
    suite's recent runs for the pickers, newest first."""

    summary: str
    choices: list[RunChoice]


CHOICES = 50


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
        (len(c.regressed), "regressed"),
        (len(c.changed_not_significant), "changed, not significant"),
    ]
    rates = f"pass rate {_percent(c.baseline_pass_rate)} → {_percent(c.pass_rate)}"
    return " · ".join([", ".join(f"{n} {label}" for n, label in counts), rates])


def _percent(rate: float | None) -> str:
    return "–" if rate is None else f"{rate:.1%}"


async def _choices(store: SqlStore, result: StoredComparison) -> list[RunChoice]:
    """The suite's newest runs, with both sides added when older than those."""
    run = result.run
    recent = await store.list_runs(kind=run.kind, name=run.name, limit=CHOICES)
    choices = [RunChoice.model_validate(r, from_attributes=True) for r in recent.items]
    known = {c.run_id for c in choices}
    for side in (run, result.baseline):
        if side.run_id not in known:
            known.add(side.run_id)
            choices.append(RunChoice.model_validate(side, from_attributes=True))
    return choices


async def compare_page(
    store: SqlStore, run_id: str, baseline: str = PREVIOUS, alpha: float = 0.05
) -> ComparePage:
    """Raises :class:`~scenarist.store.sql.compare.CompareError` when a run is missing."""
    result = await compare_stored_runs(store, run_id, baseline, alpha=alpha)
    return ComparePage(
        **dict(result), summary=_compare_summary(result), choices=await _choices(store, result)
    )
