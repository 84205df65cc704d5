"""Comparing two stored runs: the classification of :mod:`scenarist.model.comparison` (fixed,
broken, still failing, new, removed, skipped, flaky changes, pass rates, significant
regressions) computed from the ``scenario_results`` rows, plus, for the changed scenarios
only, both sides' last outputs, failing checks' messages and their cost, duration and
token deltas.

``baseline`` is a run id, or ``"previous"``: the default baseline (:func:`default_baseline`):
the previous run of the same suite (kind and name) on the same git branch; when the branch
has none, the newest earlier run at its merge base (if the run log records it), else on
``main``, else ``master``; else the previous run of the suite on any branch. The choice is
returned with a sentence saying which run it is and why. A plain function over a
:class:`~.engine.Database`, like :mod:`.dashboard`; the API route and the dashboard's
compare page both call :func:`compare_stored_runs`.

Reads, for 1M-check stores: the two runs' rows and scenario rows, then the documents and
failing check rows of at most :data:`DETAIL_LIMIT` changed scenarios, by primary key; the
unchanged scenarios' documents are never read.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from scenarist.errors import UserError
from scenarist.model.comparison import RunComparison, ScenarioOutcome, compare_outcomes
from scenarist.model.stats import ALPHA
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import CheckResultRow, RunRow, ScenarioResultRow, table_of

__all__ = [
    "DETAIL_LIMIT",
    "PREVIOUS",
    "BaselineChoice",
    "CheckMessage",
    "CompareError",
    "ComparedRun",
    "Delta",
    "ScenarioDeltas",
    "ScenarioDiff",
    "StoredComparison",
    "UnchangedScenario",
    "compare_stored_runs",
    "default_baseline",
]

PREVIOUS = "previous"
DETAIL_LIMIT = 100
"""Changed scenarios whose outputs and messages are read (broken first); the others are
listed with their deltas and a link to their scenario page."""
OUTPUT_LIMIT = 20_000
"""Characters of an output carried (the scenario page has the whole trace)."""
DEFAULT_BRANCHES = ("main", "master")
_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_BUCKETS = ("broken", "fixed", "still_failing", "new", "removed", "skipped")

BaselineRule = Literal[
    "chosen", "same_branch", "merge_base", "default_branch", "any_branch", "no_branch"
]


class CompareError(Exception):
    """A run to compare is not stored (or has no previous run): a 404."""


class BaselineChoice(BaseModel):
    """Which run is the baseline, by which rule, and the sentence the page shows."""

    run_id: str
    rule: BaselineRule
    reason: str


class ComparedRun(BaseModel):
    """One side of a comparison."""

    run_id: str
    kind: str
    name: str | None
    started_at: datetime | None
    scenario_count: int
    pass_rate: float | None
    git_branch: str | None = None
    git_commit: str | None = None


class Delta(BaseModel):
    """A number on both sides: ``change`` is ``after - before``, ``percent`` relative to
    ``before`` (``None`` when a side is missing or ``before`` is 0)."""

    before: float | None
    after: float | None
    change: float | None
    percent: float | None

    @classmethod
    def of(cls, before: float | None, after: float | None) -> Delta:
        if before is None or after is None:
            return cls(before=before, after=after, change=None, percent=None)
        change = after - before
        percent = round(change / before * 100, 1) if before else None
        return cls(before=before, after=after, change=change, percent=percent)


class ScenarioDeltas(BaseModel):
    """Cost, duration and tokens (in + out) from one run to the other."""

    cost_usd: Delta
    duration_ms: Delta
    tokens: Delta


class CheckMessage(BaseModel):
    """A failed or errored check of one side."""

    check_name: str | None
    check_kind: str | None
    status: str
    message: str | None


class UnchangedScenario(BaseModel):
    """A scenario that passed in both runs (the page folds them)."""

    scenario_name: str
    deltas: ScenarioDeltas


class ScenarioDiff(BaseModel):
    """A changed scenario: its bucket, both statuses, both last outputs, both sides'
    failing checks and its deltas (``detailed`` is false past :data:`DETAIL_LIMIT`)."""

    scenario_name: str
    bucket: str
    before: str | None
    after: str | None
    baseline_position: int | None
    position: int | None
    deltas: ScenarioDeltas
    detailed: bool
    baseline_output: str | None = None
    output: str | None = None
    baseline_failures: list[CheckMessage] = []
    failures: list[CheckMessage] = []


class StoredComparison(BaseModel):
    """``run`` against ``baseline``: what changed, scenario by scenario."""

    run: ComparedRun
    baseline: ComparedRun
    baseline_choice: BaselineChoice
    comparison: RunComparison
    has_regressions: bool
    deltas: ScenarioDeltas
    """The runs' totals."""
    scenarios: list[ScenarioDiff]
    """The changed scenarios (broken, fixed, still failing, new, removed, skipped)."""
    unchanged: list[UnchangedScenario]


class _Row(BaseModel):
    position: int
    scenario_name: str
    status: str
    flaky: bool
    repeats_passed: int | None
    repeats_total: int | None
    duration_ms: float | None
    cost_usd: float | None
    tokens_in: int
    tokens_out: int


def _branch(value: str | None) -> str | None:
    return value if value and value != "HEAD" else None


async def _newest_before(
    connection: AsyncConnection, run: Any, run_id: str, *where: Any
) -> tuple[str, str | None] | None:
    row = (
        await connection.execute(
            select(_RUNS.c.run_id, _RUNS.c.git_branch)
            .where(
                _RUNS.c.project == run.project,
                _RUNS.c.kind == run.kind,
                _RUNS.c.name == run.name,
                or_(
                    _RUNS.c.sort_at < run.sort_at,
                    and_(_RUNS.c.sort_at == run.sort_at, _RUNS.c.run_id < run_id),
                ),
                *where,
            )
            .order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc())
            .limit(1)
        )
    ).first()
    return (row.run_id, row.git_branch) if row is not None else None


def _merge_base_of(document: str) -> str | None:
    try:
        header = json.loads(document).get("header") or {}
        value = (header.get("environment") or {}).get("git_merge_base")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


async def default_baseline(db: Database, run_id: str) -> BaselineChoice | None:
    """The default baseline of ``run_id`` (see the module docstring); ``None`` when the
    run is unnamed or no earlier run of its suite exists. Every candidate started before
    the run, so the choice does not move when newer runs arrive."""
    async with db._read() as connection:
        run = (
            await connection.execute(
                select(
                    _RUNS.c.project, _RUNS.c.kind, _RUNS.c.name, _RUNS.c.sort_at,
                    _RUNS.c.git_branch,
                ).where(_RUNS.c.run_id == run_id, _RUNS.c.project == db.project)
            )
        ).first()  # fmt: skip
        if run is None or run.name is None:
            return None
        branch = _branch(run.git_branch)
        if branch is None:
            found = await _newest_before(connection, run, run_id)
            if found is None:
                return None
            return BaselineChoice(
                run_id=found[0],
                rule="no_branch",
                reason="previous run (this run records no git branch)",
            )
        found = await _newest_before(connection, run, run_id, _RUNS.c.git_branch == branch)
        if found is not None:
            return BaselineChoice(
                run_id=found[0], rule="same_branch", reason=f"previous run on {branch}"
            )
        missing = f"no earlier run on {branch}"
        document = await connection.scalar(
            select(_RUNS.c.document).where(_RUNS.c.run_id == run_id, _RUNS.c.project == db.project)
        )
        merge_base = _merge_base_of(document or "")
        if merge_base is not None:
            found = await _newest_before(connection, run, run_id, _RUNS.c.git_commit == merge_base)
            if found is not None:
                return BaselineChoice(
                    run_id=found[0],
                    rule="merge_base",
                    reason=f"{missing}: newest at its merge base {merge_base[:12]}",
                )
        for default in DEFAULT_BRANCHES:
            if default == branch:
                continue
            found = await _newest_before(connection, run, run_id, _RUNS.c.git_branch == default)
            if found is not None:
                return BaselineChoice(
                    run_id=found[0], rule="default_branch", reason=f"{missing}: newest on {default}"
                )
        found = await _newest_before(connection, run, run_id)
    if found is None:
        return None
    where = f"on {found[1]}" if _branch(found[1]) else "with no branch"
    return BaselineChoice(
        run_id=found[0],
        rule="any_branch",
        reason=f"{missing}, its merge base or main/master: previous run ({where})",
    )


async def _side(db: Database, run_id: str) -> tuple[ComparedRun, list[_Row]]:
    async with db._read() as connection:
        run = (
            await connection.execute(
                select(
                    _RUNS.c.run_id, _RUNS.c.kind, _RUNS.c.name, _RUNS.c.started_at,
                    _RUNS.c.git_branch, _RUNS.c.git_commit,
                ).where(_RUNS.c.run_id == run_id, _RUNS.c.project == db.project)
            )
        ).first()  # fmt: skip
        if run is None:
            raise CompareError(f"no run {run_id!r} in this project")
        rows = (
            await connection.execute(
                select(*(_SCENARIOS.c[name] for name in _Row.model_fields))
                .where(_SCENARIOS.c.project == db.project, _SCENARIOS.c.run_id == run_id)
                .order_by(_SCENARIOS.c.position)
            )
        ).all()
    scenarios = [_Row.model_validate(dict(row._mapping)) for row in rows]
    decided = [s for s in scenarios if s.status != "skip"]
    rate = sum(s.status == "pass" for s in decided) / len(decided) if decided else None
    side = ComparedRun(
        run_id=run.run_id,
        kind=run.kind,
        name=run.name,
        started_at=run.started_at,
        scenario_count=len(scenarios),
        pass_rate=rate,
        git_branch=run.git_branch,
        git_commit=run.git_commit,
    )
    return side, scenarios


def _outcome(row: _Row) -> ScenarioOutcome:
    return ScenarioOutcome(
        scenario_name=row.scenario_name,
        status_text=row.status,
        is_flaky=row.flaky,
        repeats_passed=row.repeats_passed,
        repeats_total=row.repeats_total,
    )


def _tokens(row: _Row | None) -> float | None:
    return None if row is None else float(row.tokens_in + row.tokens_out)


def _deltas(old: _Row | None, new: _Row | None) -> ScenarioDeltas:
    return ScenarioDeltas(
        cost_usd=Delta.of(old.cost_usd if old else None, new.cost_usd if new else None),
        duration_ms=Delta.of(old.duration_ms if old else None, new.duration_ms if new else None),
        tokens=Delta.of(_tokens(old), _tokens(new)),
    )


def _total(rows: list[_Row], field: str) -> float | None:
    values = [getattr(r, field) for r in rows if getattr(r, field) is not None]
    return float(sum(values)) if values else None


def _totals(before: list[_Row], after: list[_Row]) -> ScenarioDeltas:
    return ScenarioDeltas(
        cost_usd=Delta.of(_total(before, "cost_usd"), _total(after, "cost_usd")),
        duration_ms=Delta.of(_total(before, "duration_ms"), _total(after, "duration_ms")),
        tokens=Delta.of(
            float(sum(r.tokens_in + r.tokens_out for r in before)) if before else None,
            float(sum(r.tokens_in + r.tokens_out for r in after)) if after else None,
        ),
    )


def _last_output(document: str | None) -> str | None:
    """The last interaction's outputs of a stored scenario record, as text (a string as
    it is, anything else as indented JSON), cut at :data:`OUTPUT_LIMIT`."""
    if not document:
        return None
    try:
        trace = json.loads(document)["result"]["final_trace"]
        interactions = trace.get("interactions") or []
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not interactions or not isinstance(interactions[-1], dict):
        return None
    outputs = interactions[-1].get("outputs")
    if outputs is None:
        return None
    if isinstance(outputs, str):
        text = outputs
    else:
        text = json.dumps(outputs, indent=2, ensure_ascii=False)
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + "\n… (cut: see the scenario page)"


async def _details(
    db: Database, run_id: str, positions: list[int]
) -> tuple[dict[int, str | None], dict[int, list[CheckMessage]]]:
    """The last outputs and failing checks of ``positions`` of ``run_id`` (by key)."""
    if not positions:
        return {}, {}
    async with db._read() as connection:
        documents = (
            await connection.execute(
                select(_SCENARIOS.c.position, _SCENARIOS.c.document).where(
                    _SCENARIOS.c.project == db.project,
                    _SCENARIOS.c.run_id == run_id,
                    _SCENARIOS.c.position.in_(positions),
                )
            )
        ).all()
        checks = (
            await connection.execute(
                select(
                    _CHECKS.c.position, _CHECKS.c.check_name, _CHECKS.c.check_kind,
                    _CHECKS.c.status, _CHECKS.c.message,
                )
                .where(
                    _CHECKS.c.project == db.project,
                    _CHECKS.c.run_id == run_id,
                    _CHECKS.c.position.in_(positions),
                    _CHECKS.c.status.in_(("fail", "error")),
                )
                .order_by(_CHECKS.c.position, _CHECKS.c.step_index, _CHECKS.c.check_index)
            )
        ).all()  # fmt: skip
    outputs = {row.position: _last_output(row.document) for row in documents}
    failures: dict[int, list[CheckMessage]] = {}
    for row in checks:
        failures.setdefault(row.position, []).append(
            CheckMessage(
                check_name=row.check_name,
                check_kind=row.check_kind,
                status=row.status,
                message=row.message,
            )
        )
    return outputs, failures


async def _changed(
    db: Database,
    comparison: RunComparison,
    base: str,
    before: dict[str, _Row],
    current: str,
    after: dict[str, _Row],
) -> list[ScenarioDiff]:
    diffs: list[ScenarioDiff] = []
    for bucket in _BUCKETS:
        for change in getattr(comparison, bucket):
            old, new = before.get(change.scenario_name), after.get(change.scenario_name)
            diffs.append(
                ScenarioDiff(
                    scenario_name=change.scenario_name,
                    bucket=bucket,
                    before=change.before,
                    after=change.after,
                    baseline_position=old.position if old else None,
                    position=new.position if new else None,
                    deltas=_deltas(old, new),
                    detailed=len(diffs) < DETAIL_LIMIT,
                )
            )
    shown = [d for d in diffs if d.detailed]
    old_outputs, old_failures = await _details(
        db, base, [d.baseline_position for d in shown if d.baseline_position is not None]
    )
    new_outputs, new_failures = await _details(
        db, current, [d.position for d in shown if d.position is not None]
    )
    for diff in shown:
        if diff.baseline_position is not None:
            diff.baseline_output = old_outputs.get(diff.baseline_position)
            diff.baseline_failures = old_failures.get(diff.baseline_position, [])
        if diff.position is not None:
            diff.output = new_outputs.get(diff.position)
            diff.failures = new_failures.get(diff.position, [])
    return diffs


async def resolve_baseline(db: Database, run_id: str, baseline: str) -> BaselineChoice:
    """``baseline`` (a run id or ``"previous"``) as a choice (a run id that is the
    default baseline keeps the default's rule and reason); raises :class:`CompareError`
    when there is no default, :class:`~scenarist.errors.UserError` for the run itself."""
    if baseline == run_id:
        raise UserError(
            f"baseline={baseline!r} is the run itself: pick another run to compare with"
        )
    choice = await default_baseline(db, run_id)
    if baseline != PREVIOUS:
        if choice is not None and choice.run_id == baseline:
            return choice  # the run page's link names its baseline: still the rule's
        return BaselineChoice(run_id=baseline, rule="chosen", reason="chosen baseline")
    if choice is None:
        async with db._read() as connection:
            name = await connection.scalar(
                select(_RUNS.c.name).where(_RUNS.c.run_id == run_id, _RUNS.c.project == db.project)
            )
        suite = f"suite {name!r}" if name is not None else "its suite (the run is unnamed)"
        raise CompareError(
            f"run {run_id!r} has no previous run: no earlier run of {suite} in this "
            "project; pass a run id as baseline"
        )
    return choice


async def compare_stored_runs(
    db: Database, run_id: str, baseline: str, *, alpha: float = ALPHA
) -> StoredComparison:
    """``run_id`` compared with ``baseline`` (a run id or ``"previous"``); raises
    :class:`CompareError` when either run is missing (or has no default baseline), and
    :class:`~scenarist.errors.UserError` when the baseline is the run itself. ``alpha``:
    the level at which a scenario's drop in pass rate counts as a regression (one-sided
    Fisher exact test on its repeats' pass counts, kept in ``scenario_results`` since
    migration 0008)."""
    current, after = await _side(db, run_id)
    choice = await resolve_baseline(db, run_id, baseline)
    base, before = await _side(db, choice.run_id)
    comparison = compare_outcomes(
        [_outcome(r) for r in before],
        [_outcome(r) for r in after],
        baseline_pass_rate=base.pass_rate,
        pass_rate=current.pass_rate,
        alpha=alpha,
    )
    old = {r.scenario_name: r for r in before}
    new = {r.scenario_name: r for r in after}
    unchanged = [
        UnchangedScenario(scenario_name=name, deltas=_deltas(old[name], row))
        for name, row in new.items()
        if row.status == "pass" and name in old and old[name].status == "pass"
    ]
    return StoredComparison(
        run=current,
        baseline=base,
        baseline_choice=choice,
        comparison=comparison,
        has_regressions=comparison.has_regressions,
        deltas=_totals(before, after),
        scenarios=await _changed(db, comparison, choice.run_id, old, run_id, new),
        unchanged=unchanged,
    )
