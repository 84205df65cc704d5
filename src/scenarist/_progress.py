"""The live progress line a suite shows while it runs (only on a terminal).

On a TTY: a Rich progress bar naming the running scenario, done/total, the pass/fail
tally, elapsed time and an ETA. Not on a TTY (CI logs, pipes): nothing while running by
default, so logs are never flooded; the report printed afterwards says everything. The
CLI asks for ``plain_lines``: then a non-terminal gets one short line per finished
scenario, which reads well in a CI log of a long run. With ``max_concurrency="auto"`` the
tally ends with the current level (``concurrency 12/64``).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from scenarist.results import ScenarioResult

__all__ = ["Progress"]


class Progress:
    """A progress display for ``len(scenarios)`` scenarios; no-op when not on a terminal."""

    def __init__(
        self,
        scenarios: Sequence[Any],
        *,
        plain_lines: bool = False,
        stream: TextIO | None = None,
        concurrency: Any = None,
    ) -> None:
        self._names = [s.name for s in scenarios]
        self._concurrency = concurrency  # an AdaptiveConcurrency: its level is shown
        self._tally: Counter[str] = Counter()
        self._bar: Any = None
        self._lines: TextIO | None = None
        self._t0 = time.perf_counter()
        from rich.console import Console

        console = Console(stderr=True)
        if not scenarios:
            return
        if not console.is_terminal:
            if plain_lines:
                self._lines = stream if stream is not None else sys.stderr
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task(
            f"Running: {self._names[0]}", total=len(scenarios), tally=""
        )
        self._bar.start()

    def advance(self, index: int, result: ScenarioResult) -> None:
        self._tally[result.status.value] += 1
        done = sum(self._tally.values())
        tally = ", ".join(f"{n} {s}" for s, n in sorted(self._tally.items()))
        if self._concurrency is not None:
            tally += f"; concurrency {self._concurrency.level}/{self._concurrency.cap}"
        if self._lines is not None:
            elapsed = time.perf_counter() - self._t0
            self._lines.write(
                f"[{done}/{len(self._names)}] {result.status.value.upper():5} "
                f"{result.scenario_name} ({tally}; {elapsed:.1f}s)\n"
            )
            self._lines.flush()
        if self._bar is None:
            return
        following = self._names[done] if done < len(self._names) else result.scenario_name
        self._bar.update(self._task, advance=1, description=f"Running: {following}", tally=tally)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
