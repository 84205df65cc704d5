"""A store for triage (issue 31 items 5 and 7): one scenario name in two suites, a subset
run, a big run whose failures share a message, and more broken scenarios than the
overview lists. Hostile text sits in a scenario name and in failure messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunLog, RunSelection, run_log_from_suite_result
from scenarist.store.sql.store import SqlStore

XSS = "<img src=x onerror=window.__xss=1>"
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
SUPPORT = "support"
BIG = "big triage"
BIG_RUN = "triage-big"
BIG_FAILING = 79
BIG_HOSTILE = 4
BIG_PASSING = 7
MANY = "many"
MANY_BROKEN = 12
BROKEN = MANY_BROKEN + 3  # and the subset run's three (they did fail after passing)
SUPPORT_NAMES = ["refund_status", "greeting", "escalation", "billing", f"odd {XSS}", "goodbye"]


def run_log(
    run_id: str,
    suite: str,
    outcomes: dict[str, object],
    at: datetime,
    *,
    selection: RunSelection | None = None,
) -> RunLog:
    """A real run log: a scenario per entry; ``True`` passes, a string fails expecting it."""
    scenarios = [
        Scenario(name)
        .interact("hello", lambda x: x)
        .check(
            Equals(expected_value="hello" if ok is True else ok, target_key="trace.last.outputs")
        )
        for name, ok in outcomes.items()
    ]
    result = Suite(name=suite, scenarios=scenarios).run_sync()
    result.started_at = at
    return run_log_from_suite_result(result, run_id=run_id, selection=selection)


def big_log() -> RunLog:
    """79 failures with one message but for its numbers and ids, 4 with a hostile one,
    7 passes; durations and costs that order differently from the names."""
    outcomes: dict[str, object] = {}
    for i in range(BIG_FAILING):
        outcomes[f"case_{i:03d}"] = f"refund {1000 + i} for order 7f3a{i:04d}c9e1 approved"
    for i in range(BIG_HOSTILE):
        outcomes[f"hostile_{i}"] = f"{XSS} #{i}"
    for i in range(BIG_PASSING):
        outcomes[f"zz_pass_{i}"] = True
    log = run_log(BIG_RUN, BIG, outcomes, T0 + timedelta(hours=5))
    for index, record in enumerate(log.scenarios):
        record.result.duration_ms = (index * 37) % 101
        record.cost_usd = round(((index * 53) % 89) / 10_000, 6)
    if log.footer is not None:
        log.footer.cost_usd = sum(r.cost_usd or 0 for r in log.scenarios)
    return log


async def seed_triage(store: SqlStore) -> None:
    """Fill ``store`` (times from :data:`T0`)."""
    everything = dict.fromkeys(SUPPORT_NAMES, True)
    pytest_like = {"refund_status": True}
    # support's refund_status always fails; pytest's always passes: merged they flip
    for hour in range(4):
        at = T0 + timedelta(hours=hour)
        support = {**everything, "refund_status": "a refund id"}
        await store.ingest_run_log(run_log(f"support-{hour}", SUPPORT, support, at))
        await store.ingest_run_log(
            run_log(f"pytest-{hour}", "pytest", pytest_like, at + timedelta(minutes=30))
        )
    # three scenarios, all failing: a subset, not the suite dropping to 0 %
    subset = dict.fromkeys(SUPPORT_NAMES[1:4], "never")
    await store.ingest_run_log(
        run_log("support-subset", SUPPORT, subset, T0 + timedelta(hours=4, minutes=10))
    )
    selected = {**everything, "refund_status": "a refund id"}
    await store.ingest_run_log(
        run_log(
            "support-selected",
            SUPPORT,
            selected,
            T0 + timedelta(hours=4),
            selection=RunSelection(keyword="not slow", selected=6, found=9),
        )
    )
    names = [f"flow_{i:02d}" for i in range(MANY_BROKEN - 1)] + [f"flow {XSS}"]
    await store.ingest_run_log(
        run_log("many-0", MANY, dict.fromkeys(names, True), T0 + timedelta(hours=4, minutes=20))
    )
    await store.ingest_run_log(
        run_log("many-1", MANY, dict.fromkeys(names, "x"), T0 + timedelta(hours=4, minutes=30))
    )
    await store.ingest_run_log(big_log())
