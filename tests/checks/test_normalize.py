from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scenarist.checks._normalize import normalize, normalize_text

FORMS = ["NFC", "NFD", "NFKC", "NFKD", None]


def test_normalize_text_nfkc_folds_compatibility_characters() -> None:
    assert normalize_text("ﬁnal ２") == "final 2"


def test_normalize_text_collapses_and_strips_whitespace() -> None:
    assert normalize_text("\n  the\t\tanswer\u00a0 is \r\n 42  ") == "the answer is 42"


def test_normalize_text_nfd_decomposes_and_nfc_composes() -> None:
    assert normalize_text("é", "NFD") == "e\u0301"
    assert normalize_text("e\u0301", "NFC") == "é"


def test_normalize_text_nfc_keeps_compatibility_characters() -> None:
    assert normalize_text("ﬁ", "NFC") == "ﬁ"


def test_normalize_text_none_form_returns_text_unchanged() -> None:
    assert normalize_text("  ﬁ  x ", None) == "  ﬁ  x "


def test_normalize_recurses_into_containers_and_keeps_their_types() -> None:
    value = {
        " key ": ["a  b", ("ﬁ", 1), {"x "}, frozenset({" y"})],
        "n": None,
    }
    assert normalize(value) == {"key": ["a b", ("fi", 1), {"x"}, frozenset({"y"})], "n": None}
    result = normalize(value)
    assert isinstance(result["key"][1], tuple)
    assert isinstance(result["key"][3], frozenset)


@pytest.mark.parametrize("value", [1, 2.5, None, True, b" bytes ", object])
def test_normalize_leaves_non_strings_alone(value: Any) -> None:
    assert normalize(value) is value


def test_normalize_none_form_returns_the_same_object() -> None:
    value = {" a ": [" b "]}
    assert normalize(value, None) is value


_scalars = st.text() | st.integers() | st.none() | st.booleans()
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5), children, max_size=4)
        | st.frozensets(st.text(max_size=5), max_size=4)
    ),
    max_leaves=12,
)


@given(value=_values, form=st.sampled_from(FORMS))
def test_normalize_is_idempotent(value: Any, form: Any) -> None:
    once = normalize(value, form)
    assert normalize(once, form) == once


@given(text=st.text(), form=st.sampled_from(FORMS[:4]))
def test_normalize_text_has_no_outer_or_repeated_whitespace(text: str, form: Any) -> None:
    result = normalize_text(text, form)
    assert result == result.strip()
    assert "  " not in result
    assert not any(ch.isspace() and ch != " " for ch in result)
