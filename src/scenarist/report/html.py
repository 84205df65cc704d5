"""A run as one self-contained HTML page (``scenarist report RUNLOG --format html``).

No scripts, no external stylesheet or font: the page opens from a file, an artifact
store or an e-mail attachment as it is. Every value that comes from a run (agent inputs
and outputs, check messages, names, tags, tracebacks) is untrusted text and goes through
:func:`html.escape` in :func:`_e`, the only way text reaches the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

from scenarist._jsonable import as_text, to_json_value
from scenarist.model.results import ScenarioResult, SuiteResult
from scenarist.model.status import FAILING
from scenarist.report._money import format_usd
from scenarist.report.diff import ValueDiff, check_diff

__all__ = ["to_html"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;color:#222}
h1{font-size:1.4rem}summary{cursor:pointer;font-weight:600}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
td,th{border-bottom:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.4rem;margin:0}
.pass{color:#16794a}.fail{color:#b42318}.error{color:#a15c00}.skip{color:#777}
details{border:1px solid #ddd;border-radius:4px;padding:.4rem .8rem;margin:.4rem 0}
.diff pre{display:inline-block;vertical-align:top;margin:.2rem 0}
del{background:#fde2e1;color:#8a1c12}ins{background:#dcf5e3;color:#0f5a2e;text-decoration:none}
.tag{background:#eef;border-radius:3px;padding:0 .3rem;margin-right:.3rem;font-size:.85em}
.warning{color:#8a5a00}.judge-reasons{margin:.2rem 0 0 1rem;font-weight:400;font-size:.9em}
"""


def _e(value: Any) -> str:
    """Untrusted text, escaped (quotes included) for element content and attributes."""
    data = to_json_value(
        value, other=as_text, mark_text=True
    )  # never raises (cycles, a raising __str__)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=2)
    return html.escape(text, quote=True)


def _rate(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.1f}%"


def to_html(result: SuiteResult, *, title: str | None = None) -> str:
    """The whole report page for ``result``."""
    name = title or result.suite_name or "scenarist run"
    cost = format_usd(result.cost_usd, missing="—")
    summary = (
        f"{len(result.results)} total, {result.passed_count} passed, "
        f"{result.failed_count} failed, {result.errored_count} errored, "
        f"{result.skipped_count} skipped | pass rate {_rate(result.pass_rate)} | "
        f"{result.duration_ms} ms | cost {cost}"
    )
    started = result.started_at.isoformat() if result.started_at else "—"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(name)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(name)}</h1>",
        f"<p>Started {_e(started)}</p>",
        f'<p class="{_e(result.status.value)}"><strong>{_e(summary)}</strong></p>',
    ]
    if result.incomplete:
        parts.append(
            '<p class="error"><strong>INCOMPLETE</strong>: this run log has no end record '
            "(the run was interrupted); only the scenarios that finished are counted</p>"
        )
    from scenarist.judges.health import judge_warnings

    parts.extend(
        f'<p class="warning"><strong>Judge warning</strong>: {_e(w)}</p>'
        for w in judge_warnings(result.results)
    )
    if result.budget is not None:
        style = "error" if result.budget.failed else "warning"
        parts.append(
            f'<p class="{style}"><strong>Budget</strong>: {_e(result.budget.summary())}</p>'
        )
    if result.certificate is not None:
        parts.append(
            f"<p><strong>Replay certificate</strong>: {_e(result.certificate.summary())}</p>"
        )
    from scenarist.judges.gate import calibration_summaries

    parts.extend(
        f"<p><strong>Judge calibration</strong>: {_e(line)}</p>"
        for line in calibration_summaries(result.results)
    )
    vacuous = [r.scenario_name for r in result.results if r.vacuous]
    if vacuous:
        parts.append(
            '<p class="warning"><strong>Vacuous passes</strong> (nothing was tested): '
            f"{_e(', '.join(vacuous))}</p>"
        )
    parts.extend(_scenario(s) for s in result.results)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _scenario(result: ScenarioResult) -> str:
    status = result.status.value
    label = "BUDGET" if result.budget_stopped else status.upper()
    tags = "".join(f'<span class="tag">{_e(t)}</span>' for t in result.tags)
    opened = " open" if status in FAILING else ""
    body = "".join(_steps(result))
    reason = result.vacuous_reason
    flag = (
        f' <span class="warning" title="nothing tested: {_e(reason)}">vacuous</span>'
        if reason is not None
        else ""
    )
    stats = result.repeat_stats
    if stats is not None:  # repeats: the rate, its interval and the verdict against a minimum
        flag += f' <small class="rate">{_e(stats.describe())}</small>'
    return (
        f'<details{opened}><summary><span class="{_e(status)}">{_e(label)}</span> '
        f"{_e(result.scenario_name)}{flag} {tags} <small>{result.duration_ms} ms</small>"
        f"{_judge_reasons(result)}</summary>{body}{_interactions(result)}</details>"
    )


def _judge_reasons(result: ScenarioResult) -> str:
    """The judges' reasons for their passes, shown without opening the scenario: a pass
    by a judge is only as good as its reason, so a reader must see it."""
    from scenarist.judges.health import judge_verdicts

    items = [
        f'<li class="judge-reason"><strong>{_e(v.check)}</strong> ({_e(v.judge)}): '
        f"{_e(v.reason)}</li>"
        for v in judge_verdicts([result])
        if v.passed
    ]
    return f'<ul class="judge-reasons">{"".join(items)}</ul>' if items else ""


def _steps(result: ScenarioResult) -> Iterator[str]:
    for number, step in enumerate(result.steps, start=1):
        rows = []
        if step.error is not None:
            rows.append(  # what raised, the message and the user's line
                f'<tr><td class="error">ERROR</td><td>{_e(step.error.phase)}</td>'
                f"<td>{_e(step.error.describe())}</td></tr>"
            )
        for check in step.results:
            diff = check_diff(check.details) if check.status in FAILING else None
            rows.append(
                f'<tr><td class="{_e(check.status.value)}">'
                f"{_e(check.status.value.upper())}</td>"
                f"<td>{_e(check.label)}</td><td>{_e(check.message or '')}"
                f"{_diff(diff) if diff is not None else ''}{_badge(check.details)}</td></tr>"
            )
        yield (
            f"<p>Step {number}</p><table><tr><th>status</th><th>check</th>"
            f"<th>message</th></tr>{''.join(rows)}</table>"
        )


def _badge(details: dict[str, Any] | None) -> str:
    """A calibrated judge's badge (κ, agreement, n, date), when the verdict carries one."""
    badge = (details or {}).get("calibration")
    if not isinstance(badge, dict) or "kappa" not in badge:
        return ""
    from scenarist.judges.gate import badge_text

    return f' <span class="tag calibration">{_e(badge_text(badge))}</span>'


def _diff(diff: ValueDiff) -> str:
    """Expected over actual, what differs in ``<del>`` / ``<ins>`` (the text escaped)."""
    tags = {"delete": "del", "insert": "ins", "elided": "small"}
    lines = []
    for which in ("expected", "actual"):
        parts = []
        for segment in diff.side(which):
            tag = tags.get(segment.op)
            text = _e(segment.text)
            parts.append(f"<{tag}>{text}</{tag}>" if tag else text)
        lines.append(f'<div class="diff-{which}"><b>{which}</b> <pre>{"".join(parts)}</pre></div>')
    return f'<div class="diff">{"".join(lines)}</div>'


def _interactions(result: ScenarioResult) -> str:
    rows = [
        f"<tr><td>{i}</td><td><pre>{_e(x.inputs)}</pre></td><td><pre>{_e(x.outputs)}</pre></td></tr>"
        for i, x in enumerate(result.final_trace.interactions, start=1)
    ]
    if not rows:
        return ""
    return "<table><tr><th>#</th><th>inputs</th><th>outputs</th></tr>" + "".join(rows) + "</table>"
