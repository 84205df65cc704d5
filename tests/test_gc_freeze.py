"""``Suite.run`` keeps its results out of the cyclic collector's way, and only while it runs.

The results of a run stay alive to its end; freezing them (``gc.freeze``) spares every full
collection a walk over them. What users rely on: the collector is given back as it was,
garbage made before or during the run is still collected afterwards, and a process that
manages the collector itself (froze objects, or turned it off) is left alone.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from scenarist import Equals, FnCheck, Scenario, Suite, Trace


class Cycle:
    def __init__(self) -> None:
        self.me = self


def suite_watching_the_collector(n: int, seen: list[int]) -> Suite:
    def watch(trace: Trace[Any, Any]) -> bool:
        seen.append(gc.get_freeze_count())
        return True

    def scenarios() -> Iterator[Scenario]:
        for i in range(n):
            yield (
                Scenario(f"s{i}")
                .interact(f"q{i}", f"a{i}")
                .check(Equals(expected_value=f"a{i}"))
                .check(FnCheck(name="watch", fn=watch))
            )

    return Suite(name="gc", scenarios=list(scenarios()))


@pytest.fixture
def collector_as_found() -> Iterator[None]:
    assert gc.isenabled() and gc.get_freeze_count() == 0, "another test left the GC changed"
    yield
    gc.unfreeze()
    gc.enable()


@pytest.mark.usefixtures("collector_as_found")
def test_the_run_freezes_while_it_runs_and_gives_everything_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("scenarist.engine.suite.FREEZE_EVERY", 8)
    seen: list[int] = []
    before = Cycle()
    dead_before = weakref.ref(before)
    del before
    result = suite_watching_the_collector(30, seen).run_sync(verbose=False)
    assert result.passed_count == 30
    assert min(seen) > 0  # frozen from the start...
    assert seen[-1] > seen[0]  # ...and again as results were kept
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.collect()
    assert dead_before() is None  # the cycle frozen with the rest was collected after


@pytest.mark.usefixtures("collector_as_found")
def test_a_process_that_froze_objects_itself_is_left_alone() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    seen: list[int] = []
    suite_watching_the_collector(5, seen).run_sync(verbose=False)
    # (The count is of objects still alive, so it can only fall: nothing new was frozen.)
    assert max(seen) <= frozen
    assert gc.get_freeze_count() <= frozen


@pytest.mark.usefixtures("collector_as_found")
def test_a_disabled_collector_stays_disabled_and_nothing_is_frozen() -> None:
    gc.disable()
    seen: list[int] = []
    suite_watching_the_collector(5, seen).run_sync(verbose=False)
    assert set(seen) == {0}
    assert not gc.isenabled()


@pytest.mark.usefixtures("collector_as_found")
def test_a_run_that_raises_gives_the_collector_back() -> None:
    def broken(trace: Trace[Any, Any]) -> bool:
        raise RuntimeError("boom")

    suite = Suite(
        name="raises",
        scenarios=[Scenario("s").interact("q", "a").check(FnCheck(name="b", fn=broken))],
    )
    with pytest.raises(RuntimeError, match="boom"):
        suite.run_sync(verbose=False)
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("collector_as_found")
def test_serve_freezes_what_startup_loaded_and_gives_it_back_when_it_stops(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    uvicorn = pytest.importorskip("uvicorn", reason="the server extra is not installed")
    from scenarist.server import cli

    frozen_while_serving: list[int] = []
    monkeypatch.setattr(
        uvicorn, "run", lambda *args, **kwargs: frozen_while_serving.append(gc.get_freeze_count())
    )
    cli.serve("127.0.0.1", 8480, f"sqlite:///{tmp_path}/s.db")
    assert frozen_while_serving and frozen_while_serving[0] > 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()


WATCHED_FILE = """
import gc

from scenarist import Equals, FnCheck, Scenario, Suite

SEEN = []


def watch(trace):
    SEEN.append(gc.get_freeze_count())
    return True


suite = Suite(name="gc-cli", scenarios=[
    Scenario(f"s{i}").interact(f"q{i}", f"a{i}").check(FnCheck(name="watch", fn=watch))
    for i in range(3)
])
"""


@pytest.mark.usefixtures("collector_as_found")
def test_scenarist_run_freezes_while_it_runs_and_gives_everything_back(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from typer.testing import CliRunner

    from scenarist.cli.app import app

    (tmp_path / "gc_cli_scenarios.py").write_text(WATCHED_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCENARIST_SUPERVISE", "0")
    monkeypatch.delenv("SCENARIST_URL", raising=False)
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    before = Cycle()
    dead_before = weakref.ref(before)
    del before
    outcome = CliRunner().invoke(app, ["run", "gc_cli_scenarios.py", "-q"])
    assert outcome.exit_code == 0, outcome.output
    module = next(m for n, m in sys.modules.items() if n.endswith("gc_cli_scenarios"))
    assert module.SEEN and min(module.SEEN) > 0  # the scenarios ran frozen
    assert gc.get_freeze_count() == 0 and gc.isenabled()  # and the command gave it back
    gc.collect()
    assert dead_before() is None
