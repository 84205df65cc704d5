"""Models to rows: run logs, scenario runs, traces, items and snapshots as table rows.

Pure functions (no I/O), so ingestion is "build every row, then one bulk insert per table".
Names that end up in indexed columns are checked here: at most ``MAX_NAME`` characters
and no NUL (PostgreSQL rejects NUL in text, and an index entry has a size limit).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scenarist._jsonable import json_text
from scenarist.errors import UserError
from scenarist.model.record import run_total
from scenarist.model.status import pass_rate

if TYPE_CHECKING:
    from pydantic import BaseModel

    from scenarist.formats.runlog import RunLog
    from scenarist.model.items import ScenarioRunRecord
    from scenarist.model.record import TraceRecord
    from scenarist.model.results import ScenarioResult
    from scenarist.replay.snapshots import SnapshotData

__all__ = [
    "MAX_NAME",
    "check_name",
    "dumps",
    "run_log_rows",
    "scenario_run_rows",
    "snapshot_row",
    "trace_row",
]

MAX_NAME = 1000
Row = dict[str, Any]


def check_name(value: str | None, what: str) -> str | None:
    """``value`` if it can be stored as a name, else a ``UserError`` naming ``what``."""
    if value is None:
        return None
    if len(value) > MAX_NAME:
        raise UserError(f"{what} is {len(value)} characters long; the limit is {MAX_NAME}")
    if "\x00" in value:
        raise UserError(f"{what} {value[:60]!r} contains a NUL character")
    return value


def _text(value: str | None) -> str | None:
    return None if value is None else value.replace("\x00", "\ufffd")


def dumps(model: BaseModel) -> str:
    """Compact JSON of ``model``, values that JSON cannot hold mapped as in ``_jsonable``."""
    return json_text(model.model_dump())


_NO_REPEATS: Row = {"repeats_passed": None, "repeats_total": None, "rate_verdict": None}
"""The repeat columns of a scenario run once (one dict for all: merged, never changed)."""


def _repeat_columns(result: ScenarioResult) -> Row:
    """The repeats' counts and rate verdict (``None`` each without repeats)."""
    stats = result.repeat_stats
    if stats is None:
        return _NO_REPEATS
    return {
        "repeats_passed": stats.passed,
        "repeats_total": stats.runs,
        "rate_verdict": stats.verdict.value if stats.verdict is not None else None,
    }


def run_log_rows(log: RunLog, now: datetime) -> tuple[Row, list[Row], list[Row]]:
    """The ``runs`` row, the ``scenario_results`` rows and the ``check_results`` rows."""
    from scenarist.formats.runlog import record_json

    header, footer = log.header, log.footer
    check_name(header.run_id, "run_id")
    suite_name = check_name(header.suite_name, "suite_name")
    sort_at = header.started_at or now
    scenarios: list[Row] = []
    checks: list[Row] = []
    seen: set[int] = set()
    counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
    for record in log.scenarios:
        if record.index in seen:
            raise UserError(f"scenario records repeat index {record.index}; each needs its own")
        seen.add(record.index)
        result = record.result
        name = check_name(result.scenario_name, "scenario_name") or ""
        status = result.status.value
        counts[status] = counts.get(status, 0) + 1
        scenarios.append(
            {
                "run_id": header.run_id,
                "position": record.index,
                "scenario_name": name,
                "status": status,
                "sort_at": sort_at,
                "duration_ms": float(result.duration_ms),
                "cost_usd": record.cost_usd,
                "tokens_in": record.tokens_in,
                "tokens_out": record.tokens_out,
                "tags": json.dumps(tags, ensure_ascii=False) if (tags := result.tags) else "[]",
                "runs_executed": result.runs_executed,
                "flaky": record.flaky,
                "check_count": record.check_count,
                "no_checks": record.no_checks,
                "document": record_json(record),
                "suite_name": suite_name or "",
                **_repeat_columns(result),
            }
        )
        for step_index, step in enumerate(result.steps):
            for check_index, verdict in enumerate(step.results):
                kind, label = verdict.kind, verdict.name
                checks.append(
                    {
                        "run_id": header.run_id,
                        "position": record.index,
                        "step_index": step_index,
                        "check_index": check_index,
                        "scenario_name": name,
                        "check_kind": _text(str(kind)[:200]) if kind is not None else None,
                        "check_name": _text(str(label)[:MAX_NAME]) if label is not None else None,
                        "status": verdict.status.value,
                        "message": _text(verdict.message),
                        "sort_at": sort_at,
                    }
                )
    total = len(scenarios)
    computed_rate = pass_rate(counts["pass"], counts["pass"] + counts["fail"] + counts["error"])
    costs = [s["cost_usd"] for s in scenarios if s["cost_usd"] is not None]
    environment = header.environment
    run = {
        "run_id": header.run_id,
        "kind": "suite",
        "name": suite_name,
        "sort_at": sort_at,
        "started_at": header.started_at,
        "ended_at": (footer.ended_at if footer else None) or header.ended_at,
        "ingested_at": now,
        "duration_ms": float(footer.duration_ms) if footer else None,
        "total_count": total,
        "passed_count": footer.passed_count if footer else counts["pass"],
        "failed_count": footer.failed_count if footer else counts["fail"],
        "errored_count": footer.errored_count if footer else counts["error"],
        "skipped_count": footer.skipped_count if footer else counts["skip"],
        "pass_rate": footer.pass_rate if footer else computed_rate,
        "cost_usd": footer.cost_usd if footer else (sum(costs) if costs else None),
        "tokens_in": footer.tokens_in if footer else sum(s["tokens_in"] for s in scenarios),
        "tokens_out": footer.tokens_out if footer else sum(s["tokens_out"] for s in scenarios),
        "complete": footer is not None,
        "git_commit": check_name(environment.git_commit, "git_commit"),
        "git_branch": check_name(environment.git_branch, "git_branch"),
        "format_version": header.format_version,
        "document": json.dumps(
            {
                "header": header.model_dump(mode="json"),
                "footer": footer.model_dump(mode="json") if footer else None,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ),
        "extra": None,
        # a selection makes a subset; fewer scenarios than usual too (``ingest_run_log``)
        "subset": header.selection is not None,
    }
    return run, scenarios, checks


def scenario_run_rows(
    record: ScenarioRunRecord, now: datetime, extra: dict[str, Any] | None = None
) -> tuple[Row, Row]:
    """The ``runs`` row and the one ``scenario_results`` row of a Veval-style run."""
    check_name(record.run_id, "run_id")
    name = check_name(record.scenario_name, "scenario_name") or ""
    decided = record.pass_count + record.fail_count
    status = "pass" if record.passed else ("error" if record.error else "fail")
    run = {
        "run_id": record.run_id,
        "kind": "scenario",
        "name": name,
        "sort_at": record.started_at,
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "ingested_at": now,
        "duration_ms": record.duration_ms,
        "total_count": len(record.items) or decided,
        "passed_count": record.pass_count,
        "failed_count": record.fail_count,
        "errored_count": 0,
        "skipped_count": 0,
        "pass_rate": pass_rate(record.pass_count, decided),
        "cost_usd": record.cost_usd,
        "tokens_in": 0,
        "tokens_out": 0,
        "complete": True,
        "git_commit": None,
        "git_branch": None,
        "format_version": None,
        "document": dumps(record),
        "extra": json.dumps(extra, ensure_ascii=False) if extra else None,
        "subset": False,
    }
    result = {
        "run_id": record.run_id,
        "position": 0,
        "scenario_name": name,
        "status": status,
        "sort_at": record.started_at,
        "duration_ms": record.duration_ms,
        "cost_usd": record.cost_usd,
        "tokens_in": 0,
        "tokens_out": 0,
        "tags": "[]",
        "runs_executed": 1,
        "flaky": False,
        "check_count": len(record.items),
        "no_checks": not record.items,
        "document": None,
        "suite_name": "",  # a Veval-style scenario is in no suite
    }
    return run, result


def trace_row(record: TraceRecord, now: datetime) -> Row:
    check_name(record.trace_id, "trace_id")
    cost = record.cost_usd
    document = record.model_dump()
    if document["total_cost_usd"] is None:  # kept with its total, as Veval's server does
        document["total_cost_usd"] = run_total(cost)
    return {
        "trace_id": record.trace_id,
        "agent_name": check_name(record.agent_name, "agent_name"),
        "status": (check_name(record.status, "status") or "")[:32],
        "sort_at": record.started_at or now,
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "duration_ms": record.duration_ms,
        "cost_usd": cost,
        "span_count": len(record.spans),
        "is_replay": record.is_replay,
        "replay_of": _replay_of(record),
        "document": json_text(document),
    }


def _replay_of(record: TraceRecord) -> str | None:
    """The trace a replay replayed (its ``metadata.replay_of``), when it is an id."""
    original = record.metadata.get("replay_of") if record.is_replay else None
    if isinstance(original, str) and 0 < len(original) <= 200:
        return original
    return None


def snapshot_row(name: str, version: int, snapshot: SnapshotData, pinned: bool) -> Row:
    return {
        "name": check_name(name, "snapshot name"),
        "version": version,
        "trace_id": check_name(snapshot.trace_id, "trace_id"),
        "created_at": snapshot.created_at,
        "pinned": pinned,
        "document": dumps(snapshot),
    }
