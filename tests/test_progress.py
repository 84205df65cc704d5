"""The progress line: cumulative tallies that say so, and every running scenario named
under parallel runs (exact, from the workers' in-order pickup)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from scenarist import Scenario
from scenarist.engine._progress import Progress
from scenarist.model.results import ScenarioResult


@dataclass
class Named:
    name: str


def passed(name: str) -> ScenarioResult:
    return Scenario(name).interact("x", outputs="x").run_sync()


def test_plain_lines_say_the_tally_is_cumulative() -> None:
    stream = io.StringIO()
    progress = Progress([Named("a"), Named("b")], plain_lines=True, stream=stream)
    progress.advance(0, passed("a"))
    progress.advance(1, passed("b"))
    first, second = stream.getvalue().splitlines()
    assert first.startswith("[1/2] PASS  a (so far: 1 pass; ")
    assert second.startswith("[2/2] PASS  b (so far: 2 pass; ")
    assert "running" not in first  # serial: the next one is obvious


def test_parallel_progress_names_every_running_scenario() -> None:
    names = [Named(n) for n in "abcdef"]
    stream = io.StringIO()
    progress = Progress(names, plain_lines=True, stream=stream, parallel=3)
    assert progress.running() == ["a", "b", "c"]
    assert progress.running_text() == "Running 3: a, b, c"
    progress.advance(1, passed("b"))  # b finished first: d started in its place
    assert progress.running() == ["a", "c", "d"]
    assert stream.getvalue().rstrip().endswith("running: a, c, d)")
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
