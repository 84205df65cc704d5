"""The one terminal renderer: every result type becomes a stream of Rich renderables.

``render(obj)`` is what ``__rich_console__`` on the result models yields, so
``print_report``, ``rich.print(result)``, the CLI and the pytest summary all look the same.
The layout follows giskard-checks' report (``Suite Results`` rule, a dot line, a
``FAILURES`` section with one panel per failed scenario, a ``SUMMARY`` and a last
``Summary:`` line); the polish is ours: columns are a grid rather than tab stops, unnamed
checks show their kind, values are cut with an ellipsis instead of wrapping the layout,
spans show as a tree, and a scenario that passed without checking anything is flagged.

Styles name colours but never force them: the ``Console`` drops them when the output is
not a terminal or ``NO_COLOR`` is set. Rich is imported inside the functions so that
importing this module stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from scenarist.model.comparison import RunComparison
from scenarist.model.results import (
    CheckResult,
    GroupedSuiteResult,
    ScenarioResult,
    SuiteResult,
    TestCaseResult,
)
from scenarist.model.status import FAILING, format_rate
from scenarist.model.trace import Trace
from scenarist.report.diff import ValueDiff, check_diff

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

    from scenarist.model.trace import Span

__all__ = ["MAX_FAILURES_ENV", "print_report", "render"]

MAX_FAILURES_ENV = "SCENARIST_MAX_REPORTED_FAILURES"
GISKARD_MAX_FAILURES_ENV = "GISKARD_CHECKS_MAX_REPORTED_FAILURES"  # honoured as an alias
DEFAULT_MAX_FAILURES: int | None = None  # unlimited, as giskard-checks
_MAX_MESSAGE_CHARS = 1000  # a check message longer than this is cut (it still wraps)
_MAX_VALUE_CHARS = 2000  # inputs/outputs are cut to one line anyway; bound the work

STATUS_STYLE = {
    "pass": "green",
    "fail": "red",
    "error": "yellow",
    "skip": "grey50",
    "budget": "magenta",
}
_TITLE = {
    "pass": "✅ PASSED",
    "fail": "❌ FAILED",
    "error": "⚠️ ERROR",
    "skip": "⚠️ SKIPPED",
    "budget": "⛔ BUDGET",
}
_DOT = {"pass": ".", "fail": "F", "error": "E", "skip": "s", "budget": "B"}
_COUNT_WORDS = (("error", "errored"), ("fail", "failed"), ("skip", "skipped"), ("pass", "passed"))
_OUTCOME_WORDS = (
    ("error", "errored"),
    ("budget", "not started (budget)"),
    ("fail", "failed"),
    ("skip", "skipped"),
    ("pass", "passed"),
)


def print_report(obj: Any, console: Console | None = None) -> None:
    """Print ``obj`` (any result object) to ``console``, or to stdout by default."""
    from rich.console import Console

    console = console if console is not None else Console()
    for renderable in render(obj):
        # a line that logs are grepped for stays whole whatever the terminal's width
        console.print(renderable, soft_wrap=getattr(renderable, "whole_line", False))


def render(obj: Any) -> Iterator[RenderableType]:
    """The renderables that make up the report of ``obj``, top to bottom."""
    if isinstance(obj, GroupedSuiteResult):
        yield from _suite(obj.suite_result)
        yield _group_table(obj)
    elif isinstance(obj, SuiteResult):
        yield from _suite(obj)
    elif isinstance(obj, ScenarioResult):
        yield from _scenario(obj)
    elif isinstance(obj, TestCaseResult):
        yield from _test_case(obj)
    elif isinstance(obj, CheckResult):
        yield _rows([obj])
    elif isinstance(obj, Trace):
        yield from _trace(obj)
    elif isinstance(obj, RunComparison):
        yield from _comparison(obj)
    else:
        raise TypeError(
            f"cannot render {type(obj).__name__!r}: pass a CheckResult, TestCaseResult, "
            "ScenarioResult, SuiteResult, GroupedSuiteResult, RunComparison or Trace"
        )


def max_reported_failures() -> int | None:
    """Panels shown under FAILURES (``None``: all of them, as giskard-checks).

    ``$SCENARIST_MAX_REPORTED_FAILURES``, else giskard's
    ``$GISKARD_CHECKS_MAX_REPORTED_FAILURES``; a value that is not an integer is ignored.
    """
    for name in (MAX_FAILURES_ENV, GISKARD_MAX_FAILURES_ENV):
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                return max(0, int(raw))
            except ValueError:
                continue
    return DEFAULT_MAX_FAILURES


# -- suite ------------------------------------------------------------------------------


def _suite(result: SuiteResult) -> Iterator[RenderableType]:
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    yield Rule(Text("Suite Results"))
    yield Text.assemble(*((_DOT[r.outcome], STATUS_STYLE[r.outcome]) for r in result.results))
    yield Text()
    failing = [r for r in result.results if r.status in FAILING and not r.budget_stopped]
    if failing:
        yield Rule(Text("FAILURES"), characters="=")
        limit = max_reported_failures()
        limit = len(failing) if limit is None else limit
        for scenario in failing[:limit]:
            title = Text(scenario.scenario_name, style="bold")
            yield Panel(_group(_scenario(scenario)), title=title)
        if len(failing) > limit:
            yield Text(f"... and {len(failing) - limit} more", style="dim")
        yield Rule(Text("SUMMARY"), characters="=")
        for scenario in failing:
            yield Text.assemble(
                (scenario.scenario_name, "bold"),
                "  ",
                (scenario.status.upper(), STATUS_STYLE[scenario.status]),
            )
            yield Padding(_rows(_failing_rows(scenario)), (0, 0, 0, 4))
    stopped = [r for r in result.results if r.budget_stopped]
    if stopped:
        error = stopped[0].steps[0].error
        yield Text.assemble(
            ("BUDGET", STATUS_STYLE["budget"]),
            f" {len(stopped)} scenario(s) not started: "
            f"{', '.join(r.scenario_name for r in stopped)} ({error.message if error else ''})",
        )
    if result.budget is not None:
        style = "bold magenta" if result.budget.failed else "dim"
        yield Text(f"Budget: {result.budget.summary()}", style=style)
        for warning in result.budget.warnings:
            yield Text(f"Budget warning: {warning}", style="yellow")
    yield from _rate_lines(result)
    flaky = [r.scenario_name for r in result.flaky]
    if flaky:
        yield Text(f"Flaky (passed and failed across repeats): {', '.join(flaky)}", "yellow")
    unchecked = [r.scenario_name for r in result.results if r.passed and not r.has_checks]
    if unchecked:
        yield Text(f"Passed without any check: {', '.join(unchecked)}", style="yellow")
    vacuous = [r.scenario_name for r in result.results if r.vacuous]
    if vacuous:
        yield Text(
            f"Vacuous passes (nothing was tested): {', '.join(vacuous)}; "
            "--fail-on-vacuous fails them",
            style="yellow",
        )
    from scenarist.judges.health import judge_warnings

    for warning in judge_warnings(result.results):
        yield Text(f"Judge warning: {warning}", style="yellow")
    from scenarist.judges.gate import calibration_summaries

    for line in calibration_summaries(result.results):
        yield Text(f"Judge calibration: {line}", style="dim")
    if result.recommendation:
        from rich.markdown import Markdown

        yield Rule(Text("Recommendation"))
        yield Markdown(result.recommendation)
    if result.rate_limits is not None:
        style = "yellow" if result.rate_limits.throttled or result.rate_limits.delayed else "dim"
        yield Text(f"Rate limits: {result.rate_limits.summary()}", style=style)
    if (certificate := result.certificate) is not None:
        yield _whole_line(certificate.line(), "dim" if certificate.clean else "bold red")
    if result.incomplete:
        yield Text(
            "INCOMPLETE: this run log has no end record (the run was interrupted); only the "
            f"{len(result.results)} scenario(s) that finished are counted",
            style="bold red",
        )
    yield Rule()
    yield _summary_line(result)


def _whole_line(text: str, style: str) -> Text:
    """A line :func:`print_report` prints whole (never wrapped): one for logs to grep."""
    from rich.text import Text

    class WholeLine(Text):
        whole_line = True

    return WholeLine(text, style=style)


_VERDICT_STYLE = {"pass": "green", "fail": "red", "inconclusive": "yellow"}


def _rate_lines(result: SuiteResult) -> Iterator[RenderableType]:
    """One line per repeated scenario: its pass rate, Wilson 95% interval and, against a
    required rate, its PASS / FAIL / INCONCLUSIVE verdict (FLAKY when runs disagreed)."""
    from rich.text import Text

    rows = [r for r in result.results if r.repeat_stats is not None]
    if not rows:
        return
    yield Text("Pass rates over repeats (95% Wilson interval):", style="bold")
    for r in rows:
        stats = r.repeat_stats
        assert stats is not None
        verdict = stats.verdict.value if stats.verdict is not None else None
        style = _VERDICT_STYLE.get(verdict or "", "yellow" if stats.flaky else "")
        yield Text.assemble("  ", (r.scenario_name, "bold"), ": ", (stats.describe(), style))


def _summary_line(result: SuiteResult) -> Text:
    from rich.text import Text

    line = Text("Summary: ")
    if result.incomplete:
        line.append("INCOMPLETE", "bold red")
        line.append(" | ")
    line.append(f"{len(result.results)} total")
    for status, word in _OUTCOME_WORDS:
        count = sum(1 for r in result.results if r.outcome == status)
        if count:
            line.append(", ")
            line.append(f"{count} {word}", STATUS_STYLE[status])
    rate = result.pass_rate
    line.append(f" | Pass Rate: {format_rate(rate)}")
    if result.repeat > 1:
        at_k, hat_k = result.pass_at_k or 0.0, result.pass_hat_k or 0.0
        line.append(f" | Repeat: {result.repeat} (pass@k {at_k:.2f}, pass^k {hat_k:.2f})")
        if result.flaky:
            line.append(f", {len(result.flaky)} flaky", "yellow")
    if verdicts := result.rate_verdicts:
        line.append(" | Min pass rate: ")
        line.append(
            ", ".join(f"{verdicts.get(v, 0)} {v}" for v in ("pass", "fail", "inconclusive"))
        )
    line.append(f" | Total Duration: {result.duration_ms}ms")
    if (cost := result.cost_usd) is not None:
        line.append(f" | Cost: ${cost:.4f}")
    return line


def _group_table(grouped: GroupedSuiteResult) -> Table:
    from rich.table import Table

    table = Table(title=f"Results by {grouped.key}")
    table.add_column(grouped.key)
    table.add_column("Pass Rate", justify="right")
    for stats in grouped.groups.values():
        table.add_row(stats.display_name, f"{stats.passed} / {stats.non_skipped}")
    return table


# -- scenario, step, check -------------------------------------------------------------


def _scenario(result: ScenarioResult) -> Iterator[RenderableType]:
    from rich.rule import Rule
    from rich.text import Text

    yield _status_rule(result.outcome)
    if result.passed and not result.has_checks:
        yield Text("no checks: this scenario passed without asserting anything", "yellow")
    if (reason := result.vacuous_reason) is not None:
        yield Text(f"vacuous: this scenario passed with nothing tested ({reason})", "yellow")
    rows: list[tuple[str, str, str]] = []
    for index, step in enumerate(result.steps, start=1):
        rows.extend(_step_rows(step, f"step {index}"))
    if rows:
        yield _rows(rows)
    for index, step in enumerate(result.steps, start=1):
        for check in step.results:
            if check.status in FAILING and (diff := check_diff(check.details)) is not None:
                yield _diff_text(f"step {index} · {check.label}", diff)
    yield Rule(Text("Trace"))
    # The trace renders itself (Trace.__rich_console__ comes back to _trace below), so a
    # subclass's own layout shows, as in giskard-checks' report.
    yield result.final_trace
    steps = len(result.steps)
    skipped = sum(1 for step in result.steps if step.status == "skip")
    footer = f"{steps} step{'' if steps == 1 else 's'}"
    footer += f" ({skipped} skipped)" if skipped else ""
    footer += f" in {result.duration_ms}ms"
    footer += f" | runs: {result.runs_executed}/{result.multiple_runs}"
    if result.repeat_statuses:
        footer += f" | repeats: {result.repeats_passed}/{len(result.repeat_statuses)} passed"
        footer += " (flaky)" if result.flaky else ""
    if (stats := result.repeat_stats) is not None and stats.verdict is not None:
        footer += f" | {stats.verdict.name} vs min {format_rate(stats.min_pass_rate)}"
    if (cost := result.cost_usd) is not None:
        footer += f" | cost: ${cost:.4f}"
    if (certificate := result.certificate) is not None:
        footer += f" | replay: {certificate.summary()}"
    elif (replay := result.replay_verdict) is not None:
        footer += (
            f" | replay: {replay['replayed']} replayed, {replay['missed']} missed, "
            + (f"{replay['refused']} refused, " if replay["refused"] else "")
            + f"{replay['live']} live"
        )
    yield Rule(Text(footer))


def _trace(trace: Trace[Any, Any]) -> Iterator[RenderableType]:
    from rich.rule import Rule
    from rich.text import Text

    if not trace.interactions:
        yield Text("(no interactions)", style="grey50")
    for number, interaction in enumerate(trace.interactions, start=1):
        yield Rule(Text(f"Interaction {number}"))
        yield _value_line("Inputs: ", interaction.inputs)
        yield _value_line("Outputs: ", interaction.outputs)
        if interaction.spans:
            yield _span_tree(interaction.spans)


def _test_case(result: TestCaseResult) -> Iterator[RenderableType]:
    from rich.rule import Rule
    from rich.text import Text

    yield _status_rule(result.status)
    rows = _step_rows(result, "step")
    if rows:
        yield _rows(rows)
    counts = [
        f"{n} {word}"
        for status, word in _COUNT_WORDS
        if (n := sum(1 for r in result.results if r.status == status))
    ]
    yield Rule(Text(f"{', '.join(counts) or 'no checks'} in {result.duration_ms}ms"))


def _step_rows(step: TestCaseResult, label: str) -> list[tuple[str, str, str]]:
    """The step's error (if any) as a row, then one row per check result."""
    rows: list[tuple[str, str, str]] = []
    if (error := step.error) is not None:
        rows.append((label, "error", error.describe()))
    # each check named with its step ("step 2 · tool_args"), except in a lone test case
    prefix = "" if label == "step" else f"{label} · "
    for result in step.results:
        name, status, message = _check_row(result)
        rows.append((prefix + name, status, message))
    return rows


def _failing_rows(result: ScenarioResult) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for index, step in enumerate(result.steps, start=1):
        rows.extend(r for r in _step_rows(step, f"step {index}") if r[1] in FAILING)
    return rows


def short_summary(result: SuiteResult, width: int = 240) -> list[str]:
    """One line a failing scenario (pytest's ``-q`` summary): its status, name and first
    reason (the step error, else the first failing check's message), cut to ``width``."""
    lines = []
    for scenario in result.results:
        if scenario.status not in FAILING:
            continue
        rows = _failing_rows(scenario)
        reason = f"{rows[0][0]}: {rows[0][2]}" if rows else ""
        line = f"{scenario.status.value.upper()} {scenario.scenario_name}"
        if reason:
            line += " - " + " ".join(reason.split())
        lines.append(_cut(line, width))
    return lines


def _check_row(result: CheckResult) -> tuple[str, str, str]:
    # A PASS message is noise in a failure report; a SKIP message says why (shown dim).
    # A vacuous PASS (an empty AllOf) says it asserted nothing.
    if result.passed:
        message = "vacuous: no check inside, nothing was asserted" if result.vacuous else ""
    else:
        message = result.message or ""
    badge = (result.details or {}).get("calibration")
    if isinstance(badge, dict) and "kappa" in badge:  # a calibrated judge (judges/gate.py)
        from scenarist.judges.gate import badge_text

        message = f"{message} [{badge_text(badge)}]" if message else f"[{badge_text(badge)}]"
    return (result.label, result.status, message)


def _rows(rows: Sequence[tuple[str, str, str] | CheckResult]) -> Table:
    """Check rows as a grid: name, status, message (which wraps inside its column)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, overflow="ellipsis", max_width=32)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for row in rows:
        label, status, message = _check_row(row) if isinstance(row, CheckResult) else row
        style = STATUS_STYLE[status]
        grid.add_row(
            Text(label),
            Text(status.upper(), style=style),
            Text(_cut(message, _MAX_MESSAGE_CHARS), style="grey50" if status == "skip" else ""),
        )
    return grid


_DIFF_MARKS = {"delete": ("[-", "-]", "bold red"), "insert": ("{+", "+}", "bold green")}


def _diff_text(label: str, diff: ValueDiff) -> Text:
    """A failed check's expected and actual values, one under the other, with what
    differs marked ``[-only expected-]`` and ``{+only actual+}`` (readable without
    colour; red and green with it)."""
    from rich.text import Text

    text = Text.assemble((f"diff of {label}", "bold"), " (- expected, + actual)\n")
    sides: tuple[tuple[str, Literal["expected", "actual"]], ...] = (
        ("-", "expected"),
        ("+", "actual"),
    )
    for sign, which in sides:
        text.append(f"{sign} {which + ':':<10}", style="bold")
        for segment in diff.side(which):
            if segment.op in _DIFF_MARKS:
                start, end, style = _DIFF_MARKS[segment.op]
                text.append(f"{start}{segment.text}{end}", style=style)
            else:
                text.append(segment.text, style="grey50" if segment.op == "elided" else "")
        text.append("\n")
    text.rstrip()
    return text


def _status_rule(status: str) -> RenderableType:
    from rich.rule import Rule
    from rich.text import Text

    return Rule(Text(_TITLE[status], style=STATUS_STYLE[status]), style=STATUS_STYLE[status])


def _value_line(prefix: str, value: Any) -> Text:
    """``Inputs: 'hi'`` on one line; a longer value ends in an ellipsis."""
    from rich.text import Text

    from scenarist._jsonable import safe_repr

    shown = " ".join(_cut(safe_repr(value), _MAX_VALUE_CHARS).splitlines())
    return Text.assemble((prefix, "bold"), shown, no_wrap=True, overflow="ellipsis")


def _span_tree(spans: Sequence[Span]) -> RenderableType:
    from rich.tree import Tree

    tree = Tree("spans", hide_root=True, guide_style="grey50")

    def add(parent: Tree, span: Span) -> None:
        node = parent.add(_span_label(span))
        for child in span.children:
            add(node, child)

    for span in spans:
        add(tree, span)
    return tree


def _span_label(span: Span) -> Text:
    from rich.text import Text

    label = Text.assemble((span.name, "bold"), " ", (f"[{span.kind}]", "cyan"), no_wrap=True)
    label.overflow = "ellipsis"
    if span.model:
        label.append(f" {span.model}", "grey50")
    if span.duration_ms is not None:
        label.append(f" {span.duration_ms:.0f}ms")
    if span.tokens_in is not None or span.tokens_out is not None:
        label.append(f" {span.tokens_in or 0}→{span.tokens_out or 0} tok", "grey50")
    if span.cost_usd is not None:
        label.append(f" ${span.cost_usd:.4f}")
    if span.status == "error" or span.error is not None:
        reason = f": {span.error.message}" if span.error is not None else ""
        label.append(f" error{reason}", "red")
    return label


def _group(renderables: Iterator[RenderableType]) -> RenderableType:
    from rich.console import Group

    return Group(*renderables)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- run comparison ----------------------------------------------------------------------


def _comparison(result: RunComparison) -> Iterator[RenderableType]:
    from rich.rule import Rule
    from rich.text import Text

    yield Rule(Text("Compared with baseline"))
    sections = (
        ("Broken", result.broken, "red"),
        ("Fixed", result.fixed, "green"),
        ("Still failing", result.still_failing, "red"),
        ("New", result.new, "default"),
        ("Removed", result.removed, "grey50"),
        ("Skipped", result.skipped, "grey50"),
        ("Flakiness changed", result.flaky_changes, "yellow"),
    )
    for title, changes, style in sections:
        if not changes:
            continue
        yield Text(f"{title} ({len(changes)})", style=f"bold {style}")
        for change in changes:
            yield Text(f"  {change.scenario_name}: {change.before or '—'} → {change.after or '—'}")
    level = f"one-sided Fisher exact test, alpha {result.alpha:g}"
    for title, drops, style in (
        (f"Regressed ({level})", result.regressed, "bold red"),
        (f"Changed, not significant ({level})", result.changed_not_significant, "yellow"),
    ):
        if drops:
            yield Text(f"{title} ({len(drops)})", style=style)
            for drop in drops:
                yield Text(f"  {drop.describe()}")
    before, after = result.baseline_pass_rate, result.pass_rate
    rate = (
        f"{'—' if before is None else f'{before * 100:.1f}%'} → "
        f"{'—' if after is None else f'{after * 100:.1f}%'}"
    )
    yield Text(
        f"{len(result.broken)} broken, {len(result.fixed)} fixed, "
        f"{len(result.still_failing)} still failing, {result.unchanged_passing} unchanged "
        f"passing | Pass Rate: {rate}"
    )
    yield Text(
        f"{len(result.regressed)} regressed, {len(result.changed_not_significant)} changed "
        f"but not significant ({level})"
    )
