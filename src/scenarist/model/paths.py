"""Paths into a trace: ``trace.last.outputs.answer``, ``trace.interactions[*].inputs``.

Every ``*_key`` field of a check is a path. The syntax is the JSONPath subset that
giskard-checks users write, rooted at ``trace``:

=========================  ======================================================
``.name`` / ``['a.b']``    a mapping key, a model field, a computed field or one of
                           scenarist's properties (``last``, ``spans``...)
``[0]`` / ``[-1]``         an index into a list
``[*]`` / ``.*``           every item of a list, every value of a mapping or model
``..name``                 ``name`` at any depth (``last`` is computed, not stored,
                           so it is never visited twice)
``[1:3]`` / ``[::2]``      a slice
``[0, 2]`` / ``['a','b']`` a union of indexes or keys
=========================  ======================================================

Paths are parsed once (:func:`compile_path`, cached) and resolved directly against the
live objects: a model's fields are read with ``getattr`` and no trace is ever dumped to a
dict. What :func:`resolve` returns is the value as giskard's dump of the trace would hold
it (:func:`as_dumped`: a pydantic model or dataclass found there is a dict). Resolution
follows giskard-checks: no match gives :class:`NoMatch` (which checks report as ERROR); a
path with a wildcard, a slice, a union or ``..`` always gives a list; otherwise one match
gives the value itself.

A plain ``@property`` of your own pydantic model (a ``Trace`` subclass, a structured
output) is not in giskard's dump, so by default a path does not reach it (giskard-checks
reports no match): make it a ``@computed_field``, or set the class variable
``paths_read_properties = True`` on the model (ours) to read its plain properties too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from types import BuiltinMethodType, MethodType
from typing import Any, Final

from pydantic import BaseModel

from scenarist.errors import PathSyntaxError

__all__ = [
    "GENERAL",
    "NO_LAST",
    "NoMatch",
    "PathSyntaxError",
    "TracePath",
    "as_dumped",
    "compile_path",
    "register_plain_trace",
    "resolve",
    "validate_path",
]

ROOT: Final = "trace"


@dataclass(frozen=True, slots=True)
class NoMatch:
    """The value of a path that matched nothing; checks turn it into an ERROR result."""

    key: str

    def __str__(self) -> str:
        return f"No match for key: {self.key}"


# -- compiled form -----------------------------------------------------------------------

_WILDCARD: Final = object()


@dataclass(frozen=True, slots=True)
class _Segment:
    """One step of a path: which children to take, and whether to search all depths."""

    selectors: tuple[str | int | slice | object, ...]
    descendants: bool = False


@dataclass(frozen=True, slots=True)
class TracePath:
    """A parsed path; build it with :func:`compile_path`."""

    text: str
    segments: tuple[_Segment, ...]
    is_list: bool  # a wildcard, slice, union or descendant segment: always a list

    def resolve(self, root: Any) -> Any:
        """The value(s) this path selects in ``root``, or :class:`NoMatch`."""
        if not self.is_list:
            value = root
            for segment in self.segments:
                value = _child(value, segment.selectors[0])
                if value is _ABSENT:
                    return NoMatch(self.text)
            return value
        nodes = [root]
        for segment in self.segments:
            sources = [d for n in nodes for d in _descendants(n)] if segment.descendants else nodes
            nodes = [
                found
                for node in sources
                for selector in segment.selectors
                for found in _select(node, selector)
            ]
            if not nodes:
                return NoMatch(self.text)
        return nodes


# -- parsing -----------------------------------------------------------------------------

_NAME = re.compile(r"[^.\[\]\s]+")
_INT = re.compile(r"-?\d+")
_SLICE = re.compile(r"(-?\d*)\s*:\s*(-?\d*)(?:\s*:\s*(-?\d*))?")
_QUOTED = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")


def _fail(text: str, pos: int, what: str) -> PathSyntaxError:
    return PathSyntaxError(
        f"invalid path {text!r}: {what} at position {pos}; "
        "write paths like 'trace.last.outputs.answer' or 'trace.interactions[0].inputs'"
    )


def _parse_bracket(text: str, pos: int) -> tuple[tuple[str | int | slice | object, ...], int]:
    """Parse ``[...]`` starting after the ``[``; return the selectors and the end position."""
    end = text.find("]", pos)
    # A quoted key may itself contain ']': scan quoted strings explicitly.
    selectors: list[str | int | slice | object] = []
    i = pos
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise _fail(text, pos, "unclosed '['")
        char = text[i]
        if char == "*":
            selectors.append(_WILDCARD)
            i += 1
        elif char in "'\"":
            m = _QUOTED.match(text, i)
            if not m:
                raise _fail(text, i, "unterminated quoted key")
            raw = m.group(1) if m.group(1) is not None else m.group(2)
            selectors.append(re.sub(r"\\(.)", r"\1", raw))
            i = m.end()
        elif char == "?":
            raise _fail(text, i, "filter expressions are not supported")
        else:
            m = _SLICE.match(text, i)
            if m and ":" in m.group(0):
                start, stop, step = (int(g) if g else None for g in m.groups())
                if step == 0:
                    raise _fail(text, i, "slice step cannot be zero")
                selectors.append(slice(start, stop, step))
                i = m.end()
            else:
                m = _INT.match(text, i)
                if not m:
                    raise _fail(text, i, "expected an index, a quoted key, '*' or a slice")
                selectors.append(int(m.group(0)))
                i = m.end()
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "]":
            return tuple(selectors), i + 1
        raise _fail(text, i if end != -1 else pos, "expected ',' or ']'")


@lru_cache(maxsize=4096)
def compile_path(text: str) -> TracePath:
    """Parse ``text`` into a :class:`TracePath` (cached); raise ``ValueError`` if it is invalid."""
    if not isinstance(text, str):
        raise TypeError(f"a path must be a string, got {type(text).__name__}")
    if text != ROOT and not text.startswith((ROOT + ".", ROOT + "[")):
        raise PathSyntaxError(
            f"invalid path {text!r}: paths start with 'trace.', "
            f"for example 'trace.last.outputs' or 'trace.annotations.user_id'"
        )
    segments: list[_Segment] = []
    i = len(ROOT)
    n = len(text)
    while i < n:
        descendants = False
        if text.startswith("..", i):
            descendants = True
            i += 2
            if i < n and text[i] == "[":
                selectors, i = _parse_bracket(text, i + 1)
                segments.append(_Segment(selectors, True))
                continue
        elif text[i] == ".":
            i += 1
        elif text[i] == "[":
            selectors, i = _parse_bracket(text, i + 1)
            segments.append(_Segment(selectors))
            continue
        else:
            raise _fail(text, i, "expected '.' or '['")
        if i < n and text[i] == "*":
            segments.append(_Segment((_WILDCARD,), descendants))
            i += 1
            continue
        m = _NAME.match(text, i)
        if not m:
            raise _fail(text, i, "expected a name")
        segments.append(_Segment((m.group(0),), descendants))
        i = m.end()
    is_list = any(
        s.descendants or len(s.selectors) > 1 or not isinstance(s.selectors[0], str | int)
        for s in segments
    )
    return TracePath(text, tuple(segments), is_list)


def validate_path(text: str) -> str:
    """Return ``text`` if it is a valid path; raise ``ValueError`` saying why otherwise."""
    compile_path(text)
    return text


_LAST_OUTPUTS: Final = "trace.last.outputs"
#: What a registered ``last_outputs`` reader returns when the trace has no interaction, or
#: when the general walk must answer.
NO_LAST: Final = object()
GENERAL: Final = object()
_plain: dict[type[Any], Callable[[Any], Any]] = {}


def register_plain_trace(trace_type: type[Any], last_outputs: Callable[[Any], Any]) -> None:
    """Let :func:`resolve` read ``trace.last.outputs`` directly on this exact trace type.

    The default key of most checks, read by each of them: on the library's own ``Trace``
    (whose ``last`` and ``outputs`` are known) ``last_outputs(trace)`` answers with two
    attribute reads instead of a walk (or :data:`NO_LAST`, or :data:`GENERAL` to take the
    walk, which honours overrides); any subclass takes the general path.
    """
    _plain[trace_type] = last_outputs


def resolve(trace: Any, key: str) -> Any:
    """Resolve the path ``key`` against ``trace``.

    Returns the single value, a list (several matches, or a wildcard/slice/union/``..``
    path), or a :class:`NoMatch` whose ``str`` is ``No match for key: <key>``.
    """
    if key == _LAST_OUTPUTS:
        last_outputs = _plain.get(type(trace))
        if last_outputs is not None:
            value = last_outputs(trace)
            if value is NO_LAST:
                return NoMatch(key)
            if value is not GENERAL:
                return value if type(value) in _SCALARS else as_dumped(value)
    value = compile_path(key).resolve(trace)
    return value if type(value) in _SCALARS else as_dumped(value)


_SCALARS: Final = frozenset({str, int, float, bool, type(None), NoMatch})


def as_dumped(value: Any) -> Any:
    """``value`` as giskard-checks' dump of the trace holds it: pydantic models and
    dataclasses become dicts (python mode: dates, sets, tuples stay), in lists, tuples and
    dicts too. What paths resolve to, so ``Equals(expected_value={...})`` on a structured
    output compares what giskard compares; the walk itself reads the live objects. A value
    with nothing to convert is returned as it is (no copy)."""
    return _dumped(value) if _holds_objects(value) else value


def _holds_objects(value: Any) -> bool:
    kind = type(value)
    if kind in _SCALARS:
        return False
    if kind is dict:
        return any(_holds_objects(v) for v in value.values())
    if kind is list or kind is tuple or _is_sequence(value):
        return any(_holds_objects(v) for v in value)
    return isinstance(value, BaseModel) or (is_dataclass(value) and not isinstance(value, type))


def _dumped(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return _dumped(value.model_dump())
    if is_dataclass(value) and not isinstance(value, type):
        return _dumped({f.name: getattr(value, f.name) for f in fields(value)})
    kind = type(value)
    if kind is dict:
        return {k: _dumped(v) for k, v in value.items()}
    if kind is list:
        return [_dumped(v) for v in value]
    if kind is tuple:
        return tuple(_dumped(v) for v in value)
    if _is_sequence(value):  # the trace's interaction log, say: a list in the dump
        return [_dumped(v) for v in value]
    return value


# -- navigation over live objects ----------------------------------------------------------

_ABSENT: Final = object()


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _child(value: Any, selector: Any) -> Any:
    """The single child ``selector`` names in ``value``, or ``_ABSENT``."""
    if isinstance(selector, str):
        kind = type(value)
        if kind is dict:
            return value.get(selector, _ABSENT)
        if isinstance(value, BaseModel):
            if selector in kind.__pydantic_fields__:
                return getattr(value, selector)
            if not _readable_attribute(kind, selector):
                return _ABSENT
        elif isinstance(value, Mapping):
            return value.get(selector, _ABSENT)
        elif value is None:
            return _ABSENT
        elif _is_sequence(value):
            # a sequence has no named children, but for the properties of a tuple type
            # (a spy's recorded call: ``call_args.args``)
            if kind is not tuple and isinstance(getattr(kind, selector, None), property):
                return getattr(value, selector)
            return _ABSENT
        if selector.startswith("__"):
            return _ABSENT
        found = getattr(value, selector, _ABSENT)
        if isinstance(found, MethodType | BuiltinMethodType):
            return _ABSENT
        return found
    if type(value) is list or _is_sequence(value):
        try:
            return value[selector]
        except IndexError:
            return _ABSENT
    return _ABSENT


#: Per (model class, name): whether a path reads that attribute (see _readable_attribute).
_READABLE: dict[tuple[type, str], bool] = {}
_MAX_READABLE = 4096


def _readable_attribute(kind: type[BaseModel], name: str) -> bool:
    """Whether a path reads ``name``, not a field, on a model of class ``kind``: a computed
    field (in giskard's dump), an attribute scenarist's own classes define (``last``, the
    span totals; a subclass may override it), or any attribute of a class that sets
    ``paths_read_properties = True``.
    A user's plain property is not in giskard's dump: no match, as in giskard-checks."""
    key = (kind, name)
    known = _READABLE.get(key)
    if known is not None:
        return known
    if name in kind.__pydantic_computed_fields__ or getattr(kind, "paths_read_properties", False):
        readable = True
    else:  # not defined by any class (an extra field), or by one of ours (even overridden)
        owners = [c for c in kind.__mro__ if name in c.__dict__]
        readable = not owners or any(c.__module__.partition(".")[0] == "scenarist" for c in owners)
    if len(_READABLE) < _MAX_READABLE:
        _READABLE[key] = readable
    return readable


def _children(value: Any) -> Iterator[Any]:
    """The direct children of ``value``: list items, mapping values, model fields."""
    if isinstance(value, Mapping):
        yield from value.values()
    elif _is_sequence(value):
        yield from value
    elif isinstance(value, BaseModel):
        for name in type(value).__pydantic_fields__:
            yield getattr(value, name)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield getattr(value, f.name)


def _select(value: Any, selector: Any) -> Iterator[Any]:
    if selector is _WILDCARD:
        yield from _children(value)
    elif isinstance(selector, slice):
        if _is_sequence(value):
            yield from value[selector]
    else:
        found = _child(value, selector)
        if found is not _ABSENT:
            yield found


def _descendants(value: Any) -> Iterator[Any]:
    """``value`` and everything below it, in pre-order."""
    yield value
    for child in _children(value):
        yield from _descendants(child)
