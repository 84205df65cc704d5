"""Limits on JSON that comes from outside: nesting depth, NaN and Infinity, lone surrogates.

Every reader of JSON scenarist did not just make itself goes through here: the server's
request bodies, run logs (files and uploads, JSON and JSON Lines), cassette files. What
they refuse, and why:

- **Nesting deeper than** :data:`MAX_DEPTH` **levels** (containers inside containers).
  Python's own parser fails with ``RecursionError`` near 1,000 levels, pydantic refuses to
  serialise past 255, and every recursive walk after parsing (redaction, storage, the
  dashboard's pretty-printing) needs stack too. Real payloads (LLM requests with tool
  schemas, agent outputs) stay well under 30 levels.
- **NaN and Infinity** (``NaN``, ``Infinity``, ``-Infinity``, and numbers like ``1e999``
  that overflow to infinity). Python's parser accepts them, but they are not JSON: stored,
  they break every JSON reader afterwards (a page that renders them answers 500 forever).
- **Unpaired UTF-16 surrogates** (``"\\udac7"``): valid JSON escapes, but not Unicode text;
  they cannot be written as UTF-8 to a file or a database.

The check walks the parsed value once without recursion (so it is safe at any depth) and,
only when something is wrong, walks again to name where (``steps.0.cost_usd``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "JsonLimitError",
    "check_json",
    "fast_loads",
    "finite",
    "loads",
    "parse",
    "too_deep_text",
]

MAX_DEPTH = 128
"""Containers nested in containers that a JSON document may have (``[[1]]`` is 2)."""

try:  # an optional speed-up (extras ``server`` and ``otel``): 2-3x faster than json's parser
    import msgspec

    _fast_decode: Any = msgspec.json.Decoder().decode
    _FAST_ERRORS: tuple[type[Exception], ...] = (
        msgspec.DecodeError,
        msgspec.ValidationError,
        UnicodeError,
    )
except ImportError:  # pragma: no cover - exercised where msgspec is not installed
    _fast_decode = None
    _FAST_ERRORS = ()

_surrogate = re.compile("[\ud800-\udfff]").search
_strings_and_scalars = re.compile(r'"(?:[^"\\]|\\.)*"|[^\[\]{}"]+')
_innermost = re.compile(r"\[\]|\{\}")
_SHOWN_PARTS = 8


class JsonLimitError(ValueError):
    """JSON over a limit: ``problem`` says which, ``path`` where (keys and indexes)."""

    def __init__(self, problem: str, path: tuple[str | int, ...] = (), kind: str = "") -> None:
        self.problem = problem
        self.path = path
        self.kind = kind
        super().__init__(f"{self.field}: {problem}" if path else problem)

    @property
    def field(self) -> str:
        """The dotted path of the value (``steps.0.cost_usd``), shortened when very deep."""
        parts = [_printable(str(part)) for part in self.path[:_SHOWN_PARTS]]
        if len(self.path) > _SHOWN_PARTS:
            parts.append(f"… ({len(self.path)} levels)")
        return ".".join(parts)


def fast_loads(text: str | bytes) -> Any:
    """``json.loads(text)``: the same value or the same error, read by msgspec when it is
    installed (2-3x faster).

    msgspec refuses what json accepts beyond JSON (``NaN``, ``1e999``, lone surrogates,
    UTF-16 bytes): then json reads the text and gives its answer. The two parsers stop at
    slightly different depths near Python's recursion limit, so text with 512 brackets or
    more goes to json directly. A property test holds the two to the same answers.
    """
    if _fast_decode is not None:
        if len(text) < 512:  # fewer characters than that many brackets: not counted
            brackets = 0
        elif isinstance(text, str):
            brackets = text.count("[") + text.count("{")
        else:
            brackets = text.count(b"[") + text.count(b"{")
        if brackets < 512:
            try:
                return _fast_decode(text)
            except _FAST_ERRORS:
                pass
    return json.loads(text)


def parse(text: str | bytes) -> Any:
    """``json.loads``, with nesting too deep for the parser itself (``RecursionError``)
    raised as :class:`JsonLimitError`; the value is not checked (see :func:`check_json`)."""
    try:
        return fast_loads(text)
    except RecursionError:
        raise JsonLimitError(_too_deep(), kind="too_deep") from None


def loads(text: str | bytes, *, strict_values: bool = True) -> Any:
    """:func:`parse` then :func:`check_json`. ``strict_values=False`` checks the depth
    only (for files scenarist wrote itself, which keep NaN as Python writes it)."""
    value = parse(text)
    if strict_values or not isinstance(text, str) or too_deep_text(text):
        check_json(value, strict_values=strict_values)  # (the text test is exact: no walk)
    return value


def too_deep_text(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` (well formed) nests deeper than ``limit`` levels.

    For writers: pydantic's dump goes up to 255 levels, and what a writer of ours puts
    in a file must be readable by our readers. Cheap when it matters: a text with fewer
    brackets than ``limit`` is answered at once; otherwise strings and scalars are
    dropped and the innermost pairs removed a level per pass (each pass at C speed, as
    many passes as the text is deep, at most ``limit``).
    """
    if len(text) <= limit or text.count("[") + text.count("{") <= limit:
        return False
    brackets = _strings_and_scalars.sub("", text)
    for _ in range(limit):
        brackets, removed = _innermost.subn("", brackets)
        if not brackets:
            return False
        if not removed:  # not well formed; the reader will say so
            return False
    return bool(brackets)


def check_json(value: Any, *, strict_values: bool = True, path: tuple[str | int, ...] = ()) -> None:
    """Raise :class:`JsonLimitError` if parsed JSON ``value`` breaks a limit; ``path`` is
    where ``value`` sits in a larger document (it counts towards the depth)."""
    if _ok(value, MAX_DEPTH - len(path), strict_values):
        return
    found = _locate(value, path, MAX_DEPTH - len(path), strict_values)
    assert found is not None  # _ok found a problem, so _locate finds it too
    raise found


def _too_deep() -> str:
    return f"nested deeper than {MAX_DEPTH} levels, the limit for JSON scenarist reads"


def _printable(text: str) -> str:
    """``text`` without lone surrogates (so a message naming them can itself be sent)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _bad_scalar(value: Any) -> str | None:
    kind = type(value)
    if kind is str:
        if not value.isascii() and _surrogate(value):
            return "surrogate"
    elif kind is float and not math.isfinite(value):
        return "not_finite"
    return None


def _ok(value: Any, depth_left: int, strict_values: bool) -> bool:
    """Whether ``value`` is within every limit (iterative: safe at any depth)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return not strict_values or _bad_scalar(value) is None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > depth_left:
            return False
        if type(container) is dict:
            children: Any = container.values()
            if strict_values:
                for key in container:
                    if not key.isascii() and _surrogate(key):
                        return False
        else:
            children = container
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif strict_values and (kind is str or kind is float) and _bad_scalar(child):
                return False
    return True


def _locate(
    value: Any, path: tuple[str | int, ...], depth_left: int, strict_values: bool
) -> JsonLimitError | None:
    """The first limit ``value`` breaks, with its path (recursion bounded by the depth)."""
    kind = type(value)
    if kind is dict or kind is list:
        if depth_left < 1:
            return JsonLimitError(_too_deep(), path, "too_deep")
        items = value.items() if kind is dict else enumerate(value)
        for key, child in items:
            if strict_values and isinstance(key, str) and _bad_scalar(key):
                return JsonLimitError(_surrogate_message(key), (*path, key), "surrogate")
            found = _locate(child, (*path, key), depth_left - 1, strict_values)
            if found is not None:
                return found
        return None
    if not strict_values:
        return None
    problem = _bad_scalar(value)
    if problem == "surrogate":
        return JsonLimitError(_surrogate_message(value), path, problem)
    if problem == "not_finite":
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        message = f"{text} is not a JSON number; send a finite number, or null when unknown"
        return JsonLimitError(message, path, problem)
    return None


def _surrogate_message(text: str) -> str:
    found = _surrogate(text)
    shown = f"\\u{ord(found.group()):04x}" if found else "?"
    return (
        f"contains an unpaired UTF-16 surrogate ({shown}), which is not Unicode text and "
        "cannot be stored; send the character itself or its full surrogate pair"
    )


def finite(value: Any) -> Any:
    """A copy of parsed JSON ``value`` with ``NaN`` and infinities as ``None``: for
    writing what was stored before these limits (or by a path that kept them) as JSON
    every reader parses."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {k: finite(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [finite(v) for v in value]
    return value
