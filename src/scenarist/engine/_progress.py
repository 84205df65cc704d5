"""The live progress line a suite shows while it runs (only on a terminal).

On a TTY: a Rich progress bar naming every running scenario, done/total, the pass/fail
tally so far, elapsed time and an ETA. Not on a TTY (CI logs, pipes): nothing while
running by default, so logs are never flooded; the report printed afterwards says
everything. The CLI asks for ``plain_lines``: then a non-terminal gets one short line per
finished scenario, which reads well in a CI log of a long run. Tallies are cumulative
and say so (``so far: 3 pass, 1 fail``): a line is the run up to now, not that scenario.

Which scenarios are running is known exactly without hooks: workers take scenarios in
order (see :meth:`scenarist.engine.suite.Suite._execute`) and start the next one as soon as one
finishes, so with ``parallel`` workers the running ones are the first ``parallel``
unfinished scenarios of the current group (a group is a file in ``scenarist run``, whose
files run one after another). With ``max_concurrency="auto"`` the tally ends with the
current level (``concurrency 12/64``), and the running ones are the first *level*
unfinished scenarios.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from scenarist.model.results import ScenarioResult

__all__ = ["Progress"]


class Progress:
    """A progress display for ``len(scenarios)`` scenarios; no-op when not on a terminal."""

    def __init__(
        self,
        scenarios: Sequence[Any],
        *,
        plain_lines: bool = False,
        stream: TextIO | None = None,
        parallel: int = 1,
        groups: Sequence[int] = (),
        concurrency: Any = None,
    ) -> None:
        self._names = [s.name for s in scenarios]
        self._parallel = max(1, parallel)
        self._concurrency = concurrency  # an AdaptiveConcurrency: its level is shown
        self._ends = sorted({*(g for g in groups if 0 < g <= len(scenarios)), len(scenarios)})
        self._finished: set[int] = set()
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
        self._task = self._bar.add_task(self.running_text(), total=len(scenarios), tally="")
        self._bar.start()

    def _workers(self) -> int:
        """How many scenarios run at once now (an adaptive run's current level)."""
        if self._concurrency is not None:
            return max(1, min(self._parallel, int(self._concurrency.level)))
        return self._parallel

    def running(self) -> list[str]:
        """The names of the scenarios running now (see the module docstring)."""
        start = 0
        for end in self._ends:
            pending = [i for i in range(start, end) if i not in self._finished]
            if pending:
                return [self._names[i] for i in pending[: self._workers()]]
            start = end
        return []

    def running_text(self) -> str:
        names = self.running()
        if not names:
            return "Finishing"
        if len(names) == 1:
            return f"Running: {names[0]}"
        return f"Running {len(names)}: {', '.join(names)}"

    def tally(self) -> str:
        """The cumulative tally, worded as such (``so far: 2 fail, 3 pass``)."""
        return "so far: " + ", ".join(f"{n} {s}" for s, n in sorted(self._tally.items()))

    def advance(self, index: int, result: ScenarioResult) -> None:
        outcome = result.outcome  # "budget" for a scenario the budget did not start
        self._tally[outcome] += 1
        self._finished.add(index)
        done = sum(self._tally.values())
        tally = self.tally()
        if self._concurrency is not None:
            tally += f"; concurrency {self._concurrency.level}/{self._concurrency.cap}"
        if self._lines is not None:
            elapsed = time.perf_counter() - self._t0
            running = self.running() if self._workers() > 1 else []
            also = f"; running: {', '.join(running)}" if running else ""
            self._lines.write(
                f"[{done}/{len(self._names)}] {outcome.upper():5} "
                f"{result.scenario_name} ({tally}; {elapsed:.1f}s{also})\n"
            )
            self._lines.flush()
        if self._bar is None:
            return
        self._bar.update(self._task, advance=1, description=self.running_text(), tally=tally)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
