"""``ScenarioRunResult`` reads well: a repr that says the verdict, and ``print_report``."""

from __future__ import annotations

import pytest

from scenarist.model.items import ScenarioItem
from scenarist.veval.results import ItemRunResult, ScenarioRunResult


def _result() -> ScenarioRunResult:
    return ScenarioRunResult(
        scenario_name="refunds",
        run_id="run_1",
        duration_ms=12.0,
        results=[
            ItemRunResult(item=ScenarioItem(name="asks politely", input="hi"), passed=True),
            ItemRunResult(
                item=ScenarioItem(input="refund now"),
                failures=["output does not contain 'refund'"],
                trace_id="tr_9",
                cost_usd=0.000032,
            ),
        ],
    )


def test_repr_names_the_scenario_the_verdict_and_the_counts() -> None:
    assert repr(_result()) == (
        "ScenarioRunResult('refunds': FAILED, 1/2 items passed, run_id='run_1')"
    )
    assert "EMPTY, 0/0" in repr(ScenarioRunResult(scenario_name="s"))
    errored = ScenarioRunResult(scenario_name="s", error="the agent could not be imported")
    assert errored.verdict == "ERROR"


def test_print_report_lists_each_item_with_its_failures(capsys: pytest.CaptureFixture[str]) -> None:
    _result().print_report()
    assert capsys.readouterr().out.splitlines() == [
        "refunds: FAILED | 1 passed, 1 failed of 2 item(s) | 12 ms, $0.000032 | run run_1",
        "  PASS  1. asks politely",
        "  FAIL  2. refund now (trace tr_9)",
        "          - output does not contain 'refund'",
    ]
