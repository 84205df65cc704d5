"""Building already-valid pydantic models without validation, on the run's hot path.

The runner creates thousands of interactions and results per second from values it
produced itself. ``BaseModel.model_construct`` skips validation but still walks every
field's defaults (several microseconds a call); :func:`construct` takes every field
explicitly and only sets the instance state, which is what ``model_construct`` ends up
doing. Callers must pass a value for every field.

Every instance built here shares one "fields set" per class (all fields were given, so
the set never changes: pydantic only ever adds names that are already in it, and copies
it before updating). That keeps one garbage-collected container per object off the hot
path, which matters when a suite keeps hundreds of thousands of results alive.

Validated definitions (checks, scenarios) can share theirs too: :func:`share_fields_set`
swaps a freshly validated model's set for the one every model with the same set uses (a
set costs 216 bytes, more than most checks' fields). Definitions built directly can share
their private state the same way (:func:`shared_private`: every plain interaction spec
has the same one). Shared state is only safe while nobody changes it, so the classes that
share call :func:`own_fields_set` before any attribute change (``__setattr__``,
``__delattr__``, ``model_fields_set``): the model gets its own copies first, as pydantic's
copies already do.

This is the one module that touches pydantic's internals; each trick says what it buys.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = [
    "SharedFieldsSet",
    "construct",
    "constructor",
    "field_values",
    "own_fields_set",
    "private_state",
    "replace",
    "share_fields_set",
    "shared_fields_set",
    "shared_private",
]

M = TypeVar("M", bound=BaseModel)

_setattr = object.__setattr__
_all_fields: dict[type[BaseModel], set[str]] = {}


def _fields_of(cls: type[BaseModel]) -> set[str]:
    fields = _all_fields.get(cls)
    if fields is None:
        fields = _all_fields[cls] = set(cls.__pydantic_fields__)
    return fields


#: Fields sets shared by validated models, by content (see the module docstring).
_shared_sets: dict[frozenset[str], set[str]] = {}
_shared_ids: set[int] = set()
#: Distinct sets shared at most (a check has a handful of fields; past this, stop sharing).
MAX_SHARED_SETS = 4096


def share_fields_set(model: BaseModel) -> None:
    """Give ``model`` the shared fields set equal to its own (after validation)."""
    fields_set = model.__pydantic_fields_set__
    key = frozenset(fields_set)
    shared = _shared_sets.get(key)
    if shared is None:
        if len(_shared_sets) >= MAX_SHARED_SETS:
            return
        shared = _shared_sets[key] = set(key)
        _shared_ids.add(id(shared))  # kept alive by the table, so the id stays its own
    _setattr(model, "__pydantic_fields_set__", shared)


def shared_fields_set(names: set[str]) -> set[str]:
    """The shared fields set holding ``names``, for :func:`construct` (copied by
    :func:`own_fields_set` before a change, as every shared set)."""
    key = frozenset(names)
    shared = _shared_sets.get(key)
    if shared is None:
        shared = _shared_sets[key] = set(key)
        _shared_ids.add(id(shared))
    return shared


def own_fields_set(model: BaseModel) -> None:
    """Before ``model`` changes: replace a shared fields set (and shared private state)
    with a copy of its own."""
    fields_set = model.__pydantic_fields_set__
    if id(fields_set) in _shared_ids:
        _setattr(model, "__pydantic_fields_set__", set(fields_set))
    private = model.__pydantic_private__
    if private is not None and id(private) in _shared_ids:
        _setattr(model, "__pydantic_private__", dict(private))


class SharedFieldsSet(BaseModel):
    """A model validated by the thousand (checks, scenarios) that shares its fields set
    with its equals, and takes its own copy before anything changes it."""

    def model_post_init(self, context: Any, /) -> None:
        share_fields_set(self)

    def __setattr__(self, name: str, value: Any) -> None:
        own_fields_set(self)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        own_fields_set(self)
        super().__delattr__(name)

    @property
    def model_fields_set(self) -> set[str]:
        """As :attr:`pydantic.BaseModel.model_fields_set` (this model's own set: changing
        it changes no other model)."""
        own_fields_set(self)
        return self.__pydantic_fields_set__


def construct(
    cls: type[M],
    values: dict[str, Any],
    private: dict[str, Any] | None = None,
    fields_set: set[str] | None = None,
) -> M:
    """An instance of ``cls`` whose fields are exactly ``values`` (no validation);
    ``private``: its private state, one declared with :func:`shared_private`;
    ``fields_set``: the fields given explicitly, one from :func:`shared_fields_set` (all
    of them by default)."""
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", values)
    if fields_set is None:
        fields_set = _all_fields.get(cls) or _fields_of(cls)
    _setattr(obj, "__pydantic_fields_set__", fields_set)
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", private)
    return obj


def constructor(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """:func:`construct` bound to ``cls``, for the hottest paths (a span per traced step):
    one call instead of two and no per-call lookup of the class's field set."""
    new = cls.__new__
    fields: set[str] | None = None

    def build(values: dict[str, Any]) -> M:
        nonlocal fields
        if fields is None:
            fields = _fields_of(cls)
        obj = new(cls)
        _setattr(obj, "__dict__", values)
        _setattr(obj, "__pydantic_fields_set__", fields)
        _setattr(obj, "__pydantic_extra__", None)
        _setattr(obj, "__pydantic_private__", None)
        return obj

    return build


def replace(model: M, **changes: Any) -> M:
    """A shallow copy of ``model`` with some fields replaced (no validation)."""
    cls = type(model)
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", {**model.__dict__, **changes})
    fields_set = model.__pydantic_fields_set__
    if not fields_set.issuperset(changes):
        fields_set = fields_set | changes.keys()
    _setattr(obj, "__pydantic_fields_set__", fields_set)
    _setattr(obj, "__pydantic_extra__", model.__pydantic_extra__)
    private = model.__pydantic_private__
    _setattr(obj, "__pydantic_private__", None if private is None else dict(private))
    return obj


#: ``field_values(model)``: the dict holding ``model``'s field values, to write in place:
#: no validation, no ``__setattr__``, even on a frozen model. Only for a model this code
#: owns and nobody else has seen: a built-in check's fresh verdict being stamped
#: (``runner._stamp``), a span while the call it records finishes (``RunRecorder.close``,
#: captured LLM calls). Buys: stamping a verdict in place rather than building a second
#: one saves ~2.5 µs a scenario of ``compare.py`` workload a (three checks; 42-44 against
#: 45-47 µs a ``Scenario.run`` on CPython 3.11, ~6 %). For spans, pydantic's
#: ``__setattr__`` costs ~0.4 µs a field more than a dict write and closing a span writes
#: four to seven (``bench/tracing_overhead.py``, spans of ~5 µs). An ``attrgetter``: no
#: Python frame per call.
field_values: Callable[[BaseModel], dict[str, Any]] = attrgetter("__dict__")


def shared_private(private: dict[str, Any]) -> dict[str, Any]:
    """Declare ``private`` (a module constant) private state that models built with
    ``construct(cls, values, private)`` share; :func:`own_fields_set` copies it before
    such a model changes (``cls`` must derive from :class:`SharedFieldsSet`).

    Buys: one dict (~180 bytes) per plain interaction spec, five per scenario of
    ``compare.py`` workload a (a definition is ~4.4 KiB)."""
    _shared_ids.add(id(private))
    return private


#: ``private_state(model)``: ``model``'s private attributes as a dict, to read them on the
#: hot path (``model`` must declare some: pydantic then always gives it the dict). Buys: a
#: private attribute read through pydantic's ``__getattr__`` costs ~3 µs; the runner reads
#: one per interaction (``interactions.recorded``), five per scenario of ``compare.py``
#: workload a (~45 µs a scenario), against ~0.1 µs here.
private_state: Callable[[BaseModel], dict[str, Any]] = attrgetter("__pydantic_private__")
