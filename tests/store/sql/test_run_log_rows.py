"""``run_log_rows``: the columns of a scenario's row, with and without tags and repeats."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.server.conftest import make_run_log

from scenarist.model.results import RepeatStats
from scenarist.store.sql._rows import run_log_rows


def test_tags_and_repeat_columns_of_each_scenario_row() -> None:
    log = make_run_log("r", outcomes={"plain": True, "tagged": True, "repeated": False})
    _, tagged, repeated = (record.result for record in log.scenarios)
    tagged.tags = ["lang:fr", "tier:gold ✓", 'quote"d']
    repeated.repeat_stats = RepeatStats.of(["pass", "fail", "error"], 0.9)
    plain_only = RepeatStats.of(["pass", "pass"])  # repeats without a required rate
    _, rows, _ = run_log_rows(log, datetime.now(UTC))
    columns = ("tags", "repeats_passed", "repeats_total", "rate_verdict")
    assert [tuple(row[c] for c in columns) for row in rows] == [
        ("[]", None, None, None),
        ('["lang:fr", "tier:gold ✓", "quote\\"d"]', None, None, None),
        ("[]", 1, 3, "fail"),
    ]
    repeated.repeat_stats = plain_only
    _, rows, _ = run_log_rows(log, datetime.now(UTC))
    assert tuple(rows[2][c] for c in columns) == ("[]", 2, 2, None)
    rows[0]["repeats_total"] = 5  # each row its own dict
    assert run_log_rows(log, datetime.now(UTC))[1][0]["repeats_total"] is None
