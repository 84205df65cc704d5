"""Rich rendering of a :class:`~scenarist.judges.calibrate.CalibrationResult`.

Kept apart from the result model (presentation never lives in models); ``rich`` is
imported only when a result is printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from scenarist.judges.calibrate import CalibrationResult

__all__ = ["render_calibration"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render_calibration(result: CalibrationResult) -> Iterator[RenderableType]:
    """The summary table, the confusion counts, then each disagreement and error."""
    from rich.table import Table
    from rich.text import Text

    summary = Table(title="Judge calibration", show_header=False, title_justify="left")
    summary.add_column("metric")
    summary.add_column("value", justify="right")
    summary.add_row("cases judged", str(result.judged))
    summary.add_row("accuracy", _pct(result.accuracy))
    summary.add_row("TPR (pass recall)", _pct(result.tpr))
    summary.add_row("TNR (fail recall)", _pct(result.tnr))
    summary.add_row("Cohen's κ", "n/a" if result.kappa is None else f"{result.kappa:.3f}")
    summary.add_row("not evaluated", str(len(result.errors)))
    yield summary

    confusion = Table(title="Labels × judge", title_justify="left")
    confusion.add_column("label")
    confusion.add_column("judge: pass", justify="right")
    confusion.add_column("judge: fail", justify="right")
    confusion.add_row("pass", str(result.true_positives), str(result.false_negatives))
    confusion.add_row("fail", str(result.false_positives), str(result.true_negatives))
    yield confusion

    for title, entries in (("Disagreements", result.disagreements), ("Errors", result.errors)):
        if not entries:
            continue
        yield Text(title, style="bold")
        for entry in entries:
            label = entry.name or f"case {entry.index}"
            expected = "pass" if entry.expected else "fail"
            line = Text(f"  {label}: labelled {expected}, judge {entry.status}")
            if entry.message:
                line.append(f" — {entry.message}", style="dim")
            yield line
