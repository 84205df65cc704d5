"""Trajectory matching: the trace's tool calls against an expected list, with partial credit.

This module is the matching itself, with no LLM in it: argument matchers, the credit of
one expected call against one actual call, the alignment that pairs them, the score and
the aligned table a failure shows. The check that runs it,
:class:`~scenarist.judges.trajectory_check.ToolTrajectory`, lives with the judges because
one matcher asks an LLM; it hands this module the judges' verdicts.

**Matchers** are data, so a check holding them dumps to JSON and loads from a scenario
file (a Python callable is the one exception)::

    "Paris"                      exact: == (a bool never equals a number)
    {"exact": {"regex": "x"}}    exact, for a value that looks like a matcher
    {"regex": "^par"}            search in a string value (2 s limit, then ERROR)
    {"approx": 3.0, "tol": 0.01} a number within tol (absolute, default 1e-9) of 3.0
    "*"  or  {"any": true}       any value, but the argument must be there
    {"judge": "a French city"}   an LLM judge says the value meets the criterion
    lambda v: v > 0              a Python predicate returning a bool

**Credit** of an expected call with ``k`` matched arguments against an actual call of
the same tool: ``(1 + arguments that match) / (1 + k)``: the tool counts as one field and
each expected argument as one more; a call of another tool earns nothing. Arguments the
actual call has and the expected one does not name are ignored.

**Score**: the credits of an optimal pairing, divided by ``max(len(expected),
len(actual))`` (``strict``, ``unordered``), ``len(actual)`` (``subset``: every actual call
must be expected) or ``len(expected)`` (``superset``: every expected call must happen);
``1.0`` when that count is 0. The pairing maximises the total credit: an order-keeping
alignment (dynamic programming, as a weighted longest common subsequence) for ``strict``
and ``ordered=True``, an assignment (the Hungarian method) otherwise. With the default
threshold 1.0 a pass is an exact match of the mode.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from scenarist.checks.base import omits_callables
from scenarist.checks.tools import call_arguments
from scenarist.errors import SerializationError
from scenarist.model.trace import Span

__all__ = [
    "EXPECTED_CALL_SCHEMA",
    "MATCHER_KEYS",
    "ActualCall",
    "Alignment",
    "ArgMatcher",
    "ArgOutcome",
    "ExpectedCall",
    "PairOutcome",
    "TrajectoryMode",
    "actual_calls",
    "align",
    "compare",
    "credit_matrix",
    "parse_matcher",
    "render_table",
    "unserialisable",
    "value_key",
]

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]

MATCHER_KEYS = frozenset({"exact", "regex", "approx", "tol", "any", "judge"})
"""Keys that make a dict a matcher; any other dict is compared exactly."""

DEFAULT_TOL = 1e-9
REGEX_TIMEOUT_S = 2.0
"""A regex matcher's time limit (catastrophic backtracking is ERROR, as in RegexMatching)."""
_CELL = 48  # the widest a table cell gets


class _Undecided(Exception):
    """A matcher could not decide: a predicate raised or returned a non-bool, a regex timed
    out (the check is ERROR)."""


@dataclass(frozen=True, slots=True)
class ArgMatcher:
    """One argument's matcher, compiled from its data form (see the module doc)."""

    kind: Literal["exact", "regex", "approx", "any", "predicate", "judge"]
    value: Any = None
    """The exact value, the pattern text, the target number, the predicate or the criterion."""
    tol: float = DEFAULT_TOL
    pattern: Any = None
    """The compiled ``regex`` pattern (the ``regex`` module, for its match timeout)."""

    def describe(self) -> str:
        """How the table shows it: ``'Paris'``, ``/^par/``, ``≈3±0.01``, ``*``..."""
        if self.kind == "exact":
            return _short(self.value)
        if self.kind == "regex":
            return f"/{self.value}/"
        if self.kind == "approx":
            return f"≈{_number(self.value)}±{_number(self.tol)}"
        if self.kind == "any":
            return "*"
        if self.kind == "judge":
            return f"judge({self.value!r})"
        return f"<predicate {getattr(self.value, '__name__', None) or type(self.value).__name__}>"


def _number(value: float) -> str:
    return f"{value:g}"


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_matcher(spec: Any, where: str) -> ArgMatcher:
    """The matcher ``spec`` stands for; ``ValueError`` naming ``where`` when it is invalid."""
    if callable(spec):
        return ArgMatcher("predicate", spec)
    if spec == "*":
        return ArgMatcher("any")
    if not isinstance(spec, Mapping) or not MATCHER_KEYS & set(spec):
        return ArgMatcher("exact", spec)
    keys = set(spec)
    if keys == {"exact"}:
        return ArgMatcher("exact", spec["exact"])
    if keys == {"regex"}:
        pattern = spec["regex"]
        if not isinstance(pattern, str):
            raise ValueError(f"{where}.regex: the pattern must be a string, got {pattern!r}")
        import regex  # lazy: only regex matchers need it

        try:
            return ArgMatcher("regex", pattern, pattern=regex.compile(pattern))
        except regex.error as exc:
            raise ValueError(
                f"{where}.regex: {pattern!r} is not a valid regular expression ({exc})"
            ) from None
    if keys in ({"approx"}, {"approx", "tol"}):
        target, tol = spec["approx"], spec.get("tol", DEFAULT_TOL)
        if not _is_number(target):
            raise ValueError(f"{where}.approx: expected a number, got {target!r}")
        if not _is_number(tol) or tol < 0:
            raise ValueError(
                f"{where}.tol: the tolerance must be a number >= 0, got {tol!r}; "
                "it is the largest absolute difference accepted"
            )
        return ArgMatcher("approx", float(target), tol=float(tol))
    if keys == {"any"}:
        if spec["any"] is not True:
            raise ValueError(f"{where}.any: only {{'any': true}} is a matcher, got {spec!r}")
        return ArgMatcher("any")
    if keys == {"judge"}:
        criterion = spec["judge"]
        if not isinstance(criterion, str) or not criterion.strip():
            raise ValueError(f"{where}.judge: the criterion must be a non-empty string")
        return ArgMatcher("judge", criterion.strip())
    raise ValueError(
        f"{where}: {dict(spec)!r} is not a matcher; use one of {{'exact': value}}, "
        "{'regex': pattern}, {'approx': number, 'tol': number}, {'any': true}, "
        "{'judge': criterion} (wrap a dict with these keys in {'exact': ...} to compare it "
        "as a value)"
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def unserialisable(predicates: Sequence[str]) -> SerializationError:
    """The error of a JSON dump of ``tool.argument`` matchers that are Python predicates."""
    return SerializationError(
        f"ToolTrajectory matches {', '.join(map(repr, predicates))} with Python predicates, "
        "which cannot be written to JSON; dump it with mode='python', describe it with "
        "to_spec(), or use a data matcher ({'regex': ...}, {'approx': ..., 'tol': ...}, "
        "{'judge': ...}) to make it serialisable."
    )


EXPECTED_CALL_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "minLength": 1, "description": "A tool, its arguments unchecked."},
        {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "minLength": 1},
                "args": {
                    "type": "object",
                    "description": "Argument name -> matcher: a value (==), {exact: value}, "
                    "{regex: pattern}, {approx: number, tol: number >= 0}, '*' or "
                    "{any: true}, {judge: criterion}.",
                },
            },
            "required": ["tool"],
            "additionalProperties": False,
        },
    ],
    "description": "One expected tool call: a tool name, or {tool, args}.",
}
"""The JSON Schema of one expected call in a file (the shorthand string included)."""


# -- expected calls --------------------------------------------------------------------


class ExpectedCall(BaseModel):
    """One call of the expected trajectory: the ``tool`` and matchers for some of its
    ``args`` (arguments not named are not checked).

    A bare string is a call with no arguments checked (``"search"``); a pair is
    ``(tool, args)``.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)

    _matchers: dict[str, ArgMatcher] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"tool": data}
        if isinstance(data, tuple | list) and len(data) == 2:
            return {"tool": data[0], "args": data[1]}
        return data

    @field_validator("args", mode="after")
    @classmethod
    def _valid_matchers(cls, args: dict[str, Any]) -> dict[str, Any]:
        for name, spec in args.items():  # errors point at args (the model keeps no state yet)
            if not isinstance(name, str):
                raise ValueError(f"argument names must be strings, got {name!r}")
            parse_matcher(spec, name)
        return args

    @model_validator(mode="after")
    def _compile(self) -> ExpectedCall:
        self._matchers = {name: parse_matcher(spec, name) for name, spec in self.args.items()}
        return self

    @property
    def matchers(self) -> dict[str, ArgMatcher]:
        """The compiled matcher of each named argument."""
        return self._matchers

    @property
    def predicates(self) -> list[str]:
        """The arguments matched by a Python callable (they cannot be written to JSON)."""
        return [name for name, m in self._matchers.items() if m.kind == "predicate"]

    @field_serializer("args", mode="plain")
    def _dump_args(self, args: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        if not info.mode_is_json() or not self.predicates:
            return args
        if omits_callables(info.context):
            return {k: self._matchers[k].describe() if callable(v) else v for k, v in args.items()}
        raise unserialisable([f"{self.tool}.{name}" for name in self.predicates])

    def describe(self) -> str:
        """``search(q=/refund/, limit=5)``."""
        inner = ", ".join(f"{k}={m.describe()}" for k, m in self._matchers.items())
        return f"{self.tool}({inner})"


# -- actual calls ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActualCall:
    """A tool call of the trace: its tool, its arguments (``None``: not a mapping)."""

    tool: str
    args: Mapping[str, Any] | None
    raw: Any = None

    def describe(self) -> str:
        if self.args is None:
            inner = "" if self.raw is None else _short(self.raw)
        else:
            inner = ", ".join(f"{k}={_short(v)}" for k, v in self.args.items())
        return f"{self.tool}({inner})"


def actual_calls(spans: Sequence[Span]) -> list[ActualCall]:
    """The spans of kind ``tool`` as calls (a JSON object string input is parsed)."""
    return [ActualCall(s.name, call_arguments(s), s.input) for s in spans if s.kind == "tool"]


def value_key(value: Any) -> str:
    """A stable text for a value (a judged value is asked about once per text)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


# -- one pair --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArgOutcome:
    """One expected argument against the actual call."""

    name: str
    matched: bool
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """An expected call against an actual call of the same tool."""

    credit: float
    args: tuple[ArgOutcome, ...] = ()

    @property
    def problems(self) -> list[str]:
        return [a.problem for a in self.args if a.problem]


Verdicts = Mapping[tuple[str, str, str, str], tuple[bool, str]]
"""Judged arguments: (tool, argument, criterion, value_key) → (passed, reason)."""


def compare(
    tool: str,
    matchers: Mapping[str, ArgMatcher],
    call: ActualCall,
    verdicts: Verdicts,
) -> PairOutcome | None:
    """The credit of the expected call (``tool``, ``matchers``) against ``call``; ``None``
    for a call of another tool. Raises ``_Undecided`` when a matcher cannot decide."""
    if call.tool != tool:
        return None
    outcomes = tuple(
        _match_arg(tool, name, matcher, call.args, verdicts) for name, matcher in matchers.items()
    )
    credit = (1 + sum(o.matched for o in outcomes)) / (1 + len(outcomes))
    return PairOutcome(credit, outcomes)


def credit_matrix(
    expected: Sequence[ExpectedCall], calls: Sequence[ActualCall], verdicts: Verdicts
) -> list[list[PairOutcome | None]] | str:
    """Every expected call (rows) against every actual call (columns), or the problem of a
    matcher that could not decide."""
    try:
        return [[compare(e.tool, e.matchers, call, verdicts) for call in calls] for e in expected]
    except _Undecided as exc:
        return str(exc)


def _match_arg(
    tool: str,
    name: str,
    matcher: ArgMatcher,
    args: Mapping[str, Any] | None,
    verdicts: Verdicts,
) -> ArgOutcome:
    if args is None or name not in args:
        return ArgOutcome(name, False, f"{name}: missing (expected {matcher.describe()})")
    actual = args[name]
    got = _short(actual)
    if matcher.kind == "any":
        return ArgOutcome(name, True)
    if matcher.kind == "exact":
        if _same(matcher.value, actual):
            return ArgOutcome(name, True)
        return ArgOutcome(name, False, f"{name}: expected {matcher.describe()}, got {got}")
    if matcher.kind == "regex":
        assert matcher.pattern is not None
        if not isinstance(actual, str):
            return ArgOutcome(
                name, False, f"{name}: {got} is not a string, so it cannot match /{matcher.value}/"
            )
        try:
            found = matcher.pattern.search(actual, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            raise _Undecided(
                f"matching argument '{name}' against /{matcher.value}/ timed out after "
                f"{REGEX_TIMEOUT_S:g}s; simplify the pattern"
            ) from None
        if found:
            return ArgOutcome(name, True)
        return ArgOutcome(name, False, f"{name}: {got} does not match /{matcher.value}/")
    if matcher.kind == "approx":
        if not _is_number(actual):
            return ArgOutcome(
                name, False, f"{name}: expected a number {matcher.describe()}, got {got}"
            )
        if abs(float(actual) - matcher.value) <= matcher.tol:
            return ArgOutcome(name, True)
        return ArgOutcome(
            name,
            False,
            f"{name}: {got} is not within {_number(matcher.tol)} of {_number(matcher.value)}",
        )
    if matcher.kind == "judge":
        passed, reason = verdicts[(tool, name, matcher.value, value_key(actual))]
        if passed:
            return ArgOutcome(name, True)
        return ArgOutcome(
            name, False, f"{name}: the judge found {got} fails {matcher.value!r}: {reason}"
        )
    return _predicate(name, matcher, actual, got)


def _predicate(name: str, matcher: ArgMatcher, actual: Any, got: str) -> ArgOutcome:
    fn: Callable[[Any], Any] = matcher.value
    try:
        verdict = fn(actual)
    except Exception as exc:
        raise _Undecided(
            f"the predicate for argument '{name}' raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(verdict, bool):
        raise _Undecided(
            f"the predicate for argument '{name}' must return a bool, got "
            f"{type(verdict).__name__}: {verdict!r}"
        )
    if verdict:
        return ArgOutcome(name, True)
    return ArgOutcome(name, False, f"{name}: {matcher.describe()} is False for {got}")


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) != isinstance(actual, bool):
        return False  # True == 1 in Python, not in a tool call's JSON
    return bool(expected == actual)


# -- alignment -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the aligned table: an expected call, an actual call, or a pair."""

    expected: int | None
    actual: int | None
    outcome: PairOutcome | None = None


@dataclass(frozen=True, slots=True)
class Alignment:
    """The optimal pairing and its score."""

    rows: list[Row]
    score: float
    matched: int
    """Pairs with full credit."""
    credit: float
    denominator: int
    extra: list[str] = field(default_factory=list)


CreditMatrix = Sequence[Sequence[PairOutcome | None]]


def align(
    credits: CreditMatrix, n_expected: int, n_actual: int, mode: TrajectoryMode, ordered: bool
) -> Alignment:
    """Pair expected calls (rows of ``credits``) with actual calls (columns) for ``mode``."""
    keep_order = ordered or mode == "strict"
    pairs = (
        _ordered_pairs(credits, n_expected, n_actual)
        if keep_order
        else _assigned_pairs(credits, n_expected, n_actual)
    )
    rows = _rows(pairs, credits, n_expected, n_actual, keep_order)
    credit = sum(r.outcome.credit for r in rows if r.outcome is not None)
    denominator = {
        "strict": max(n_expected, n_actual),
        "unordered": max(n_expected, n_actual),
        "subset": n_actual,
        "superset": n_expected,
    }[mode]
    score = 1.0 if denominator == 0 else credit / denominator
    matched = sum(1 for r in rows if r.outcome is not None and r.outcome.credit == 1.0)
    return Alignment(rows, score, matched, credit, denominator)


def _weight(outcome: PairOutcome | None) -> float:
    return 0.0 if outcome is None else outcome.credit


def _ordered_pairs(credits: CreditMatrix, n: int, m: int) -> list[tuple[int, int]]:
    """The order-keeping pairing of greatest total credit (a weighted LCS)."""
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            w = _weight(credits[i][j])
            take = best[i + 1][j + 1] + w if w > 0 else -1.0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        w = _weight(credits[i][j])
        if w > 0 and math.isclose(best[i][j], best[i + 1][j + 1] + w):
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif math.isclose(best[i][j], best[i + 1][j]):
            i += 1
        else:
            j += 1
    return pairs


def _assigned_pairs(credits: CreditMatrix, n: int, m: int) -> list[tuple[int, int]]:
    """The one-to-one pairing of greatest total credit, order ignored (Hungarian method,
    O(size³) on a square matrix padded with zero credits)."""
    size = max(n, m)
    if size == 0:
        return []
    cost = [
        [-_weight(credits[i][j]) if i < n and j < m else 0.0 for j in range(size)]
        for i in range(size)
    ]
    u, v = [0.0] * (size + 1), [0.0] * (size + 1)
    owner = [0] * (size + 1)  # owner[j]: the row (1-based) assigned to column j
    for row in range(1, size + 1):
        owner[0], col = row, 0
        slack = [math.inf] * (size + 1)
        via = [0] * (size + 1)
        used = [False] * (size + 1)
        while owner[col] != 0:
            used[col] = True
            r, delta, nxt = owner[col], math.inf, 0
            for j in range(1, size + 1):
                if used[j]:
                    continue
                reduced = cost[r - 1][j - 1] - u[r] - v[j]
                if reduced < slack[j]:
                    slack[j], via[j] = reduced, col
                if slack[j] < delta:
                    delta, nxt = slack[j], j
            for j in range(size + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    slack[j] -= delta
            col = nxt
        while col:
            prev = via[col]
            owner[col] = owner[prev]
            col = prev
    return sorted(
        (owner[j] - 1, j - 1)
        for j in range(1, size + 1)
        if owner[j] - 1 < n and j - 1 < m and _weight(credits[owner[j] - 1][j - 1]) > 0
    )


def _rows(
    pairs: list[tuple[int, int]], credits: CreditMatrix, n: int, m: int, keep_order: bool
) -> list[Row]:
    paired_actual = {j for _, j in pairs}
    by_expected = dict(pairs)
    if not keep_order:  # expected calls in order, then the calls nobody expected
        rows = [
            Row(i, by_expected.get(i), credits[i][by_expected[i]] if i in by_expected else None)
            for i in range(n)
        ]
        return rows + [Row(None, j) for j in range(m) if j not in paired_actual]
    rows, i, j = [], 0, 0
    for pi, pj in [*pairs, (n, m)]:
        rows += [Row(k, None) for k in range(i, pi)]
        rows += [Row(None, k) for k in range(j, pj)]
        if pi < n and pj < m:
            rows.append(Row(pi, pj, credits[pi][pj]))
        i, j = pi + 1, pj + 1
    return rows


# -- the table -------------------------------------------------------------------------


def _cut(text: str, limit: int = _CELL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_table(
    alignment: Alignment,
    expected: Sequence[str],
    actual: Sequence[ActualCall],
    mode: TrajectoryMode,
) -> str:
    """The aligned trajectories, one row per line::

    exp  act  expected                actual                     mismatch
    1    1    search(q=/refund/)      search(q='refund policy')  ok
    2    -    lookup(order_id='A-1')  -                          missing call
    """
    header = ("exp", "act", "expected", "actual", "mismatch")
    lines = [header]
    for row in alignment.rows:
        exp = "-" if row.expected is None else str(row.expected + 1)
        act = "-" if row.actual is None else str(row.actual + 1)
        left = "-" if row.expected is None else _cut(expected[row.expected])
        right = "-" if row.actual is None else _cut(actual[row.actual].describe())
        if row.outcome is not None:
            note = "; ".join(row.outcome.problems) or "ok"
        elif row.actual is None:
            note = "not called (allowed in subset)" if mode == "subset" else "missing call"
        else:
            note = "extra call (allowed in superset)" if mode == "superset" else "unexpected call"
        lines.append((exp, act, left, right, note))
    widths = [max(len(line[c]) for line in lines) for c in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line[:4], widths, strict=True))
        + "  "
        + line[4]
        for line in lines
    )
