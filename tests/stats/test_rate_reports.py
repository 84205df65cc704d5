"""The repeats' statistics in every report: console, JUnit, run log, CLI verdict."""

from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET
from typing import Any

from rich.console import Console

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import decode_text, run_log_from_suite_result
from scenarist.model.results import SuiteResult


def _cycling(name: str, pattern: list[str], **fields: Any) -> Scenario:
    answers = itertools.cycle(pattern)
    return (
        Scenario(name, **fields)
        .interact("q", lambda inputs: next(answers))
        .check(Equals(expected_value="ok"))
    )


def _result() -> SuiteResult:
    suite = Suite(name="rates", min_pass_rate=0.8)
    suite.append(_cycling("mostly", ["ok"] * 19 + ["bad"]))  # 38 of 40: shown above 0.8
    suite.append(_cycling("always", ["ok"]))
    suite.append(_cycling("half", ["ok", "bad"]))
    suite.append(_cycling("close", ["ok"] * 4 + ["bad"], min_pass_rate=0.9))
    return suite.run_sync(repeat=40, verbose=False)


def _text(obj: Any) -> str:
    console = Console(file=io.StringIO(), width=220, color_system=None, record=True)
    obj.print_report(console=console)
    return console.export_text()


def test_console_report_shows_rates_intervals_and_verdicts() -> None:
    text = _text(_result())
    assert "Pass rates over repeats (95% Wilson interval):" in text
    assert "mostly: 38/40 passed, 95.0% (95% CI 83.5%–98.6%) | min 80.0%: PASS | FLAKY" in text
    assert "always: 40/40 passed, 100.0% (95% CI 91.2%–100.0%) | min 80.0%: PASS" in text
    assert "half: 20/40 passed, 50.0% (95% CI 35.2%–64.8%) | min 80.0%: FAIL | FLAKY" in text
    assert "close: 32/40 passed, 80.0% (95% CI 65.2%–89.5%) | min 90.0%: FAIL | FLAKY" in text
    assert "Min pass rate: 2 pass, 2 fail, 0 inconclusive" in text


def test_junit_carries_the_verdict_and_fails_below_the_rate() -> None:
    root = ET.fromstring(_result().to_junit_xml())
    cases = {c.get("name"): c for c in root.iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["mostly"].iter("property")}
    assert props["rate_verdict"] == "pass" and props["min_pass_rate"] == "0.8000"
    assert props["pass_rate_ci95"] == "0.8350-0.9862" and props["repeat_runs"] == "40"
    # "mostly" failed a repeat (giskard status FAIL) but its rate is shown: no failure
    assert cases["mostly"].find("failure") is None
    assert cases["always"].find("failure") is None
    failure = cases["half"].find("failure")
    assert failure is not None and failure.get("type") == "min_pass_rate"
    assert "below the required 80.0%" in (failure.get("message") or "")
    assert root.get("failures") == "2"


def test_junit_inconclusive_is_a_failure() -> None:
    suite = Suite(name="few").extend(_cycling("few", ["ok"], min_pass_rate=0.9))
    root = ET.fromstring(suite.run_sync(repeat=5, verbose=False).to_junit_xml())
    (case,) = root.iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert "not shown to reach the required 90.0%" in (failure.get("message") or "")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["rate_verdict"] == "inconclusive"


def test_run_log_keeps_the_statistics_and_reads_back() -> None:
    result = _result()
    log = run_log_from_suite_result(result)
    text = "\n".join(r.model_dump_json() for r in log.records())
    back = decode_text(text).to_suite_result()
    stats = back.results[2].repeat_stats
    assert stats is not None
    assert (stats.passed, stats.runs, stats.verdict) == (20, 40, "fail")
    assert back.rate_verdicts == result.rate_verdicts


def test_a_run_log_without_statistics_still_reads() -> None:
    suite = Suite(name="plain").extend(_cycling("p", ["ok"]))
    log = run_log_from_suite_result(suite.run_sync(verbose=False))
    lines = [r.model_dump_json() for r in log.records()]
    assert "repeat_stats" not in lines[1]
    assert decode_text("\n".join(lines)).to_suite_result().results[0].repeat_stats is None
