"""Turning values from agents into JSON that can be stored, shown and replayed.

Span inputs and outputs are whatever the agent passed: strings, dicts, pydantic models,
dataclasses, datetimes, bytes, or something hostile. Stored traces hold JSON. The
mapping is lossless for JSON values and explicit for everything else, never a silent
``repr``, and it never raises: a value that cannot be written is written *marked*:

================================  ==============================================
JSON values (str, int, float...)  unchanged (non-finite floats become strings)
an int too long for ``str()``     ``{"__int__": "0x<hex digits>"}`` (lossless; see below)
dict / list / tuple               recursively (tuple becomes a list, keys become str)
set / frozenset                   a sorted list when sortable, else a list
pydantic model, dataclass         their JSON dump (``model_dump(mode="json")``)
datetime / date / time            ISO 8601 string
Decimal, UUID, Path, Enum         ``str`` / the enum's value
bytes                             ``{"__bytes__": "<base64>"}`` (lossless)
a container holding itself        ``{"__cycle__": "builtins.dict"}`` where it recurs
text with lone surrogates         unchanged; with ``mark_text=True``, ``{"__text__": "<the
                                  text, each surrogate as \\udXXX>"}``
nested deeper than 112 levels     ``{"__truncated__": "builtins.list"}`` below that depth
anything else                     ``{"__repr__": repr(value), "__type__": "module.Name"}``
... whose ``repr`` raises         ``{"__repr__": null, "__type__": ..., "__error__": "..."}``
================================  ==============================================

An int of more than 4,300 decimal digits (Python's default ``sys.int_info``
limit on int/str conversion, which its JSON reader and writer obey) cannot be written
as a number any reader of ours parses, so it is written as hexadecimal text, which has
no such limit: ``int(marked["__int__"], 16)`` gives it back. As a mapping key it is
the hexadecimal text alone.

``other=`` replaces the last two rows for readers that want text (the run log and the
Hub payload write an unknown object as its ``str``; :func:`as_text` is that, marked like
the last row when ``str`` and ``repr`` both raise). ``mark_text=True`` is for writers of
files (the run log, reports), which cannot encode a lone surrogate; the stores leave such
text as it is, so the server keeps refusing it in a request body (422) rather than
silently rewriting what a client sent.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any, overload
from uuid import UUID

from pydantic import BaseModel

from scenarist import _json_limits

__all__ = [
    "MAX_DEPTH",
    "as_text",
    "dump_data",
    "dump_json",
    "json_text",
    "safe_repr",
    "split_jsonl",
    "to_json_value",
]

MAX_DEPTH = _json_limits.MAX_DEPTH - 16
"""Nesting kept in stored values; deeper parts are marked ``__truncated__``. Below the
readers' limit (:data:`scenarist._json_limits.MAX_DEPTH`), with room for the record a
value is written in, so whatever a writer of ours wrote, our readers read."""

_ATOMS = (int, bool, type(None))

_MIN_INT_DIGITS = 640
"""The lowest limit ``sys.set_int_max_str_digits`` accepts: shorter ints always convert."""
_DEFAULT_INT_DIGITS = 4300
"""Python's default limit on int/str conversion: what a reader in another process takes."""
_DIGITS_AS_NINES = bytes.maketrans(b"0123456789", b"9" * 10)
_LONG_RUN = b"9" * (_MIN_INT_DIGITS + 1)


def _int_too_long(value: int) -> bool:
    """Whether ``str(value)`` fails here or a default reader elsewhere refuses its digits."""
    if value.bit_length() <= 2 * _MIN_INT_DIGITS:  # under 10**640: always fine, and cheap
        return False
    limit = sys.get_int_max_str_digits()
    digits = _DEFAULT_INT_DIGITS if limit == 0 else min(limit, _DEFAULT_INT_DIGITS)
    return not -(10**digits) < value < 10**digits


def _int_text(value: int) -> str:
    return hex(value)  # power-of-two bases have no digit limit


def to_json_value(
    value: Any, *, other: Callable[[Any], Any] | None = None, mark_text: bool = False
) -> Any:
    """``value`` as JSON-compatible data (see the module docstring for the mapping)."""
    return _Walk(other or repr_marker, mark_text).value(value, 0)


def json_text(value: Any) -> str:
    """``json.dumps(to_json_value(value))``, compact, at the speed of ``json.dumps``.

    Most stored values are already plain JSON (with datetimes): the C encoder writes them
    directly and the walk is only run when the text could differ from what the walk
    writes: a value the encoder refuses (bytes, sets, non-finite floats, cycles, unknown
    objects), a key the encoder spells its own way (``True`` is ``"true"`` to it, ``"True"``
    to the walk; ``None``, ``NaN``), or text nested deeper than :data:`MAX_DEPTH` (which the
    walk cuts). A property test holds the two paths to the same text.
    """
    try:
        text = json.dumps(
            value,
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
            default=_plain_default,
        )
    except (_NotPlain, ValueError, TypeError, RecursionError):
        pass
    else:
        if (
            not _spelled_key(text)
            and not _json_limits.too_deep_text(text, MAX_DEPTH)
            and not (_digits_unlimited() and _long_digits(text))
        ):
            return text
    return json.dumps(to_json_value(value), ensure_ascii=False, separators=(",", ":"))


class _NotPlain(Exception):
    """Raised out of ``json.dumps`` for a value only the walk can write."""


def _plain_default(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    raise _NotPlain


# Keys json.dumps writes differently from the walk (which uses ``str(key)``). Matching text
# can also be an ordinary key ending in one of these words, or a string that holds one;
# then the walk runs, harmlessly. (Substring tests: a regex scan cost more than the dump.)
_SPELLED_KEYS = ('"true":', '"false":', '"null":', '"NaN":', 'Infinity":')


def _spelled_key(text: str) -> bool:
    return any(key in text for key in _SPELLED_KEYS)


def _long_digits(text: str) -> bool:
    """Whether JSON ``text`` may hold an int too long for a reader (a run of more than 640
    digits, maybe inside a string: then the walk, which knows, writes the value).

    Every digit becomes a ``9`` and the run of nines is searched for, both at C speed
    (about 1 GB/s on ASCII text; a regular expression took 40 times longer).
    """
    if len(text) <= _MIN_INT_DIGITS:
        return False
    return _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_NINES)


def _digits_unlimited() -> bool:
    """Whether this process lets ``json.dumps`` write ints a default reader refuses (its
    limit lifted or raised); otherwise ``json.dumps`` itself refuses them."""
    limit = sys.get_int_max_str_digits()
    return limit == 0 or limit > _DEFAULT_INT_DIGITS


class _Walk:
    """One conversion: the containers on the current path (cycles) and the fallbacks."""

    __slots__ = ("_mark_text", "_open", "_other")

    def __init__(self, other: Callable[[Any], Any], mark_text: bool) -> None:
        self._other = other
        self._mark_text = mark_text
        self._open: set[int] = set()

    def value(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            if not self._mark_text or _encodable(value):
                return value
            return {"__text__": _escaped(value)}
        if isinstance(value, _ATOMS):
            if isinstance(value, int) and _int_too_long(value):
                return {"__int__": _int_text(value)}
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, Mapping | list | tuple | set | frozenset | BaseModel):
            return self._container(value, depth)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self._container(value, depth)
        if isinstance(value, datetime | date | time):
            return value.isoformat()
        if isinstance(value, Enum):
            return self.value(value.value, depth)
        if isinstance(value, Decimal | UUID | PurePath):
            return str(value)
        if isinstance(value, bytes | bytearray):
            return {"__bytes__": base64.b64encode(bytes(value)).decode("ascii")}
        return self._other(value)

    def _container(self, value: Any, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return {"__truncated__": _type_name(value)}
        key = id(value)
        if key in self._open:
            return {"__cycle__": _type_name(value)}
        self._open.add(key)
        try:
            return self._items(value, depth + 1)
        finally:
            self._open.discard(key)

    def _items(self, value: Any, depth: int) -> Any:
        if isinstance(value, Mapping):
            return {self._key(k): self.value(v, depth) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, depth) for v in value]
        if isinstance(value, set | frozenset):
            items = [self.value(v, depth) for v in value]
            try:
                return sorted(items)
            except TypeError:
                return items
        if isinstance(value, BaseModel):
            try:
                return value.model_dump(mode="json")
            except Exception:  # bytes, cycles or worse inside: walk its Python dump
                return self.value(value.model_dump(), depth)
        return self.value(dataclasses.asdict(value), depth)

    def _key(self, key: Any) -> str:
        if isinstance(key, str):
            return key if not self._mark_text or _encodable(key) else _escaped(key)
        if isinstance(key, int) and not isinstance(key, bool):
            if _int_too_long(key):
                return _int_text(key)
            return int.__repr__(key)  # as json writes it, IntEnum members included
        text = as_text(key)
        return text if isinstance(text, str) else f"<{_type_name(key)}>"  # both raised


def repr_marker(value: Any) -> dict[str, Any]:
    """``{"__repr__": repr(value), "__type__": ...}``; ``__repr__`` is ``null`` and
    ``__error__`` says why when ``repr`` raises."""
    marker: dict[str, Any] = {"__repr__": None, "__type__": _type_name(value)}
    try:
        text = repr(value)
    except Exception as exc:
        marker["__error__"] = f"repr() raised {_describe(exc)}"
        return marker
    marker["__repr__"] = text if _encodable(text) else _escaped(text)
    return marker


def as_text(value: Any) -> Any:
    """``str(value)`` when that works (and is writable text), else :func:`repr_marker`."""
    try:
        text = str(value)
    except Exception as exc:
        marker = repr_marker(value)
        marker["__error__"] = f"str() raised {_describe(exc)}" + (
            f"; {marker['__error__']}" if "__error__" in marker else ""
        )
        return marker
    return text if _encodable(text) else _escaped(text)


def safe_repr(value: Any) -> str:
    """``repr(value)`` for people; never raises (``<Name: repr() raised ...>`` instead).

    A value whose ``repr`` fails only because it holds an int too long for ``str()`` is
    shown as its marked JSON (``{"__int__": "0x..."}`` where the int is), so the rest of
    it stays readable."""
    try:
        return repr(value)
    except Exception as exc:
        if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
            return json_text(value)
        return f"<{_type_name(value)}: repr() raised {_describe(exc)}>"


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _describe(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:
        message = ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogates)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def dump_json(model: BaseModel, *, indent: int | None = None) -> str:
    """``model`` (a record, a run log) as JSON text; never fails on the values in it.

    Values JSON cannot hold are written in the forms :mod:`scenarist._jsonable`
    documents: an unknown object as its ``str``, bytes as ``{"__bytes__": <base64>}``, a
    container that holds itself marked ``{"__cycle__": ...}``, an object whose ``str`` and
    ``repr`` raise as ``{"__repr__": null, "__type__": ..., "__error__": ...}``, parts
    nested past what the readers accept cut and marked ``{"__truncated__": ...}``. The
    fast path is pydantic's own dump; the marked forms are only computed when it fails
    or writes deeper than :data:`scenarist._json_limits.MAX_DEPTH`.
    """
    try:
        text = model.model_dump_json(fallback=str, indent=indent)
    except Exception:  # PydanticSerializationError, RecursionError, a raising __str__
        pass
    else:
        # what we write, our readers must read: not too deep, no int too long to parse
        if not _json_limits.too_deep_text(text) and not _long_digits(text):
            return text
    data = to_json_value(model.model_dump(), other=as_text, mark_text=True)
    return json.dumps(data, ensure_ascii=False, indent=indent, separators=_separators(indent))


def dump_data(model: BaseModel) -> Any:
    """``model`` as JSON data, with the same forms as :func:`dump_json` (e.g. a body to send):
    what :func:`dump_json` writes, read back, so a body holds no value a JSON writer
    refuses (an int too long for ``str()``) and NaN is ``null`` as in the run log."""
    return _json_limits.fast_loads(dump_json(model))


def _separators(indent: int | None) -> tuple[str, str]:
    return (",", ": ") if indent is not None else (",", ":")


@overload
def split_jsonl(data: str) -> tuple[list[tuple[int, str]], str]: ...
@overload
def split_jsonl(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]: ...
def split_jsonl(data: str | bytes) -> tuple[list[tuple[int, Any]], Any]:
    """JSON Lines split the one safe way, on ``\\n`` alone: every reader uses this.

    ``str.splitlines`` also breaks at U+2028, U+2029, U+0085, ``\\v``, ``\\f`` and
    ``\\x1c``-``\\x1e``, which JSON writers leave raw inside strings, so it cuts a valid
    record in two. Returns the terminated lines that are not blank, numbered from 1, and
    the unterminated rest (empty when ``data`` ends with a newline): where a writer that
    was interrupted mid-line leaves its torn last line.
    """
    parts: list[Any] = data.split(b"\n") if isinstance(data, bytes) else data.split("\n")
    rest = parts.pop()
    numbered = [(n, line) for n, line in enumerate(parts, 1) if line.strip()]
    return numbered, rest
