"""Fill a scenarist store with realistic data for the server benchmarks (not a test).

Four suites (``support``, ``billing``, ``search``, ``onboarding``; 400 scenarios in all)
run about every 2.5 hours each over eight weeks until the store holds ``--check-results``
check verdicts (default 1,000,000: about 2,000 runs and 200,000 scenario results).
Scenarios have 3 to 7 checks, tags, and a stored record (a real run log scenario record
with its trace, made once by running a real ``Suite``). Most scenarios almost always pass;
some are flaky (pass rate 60-80 %, a few ``flaky`` under repeat), some broke on a given
day, a few error; failed checks carry a message. A quarter of the runs left a trace per
scenario (``traces``: a real ``TraceRecord``, about 1.8 KB, its order number, customer and
scenario name varied; 2 % replays): about 50,000 traces at 1,000,000 check results.

How rows get in: **direct bulk inserts** (SQLAlchemy Core ``executemany``, 20 runs per
transaction) into the store's own tables (``runs``, ``scenario_results``,
``check_results``, ``traces``), in exactly the row shape ``db/_rows.run_log_rows`` (and
``trace_row``) produces, after the
store has been created and migrated by :class:`SqlStore` itself. Going through
``SqlStore.ingest_run_log`` would validate a pydantic ``RunLog`` per run and take ~20x
longer; ``server_bench.py`` times that path separately. PostgreSQL gets ``ANALYZE`` at
the end, as autovacuum would do on a live server; SQLite gets none (the server runs
none either).

    .venv/bin/python bench/server_seed.py sqlite:///bench/results/seed.db
    .venv/bin/python bench/server_seed.py postgresql://scenarist@127.0.0.1:55432/scenarist \\
        --check-results 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import run_log_from_suite_result
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.store.sql._rows import run_log_rows, trace_row
from scenarist.store.sql.models import (
    CheckResultRow,
    RunRow,
    ScenarioResultRow,
    TraceRow,
    table_of,
)
from scenarist.store.sql.store import SqlStore

SUITES: dict[str, int] = {"support": 120, "billing": 80, "search": 160, "onboarding": 40}
CHECK_KINDS = ["equals", "contains", "regex", "json_schema", "llm_judge", "latency_below"]
PERIOD = timedelta(days=56)
END = datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
RUNS_PER_TRANSACTION = 20
TRACE_SHARE = 0.25
"""The share of runs whose scenarios each left a trace (captured agent runs): at 1,000,000
check results about 50,000 traces."""
REPLAY_SHARE = 0.02


@dataclass
class ScenarioSpec:
    name: str
    suite: str
    checks: int
    fail_rate: float
    error_rate: float
    repeat_flaky: bool
    broken_after: datetime | None
    tags: list[str]


@dataclass
class SeedSummary:
    url: str
    runs: int = 0
    scenario_results: int = 0
    check_results: int = 0
    traces: int = 0
    seconds: float = 0.0
    suites: dict[str, int] = field(default_factory=dict)
    newest_run_ids: dict[str, str] = field(default_factory=dict)
    flaky_scenarios: list[str] = field(default_factory=list)


def scenario_specs(rng: random.Random) -> list[ScenarioSpec]:
    specs = []
    for suite, count in SUITES.items():
        for i in range(count):
            roll = rng.random()
            fail_rate, error_rate, broken_after = 0.005, 0.001, None
            if roll < 0.06:  # flaky
                fail_rate = rng.uniform(0.2, 0.4)
            elif roll < 0.08:  # broke on some day of the period
                broken_after = END - PERIOD * rng.uniform(0.05, 0.9)
            elif roll < 0.09:  # errors now and then (timeouts)
                error_rate = 0.05
            tags = [f"team:{suite}", "smoke" if i % 4 == 0 else "regression", f"p{i % 3 + 1}"]
            specs.append(
                ScenarioSpec(
                    name=f"{suite}/case-{i:03d}",
                    suite=suite,
                    checks=3 + (i * 7919) % 5,
                    fail_rate=fail_rate,
                    error_rate=error_rate,
                    repeat_flaky=roll < 0.01,
                    broken_after=broken_after,
                    tags=tags,
                )
            )
    return specs


def templates() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A real run log's header, footer and scenario record (with its trace), as JSON."""
    scenario = Scenario("template", tags=["t"]).interact(
        "Where is my refund for order 1234? It has been two weeks.",
        lambda _inputs: "Your refund for order 1234 was issued on Monday; allow 3-5 days.",
    )
    for i in range(5):
        scenario = scenario.check(
            Equals(expected_value=f"v{i}", target_key="trace.last.outputs", name=f"check {i}")
        )
    result = Suite(name="template", scenarios=[scenario]).run_sync()
    log = run_log_from_suite_result(result, run_id="template")
    footer = log.footer.model_dump(mode="json") if log.footer else {}
    return (
        log.header.model_dump(mode="json"),
        footer,
        log.scenarios[0].model_dump(mode="json", fallback=str),
    )


class _Traces:
    """A trace per scenario of a traced run, in the row shape of ``_rows.trace_row``: a
    real ``TraceRecord`` (an agent span with an LLM call and a tool call, about 2 KB of
    JSON), its text varied per trace (order number, customer, the scenario's name)."""

    def __init__(self) -> None:
        at = datetime(2000, 1, 1, tzinfo=UTC)
        question = "Where is my refund for order @@ORDER@@? Customer @@CUSTOMER@@, @@NAME@@."
        answer = "Your refund for order @@ORDER@@ was issued on Monday; allow 3-5 days."
        llm = Span(
            step_id="s2", name="chat gpt-4o-mini", type="llm", status="success",
            input=[
                {"role": "system", "content": "You are a support agent for an online shop. "
                 "Answer briefly, cite the order, never promise dates you cannot check."},
                {"role": "user", "content": question},
            ],
            output={"role": "assistant", "content": answer},
            duration_ms=812.0, model="gpt-4o-mini", tokens_in=412, tokens_out=38,
            cost_usd=0.00031,
        )  # fmt: skip
        tool = Span(
            step_id="s3", name="lookup_order", type="tool", status="success",
            input={"order_id": "@@ORDER@@"},
            output={"order_id": "@@ORDER@@", "state": "refunded", "amount": "42.10 EUR"},
            duration_ms=35.0,
        )  # fmt: skip
        root = Span(
            step_id="s1", name="agent", type="agent", status="success", input=question,
            output=answer, duration_ms=900.0, children=[tool, llm],
        )  # fmt: skip
        record = TraceRecord(
            trace_id="@@TRACE@@", agent_name="@@AGENT@@", input=question, output=answer,
            status="success", started_at=at, duration_ms=900.0, steps=[root],
            metadata={"scenario": "@@NAME@@"},
        )  # fmt: skip
        self.row = trace_row(record, at)
        self.document: str = self.row["document"]

    def row_for(
        self, rng: random.Random, spec: ScenarioSpec, run_id: str, position: int, at: datetime
    ) -> dict[str, Any]:
        trace_id = f"tr-{run_id}-{position:03d}"
        replay = rng.random() < REPLAY_SHARE
        document = (
            self.document.replace("@@TRACE@@", trace_id)
            .replace("@@AGENT@@", f"{spec.suite}-bot")
            .replace("2000-01-01T00:00:00+00:00", at.isoformat())
            .replace("@@ORDER@@", str(rng.randrange(10_000, 100_000)))
            .replace("@@CUSTOMER@@", f"C-{rng.randrange(100_000):05d}")
            .replace("@@NAME@@", spec.name)
        )
        return {
            **self.row,
            "trace_id": trace_id,
            "agent_name": f"{spec.suite}-bot",
            "status": "error" if rng.random() < 0.01 else "success",
            "sort_at": at,
            "started_at": at,
            "ended_at": at + timedelta(milliseconds=900),
            "is_replay": replay,
            "replay_of": f"tr-original-{position:03d}" if replay else None,
            "document": document,
        }


class _Documents:
    """The stored scenario record per (scenario, status), built once."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.cache: dict[tuple[str, str, int], str] = {}

    def get(self, spec: ScenarioSpec, status: str, position: int) -> str:
        key = (spec.name, status, position)
        if key not in self.cache:
            record = json.loads(json.dumps(self.record))
            record["index"] = position
            record["check_count"] = spec.checks
            record["result"]["scenario_name"] = spec.name
            record["result"]["status"] = status
            record["result"]["tags"] = spec.tags
            self.cache[key] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return self.cache[key]


def run_rows(
    rng: random.Random,
    suite: str,
    specs: list[ScenarioSpec],
    started: datetime,
    number: int,
    header: dict[str, Any],
    footer: dict[str, Any],
    docs: _Documents,
    traces: _Traces | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    run_id = f"{suite}-{started:%Y%m%dT%H%M%S}-{number:05d}"
    scenarios: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
    cost_total = 0.0
    trace_rows: list[dict[str, Any]] = []
    traced = traces is not None and rng.random() < TRACE_SHARE
    for position, spec in enumerate(specs):
        if traced:
            assert traces is not None
            at = started + timedelta(seconds=position)
            trace_rows.append(traces.row_for(rng, spec, run_id, position, at))
        roll = rng.random()
        broken = spec.broken_after is not None and started >= spec.broken_after
        if roll < spec.error_rate:
            status = "error"
        elif broken or roll < spec.error_rate + spec.fail_rate:
            status = "fail"
        else:
            status = "pass"
        counts[status] += 1
        flaky = spec.repeat_flaky and rng.random() < 0.3
        cost = round(rng.uniform(0.0002, 0.004), 6)
        cost_total += cost
        failing_check = rng.randrange(spec.checks) if status != "pass" else -1
        scenarios.append(
            {
                "run_id": run_id,
                "position": position,
                "scenario_name": spec.name,
                "status": status,
                "sort_at": started,
                "duration_ms": round(rng.uniform(200, 4000), 1),
                "cost_usd": cost,
                "tokens_in": rng.randint(200, 2000),
                "tokens_out": rng.randint(20, 400),
                "tags": json.dumps(spec.tags),
                "runs_executed": 3 if spec.repeat_flaky else 1,
                "flaky": flaky,
                "check_count": spec.checks,
                "no_checks": False,
                "suite_name": suite,  # a scenario is (project, suite, name)
                "repeats_passed": None,  # no repeats: the rate columns stay empty
                "repeats_total": None,
                "rate_verdict": None,
                "document": docs.get(spec, status, position),
            }
        )
        for check_index in range(spec.checks):
            kind = CHECK_KINDS[(position + check_index) % len(CHECK_KINDS)]
            verdict = "pass"
            message = None
            if check_index == failing_check:
                verdict = status
                message = (
                    "TimeoutError: the agent did not answer within 30 s"
                    if status == "error"
                    else f"expected the answer to mention 'refund', got 'I cannot help' ({kind})"
                )
            checks.append(
                {
                    "run_id": run_id,
                    "position": position,
                    "step_index": 0,
                    "check_index": check_index,
                    "scenario_name": spec.name,
                    "check_kind": kind,
                    "check_name": f"{kind} #{check_index}",
                    "status": verdict,
                    "message": message,
                    "sort_at": started,
                }
            )
    decided = counts["pass"] + counts["fail"] + counts["error"]
    duration = sum(s["duration_ms"] for s in scenarios) / 8
    ended = started + timedelta(milliseconds=duration)
    head = {**header, "run_id": run_id, "suite_name": suite, "started_at": started.isoformat()}
    foot = {
        **footer,
        "ended_at": ended.isoformat(),
        "duration_ms": int(duration),
        "passed_count": counts["pass"],
        "failed_count": counts["fail"],
        "errored_count": counts["error"],
        "pass_rate": counts["pass"] / decided if decided else None,
        "cost_usd": round(cost_total, 6),
    }
    run = {
        "run_id": run_id,
        "kind": "suite",
        "name": suite,
        "sort_at": started,
        "started_at": started,
        "ended_at": ended,
        "ingested_at": ended + timedelta(seconds=2),
        "duration_ms": float(int(duration)),
        "total_count": len(scenarios),
        "passed_count": counts["pass"],
        "failed_count": counts["fail"],
        "errored_count": counts["error"],
        "skipped_count": 0,
        "pass_rate": foot["pass_rate"],
        "cost_usd": foot["cost_usd"],
        "tokens_in": sum(s["tokens_in"] for s in scenarios),
        "tokens_out": sum(s["tokens_out"] for s in scenarios),
        "complete": True,
        "subset": False,  # every seeded run is the whole suite
        "git_commit": f"{rng.getrandbits(160):040x}",
        "git_branch": "main" if rng.random() < 0.8 else f"feature/{suite}-{number % 17}",
        "format_version": header.get("format_version"),
        "document": json.dumps(
            {"header": head, "footer": foot}, ensure_ascii=False, separators=(",", ":")
        ),
        "extra": None,
    }
    return run, scenarios, checks, trace_rows


def _check_shapes() -> None:
    """The seeded rows have exactly the keys the store's own ingestion produces."""
    scenario = Scenario("x").interact("a", lambda _i: "a").check(Equals(expected_value="a"))
    log = run_log_from_suite_result(Suite(name="s", scenarios=[scenario]).run_sync(), run_id="x")
    run, scenarios, checks = run_log_rows(log, datetime.now(UTC))
    ours = run_rows(
        random.Random(0),
        "s",
        scenario_specs(random.Random(0))[:1],
        END,
        0,
        {},
        {},
        _Documents({"result": {}}),
    )
    assert set(run) == set(ours[0]), set(run) ^ set(ours[0])
    assert set(scenarios[0]) == set(ours[1][0]), set(scenarios[0]) ^ set(ours[1][0])
    assert set(checks[0]) == set(ours[2][0]), set(checks[0]) ^ set(ours[2][0])
    record = TraceRecord(trace_id="x", input="a", started_at=END)
    spec = scenario_specs(random.Random(0))[0]
    theirs = set(trace_row(record, END))
    ours_trace = set(_Traces().row_for(random.Random(0), spec, "r", 0, END))
    assert theirs == ours_trace, theirs ^ ours_trace


async def seed(url: str, check_results: int = 1_000_000, *, seed_value: int = 7) -> SeedSummary:
    """Fill the (empty) store at ``url`` until it holds at least ``check_results`` checks."""
    _check_shapes()
    rng = random.Random(seed_value)
    specs = scenario_specs(rng)
    by_suite = {s: [spec for spec in specs if spec.suite == s] for s in SUITES}
    checks_per_round = sum(spec.checks for spec in specs)
    rounds = -(-check_results // checks_per_round)
    step = PERIOD / max(rounds, 1)
    header, footer, record = templates()
    docs = _Documents(record)
    traces = _Traces()
    store = SqlStore(url)
    summary = SeedSummary(url=url, suites=dict(SUITES))
    began = time.perf_counter()
    tables = (
        table_of(RunRow),
        table_of(ScenarioResultRow),
        table_of(CheckResultRow),
        table_of(TraceRow),
    )
    pending: list[list[dict[str, Any]]] = [[], [], [], []]
    number = 0

    async def flush() -> None:
        async with store._write() as connection:
            for table, rows in zip(tables, pending, strict=True):
                for row in rows:  # every row names its project (the store's own)
                    row["project"] = store.project
                for start in range(0, len(rows), 5000):
                    await connection.execute(table.insert(), rows[start : start + 5000])
        for rows in pending:
            rows.clear()

    try:
        await store.engine()
        for r in range(rounds):
            if summary.check_results >= check_results:
                break
            for offset, suite in enumerate(SUITES):
                at = END - PERIOD + step * r + timedelta(minutes=7 * offset)
                at = at.replace(microsecond=0)
                run, scenarios, checks, trace_rows = run_rows(
                    rng, suite, by_suite[suite], at, number, header, footer, docs, traces
                )
                number += 1
                pending[0].append(run)
                pending[1].extend(scenarios)
                pending[2].extend(checks)
                pending[3].extend(trace_rows)
                summary.traces += len(trace_rows)
                summary.runs += 1
                summary.scenario_results += len(scenarios)
                summary.check_results += len(checks)
                summary.newest_run_ids[suite] = run["run_id"]
            if len(pending[0]) >= RUNS_PER_TRANSACTION:
                await flush()
        await flush()
        if store.dialect == "postgresql":  # SQLite gets no ANALYZE: the server runs none
            async with store._write() as connection:
                await connection.execute(text("ANALYZE"))
    finally:
        await store.close()
    summary.flaky_scenarios = [s.name for s in specs if 0.2 <= s.fail_rate < 1]
    summary.seconds = time.perf_counter() - began
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="sqlite:///path.db or postgresql://user@host:port/db")
    parser.add_argument("--check-results", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    summary = asyncio.run(seed(args.url, args.check_results, seed_value=args.seed))
    print(
        f"seeded {summary.runs:,} runs, {summary.scenario_results:,} scenario results, "
        f"{summary.check_results:,} check results, {summary.traces:,} traces "
        f"in {summary.seconds:.1f} s ({summary.url})"
    )


if __name__ == "__main__":
    main()
