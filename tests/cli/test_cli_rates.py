"""``scenarist run --repeat K|auto[:N] --min-pass-rate R``: the statistical verdict decides
the exit code, and the verdict line says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from scenarist.formats.runlog import read_jsonl

RATES = """
import itertools
from scenarist import Equals, Scenario, Suite

nine = itertools.cycle(["ok"] * 9 + ["bad"])

suite = Suite(name="rates", min_pass_rate=0.5)
suite.append(Scenario("mostly").interact("q", lambda inputs: next(nine))
             .check(Equals(expected_value="ok")))
suite.append(Scenario("steady", min_pass_rate=0.8).interact("q", "ok")
             .check(Equals(expected_value="ok")))
"""

HALF = """
import itertools
from scenarist import Equals, Scenario

half = itertools.cycle(["ok", "bad"])
coin = Scenario("coin").interact("q", lambda inputs: next(half)).check(Equals(expected_value="ok"))
"""


def _log(home: Path) -> Path:
    (path,) = (home / "home" / "runs").glob("*.jsonl")
    return path


def test_rate_verdict_passes_a_run_whose_repeats_sometimes_fail(
    cli: Callable[..., Result], write: Callable[[str, str], Path], home: Path
) -> None:
    write("rates.py", RATES)
    result = cli("run", "rates.py", "--repeat", "40", "-q")
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("scenarist: PASSED (exit 0): no scenario failed")
    assert "| min pass rate: 2 pass, 0 fail, 0 inconclusive" in last
    log = read_jsonl(_log(home))
    assert log.header.settings.repeat == 40
    stats = log.scenarios[0].result.repeat_stats
    assert stats is not None and (stats.passed, stats.runs, stats.min_pass_rate) == (36, 40, 0.5)


def test_min_pass_rate_option_fails_a_coin_flip(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--repeat", "30", "--min-pass-rate", "0.9", "-q")
    assert result.exit_code == 1, result.output
    assert (
        "scenarist: FAILED (exit 1): 1 scenario(s) failed (1 below their required pass rate, "
        "0 inconclusive)"
    ) in result.output


def test_inconclusive_fails_the_run(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("rates.py", RATES)
    result = cli("run", "rates.py", "--repeat", "3", "-q")
    assert result.exit_code == 1, result.output
    assert "inconclusive" in result.output.splitlines()[-1]


def test_repeat_auto_stops_each_scenario_when_decided(
    cli: Callable[..., Result], write: Callable[[str, str], Path], home: Path
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--repeat", "auto:50", "--min-pass-rate", "0.95", "-q")
    assert result.exit_code == 1, result.output
    log = read_jsonl(_log(home))
    assert (log.header.settings.repeat, log.header.settings.repeat_auto) == (50, True)
    assert log.header.settings.min_pass_rate == 0.95
    stats = log.scenarios[0].result.repeat_stats
    assert stats is not None
    assert stats.method == "sequential" and stats.verdict == "fail" and stats.runs < 50


def test_repeat_auto_without_a_rate_names_the_fix(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--repeat", "auto", "-q")
    assert result.exit_code == 2, result.output
    assert "min_pass_rate" in result.output and "('coin')" in result.output


def test_repeat_spelling_is_checked(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--repeat", "often")
    assert result.exit_code == 2
    assert "--repeat must be a whole number >= 1, 'auto' or 'auto:N'" in result.output


AGENT = """
import itertools
from scenarist import Equals, Scenario

answers = itertools.cycle({pattern!r})
agent = (Scenario("agent").interact("q", lambda inputs: next(answers))
         .check(Equals(expected_value="ok")))
"""


def test_fail_on_regression_fails_only_a_significant_drop(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    # three versions of one scenario (a file is imported once per process: one file each)
    write("v1.py", AGENT.format(pattern=["ok"] * 9 + ["bad"]))
    assert cli("run", "v1.py", "--repeat", "20", "-q").exit_code == 1  # 18/20: a FAIL shown
    write("v2.py", AGENT.format(pattern=["ok"] * 4 + ["bad"]))  # 16/20: noise
    noise = cli("run", "v2.py", "--repeat", "20", "--baseline", "last", "--fail-on-regression")
    assert "Changed, not significant (one-sided Fisher exact test, alpha 0.05) (1)" in noise.output
    assert "agent: 18/20 → 16/20 (p = 0.3307)" in noise.output
    assert "regressed significantly" not in noise.output
    write("v3.py", AGENT.format(pattern=["ok", "bad"]))  # 10/20 against 16/20
    drop = cli("run", "v3.py", "--repeat", "20", "--baseline", "last", "--fail-on-regression")
    assert drop.exit_code == 1, drop.output
    assert "Regressed (one-sided Fisher exact test, alpha 0.05) (1)" in drop.output
    assert (
        drop.output.strip()
        .splitlines()[-1]
        .startswith(
            "scenarist: FAILED (exit 1): 1 scenario(s) regressed significantly against the "
            "baseline (--fail-on-regression)"
        )
    )


def test_fail_on_regression_needs_a_baseline(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--fail-on-regression")
    assert result.exit_code == 2
    assert "--fail-on-regression compares with a baseline: add --baseline RUN" in result.output


def test_min_pass_rate_without_repeats_warns(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("coin.py", HALF)
    result = cli("run", "coin.py", "--min-pass-rate", "0.9", "-q")
    assert "warning: --min-pass-rate is judged over repeated runs" in result.output
