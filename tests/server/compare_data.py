"""Runs for the compare tests: suites run on git branches (main, feature branches, a
merge base), and a pair of runs whose changed scenarios differ in output, failing checks,
cost, duration and tokens (with hostile and long outputs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunEnvironment, RunLog, run_log_from_suite_result
from scenarist.store.sql.store import SqlStore

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
XSS_OUT = (
    "Refund <b>pending</b> <img src=x onerror=window.__xss=3>"
    "</script><script>window.__xss=4</script>"
)
LONG_OUT = "".join(f"line {n:04d} of a very long answer\n" for n in range(400))
DESK = "desk"


def suite_log(
    run_id: str,
    hour: int,
    *,
    suite: str = "shop",
    branch: str | None = "main",
    commit: str | None = None,
    merge_base: str | None = None,
    outputs: dict[str, str] | None = None,
    expected: dict[str, str] | None = None,
    usage: dict[str, tuple[float, int, int, int]] | None = None,
    project: str | None = None,
) -> RunLog:
    """A run of ``suite`` at ``T0 + hour``; ``outputs``/``expected`` per scenario (all
    ``ok`` by default); ``usage``: per scenario ``(cost_usd, duration_ms, tokens_in,
    tokens_out)``."""
    outputs = outputs or {"a": "ok"}
    expected = expected or {}
    scenarios = [
        Scenario(name)
        .interact("q", lambda _inputs, out=out: out)
        .check(Equals(expected_value=expected.get(name, "ok"), target_key="trace.last.outputs"))
        for name, out in outputs.items()
    ]
    result = Suite(name=suite, scenarios=scenarios).run_sync(verbose=False)
    result.started_at = T0 + timedelta(hours=hour)
    environment = RunEnvironment(git_branch=branch, git_commit=commit, git_merge_base=merge_base)
    log = run_log_from_suite_result(result, run_id=run_id, environment=environment, project=project)
    for record in log.scenarios:
        cost, duration, tokens_in, tokens_out = (usage or {}).get(
            record.result.scenario_name, (0.001, 100, 10, 5)
        )
        record.result.duration_ms = duration
        record.tokens_in, record.tokens_out = tokens_in, tokens_out
        record.cost_usd = cost  # set last: clears the record's cached line
    return log


async def seed_branches(store: SqlStore) -> None:
    """``shop``: main, feature/x, main, feature/y (merge base m1's commit), feature/z,
    feature/x again; ``legacy`` on master; ``solo`` on two feature branches only;
    ``plain`` without a branch."""
    logs = [
        suite_log("m1", 0, commit="c1c1c1c1c1c1c1c1"),
        suite_log("f1", 1, branch="feature/x"),
        suite_log("m2", 2, commit="c2c2c2c2c2c2c2c2"),
        suite_log("y1", 3, branch="feature/y", merge_base="c1c1c1c1c1c1c1c1"),
        suite_log("z1", 4, branch="feature/z"),
        suite_log("f2", 5, branch="feature/x"),
        suite_log("l1", 0, suite="legacy", branch="master"),
        suite_log("q1", 1, suite="legacy", branch="feature/q"),
        suite_log("s1", 0, suite="solo", branch="feature/a"),
        suite_log("s2", 1, suite="solo", branch="feature/b"),
        suite_log("n1", 0, suite="plain", branch=None),
        suite_log("n2", 1, suite="plain", branch=None),
        suite_log("elsewhere", 3, project="other"),
    ]
    for log in logs:
        await store.ingest_run_log(log)


async def seed_desk(store: SqlStore) -> None:
    """``desk`` on main: ``base`` then ``now`` (refund and long break, fixme is fixed,
    greet passes both), and ``feat`` on a feature branch between them."""
    before = {"refund": "Refund sent", "long": "short", "greet": "ok", "fixme": "nope"}
    after = {"refund": XSS_OUT, "long": LONG_OUT, "greet": "ok", "fixme": "ok"}
    expected = {"refund": "Refund sent", "long": "short"}
    await store.ingest_run_log(
        suite_log(
            "base", 0, suite=DESK, outputs=before, expected=expected,
            usage={"refund": (0.010, 1000, 100, 50)},
        )
    )  # fmt: skip
    await store.ingest_run_log(
        suite_log("feat", 1, suite=DESK, branch="feature/x", outputs=after, expected=expected)
    )
    await store.ingest_run_log(
        suite_log(
            "now", 2, suite=DESK, outputs=after, expected=expected,
            usage={"refund": (0.015, 1500, 200, 100)},
        )
    )  # fmt: skip
