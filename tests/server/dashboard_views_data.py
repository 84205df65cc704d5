"""A store for the dashboard's richer views: a traced agent run with timed, nested spans
(a streamed LLM call with a tool call, the tool, a second LLM call, a failed span), the
Veval-style run whose item failed on it, and a big suite run (300 scenarios, tags, three
check kinds, a long-text and a JSON comparison that fail) on two branches and two days.
Hostile text sits in messages, tool arguments, failures, names and diffs."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from typing import Any

import scenarist
from scenarist import Equals, Scenario, StringMatching, Suite
from scenarist.checks import FnCheck
from scenarist.formats.runlog import RunLog, run_log_from_suite_result
from scenarist.model.items import ItemSummary, ScenarioRunRecord
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span, SpanError
from scenarist.store.sql.store import SqlStore

XSS = "<img src=x onerror=window.__xss=1>"
XSS_SCRIPT = "</script><script>window.__xss=2</script>"
CHAT_TRACE = "tr_views_chat"
ORPHAN_TRACE = "tr_views_orphan"
VEVAL_RUN = "views-veval"
ITEM_SCENARIO = "refunds/chat"
BIG_SUITE = "big suite"
BIG_RUN = "views-big"
MAIN_RUN = "views-main"
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
LONG_EXPECTED = (
    "Your refund of 42 euros was approved on Monday and will reach your card within five "
    "working days. " * 4
)
LONG_ACTUAL = LONG_EXPECTED.replace("Monday", "Tuesday", 1).replace("card", "bank account", 1)
BIG_SCENARIOS = 300


def _at(ms: float) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def chat_trace() -> TraceRecord:
    """An agent run: plan (llm, streamed, calls a tool) → lookup (tool) → answer (llm);
    a guard step that failed; times in ms from T0."""
    first_llm = Span(
        span_id="llm1",
        status="success",
        parent_id="root",
        name="plan",
        kind="llm",
        started_at=_at(5),
        ended_at=_at(305),
        duration_ms=300.0,
        model="gpt-4o-mini",
        tokens_in=120,
        tokens_out=18,
        cost_usd=0.000032,
        metadata={"ttft_ms": 85.5, "stream": True},
        input={
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are a refunds assistant."},
                {"role": "user", "content": "Where is my refund? " + XSS},
            ],
        },
        output={
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "lookup_refund",
                                    "arguments": '{"order": "A-17", "note": "' + XSS_SCRIPT + '"}',
                                },
                            }
                        ],
                    }
                }
            ]
        },
    )
    tool = Span(
        span_id="tool1",
        status="success",
        parent_id="root",
        name="lookup_refund",
        kind="tool",
        started_at=_at(310),
        ended_at=_at(410),
        duration_ms=100.0,
        input={"order": "A-17"},
        output={"status": "approved"},
    )
    second_llm = Span(
        span_id="llm2",
        status="success",
        parent_id="root",
        name="answer",
        kind="llm",
        started_at=_at(420),
        ended_at=_at(900),
        duration_ms=480.0,
        model="gpt-4o-mini",
        tokens_in=160,
        tokens_out=40,
        cost_usd=0.000041,
        input={
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are a refunds assistant."},
                {"role": "user", "content": "Where is my refund? " + XSS},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "lookup_refund", "arguments": '{"order": "A-17"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "approved"}'},
            ],
        },
        output={
            "choices": [{"message": {"role": "assistant", "content": "Approved: " + XSS_SCRIPT}}]
        },
    )
    guard = Span(
        span_id="guard",
        parent_id="root",
        name="policy guard",
        kind="custom",
        status="error",
        error=SpanError(message="blocked: " + XSS, type="PolicyError"),
        started_at=_at(905),
        ended_at=_at(925),
        duration_ms=20.0,
    )
    root = Span(
        span_id="root",
        status="success",
        name="agent",
        kind="agent",
        started_at=T0,
        ended_at=_at(1000),
        duration_ms=1000.0,
        children=[first_llm, tool, second_llm, guard],
    )
    return TraceRecord(
        trace_id=CHAT_TRACE,
        status="success",
        agent_name="refund bot " + XSS,
        input="Where is my refund? " + XSS,
        output="Approved: " + XSS_SCRIPT,
        started_at=T0,
        duration_ms=1000.0,
        steps=[root],
    )


def orphan_trace() -> TraceRecord:
    """A trace no scenario run refers to, its span recorded without a start time."""
    return TraceRecord(
        trace_id=ORPHAN_TRACE,
        status="success",
        agent_name="lonely",
        input="hi",
        output="hello",
        started_at=T0 - timedelta(days=30),
        duration_ms=10.0,
        steps=[Span(span_id="x", name="untimed step", status="success", duration_ms=4.0)],
    )


def veval_run() -> ScenarioRunRecord:
    return ScenarioRunRecord(
        run_id=VEVAL_RUN,
        scenario_name=ITEM_SCENARIO,
        started_at=T0 + timedelta(seconds=1),
        ended_at=T0 + timedelta(seconds=3),
        duration_ms=2000,
        passed=False,
        pass_count=0,
        fail_count=1,
        cost_usd=0.000073,
        items=[
            ItemSummary(
                name="where is my refund " + XSS,
                passed=False,
                failures=["max_cost: spent $0.000073 > $0.00005 " + XSS_SCRIPT],
                trace_id=CHAT_TRACE,
                duration_ms=1000.0,
                cost_usd=0.000073,
            )
        ],
    )


def _traced_agent(question: str) -> str:
    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": XSS}]}
    with scenarist.step("reply", input=request, kind="llm") as handle:
        handle.set_meta("model", "gpt-4o-mini")
        handle.output = {"role": "assistant", "content": "hello " + XSS_SCRIPT}
    return "hello " + question


def _scenario(index: int) -> Scenario[Any, Any]:
    name = f"case {index:03d}"
    tags = [f"team:{'billing' if index % 3 == 0 else 'support'}", "smoke" if index % 2 else "slow"]
    if index == 7:  # a long text that differs in two words
        return (
            Scenario(name + " long answer", tags=tags)
            .interact("refund?", lambda _i: LONG_ACTUAL)
            .check(Equals(expected_value=LONG_EXPECTED, target_key="trace.last.outputs"))
        )
    if index == 11:  # a JSON value that differs in one field, with hostile text
        return (
            Scenario(name + " json " + XSS, tags=tags)
            .interact("order?", lambda _i: {"order": "A-17", "status": "pending", "note": XSS})
            .check(
                Equals(
                    expected_value={"order": "A-17", "status": "approved", "note": XSS},
                    target_key="trace.last.outputs",
                )
            )
        )
    if index == 13:  # an agent whose LLM call is traced: the scenario page shows it as chat
        return (
            Scenario(name + " traced", tags=tags)
            .interact("hello", _traced_agent)
            .check(StringMatching(keyword="hello", target_key="trace.last.outputs"))
        )
    if index % 50 == 25:  # an error: the check raises
        return (
            Scenario(name + " broken check", tags=tags)
            .interact("x", lambda _i: "y")
            .check(FnCheck(fn=lambda _t: 1 / 0, name="divides"))
        )
    passes = index % 20 != 3
    return (
        Scenario(name, tags=tags)
        .interact("hello", lambda _i: "hello there")
        .check(
            StringMatching(
                keyword="hello" if passes else "goodbye", target_key="trace.last.outputs"
            )
        )
    )


@functools.cache  # one suite run per process: ingestion only reads the log
def big_suite_log(run_id: str, *, at: datetime, branch: str, count: int) -> RunLog:
    suite = Suite(name=BIG_SUITE, scenarios=[_scenario(i) for i in range(count)])
    result = suite.run_sync(return_exception=True)
    result.started_at = at
    log = run_log_from_suite_result(result, run_id=run_id)
    log.header.environment.git_branch = branch
    log.header.environment.git_commit = "abc123" if branch == "main" else "def456"
    return log


ERRORED_RUN = "run-errored"
CRM_DOWN = f"upstream CRM returned 503 {XSS}"


def crm_lookup(question: str) -> str:
    raise ConnectionError(CRM_DOWN)  # the agent's own line, shown on the run and scenario pages


def crm_agent(question: str) -> str:
    return f"Hello {crm_lookup(question)}"


def errored_log() -> RunLog:
    suite = Suite(name="crm", target=crm_agent)
    suite.append(Scenario("greets_customer").interact("Hi").check(StringMatching(keyword="Hi")))
    result = suite.run_sync(return_exception=True)
    result.started_at = T0 - timedelta(days=3)
    return run_log_from_suite_result(result, run_id=ERRORED_RUN)


async def seed_errored(store: SqlStore) -> None:
    await store.ingest_run_log(errored_log())


async def seed_views(store: SqlStore) -> None:
    await store.save_trace(chat_trace())
    await store.save_trace(orphan_trace())
    await store.save_scenario_run(veval_run())
    await store.ingest_run_log(
        big_suite_log(MAIN_RUN, at=T0 - timedelta(days=2), branch="main", count=30)
    )
    await store.ingest_run_log(
        big_suite_log(BIG_RUN, at=T0 + timedelta(hours=1), branch="feature/x", count=BIG_SCENARIOS)
    )
