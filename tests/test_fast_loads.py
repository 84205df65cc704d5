"""``fast_loads`` gives ``json.loads``'s answer (value or error) for any text, whether msgspec
reads it or not: the server and the OTLP receiver rely on the same values."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scenarist import _json_limits
from scenarist._json_limits import fast_loads

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)
# Text that is JSON-like but often not JSON: fragments, Python's extensions, bad escapes.
_fragments = st.lists(
    st.sampled_from(
        [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            '"a"',
            '"\\ud800"',
            '"\\u00e9"',
            "1",
            "-0",
            "1e999",
            "-1E400",
            "NaN",
            "Infinity",
            "12345678901234567890",
            "0.1",
            "true",
            "null",
            " ",
            '"x',
            "\\",
            "\ud83d",
            "\x00",
            "1.5e-400",
            '"\t"',
            '{"a":1,"a":2}',
        ]
    ),
    max_size=12,
).map("".join)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN, and types compared (1 is not 1.0, 0.0 keeps its sign)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _answer(read: Any, text: Any) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return "error", type(exc).__name__
    except RecursionError:
        return "error", "RecursionError"


def _agree(text: str | bytes) -> None:
    ours, theirs = _answer(fast_loads, text), _answer(json.loads, text)
    assert ours[0] == theirs[0], (text, ours, theirs)
    if ours[0] == "value":
        assert _same(ours[1], theirs[1]), (text, ours, theirs)


@settings(max_examples=200, deadline=None)
@given(_values, st.booleans())
@example(2**64 + 1, False)
@example(-(2**63) - 1, False)
@example({"k": [1.0, -0.0, 10**25]}, True)
def test_fast_loads_reads_what_json_writes_as_json_reads_it(value: Any, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=False)
    _agree(text.encode("utf-8", "surrogatepass") if as_bytes else text)


@settings(max_examples=200, deadline=None)
@given(_fragments)
def test_fast_loads_refuses_and_accepts_what_json_does(text: str) -> None:
    _agree(text)


def test_utf16_bytes_and_a_bom_are_answered_as_json_answers() -> None:
    _agree('{"a": "é"}'.encode("utf-16"))
    _agree(b'\xef\xbb\xbf{"a": 1}')
    _agree(b"\xff\xfe")


def test_nesting_past_the_parsers_limits_is_answered_as_json_answers() -> None:
    for depth in (1_000, 5_000, 100_000):
        _agree("[" * depth + "]" * depth)


def test_msgspec_does_the_reading_when_it_is_installed() -> None:
    """Not a no-op wrapper: the fast reader is in use where the extra installed it."""
    pytest.importorskip("msgspec", reason="msgspec comes with the server and otel extras")
    assert _json_limits._fast_decode is not None
