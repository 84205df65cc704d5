"""The stores' JSON writer: its fast path writes exactly what the documented walk writes."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scenarist._jsonable import MAX_DEPTH, json_text, to_json_value


class Colour(Enum):
    RED = "red"


class Level(IntEnum):
    LOW = 1


class Tone(StrEnum):
    CALM = "calm"


def walked(value: Any) -> str:
    return json.dumps(to_json_value(value), ensure_ascii=False, separators=(",", ":"))


keys = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["true", "null", 'x"true', "NaN"]),
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([Level.LOW, Tone.CALM, (1, 2)]),
)
atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.binary(max_size=8),
    st.datetimes(timezones=st.just(UTC)),
    st.dates(),
    st.decimals(allow_nan=False, places=2, max_value=10**6, min_value=-(10**6)),
    st.sampled_from([Colour.RED, Level.LOW, Tone.CALM, "\ud800 lone", "a\x00b"]),
)
values = st.recursive(
    atoms,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.frozensets(st.integers(), max_size=3),
        st.dictionaries(keys, children, max_size=4),
    ),
    max_leaves=25,
)


@given(values)
def test_json_text_is_the_walk_written_compactly(value: Any) -> None:
    assert json_text(value) == walked(value)


def test_plain_values_with_datetimes_take_the_fast_path_and_read_back() -> None:
    at = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
    value = {"at": at, "day": date(2026, 12, 1), "n": [1, 2.5, None, True], "t": "é"}
    text = json_text(value)
    assert text == walked(value)
    assert json.loads(text) == {
        "at": "2026-12-01T12:30:00+00:00",
        "day": "2026-12-01",
        "n": [1, 2.5, None, True],
        "t": "é",
    }


def test_keys_json_would_spell_its_own_way_are_written_as_the_walk_writes_them() -> None:
    assert json.loads(json_text({True: 1, None: 2, 3: 4})) == {"True": 1, "None": 2, "3": 4}
    assert json.loads(json_text({Level.LOW: "low"})) == {"1": "low"}


def test_values_json_refuses_are_written_in_their_marked_forms() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    data = json.loads(json_text({"b": b"\x00", "nan": math.nan, "c": cycle, "d": Decimal("1.5")}))
    assert data == {
        "b": {"__bytes__": "AA=="},
        "nan": "nan",
        "c": [{"__cycle__": "builtins.list"}],
        "d": "1.5",
    }


def test_text_nested_past_the_limit_is_cut_as_the_walk_cuts_it() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    text = json_text({"deep": deep})
    assert text == walked({"deep": deep})
    assert "__truncated__" in text
    shallow: Any = "leaf"
    for _ in range(MAX_DEPTH - 1):
        shallow = [shallow]
    assert json.loads(json_text(shallow)) == shallow  # at the limit: kept whole


def test_ints_too_long_for_a_reader_are_marked_as_hexadecimal_whatever_this_process_allows() -> (
    None
):
    import sys

    huge = -(10**4300)  # 4,301 digits: one past Python's default limit
    expected = {"n": {"__int__": hex(huge)}, "ok": 10**4299, hex(huge): 1}
    assert json.loads(json_text({"n": huge, "ok": 10**4299, huge: 1})) == expected
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # this process writes any int; readers elsewhere do not
    try:
        assert json.loads(json_text({"n": huge, "ok": 10**4299, huge: 1})) == expected
    finally:
        sys.set_int_max_str_digits(before)
    assert int(expected["n"]["__int__"], 16) == huge
