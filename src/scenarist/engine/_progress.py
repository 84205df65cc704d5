"""The live progress a suite shows while it runs.

On a TTY: one Rich line, count, bar, tally, elapsed time and ETA first, then the
scenarios running now; the names are what gets cut when the line is too narrow (a long
name list used to push the count and ETA off even a 200-column terminal). Not on a TTY (CI
logs, pipes): nothing while running by default, so logs are never flooded; the report
printed afterwards says everything. The CLI asks for ``plain_lines``: then a
non-terminal gets a line at each tenth of the run and at least every
``SCENARIST_PROGRESS_INTERVAL`` seconds (default 30) while scenarios finish, and at the
end: ``[150/1500] 10% · so far: 140 pass, 10 fail · 12.3s, ETA 1m51s``. A run of ten
scenarios or fewer gets a line each. Names are not in these lines: the report after the
run lists every failure.

Which scenarios are running is known exactly without hooks: workers take scenarios in
order (see :meth:`scenarist.engine.suite.Suite._execute`) and start the next one as soon as one
finishes, so with ``parallel`` workers the running ones are the first ``parallel``
unfinished scenarios of the current group (a group is a file in ``scenarist run``, whose
files run one after another). With ``max_concurrency="auto"`` the tally ends with the
current level (``concurrency 12/64``), and the running ones are the first *level*
unfinished scenarios.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from scenarist.model.results import ScenarioResult

__all__ = ["Progress", "duration_text"]

INTERVAL_ENV = "SCENARIST_PROGRESS_INTERVAL"
_STEPS = 10  # plain lines: one at each tenth of the run


def duration_text(seconds: float) -> str:
    """``12.3s``, ``1m51s``, ``2h05m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _interval() -> float:
    try:
        return max(1.0, float(os.environ.get(INTERVAL_ENV, "30")))
    except ValueError:
        return 30.0


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
        console: Any = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._names = [s.name for s in scenarios]
        self._parallel = max(1, parallel)
        self._concurrency = concurrency  # an AdaptiveConcurrency: its level is shown
        self._ends = sorted({*(g for g in groups if 0 < g <= len(scenarios)), len(scenarios)})
        self._finished: set[int] = set()
        self._tally: Counter[str] = Counter()
        self._bar: Any = None
        self._lines: TextIO | None = None
        self._clock = clock
        self._t0 = clock()
        self._last_line = self._t0
        self._last_step = 0
        self._interval = _interval()
        if console is None:
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
        from rich.table import Column

        self._bar = RichProgress(  # what must stay visible first; the names take the rest
            MofNCompleteColumn(),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[tally]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn(
                "{task.description}",
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=0),
            ),
            console=console,
            transient=True,
            expand=True,
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
        tally = self.tally()
        if self._concurrency is not None:
            tally += f"; concurrency {self._concurrency.level}/{self._concurrency.cap}"
        if self._lines is not None:
            self._plain_line(tally)
        if self._bar is None:
            return
        self._bar.update(self._task, advance=1, description=self.running_text(), tally=tally)

    def _plain_line(self, tally: str) -> None:
        """A line at each tenth of the run, at least every interval, and at the end."""
        done, total = sum(self._tally.values()), len(self._names)
        now = self._clock()
        step = done * _STEPS // total
        if done < total and step == self._last_step and now - self._last_line < self._interval:
            return
        self._last_step, self._last_line = step, now
        elapsed = now - self._t0
        eta = "" if done == total else f", ETA {duration_text(elapsed / done * (total - done))}"
        percent = math.floor(100 * done / total)
        self._lines.write(  # type: ignore[union-attr]
            f"[{done}/{total}] {percent}% · {tally} · {duration_text(elapsed)}{eta}\n"
        )
        self._lines.flush()  # type: ignore[union-attr]

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
