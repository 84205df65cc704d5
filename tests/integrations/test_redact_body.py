"""``redact_body`` skips the walk of a captured body only when its text proves there is
nothing to redact: it must give ``redact``'s answer on every body, however the secret's
key is spelt (case, ``-``, ``\\u`` escapes, UTF-16), nested or not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scenarist._json_limits import MAX_DEPTH
from scenarist.redaction import (
    REDACTED,
    TOO_DEEP,
    redact,
    redact_body,
    redacted_fields,
    response_fields,
)

FIELDS = redacted_fields()
SPELLINGS = ["api_key", "API-KEY", "Api_Key", "x-api-key", "Authorization", "token", "Token"]
KEYS = st.sampled_from([*SPELLINGS, "role", "content", "max_tokens", "prompt_tokens", "model"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32"])


def _escaped_keys(text: str) -> str:
    """Every letter of the secrets' keys written as a ``\\u`` escape (still valid JSON)."""
    for spelling in SPELLINGS:
        escaped = "".join(f"\\u{ord(c):04x}" for c in spelling)
        text = text.replace(f'"{spelling}"', f'"{escaped}"')
    return text


@settings(max_examples=150, deadline=None)
@given(DOCUMENTS, ENCODINGS, st.booleans(), st.booleans(), st.booleans())
@example({"api_key": "sk"}, "utf-16", False, False, True)
@example({"API-KEY": "sk"}, "utf-8", True, False, True)
def test_redact_body_answers_as_redact_does(
    document: Any, encoding: str, escape: bool, ascii_only: bool, response: bool
) -> None:
    text = json.dumps(document, ensure_ascii=ascii_only)
    if escape:
        text = _escaped_keys(text)
    raw = text.encode(encoding)
    parsed = json.loads(raw)
    fields = response_fields(FIELDS) if response else FIELDS
    assert redact_body(raw, parsed, fields) == redact(parsed, fields)


@pytest.mark.parametrize(
    "text",
    [
        '{"messages": [{"role": "user", "content": "hi"}], "API-Key": "sk-secret"}',
        '{"a": {"b": [{"\\u0061pi_key": "sk-secret"}]}}',  # an escaped key
        '{"\\u0041uthorization": "Bearer sk-secret"}',
    ],
)
def test_a_secret_in_any_spelling_is_redacted(text: str) -> None:
    raw = text.encode()
    out = redact_body(raw, json.loads(raw))
    assert "sk-secret" not in json.dumps(out) and REDACTED in json.dumps(out)


def test_a_clean_body_is_returned_as_is_and_a_deep_one_is_cut() -> None:
    clean = b'{"model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 5}}'
    parsed = json.loads(clean)
    assert redact_body(clean, parsed) is parsed  # nothing to redact: no walk, no copy
    deep_text = "[" * (MAX_DEPTH + 2) + "1" + "]" * (MAX_DEPTH + 2)
    deep = json.loads(deep_text)
    assert TOO_DEEP in json.dumps(redact_body(deep_text.encode(), deep))
