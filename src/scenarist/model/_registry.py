"""Kind registries: pydantic base classes whose subclasses are rebuilt from ``{"kind": ...}``.

Checks and interaction specs are both families of small typed configs registered under a
``kind`` string. A dict with a ``kind`` validates into the registered subclass; dumping an
instance writes its ``kind`` first. Subclasses forbid unknown fields, so a typo in a
hand-written scenario file fails loudly instead of producing a check that asserts nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import (
    ConfigDict,
    ModelWrapValidatorHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from scenarist.model._construct import SharedFieldsSet

__all__ = ["KindRegistered", "family", "registered_families"]

M = TypeVar("M", bound="KindRegistered")

_FAMILIES: dict[str, type[KindRegistered]] = {}
"""Each family's base (``Check``, ``BaseJudge``...) by its ``_family`` name."""


def registered_families(*names: str) -> list[type[KindRegistered]]:
    """The bases of the families ``names`` that are loaded, in that order."""
    return [_FAMILIES[name] for name in names if name in _FAMILIES]


def family(name: str, home: str) -> type[KindRegistered]:
    """The base class of the family ``name``, importing ``home`` (its module) if it has not
    been loaded yet.

    For a model that holds components of a layer above it (a stored ``ScenarioItem`` holds
    checks): it names the family as data, as a lazy kind names its module, instead of
    importing the layer above.
    """
    if name not in _FAMILIES:
        importlib.import_module(home)
    return _FAMILIES[name]


class KindRegistered(SharedFieldsSet):  # thousands of checks: a few fields sets
    """Base of a family of models registered by ``kind`` (see the module docstring)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", arbitrary_types_allowed=True)

    # None until registered, as in giskard-checks (an unregistered check dumps "kind": None)
    kind: ClassVar[str | None] = None
    _kinds: ClassVar[dict[str, type[KindRegistered]]]
    _lazy_kinds: ClassVar[dict[str, str]]
    _family: ClassVar[str] = "component"

    def __class_getitem__(cls, params: Any) -> Any:
        # ``Check[In, Out, TraceType]``, ``InteractionSpec[...]`` as in giskard-checks:
        # the parameters document types for readers and checkers; at runtime the class
        # itself is returned, so ``class MyCheck(Check[str, str, Trace[str, str]])`` works.
        return cls

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_kinds" not in cls.__dict__ and not any(
            "_kinds" in b.__dict__ for b in cls.__mro__[1:-1]
        ):
            cls._kinds = {}
            cls._lazy_kinds = {}
            _FAMILIES.setdefault(cls._family, cls)

    @classmethod
    def register_lazy(cls, kinds: dict[str, str]) -> None:
        """Declare kinds whose classes live in modules imported on first use
        (``{"kind": "module.path"}``), to keep ``import scenarist`` light."""
        cls._lazy_kinds.update(kinds)

    @classmethod
    def _load_lazy(cls, kind: str | None = None) -> None:
        pending = cls._lazy_kinds if kind is None else {kind: cls._lazy_kinds.get(kind, "")}
        for name, module in list(pending.items()):
            if module and name not in cls._kinds:
                importlib.import_module(module)

    @classmethod
    def register(cls: type[M], kind: str) -> Callable[[type[M]], type[M]]:
        """Class decorator: register a subclass under ``kind`` (a duplicate is an error)."""
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"kind must be a non-empty string, got {kind!r}")

        def decorator(subclass: type[M]) -> type[M]:
            registry = cls._kinds
            existing = registry.get(kind)
            if existing is not None and existing is not subclass:
                raise ValueError(
                    f"{cls._family} kind {kind!r} is already registered by "
                    f"{existing.__module__}.{existing.__qualname__}; choose another kind"
                )
            subclass.kind = kind
            registry[kind] = subclass
            return subclass

        return decorator

    @classmethod
    def kinds(cls) -> list[str]:
        """The registered kinds, sorted."""
        cls._load_lazy()
        return sorted(cls._kinds)

    @classmethod
    def kind_class(cls, kind: str) -> type[KindRegistered]:
        """The class registered under ``kind``; ``ValueError`` naming the known kinds if none."""
        if kind not in cls._kinds and kind in cls._lazy_kinds:
            cls._load_lazy(kind)
        try:
            return cls._kinds[kind]
        except KeyError:
            cls._load_lazy()
            raise ValueError(
                f"unknown {cls._family} kind {kind!r}; registered kinds: "
                f"{', '.join(sorted(cls._kinds))}"
            ) from None

    @model_validator(mode="wrap")
    @classmethod
    def _dispatch_on_kind(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        if isinstance(data, dict) and "kind" in data:
            target = cls.kind_class(data["kind"])
            rest = {k: v for k, v in data.items() if k != "kind"}
            if target is cls:
                return handler(rest)
            if not issubclass(target, cls):
                raise ValueError(f"kind {data['kind']!r} is not a {cls.__name__}")
            return target.model_validate(rest)
        if isinstance(data, dict) and not cls.kind and "_kinds" in cls.__dict__:
            # Only the family's base needs a kind to know what to build; an unregistered
            # subclass constructs (as in giskard-checks) but cannot be loaded from JSON.
            article = "an" if cls._family[:1] in "aeiou" else "a"
            raise ValueError(  # kinds() loads the lazy ones: the list is never empty
                f"{article} {cls._family} needs a 'kind' field; registered kinds: "
                f"{', '.join(cls.kinds())}"
            )
        return handler(data)

    @model_serializer(mode="wrap")
    def _dump_with_kind(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            if self.kind is None and info.exclude_none:  # an unregistered one, as giskard
                return data
            return {"kind": self.kind, **data}
        return data
