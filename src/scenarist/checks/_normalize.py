"""Text normalisation shared by the comparison and text checks.

LLM outputs differ from the expected value in ways nobody means to test: a ligature
(``ﬁ``) instead of two letters, a non-breaking space, a trailing newline. Checks therefore
compare normalised values by default: every string is passed through
:func:`unicodedata.normalize` and its runs of whitespace are collapsed to one space and
stripped. Strings nested in dicts, lists, tuples, sets and frozensets are normalised too,
so ``{"city": "Paris\\n"}`` equals ``{"city": "Paris"}``.

``normalization_form=None`` turns normalisation off entirely: values are compared exactly
as given, which is the one way to test whitespace or a specific Unicode form.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Literal, TypeAlias

__all__ = ["NormalizationForm", "normalize", "normalize_text"]

NormalizationForm: TypeAlias = Literal["NFC", "NFD", "NFKC", "NFKD"]
"""The Unicode normal forms :func:`unicodedata.normalize` accepts."""


def normalize_text(text: str, form: NormalizationForm | None = "NFKC") -> str:
    """``text`` in Unicode form ``form``, whitespace collapsed and stripped.

    With ``form=None`` the text is returned unchanged.

    >>> normalize_text("  the  ﬁrst\\u00a0step\\n")
    'the first step'
    """
    if form is None:
        return text
    if text.isascii():  # every normal form of ASCII text is the text itself
        return " ".join(text.split())
    return " ".join(unicodedata.normalize(form, text).split())


def normalize(value: Any, form: NormalizationForm | None = "NFKC") -> Any:
    """``value`` with every string inside it normalised by :func:`normalize_text`.

    Walks dicts (keys and values), lists, tuples, sets and frozensets, keeping each
    container's type; other values are returned as they are. ``str`` subclasses and
    container subclasses come back as the plain built-in type.

    >>> normalize({"a ": ["x  y", ("ﬁ",)]})
    {'a': ['x y', ('fi',)]}
    """
    if form is None:
        return value
    if isinstance(value, str):
        return normalize_text(value, form)
    if isinstance(value, dict):
        return {normalize(k, form): normalize(v, form) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(item, form) for item in value]
    if isinstance(value, tuple):
        return tuple(normalize(item, form) for item in value)
    if isinstance(value, frozenset):
        return frozenset(normalize(item, form) for item in value)
    if isinstance(value, set):
        return {normalize(item, form) for item in value}
    return value
