"""A small store for the dashboard tests: three suite runs, one Veval-style scenario run,
a stored trace with a span tree, and items, with hostile names and outputs mixed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunLog, run_log_from_suite_result
from scenarist.model.items import ItemSummary, ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.store.sql.store import SqlStore

XSS_NAME = "<img src=x onerror=window.__xss=1>"
XSS_OUTPUT = "</script><script>window.__xss=2</script>"
TRACE_ID = "tr_dashboard_0001"
SUITE = "support"
VEVAL_SCENARIO = "refund flow/v2"
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)

# scenario name → outcome per run (oldest first); True passes
OUTCOMES: dict[str, list[bool]] = {
    "refund": [True, True, True],
    "greeting": [True, False, True],  # two flips: flaky
    "billing": [True, True, False],  # broke in the newest run
    XSS_NAME: [False, False, False],
}


def suite_log(run_index: int) -> RunLog:
    scenarios = []
    for name, outcomes in OUTCOMES.items():
        passes = outcomes[run_index]
        output = XSS_OUTPUT if name == XSS_NAME else "hello"
        expected = output if passes else "something else"
        scenarios.append(
            Scenario(name, tags=["team:support", "smoke" if name != "billing" else "slow"])
            .interact("hello", lambda _inputs, out=output: out)
            .check(Equals(expected_value=expected, target_key="trace.last.outputs", name=XSS_NAME))
        )
    result = Suite(name=SUITE, scenarios=scenarios).run_sync()
    result.started_at = T0 + timedelta(hours=run_index)
    return run_log_from_suite_result(result, run_id=f"run-{run_index}")


def trace_record() -> TraceRecord:
    child = Span(
        span_id="s2",
        status="success",
        parent_id="s1",
        name="search",
        kind="tool",
        input={"q": "refund"},
        output=XSS_OUTPUT,
        duration_ms=12.5,
    )
    root = Span(
        span_id="s1",
        status="success",
        name="answer",
        kind="llm",
        input="where is my refund?",
        output="on its way",
        duration_ms=40.0,
        model="gpt-4o-mini",
        tokens_in=12,
        tokens_out=5,
        cost_usd=0.0004,
        children=[child],
    )
    return TraceRecord(
        trace_id=TRACE_ID,
        status="success",
        agent_name=XSS_NAME,
        input="where is my refund?",
        output=XSS_OUTPUT,
        started_at=T0,
        duration_ms=55.0,
        steps=[root],
    )


def veval_run() -> ScenarioRunRecord:
    return ScenarioRunRecord(
        run_id="veval-1",
        scenario_name=VEVAL_SCENARIO,
        started_at=T0 + timedelta(hours=5),
        ended_at=T0 + timedelta(hours=5, seconds=2),
        duration_ms=2000,
        passed=False,
        pass_count=1,
        fail_count=1,
        items=[
            ItemSummary(name="ok", passed=True, trace_id=None),
            ItemSummary(
                name="bad",
                passed=False,
                failures=["too expensive: " + XSS_OUTPUT],
                trace_id=TRACE_ID,
            ),
        ],
    )


async def seed(store: SqlStore) -> dict[str, Any]:
    """Fill ``store``; what was stored, for assertions."""
    for index in range(3):
        await store.ingest_run_log(suite_log(index))
    await store.save_trace(trace_record())
    await store.save_scenario_run(veval_run())
    await store.save_items(
        VEVAL_SCENARIO,
        [
            ScenarioItem(name="synthetic", input="where is my refund?", tags=["smoke"]),
            ScenarioItem(name=XSS_NAME, trace_id=TRACE_ID),
        ],
    )
    return {"runs": ["veval-1", "run-2", "run-1", "run-0"]}
