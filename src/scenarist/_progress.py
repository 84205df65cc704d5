"""The live progress line a suite shows while it runs (only on a terminal).

On a TTY: a Rich progress bar naming the running scenario with a pass/fail tally. Not on a
TTY (CI logs, pipes): nothing while running, so logs are never flooded; the report printed
afterwards says everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scenarist.results import ScenarioResult

__all__ = ["Progress"]


class Progress:
    """A progress display for ``len(scenarios)`` scenarios; no-op when not on a terminal."""

    def __init__(self, scenarios: Sequence[Any]) -> None:
        self._names = [s.name for s in scenarios]
        self._tally: Counter[str] = Counter()
        self._bar: Any = None
        from rich.console import Console

        console = Console(stderr=True)
        if not console.is_terminal or not scenarios:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task(
            f"Running: {self._names[0]}", total=len(scenarios), tally=""
        )
        self._bar.start()

    def advance(self, index: int, result: ScenarioResult) -> None:
        self._tally[result.status.value] += 1
        if self._bar is None:
            return
        done = sum(self._tally.values())
        following = self._names[done] if done < len(self._names) else result.scenario_name
        tally = ", ".join(f"{n} {s}" for s, n in sorted(self._tally.items()))
        self._bar.update(self._task, advance=1, description=f"Running: {following}", tally=tally)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
