"""The calibration gate: a judge check trusted only as far as its judge agrees with people.

A judge check that names a labelled set (``labelled_set="labels/refund.jsonl"``, the
format of :mod:`scenarist.judges.labels`) and a minimum agreement (``min_kappa``,
``min_agreement``) is calibrated before it judges: :func:`scenarist.judges.calibrate`
runs the check itself (same judge, rubric and parameters, without the gate) over the
labelled cases and compares with the labels. Then:

- below a minimum, or with a κ that is undefined (the judge or the labels never vary), or
  with a labelled case the judge could not evaluate, the check is ERROR with the figures
  and is not judged: never a silent PASS;
- otherwise the check judges as usual, and its result carries the calibration badge in
  ``details["calibration"]`` (κ, raw agreement, n, date, the minimums, the set and the
  cache key), which the console report, JUnit properties and the run log show.

**The cache.** A calibration is keyed by the SHA-256 of everything that can change a
verdict: the judge's name (its kind and fields for a non-chat judge), the check's kind
and fields (rubric variables, temperature, samples, max_retries, threshold), the rubric's
template source, the system prompt, the verdict schema, the labelled set's bytes and
:data:`GATE_VERSION` (bumped when the verdict rules change). Any change is a new key, so a
changed judge model or prompt never keeps old trust. Calibrations are kept one file a key
in ``$SCENARIST_HOME/judge-calibrations/<key>.json`` and reused across runs; within one
process a key is calibrated once, whatever the number of checks and scenarios sharing it.
A calibration with unevaluated cases is not kept: it is reused within the run (one event
loop) and tried again by the next.

**Under a cassette** the disk cache is bypassed: the calibration's judge calls go through
the cassette like every judge call, in their own lane (``judge-calibration:<key>``), so a
recording holds them and a replay serves them, with no live call and with the same
figures, whatever the cache of the machine replaying.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scenarist.judges.base import BaseLLMCheck
    from scenarist.judges.judge import BaseJudge
    from scenarist.judges.labels import LabelledSet
    from scenarist.model.results import ScenarioResult

__all__ = [
    "GATE_VERSION",
    "Calibration",
    "GateOutcome",
    "badge_text",
    "calibration_cache_dir",
    "calibration_gate",
    "calibration_key",
    "calibration_summaries",
]

GATE_VERSION = 1
"""Part of every cache key: bumped when the way verdicts are parsed or counted changes."""

_GATE_FIELDS = frozenset({"labelled_set", "min_kappa", "min_agreement"})
_NOT_VERDICT_FIELDS = _GATE_FIELDS | {"name", "description", "judge", "generator"}


@dataclass(frozen=True)
class Calibration:
    """One judge check's agreement with a labelled set, as kept in the cache."""

    key: str
    judge: str
    check: str
    labelled_set: str
    labels_sha256: str
    n: int
    """Cases the judge gave a PASS or FAIL."""
    errors: int
    """Cases it could not evaluate (left out of every rate)."""
    kappa: float | None
    agreement: float | None
    tpr: float | None
    tnr: float | None
    calibrated_at: str
    first_error: str | None = None

    @classmethod
    def from_json(cls, data: Any) -> Calibration | None:
        """A cached calibration, or ``None`` when the data is not one."""
        try:
            return cls(**data)
        except TypeError:
            return None


@dataclass(frozen=True)
class GateOutcome:
    """The badge for the check's details, and why the check may not judge (if so)."""

    badge: dict[str, Any]
    problem: str | None


def calibration_cache_dir() -> Path:
    """``$SCENARIST_HOME/judge-calibrations``."""
    from scenarist._home import scenarist_home

    return scenarist_home() / "judge-calibrations"


def calibration_key(check: BaseLLMCheck, judge: BaseJudge, labelled: LabelledSet) -> str:
    """The SHA-256 of what can change the check's verdicts (see the module docstring)."""
    from scenarist.judges._prompts import builtin
    from scenarist.judges.judge import LLMChatJudge
    from scenarist.judges.verdict import VERDICT_SCHEMA

    fields = check.model_dump(mode="json", exclude=set(_NOT_VERDICT_FIELDS))
    who: Any = judge.name
    if not isinstance(judge, LLMChatJudge):
        who = {"name": judge.name, **judge.model_dump(mode="json")}
    parts = {
        "gate": GATE_VERSION,
        "judge": who,
        "check": {"kind": check.kind, **fields},
        "template": check.get_prompt(),
        "system": builtin("system"),
        "schema": VERDICT_SCHEMA,
        "labels": labelled.sha256,
    }
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the cache: in this process (per cassette), then on disk -----------------------------

_memo: dict[tuple[str, str], Calibration] = {}
"""Calibrations made or read in this process, by (cache folder, key)."""
_memo_by_source: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Calibration]] = (
    weakref.WeakKeyDictionary()
)
"""Calibrations made under each cassette, by (cache folder, key)."""


@dataclass
class _LoopState:
    """Per event loop (one run): a lock per key and source, and the failed calibrations,
    reused within the run but tried again by the next (the judge may have been fixed)."""

    locks: dict[tuple[str, int], asyncio.Lock] = field(default_factory=dict)
    failed: dict[tuple[str, str, int], Calibration] = field(default_factory=dict)


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
    weakref.WeakKeyDictionary()
)
_guard = threading.Lock()


def _read_cached(key: str) -> Calibration | None:
    try:
        data = json.loads((calibration_cache_dir() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = Calibration.from_json(data)
    return found if found is not None and found.key == key else None


def _write_cached(calibration: Calibration) -> None:
    folder = calibration_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"{calibration.key}.json"
    temporary = file.with_name(f"{file.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    text = json.dumps(asdict(calibration), indent=2, sort_keys=True) + "\n"
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(file)


async def _calibrate(
    check: BaseLLMCheck, judge: BaseJudge, labelled: LabelledSet, key: str
) -> Calibration:
    from scenarist.engine._lanes import lane
    from scenarist.judges.calibrate import calibrate

    plain = check.copy_with(judge=judge, **dict.fromkeys(_GATE_FIELDS))
    with lane(f"judge-calibration:{key[:16]}"):
        result = await calibrate(plain, labelled.cases)
    first = result.errors[0] if result.errors else None
    return Calibration(
        key=key,
        judge=judge.name,
        check=check.kind or type(check).__name__,
        labelled_set=str(labelled.path),
        labels_sha256=labelled.sha256,
        n=result.judged,
        errors=len(result.errors),
        kappa=result.kappa,
        agreement=result.accuracy,
        tpr=result.tpr,
        tnr=result.tnr,
        calibrated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        first_error=None
        if first is None
        else f"{first.name or f'case {first.index}'}: {first.status} — {first.message}",
    )


async def _calibration(
    check: BaseLLMCheck, judge: BaseJudge, labelled: LabelledSet
) -> tuple[Calibration, str]:
    """The calibration for ``check`` and where it came from (``computed``, ``cache``)."""
    from scenarist.tracing.http.capture import current_source

    key = calibration_key(check, judge, labelled)
    source = current_source()
    memo = _memo if source is None else _memo_by_source.setdefault(source, {})
    slot = (str(calibration_cache_dir().resolve()), key)
    if slot in memo:
        return memo[slot], "this run"
    with _guard:
        state = _loops.setdefault(asyncio.get_running_loop(), _LoopState())
    lock = state.locks.setdefault((key, id(source)), asyncio.Lock())
    async with lock:
        if slot in memo:
            return memo[slot], "this run"
        if (failed := state.failed.get((*slot, id(source)))) is not None:
            return failed, "this run"
        cached = _read_cached(key) if source is None else None
        if cached is not None:
            memo[slot] = cached
            return cached, "cache"
        calibration = await _calibrate(check, judge, labelled, key)
        if calibration.errors:
            state.failed[(*slot, id(source))] = calibration
        else:
            memo[slot] = calibration
            if source is None:
                _write_cached(calibration)
        return calibration, "computed"


# -- the gate ----------------------------------------------------------------------------


def _figure(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "undefined"
    return f"{value:.1%}" if percent else f"{value:.2f}"


def badge_text(badge: dict[str, Any]) -> str:
    """The badge in one line: ``calibrated κ 0.82, agreement 90.0%, n=12, 2026-12-05``."""
    date = str(badge.get("date") or "date unknown")
    kappa, agreement = badge.get("kappa"), badge.get("agreement")
    return (
        f"calibrated κ {_figure(kappa)}, agreement {_figure(agreement, percent=True)}, "
        f"n={badge.get('n')}, {date}"
    )


def calibration_summaries(results: Iterable[ScenarioResult]) -> list[str]:
    """One line per calibration the run's judged verdicts carry (the same judge, labelled
    set and key counted once): what a report prints under its results."""
    seen: dict[tuple[Any, ...], tuple[dict[str, Any], int]] = {}
    for result in results:
        for step in result.steps:
            for check in step.results:
                badge = (check.details or {}).get("calibration")
                if not isinstance(badge, dict) or "kappa" not in badge:
                    continue
                slot = (badge.get("judge"), badge.get("labelled_set"), badge.get("key"))
                first, count = seen.get(slot, (badge, 0))
                seen[slot] = (first, count + 1)
    return [
        f"judge {badge.get('judge')} on {badge.get('labelled_set')}: {badge_text(badge)} "
        f"({count} verdict{'' if count == 1 else 's'})"
        for badge, count in seen.values()
    ]


def _problem(calibration: Calibration, min_kappa: float, min_agreement: float | None) -> str | None:
    where = (
        f"judge {calibration.judge} on {calibration.labelled_set} "
        f"(n={calibration.n}, calibrated {calibration.calibrated_at[:10]})"
    )
    if calibration.errors:
        return (
            f"The calibration gate could not calibrate {where}: {calibration.errors} "
            f"labelled case(s) were not evaluated (first: {calibration.first_error}); the "
            "check was not judged. Fix the judge (or the labelled set) and run again."
        )
    short = []
    if calibration.kappa is None:
        short.append("κ undefined (the judge or the labels never vary)")
    elif calibration.kappa < min_kappa:
        short.append(f"κ {calibration.kappa:.2f} < min_kappa {min_kappa:.2f}")
    if min_agreement is not None and (
        calibration.agreement is None or calibration.agreement < min_agreement
    ):
        short.append(
            f"agreement {_figure(calibration.agreement, percent=True)} < min_agreement "
            f"{min_agreement:.1%}"
        )
    if not short:
        return None
    return (
        f"The judge is below this check's calibration minimum: {'; '.join(short)}, for "
        f"{where}; the check was not judged. Use a better judge or rubric, or lower the "
        "minimum knowingly."
    )


async def calibration_gate(check: BaseLLMCheck, judge: BaseJudge) -> GateOutcome:
    """Calibrate (or reuse the calibration of) ``check`` with ``judge``; a labelled set
    that cannot be read is a problem naming the file."""
    from scenarist.errors import UserError
    from scenarist.judges.health import min_kappa as default_min_kappa
    from scenarist.judges.labels import load_labelled_set

    assert check.labelled_set is not None
    min_kappa = default_min_kappa() if check.min_kappa is None else check.min_kappa
    badge: dict[str, Any] = {
        "labelled_set": check.labelled_set,
        "min_kappa": min_kappa,
        "min_agreement": check.min_agreement,
    }
    try:
        labelled = load_labelled_set(check.labelled_set)
    except UserError as exc:
        return GateOutcome(badge, f"The calibration gate cannot read the labelled set: {exc}")
    calibration, origin = await _calibration(check, judge, labelled)
    badge = {
        "kappa": calibration.kappa,
        "agreement": calibration.agreement,
        "n": calibration.n,
        "date": calibration.calibrated_at[:10],
        "calibrated_at": calibration.calibrated_at,
        **badge,
        "judge": calibration.judge,
        "not_evaluated": calibration.errors,
        "key": calibration.key[:16],
        "source": origin,
    }
    return GateOutcome(badge, _problem(calibration, min_kappa, check.min_agreement))
