"""Differential parity: the same programs under giskard-checks 1.0.6 and under scenarist.

``program.py`` runs every generated case of ``cases.py`` against one implementation (only
its import differs); this test runs it under both, then feeds each side's scenario dumps
to the other, and compares statuses, messages, counts and exports case by case. Every
disagreement must be a deliberate difference in ``allowlist.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.compat.differential.allowlist import DELIBERATE
from tests.compat.differential.cases import all_cases
from tests.helpers.limits import HANG_S

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "program.py"
QUIET = {"GISKARD_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1", "NO_COLOR": "1"}


def _run(python: str, module: str, cases: Path, foreign: Path | None = None) -> dict[str, Any]:
    args = [python, str(PROGRAM), module, str(cases)] + ([str(foreign)] if foreign else [])
    proc = subprocess.run(
        args, capture_output=True, text=True, timeout=HANG_S, env={**os.environ, **QUIET}
    )
    assert proc.returncode == 0, f"{module} driver crashed:\n{proc.stderr[-3000:]}"
    outcomes: dict[str, Any] = json.loads(proc.stdout)
    return outcomes


@pytest.fixture(scope="module")
def outcomes(giskard_python: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("differential")
    cases = folder / "cases.json"
    cases.write_text(json.dumps(all_cases()), encoding="utf-8")
    # The two sides are independent: giskard's runs in a thread while ours runs here.
    with ThreadPoolExecutor(1) as pool:
        giskard_run = pool.submit(_run, giskard_python, "giskard.checks", cases)
        ours = _run(sys.executable, "scenarist", cases)
        giskard = giskard_run.result()
    dumps = {}
    for side, result in (("giskard", giskard), ("scenarist", ours)):
        path = folder / f"{side}-dumps.json"
        path.write_text(
            json.dumps({k: v["dump"] for k, v in result.items() if "dump" in v}), encoding="utf-8"
        )
        dumps[side] = path
    # JSON in both directions: each side loads and runs the scenarios the other dumped.
    empty = _empty(folder)
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(_run, giskard_python, "giskard.checks", empty, dumps["scenarist"])
        ours.update(_load_only(_run(sys.executable, "scenarist", empty, dumps["giskard"])))
        giskard.update(_load_only(theirs.result()))
    # JUnit suite name: giskard hard-codes "Test run" (10-compat.md), ours is the suite's.
    for case_id in ours:
        if "junit" in ours[case_id]:
            assert giskard[case_id]["junit"].pop("suite_name") == "Test run"
            assert ours[case_id]["junit"].pop("suite_name") == case_id
    return giskard, ours


def _empty(folder: Path) -> Path:
    path = folder / "no-cases.json"
    path.write_text("[]", encoding="utf-8")
    return path


def _load_only(outcomes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in outcomes.items() if k.startswith("load:")}


def test_differential_cases_cover_the_api() -> None:
    cases = all_cases()
    assert len(cases) >= 300
    assert {c["kind"] for c in cases} == {"check", "scenario", "suite", "dump"}


def test_differential_agreement_with_giskard_checks(outcomes: Any) -> None:
    giskard, ours = outcomes
    assert set(giskard) == set(ours)
    assert any(k.startswith("load:") for k in giskard), "no dump was loaded across"
    disagree = sorted(k for k in giskard if giskard[k] != ours[k])
    agreed = len(giskard) - len(disagree)
    print(f"\ndifferential agreement with giskard-checks 1.0.6: {agreed}/{len(giskard)} cases")
    unexpected = {
        k: {"giskard": giskard[k], "scenarist": ours[k]} for k in disagree if k not in DELIBERATE
    }
    assert not unexpected, json.dumps(unexpected, indent=1, default=repr)[:20000]
    stale = sorted(set(DELIBERATE) - set(disagree))
    assert not stale, f"allow-listed cases that now agree (remove them): {stale}"
    assert agreed / len(giskard) >= 0.99


def test_differential_driver_reports_exceptions_as_outcomes(outcomes: Any) -> None:
    giskard, ours = outcomes
    assert giskard["runs:bad:'2'"] == ours["runs:bad:'2'"] == {"raised": "ValueError"}
    assert giskard["raise:check"] == ours["raise:check"] == {"raised": "RuntimeError"}


@pytest.mark.anyio
async def test_junit_extras_left_out_of_the_comparison_are_written_by_scenarist() -> None:
    """The allow-listed JUnit extras are real: scenarist writes each kind of them."""
    import xml.etree.ElementTree as ET

    from tests.compat.differential.allowlist import JUNIT_EXTRAS

    from scenarist import Equals, Scenario, Suite

    suite = Suite(name="extras")
    suite.append(Scenario(name="ok").with_tags(["t"]).interact(inputs="a", outputs="b"))
    bad = Scenario(name="bad").interact(inputs="a", outputs="b").check(Equals(expected_value="x"))
    suite.append(bad)
    root = ET.fromstring((await suite.run(verbose=False)).to_junit_xml())
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert {"hostname"} <= set(root.attrib) and {"classname"} <= set(cases["ok"].attrib)
    assert JUNIT_EXTRAS["attributes"] == {"classname", "hostname"}
    written = {p.get("name") for p in root.iter("property")}
    assert (
        {"tag", "runs_executed", "no_checks"}
        <= written
        <= (JUNIT_EXTRAS["properties"] | {"final_trace", "step_1"})
    )
    # <system-out> is compared, not an extra: every case has one, as in giskard-checks
    assert cases["ok"].find("system-out") is not None
