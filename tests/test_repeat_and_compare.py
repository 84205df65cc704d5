from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from rich.console import Console

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import ScenarioRecord
from scenarist.model.stats import pass_at_k, pass_hat_k, wilson_interval


def _text(obj: Any) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    obj.print_report(console=console)
    return console.export_text()


def test_stats_estimators() -> None:
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    low, high = wilson_interval(10, 9)
    assert 0.59 < low < 0.6 and 0.98 < high <= 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="need 0 <= c <= n"):
        pass_at_k(3, 4, 1)


def _flaky_suite() -> Suite:
    answers = itertools.cycle(["ok", "bad"])
    suite = Suite(name="repeat")
    suite.append(
        Scenario("flaky")
        .interact("q", lambda inputs: next(answers))
        .check(Equals(expected_value="ok"))
    )
    suite.append(Scenario("steady").interact("q", "ok").check(Equals(expected_value="ok")))
    return suite


@pytest.mark.parametrize("parallel", [False, True])
def test_repeat_runs_each_scenario_k_times_and_marks_flaky_ones(parallel: bool) -> None:
    result = _flaky_suite().run_sync(repeat=4, parallel=parallel, verbose=False)
    flaky, steady = result.results
    assert flaky.repeat_statuses == ["pass", "fail", "pass", "fail"]
    assert flaky.status == "fail"  # the result shown is the first run that did not pass
    assert (flaky.repeats_passed, flaky.flaky) == (2, True)
    assert (steady.repeats_passed, steady.flaky, steady.status) == (4, False, "pass")
    assert result.repeat == 4
    assert [r.scenario_name for r in result.flaky] == ["flaky"]
    assert result.pass_at_k == pytest.approx((1.0 + 1.0) / 2)
    assert result.pass_hat_k == pytest.approx((0.0 + 1.0) / 2)
    text = _text(result)
    assert "Flaky (passed and failed across repeats): flaky" in text
    assert "repeats: 2/4 passed (flaky)" in text
    assert "Repeat: 4 (pass@k 1.00, pass^k 0.50), 1 flaky" in text
    assert ScenarioRecord.from_result(0, flaky).flaky is True
    properties = {
        p.get("name"): p.get("value") for p in ET.fromstring(result.to_junit_xml()).iter("property")
    }
    assert properties["flaky"] == "true"


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (True, TypeError), (1.5, TypeError)])
def test_repeat_is_validated(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="repeat"):
        _flaky_suite().run_sync(repeat=value, verbose=False)


def _run(statuses: dict[str, str]) -> Any:
    suite = Suite(name="cmp")
    for name, status in statuses.items():
        scenario = Scenario(name).interact("q", "a")
        if status == "pass":
            scenario.check(Equals(expected_value="a"))
        elif status == "fail":
            scenario.check(Equals(expected_value="b"))
        suite.append(scenario)
    return suite.run_sync(verbose=False)


def test_compare_classifies_every_scenario() -> None:
    baseline = _run(
        {"same": "pass", "fixme": "fail", "breakme": "pass", "stuck": "fail", "gone": "pass"}
    )
    current = _run(
        {"same": "pass", "fixme": "pass", "breakme": "fail", "stuck": "fail", "fresh": "pass"}
    )
    diff = current.compare(baseline)
    names = {
        field: [c.scenario_name for c in getattr(diff, field)]
        for field in ("fixed", "broken", "still_failing", "new", "removed")
    }
    assert names == {
        "fixed": ["fixme"],
        "broken": ["breakme"],
        "still_failing": ["stuck"],
        "new": ["fresh"],
        "removed": ["gone"],
    }
    assert diff.unchanged_passing == 1
    # broken on one run each side: a status change, not a significant regression
    assert not diff.has_regressions
    assert [c.scenario_name for c in diff.changed_not_significant] == ["breakme"]
    text = _text(diff)
    assert "Broken (1)" in text and "breakme: pass → fail" in text
    assert (
        "1 broken, 1 fixed, 1 still failing, 1 unchanged passing | Pass Rate: 60.0% → 60.0%" in text
    )
