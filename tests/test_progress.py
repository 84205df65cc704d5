"""The progress line: cumulative tallies that say so, and every running scenario named
under parallel runs (exact, from the workers' in-order pickup)."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from scenarist import Scenario
from scenarist.engine._progress import Progress
from scenarist.model.results import ScenarioResult


@dataclass
class Named:
    name: str


def passed(name: str) -> ScenarioResult:
    return Scenario(name).interact("x", outputs="x").run_sync()


class Clock:
    """A clock the test moves (no wall-clock in a verdict)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_say_the_tally_is_cumulative() -> None:
    stream = io.StringIO()
    clock = Clock()
    progress = Progress([Named("a"), Named("b")], plain_lines=True, stream=stream, clock=clock)
    clock.now += 2.0
    progress.advance(0, passed("a"))
    clock.now += 2.0
    progress.advance(1, passed("b"))
    first, second = stream.getvalue().splitlines()
    assert first == "[1/2] 50% · so far: 1 pass · 2.0s, ETA 2.0s"
    assert second == "[2/2] 100% · so far: 2 pass · 4.0s"


def test_plain_lines_come_each_tenth_and_each_interval_not_each_scenario(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCENARIST_PROGRESS_INTERVAL", "60")
    stream = io.StringIO()
    clock = Clock()
    names = [Named(f"case_{i:04d}") for i in range(1500)]
    progress = Progress(names, plain_lines=True, stream=stream, clock=clock, parallel=8)
    result = passed("x")
    for index in range(1500):
        clock.now += 0.125
        if index == 700:
            clock.now += 61.0  # a slow stretch: a line at the interval, between tenths
        progress.advance(index, result)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # ten tenths and one interval line: not 1,500
    assert lines[0] == "[150/1500] 10% · so far: 150 pass · 18.8s, ETA 2m48s"
    assert lines[4].startswith("[701/1500] 46% · so far: 701 pass · 2m28s, ETA ")
    assert lines[-1] == "[1500/1500] 100% · so far: 1500 pass · 4m08s"
    assert "case_" not in stream.getvalue()  # the report lists failures, not the log


def test_on_a_terminal_names_are_cut_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    for width in (80, 200):
        screen = io.StringIO()
        console = Console(file=screen, width=width, force_terminal=True, color_system=None)
        names = [Named(f"case_{i:04d}_with_a_long_descriptive_scenario_name") for i in range(40)]
        progress = Progress(names, parallel=8, console=console, clock=Clock())
        progress.advance(0, passed("x"))
        progress.close()
        lines = [line for line in screen.getvalue().splitlines() if "/40" in line]
        assert lines, screen.getvalue()
        line = lines[-1]
        assert "1/40" in line and "so far: 1 pass" in line and "ETA" in line
        assert "Running 8: ca" in line
        assert width == 80 or "Running 8: case_0001_with_a_long_descriptive_scenario_name, " in line
        assert line.rstrip().endswith("…")  # the names were cut, not the count or the ETA


def test_parallel_progress_names_every_running_scenario() -> None:
    names = [Named(n) for n in "abcdef"]
    stream = io.StringIO()
    progress = Progress(names, plain_lines=True, stream=stream, parallel=3)
    assert progress.running() == ["a", "b", "c"]
    assert progress.running_text() == "Running 3: a, b, c"
    progress.advance(1, passed("b"))  # b finished first: d started in its place
    assert progress.running() == ["a", "c", "d"]
    for index in (0, 2, 3, 4):
        progress.advance(index, passed("abcdef"[index]))
    assert progress.running_text() == "Running: f"
    progress.advance(5, passed("f"))
    assert progress.running() == []


def test_running_scenarios_stay_within_the_current_file() -> None:
    """``scenarist run`` runs files one after another: the next file's scenarios are not
    running while the current file's last ones are."""
    progress = Progress([Named(n) for n in "abcd"], parallel=4, groups=[2, 4])
    assert progress.running() == ["a", "b"]
    progress.advance(0, passed("a"))
    progress.advance(1, passed("b"))
    assert progress.running() == ["c", "d"]
