"""``check_spec``: the check's spec in each verdict's details, without a copy per verdict.

giskard-checks writes ``check.to_spec()`` into every verdict's ``details["check_spec"]``.
A check run is a hot path (``bench/compare.py`` workload a: three checks a scenario, a
peak-RSS target), so scenarist makes one spec per check object and every verdict of that
check holds the same dict; a check built for one scenario still needs its own, so that one
is made cheaply (:func:`_plain_spec`) and, when equal to one made before, shared
(:data:`_interned`).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, PlainSerializer, WrapSerializer

from scenarist.checks._values import is_none
from scenarist.checks.base import SPEC_SLOT, Check
from scenarist.model._missing import MISSING, is_missing
from scenarist.model._registry import KindRegistered

__all__ = ["check_spec"]

#: A field of a plain class: its name and its ``exclude_if`` predicate (``None`` when it
#: only leaves ``None`` out, :data:`MISSING` when it only leaves ``MISSING`` out).
_Field = tuple[str, Any]

#: Per check class, the fields its spec is read from directly, or ``None`` when only
#: ``to_spec()`` can make it (see :func:`_plain_fields`).
_PLAIN: dict[type[Check], tuple[_Field, ...] | None] = {}

#: Specs made by :func:`_plain_spec`, by class and values, so equal checks share one
#: (workload a builds 2,000 equal ``StringMatching(keyword="ok")``). Bounded: past the
#: limit, new specs are kept by their checks only.
_interned: dict[tuple[Any, ...], dict[str, Any]] = {}
MAX_INTERNED = 4096

_ATOMS = (str, int, bool)
_BASE_SERIALIZER = KindRegistered.__pydantic_decorators__.model_serializers["_dump_with_kind"].func


def _plain_fields(cls: type[Check]) -> tuple[_Field, ...] | None:
    """The fields whose values, as they are, make ``cls``'s spec; ``None`` when some
    serialisation of ``cls`` could change a value (its own ``to_spec``, serializers,
    computed fields, aliases)."""
    decorators = cls.__pydantic_decorators__
    serializers = decorators.model_serializers
    # a class of ours whose own serializer and model_dump differ from the base's only for
    # functions, which a spec leaves out, says so (FnCheck)
    as_base = getattr(cls, "_spec_dumps_as_base", False) is True
    if (
        cls.to_spec is not Check.to_spec
        or decorators.field_serializers
        or decorators.computed_fields
        or set(serializers) != {"_dump_with_kind"}
        or (serializers["_dump_with_kind"].func is not _BASE_SERIALIZER and not as_base)
        or (cls.model_dump is not BaseModel.model_dump and not as_base)
        or cls.model_config.get("serialize_by_alias")
    ):
        return None
    fields: list[_Field] = []
    for name, info in cls.__pydantic_fields__.items():
        if name in ("name", "description") or info.exclude:
            continue
        if any(isinstance(m, PlainSerializer | WrapSerializer) for m in info.metadata):
            return None
        exclude_if: Any = info.exclude_if
        if exclude_if is is_none:  # None values are left out anyway
            exclude_if = None
        elif exclude_if is is_missing:  # compared by identity: no call per value
            exclude_if = MISSING
        fields.append((name, exclude_if))
    return tuple(fields)


def _plain_spec(check: Check, fields: tuple[_Field, ...]) -> dict[str, Any] | None:
    """``check.to_spec()`` read from the check's values (an equal one made before if
    any), or ``None`` when one of them is not a JSON atom nor an empty list or dict (then
    only pydantic can say how it dumps)."""
    values = check.__dict__
    spec: dict[str, Any] = {"kind": check.kind} if check.kind is not None else {}
    key: list[Any] = [type(check)]  # the values with their types: 1, 1.0 and True differ
    for name, exclude_if in fields:
        value = values[name]
        if value is None:
            continue
        if exclude_if is not None and (
            value is MISSING if exclude_if is MISSING else exclude_if(value)
        ):
            continue
        kind = type(value)
        if kind in _ATOMS or (kind is float and math.isfinite(value)):
            spec[name] = value
            key += (name, kind, value)
        elif (kind is dict or kind is list) and not value:
            spec[name] = kind()
            key += (name, kind)
        else:
            return None
    found = _interned.get(shared := tuple(key))
    if found is not None:
        return found
    if len(_interned) < MAX_INTERNED:
        _interned[shared] = spec
    return spec


def _make(check: Check) -> dict[str, Any]:
    cls = type(check)
    try:
        fields = _PLAIN[cls]
    except KeyError:
        fields = _PLAIN[cls] = _plain_fields(cls)
    if fields is not None:
        spec = _plain_spec(check, fields)
        if spec is not None:
            return spec
    try:
        return check.to_spec()
    except Exception:  # a user's to_spec that raises: the verdict still says which kind
        return {"kind": check.kind}


def check_spec(check: Check) -> dict[str, Any]:
    """``check.to_spec()``, made once per check and shared: what each verdict's
    ``details["check_spec"]`` holds (giskard-checks writes it there).

    The first verdict of a check makes it; later verdicts of the same check object hold
    the same dict, and so may verdicts of an equal check: read it, do not change it.
    Assigning one of the check's fields makes the next verdict make it again; a value
    changed in place (``check.checks.append(...)``) is not seen. A ``to_spec`` that
    raises gives ``{"kind": ...}``.
    """
    try:
        spec: dict[str, Any] | None = SPEC_SLOT.__get__(check, Check)
    except AttributeError:  # a check made without __init__ (model_copy, model_construct)
        spec = None
    if spec is None:
        spec = _make(check)
        SPEC_SLOT.__set__(check, spec)
    return spec
