"""Expected against actual, word by word: the one diff behind every report.

A failed equality check is easier to read as a diff than as ``Expected value 'a long
answer…' but got 'a long answer…'``. :func:`check_diff` finds the two values in a
check's ``details`` and :func:`value_diff` compares them; the result is data
(:class:`ValueDiff`, a list of :class:`DiffSegment`), and each renderer draws it in its
own medium: the terminal report (Rich, ``[-removed-]{+added+}`` when colour is off), the
HTML report (``<del>``/``<ins>``, escaped) and the dashboard (a Jinja2 macro, escaped).

Choices that keep it readable and bounded:

- Words, not characters: the text is split into words, runs of whitespace and single
  punctuation marks, and :class:`difflib.SequenceMatcher` aligns those tokens.
- JSON values (dicts, lists, or two strings that both parse as a JSON object or array)
  are compared as indented JSON with sorted keys, so a changed field shows on its line.
- Long unchanged stretches are elided (the first and last few words kept), and each side
  is compared up to :data:`MAX_COMPARED_CHARS`; the rest is marked, never silently lost.
- Two numbers, booleans or ``None`` are not diffed (the message says it all), nor are two
  equal values (a failing ``NotEquals``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from scenarist._jsonable import as_text, to_json_value

__all__ = [
    "MAX_COMPARED_CHARS",
    "DiffSegment",
    "ValueDiff",
    "check_diff",
    "value_diff",
]

MAX_COMPARED_CHARS = 20_000  # per side; SequenceMatcher is quadratic in the worst case
_KEEP_EQUAL_CHARS = 80  # around an elided unchanged stretch, this much is kept each side
# Aligning n against m tokens costs up to n × m steps (repeated words are the worst case):
# past this, the changed middle is aligned by lines, then shown as one block.
_WORD_BUDGET = 250_000
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")

# Where a check's details hold the two values: (expected key, actual key).
_PAIRS = (("expected_value", "actual_value"),)

DiffOp = Literal["equal", "delete", "insert", "elided"]


class DiffSegment(BaseModel):
    """A run of text: on both sides (``equal``), only in the expected value
    (``delete``), only in the actual value (``insert``), or an unchanged stretch left
    out (``elided``, its text says how much)."""

    model_config = ConfigDict(frozen=True)

    op: DiffOp
    text: str


class ValueDiff(BaseModel):
    """The word-level diff of an expected and an actual value."""

    model_config = ConfigDict(frozen=True)

    form: Literal["text", "json"]
    segments: list[DiffSegment]
    truncated: bool
    """A side was longer than :data:`MAX_COMPARED_CHARS`; its rest is not compared."""

    def side(self, which: Literal["expected", "actual"]) -> list[DiffSegment]:
        """The segments that make up one side: unchanged text and what only it has."""
        own = "delete" if which == "expected" else "insert"
        return [s for s in self.segments if s.op in ("equal", "elided", own)]

    @property
    def changed(self) -> int:
        """How many characters differ (deleted plus inserted)."""
        return sum(len(s.text) for s in self.segments if s.op in ("delete", "insert"))


def check_diff(details: Mapping[str, Any] | None) -> ValueDiff | None:
    """The diff of the expected and actual values a check put in its ``details``
    (``expected_value`` / ``actual_value``, as the comparison checks write them), or
    ``None`` when there is nothing worth diffing."""
    if not details:
        return None
    for expected_key, actual_key in _PAIRS:
        if expected_key in details and actual_key in details:
            return value_diff(details[expected_key], details[actual_key])
    return None


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float)


def _as_json_container(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _json_text(value: Any) -> str:
    data = to_json_value(value, other=as_text, mark_text=True)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _texts(expected: Any, actual: Any) -> tuple[Literal["text", "json"], str, str] | None:
    if _is_scalar(expected) and _is_scalar(actual):
        return None
    if isinstance(expected, str) and isinstance(actual, str):
        parsed = (_as_json_container(expected), _as_json_container(actual))
        if parsed[0] is not None and parsed[1] is not None:
            return "json", _json_text(parsed[0]), _json_text(parsed[1])
        return "text", _printable(expected), _printable(actual)
    return "json", _json_text(expected), _json_text(actual)


def _printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (no terminal or page can
    encode them, and an agent's output may hold them)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def value_diff(expected: Any, actual: Any) -> ValueDiff | None:
    """``expected`` against ``actual``, word by word; ``None`` for two scalars that are
    not text, or for two values that read the same."""
    texts = _texts(expected, actual)
    if texts is None:
        return None
    form, left, right = texts
    if left == right:
        return None
    truncated = len(left) > MAX_COMPARED_CHARS or len(right) > MAX_COMPARED_CHARS
    a = _TOKEN.findall(left[:MAX_COMPARED_CHARS])
    b = _TOKEN.findall(right[:MAX_COMPARED_CHARS])
    segments = _diff_tokens(a, b)
    for name, text in (("expected", left), ("actual", right)):
        if len(text) > MAX_COMPARED_CHARS:
            rest = len(text) - MAX_COMPARED_CHARS
            segments.append(
                DiffSegment(op="elided", text=f" … {rest} more characters of {name} not compared")
            )
    return ValueDiff(form=form, segments=segments, truncated=truncated)


def _diff_tokens(a: list[str], b: list[str]) -> list[DiffSegment]:
    """The common head and tail in one pass each, then the changed middle aligned:
    word by word while that stays cheap, else line by line, else as one block."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    segments = _equal("".join(a[:head]))
    if len(middle_a) * len(middle_b) <= _WORD_BUDGET:
        segments += _aligned(middle_a, middle_b)
    else:
        lines_a, lines_b = _lines("".join(middle_a)), _lines("".join(middle_b))
        if len(lines_a) * len(lines_b) <= _WORD_BUDGET:
            segments += _aligned(lines_a, lines_b)
        else:
            segments += _changed("".join(middle_a), "".join(middle_b))
    segments += _equal("".join(a[len(a) - tail :]))
    return [s for s in segments if s.text]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _aligned(a: list[str], b: list[str]) -> list[DiffSegment]:
    segments: list[DiffSegment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            segments.extend(_equal("".join(a[i1:i2])))
        else:
            segments.extend(_changed("".join(a[i1:i2]), "".join(b[j1:j2])))
    return segments


def _changed(removed: str, added: str) -> list[DiffSegment]:
    return [DiffSegment(op="delete", text=removed), DiffSegment(op="insert", text=added)]


def _equal(text: str) -> list[DiffSegment]:
    """An unchanged stretch; a long one keeps its two ends around an elision."""
    keep = _KEEP_EQUAL_CHARS
    if len(text) <= 3 * keep:
        return [DiffSegment(op="equal", text=text)]
    hidden = len(text) - 2 * keep
    return [
        DiffSegment(op="equal", text=text[:keep]),
        DiffSegment(op="elided", text=f" … {hidden} unchanged characters … "),
        DiffSegment(op="equal", text=text[-keep:]),
    ]
