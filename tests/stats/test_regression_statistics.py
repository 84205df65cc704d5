"""Significant regressions: Fisher's exact test against hand-computed values, its false
alarm rate and power by simulation (fixed seeds), and ``SuiteResult.compare`` on
repeats."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from scenarist import Equals, Scenario, Suite
from scenarist.model.comparison import ScenarioOutcome, compare_outcomes
from scenarist.model.results import SuiteResult
from scenarist.model.stats import ALPHA, fisher_less


def test_fisher_matches_hand_computed_values() -> None:
    # Fisher's tea-tasting table [[3, 1], [1, 3]]: one-sided p = 17/70
    assert fisher_less(4, 3, 4, 1) == pytest.approx(17 / 70)
    # 10/10 before, 5/10 now: only the observed table is as extreme, C(15,5)/C(20,10)
    assert fisher_less(10, 10, 10, 5) == pytest.approx(3003 / 184756)
    # one run each side, pass → fail: p = 1/2, never significant
    assert fisher_less(1, 1, 1, 0) == pytest.approx(0.5)
    # 18/20 before, 8/20 now: the hypergeometric tail P(X <= 8), 26 passes in 40 runs
    tail = sum(math.comb(26, k) * math.comb(14, 20 - k) for k in range(6, 9))
    assert fisher_less(20, 18, 20, 8) == pytest.approx(tail / math.comb(40, 20))
    assert fisher_less(5, 2, 5, 5) == 1.0  # a rise is never a regression
    assert fisher_less(0, 0, 5, 1) == 1.0
    with pytest.raises(ValueError, match="current: need 0 <= passed <= runs"):
        fisher_less(3, 1, 3, 4)


def _simulate(p_before: float, p_after: float, runs: int, trials: int, seed: int) -> float:
    """The share of trials a scenario is called regressed (the same rule as compare)."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(trials):
        before = sum(rng.random() < p_before for _ in range(runs))
        after = sum(rng.random() < p_after for _ in range(runs))
        outcome = compare_outcomes(
            [
                ScenarioOutcome(
                    scenario_name="s", status_text="pass", repeats_passed=before, repeats_total=runs
                )
            ],
            [
                ScenarioOutcome(
                    scenario_name="s", status_text="pass", repeats_passed=after, repeats_total=runs
                )
            ],
        )
        hits += bool(outcome.regressed)
    return hits / trials


def test_false_alarm_rate_on_identical_agents_is_at_most_alpha() -> None:
    """Identical agents (true pass rate 80% both sides, 50 repeats each, 1,000 trials,
    seed 1): measured 2.7% (Fisher's test is conservative); docs/statistics.md quotes it."""
    rate = _simulate(0.8, 0.8, 50, 1000, seed=1)
    assert rate <= ALPHA


def test_power_on_a_twenty_point_drop() -> None:
    """90% → 70% with 50 repeats each side: called regressed in about 3 of 4 trials
    (measured 0.76 with seed 3); with 20 repeats only about 1 in 3 (measured 0.36)."""
    assert _simulate(0.9, 0.7, 50, 1000, seed=3) >= 0.68
    assert 0.25 <= _simulate(0.9, 0.7, 20, 1000, seed=3) <= 0.5


def _suite(pattern: list[str]) -> Suite:
    answers = itertools.cycle(pattern)
    suite = Suite(name="cmp")
    suite.append(
        Scenario("agent")
        .interact("q", lambda inputs: next(answers))
        .check(Equals(expected_value="ok"))
    )
    suite.append(Scenario("steady").interact("q", "ok").check(Equals(expected_value="ok")))
    return suite


def _run(pattern: list[str], repeat: int) -> SuiteResult:
    return _suite(pattern).run_sync(repeat=repeat, verbose=False)


def test_compare_on_repeats_calls_a_large_drop_regressed() -> None:
    baseline = _run(["ok"] * 9 + ["bad"], 20)  # 18/20
    current = _run(["ok", "bad"], 20)  # 10/20
    diff = current.compare(baseline)
    (drop,) = diff.regressed
    assert (drop.scenario_name, drop.baseline_passed, drop.passed) == ("agent", 18, 10)
    assert drop.p_value == pytest.approx(fisher_less(20, 18, 20, 10))
    assert drop.p_value < 0.05 and diff.has_regressions
    assert diff.changed_not_significant == []


def test_compare_on_repeats_a_small_drop_is_not_significant() -> None:
    baseline = _run(["ok"] * 9 + ["bad"], 20)  # 18/20
    current = _run(["ok"] * 4 + ["bad"], 20)  # 16/20
    diff = current.compare(baseline)
    assert diff.regressed == [] and not diff.has_regressions
    (drop,) = diff.changed_not_significant
    assert (drop.baseline_passed, drop.passed) == (18, 16)
    strict = current.compare(baseline, alpha=0.5)  # a looser level calls it
    assert [d.scenario_name for d in strict.regressed] == ["agent"]
    with pytest.raises(ValueError, match="alpha"):
        current.compare(baseline, alpha=0)
