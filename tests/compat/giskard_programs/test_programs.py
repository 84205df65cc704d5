"""Whole giskard-checks programs, run on giskard-checks 1.0.6 and on scenarist, compared
leaf by leaf.

Each program in ``programs/`` is written the way a user writes against ``giskard.checks``
(custom checks and specs, targets, suites, reports, dumps) and prints one JSON document of
what that user would look at. :func:`~tests.compat.giskard_programs.porting.port` changes
its ``# IMPORT`` line(s) to ``scenarist``, nothing else; both versions run in a subprocess
(giskard's in its side venv) and every leaf must agree, except:

- :data:`KNOWN`: differences we intend, each explained in one line;
- :data:`PENDING`: gaps found here and not fixed yet; a program with one xfails (a pending
  leaf that agrees again fails the test, so the list stays true).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.compat.giskard_programs.porting import port
from tests.compat.leaves import differences, leaves
from tests.helpers.limits import HANG_S

PROGRAMS = Path(__file__).parent / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))
QUIET = {"GISKARD_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1", "NO_COLOR": "1"}

# (program, leaf path pattern) -> why scenarist answers differently, on purpose. A pattern
# is a leaf path prefix, ``*`` standing for any run of characters ("*" as the program: all).
# Only two kinds (spec 10-compat.md): a giskard bug the spec lists (the reason says which
# and where), or a pure addition (the reason says what it adds).
KNOWN: dict[tuple[str, str], str] = {
    ("targets", "no_target_raises"): "additive: the error is UserError, a ValueError subclass "
    "(`except ValueError` catches it as giskard's), whose message is giskard's text then the fix",
    ("targets", "no_target.1"): "additive, as no_target_raises: the step's error is that UserError",
    ("hostile_inputs", "path:trace.last.outputs.a[*]"): "spec-listed giskard bug (10-compat.md: "
    "'wildcard paths returning a scalar for a single match'): ours is a list even with one "
    "match (design/checks.md 'Paths')",
    ("policy_checks", "good.results.4"): "spec-listed giskard bug, as hostile_inputs "
    "path:...a[*]: one tool call's amounts[*] is a list of one, which match='all' takes "
    "(giskard unwraps it, then ERRORs)",
    ("policy_checks", "good.status"): "spec-listed giskard bug: follows from good.results.4",
    ("junit_report", "cases.skipped.skipped.0"): "additive: <skipped> also gives the skip "
    "reason as a message attribute, which giskard's lacks; its text is giskard's",
    ("results_roundtrip", "*_keys"): "additive: results carry our fields too: a verdict's "
    "kind, name and duration_ms; a scenario's run and repeat statuses; a suite's name and start",
    ("results_roundtrip", "*.results.*.duration_ms"): "additive, as *_keys (typed verdict "
    "identity)",
    ("results_roundtrip", "*.results.*.kind"): "additive, as *_keys (typed verdict identity)",
    ("results_roundtrip", "*.results.*.name"): "additive, as *_keys (typed verdict identity)",
    ("results_roundtrip", "scenario_dump.r*_statuses"): "additive, as *_keys (run and repeat "
    "statuses)",
    ("composite_checks", "empty_dump.vacuous"): "additive: an empty AllOf passes as in "
    "giskard and its verdict says it asserted nothing, an added field dumped only when true "
    "(design/checks.md 'Composites')",
    ("spy_calls", "path_check"): "spec-listed giskard bug (10-compat.md: 'WithSpy breaking "
    "every path check'): giskard's spy stores mock call objects that fail its dump of the "
    "trace, so every path check ERRORs (design/checks.md 'WithSpy')",
    **{
        ("*", pattern.format(field)): "additive: an interaction also records when it "
        "started, how long it took, its error and spans (design/giskard-compat.md "
        "'Interaction equality')"
        for field in ("started_at", "duration_ms", "error", "spans")
        for pattern in ("*interactions.*.{}", "*last.{}")
    },
}

# (program, leaf path pattern) -> a gap found here and not fixed yet.
PENDING: dict[tuple[str, str], str] = {}


def under(pattern: str, path: str) -> bool:
    """Whether ``path`` is the leaf ``pattern`` names or one below it (``*``: any run)."""
    regex = re.escape(pattern).replace(r"\*", ".*")
    return re.fullmatch(rf"{regex}(\..*)?", path) is not None


def listed(table: dict[tuple[str, str], str], program: str, path: str) -> bool:
    return any(p in (program, "*") and under(k, path) for p, k in table)


def run_program(python: str, source: str, folder: Path, name: str, path: str) -> dict[str, Any]:
    script = folder / f"{name}.py"
    script.write_text(source, encoding="utf-8")
    env = {**os.environ, **QUIET, "PYTHONPATH": path}
    env["SCENARIST_HOME"] = str(folder / "home")
    env.pop("SCENARIST_URL", None)
    done = subprocess.run(
        [python, str(script)], capture_output=True, text=True, timeout=HANG_S, env=env, cwd=folder
    )
    if done.returncode != 0:
        return {"<crashed>": done.stderr.strip().splitlines()[-1:] or ["?"]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def outcomes(giskard_python: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every program on both sides, two subprocesses at a time (the machine has 2 cores)."""
    folder = tmp_path_factory.mktemp("giskard_programs")
    for side in ("giskard", "scenarist"):
        (folder / side).mkdir()

    sources = {name: (PROGRAMS / f"{name}.py").read_text(encoding="utf-8") for name in NAMES}
    # Ported here, before the threads: CPython 3.11's ast.parse is not thread-safe (two
    # threads parsing at once can raise "SystemError: AST constructor recursion depth
    # mismatch", seen beside two busy loops).
    ported = {name: port(source) for name, source in sources.items()}

    def both(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        theirs = run_program(giskard_python, sources[name], folder / "giskard", name, "")
        ours = run_program(
            sys.executable,
            ported[name],
            folder / "scenarist",
            name,
            # Absolute: the program runs in its own folder (a relative entry, as a
            # worktree's ``PYTHONPATH=src``, would name nothing there).
            os.pathsep.join(
                str(Path(entry).resolve())
                for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                if entry
            ),
        )
        return theirs, ours

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(NAMES, pool.map(both, NAMES), strict=True))


@pytest.mark.parametrize("program", NAMES)
def test_giskard_program_gives_the_same_results_on_scenarist(program: str, outcomes: Any) -> None:
    theirs, ours = outcomes[program]
    assert "<crashed>" not in theirs, f"the program fails on giskard-checks: {theirs}"
    diff = differences(theirs, ours)
    unexplained = {
        p: d
        for p, d in diff.items()
        if not listed(KNOWN, program, p) and not listed(PENDING, program, p)
    }
    assert unexplained == {}, json.dumps(unexplained, indent=1, default=str)[:20000]
    stale = [
        k
        for table in (KNOWN, PENDING)
        for p, k in table
        if p == program and not any(under(k, d) for d in diff)
    ]
    assert stale == [], f"listed differences that no longer differ: {stale}"
    total = leaves(theirs)
    agreeing = sum(1 for p in total if p not in diff)
    print(f"{program}: {agreeing}/{len(total)} of giskard's result leaves agree")
    pending = sorted(k for p, k in PENDING if p in (program, "*"))
    if pending:
        pytest.xfail(f"pending differences: {pending}")


def test_giskard_program_differences_for_every_program_still_differ(outcomes: Any) -> None:
    """A ``"*"`` entry must still match a difference somewhere (the per-program test
    checks the entries named after its program)."""
    diffs = [d for theirs, ours in outcomes.values() for d in differences(theirs, ours)]
    stale = [k for p, k in (*KNOWN, *PENDING) if p == "*" and not any(under(k, d) for d in diffs)]
    assert stale == [], f"listed differences that no longer differ: {stale}"


def test_port_changes_only_the_import_lines() -> None:
    for name in NAMES:
        source = (PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
        before, after = source.splitlines(), port(source).splitlines()
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert changed, name
        assert all(
            (
                a.startswith(("from giskard.checks", "import giskard.checks"))
                and b == a.replace("giskard.checks", "scenarist")
            )
            or (
                # giskard-agents' Generator / EmbeddingModel: scenarist offers them
                a.startswith("from giskard.agents")
                and b == "from scenarist import " + a.split(" import ", 1)[1]
            )
            for a, b in changed
        ), name


def test_programs_are_enough_and_offline() -> None:
    assert 12 <= len(NAMES) <= 30
    for name in NAMES:
        source = (PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
        assert "OPENAI_API_KEY" not in source and "http" not in source, name
