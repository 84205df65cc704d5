"""The depth test writers use on JSON text agrees with the readers' check of parsed JSON,
whatever the strings inside hold (brackets, quotes, escapes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarist._json_limits import MAX_DEPTH, JsonLimitError, check_json, too_deep_text

_text = st.text(alphabet='[]{}"\\ax\u2028', max_size=6)
_json = st.recursive(
    st.none() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=40,
)


def _readers_refuse(value: Any, limit: int) -> bool:
    wrapped: Any = value
    for _ in range(MAX_DEPTH - limit):  # check_json's limit is fixed: pad to move it
        wrapped = [wrapped]
    try:
        check_json(wrapped, strict_values=False)
    except JsonLimitError:
        return True
    return False


@settings(max_examples=300, deadline=None)
@given(_json, st.integers(min_value=1, max_value=6), st.booleans())
def test_text_depth_agrees_with_the_readers_check(value: Any, limit: int, indent: bool) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=False)
    assert too_deep_text(text, limit) == _readers_refuse(value, limit)


def test_the_limit_itself_is_allowed() -> None:
    at_limit: Any = "x"
    for _ in range(MAX_DEPTH):
        at_limit = [at_limit]
    assert not too_deep_text(json.dumps(at_limit))
    assert too_deep_text(json.dumps([at_limit]))


def test_depth_only_loading_still_refuses_and_names_a_deep_part() -> None:
    from scenarist._json_limits import loads

    deep = '{"calls": [' + "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + "]}"
    with pytest.raises(JsonLimitError) as refused:
        loads(deep, strict_values=False)
    assert refused.value.kind == "too_deep" and refused.value.path[:2] == ("calls", 0)
    assert loads('[[1], {"a": "[[["}]', strict_values=False) == [[1], {"a": "[[["}]
