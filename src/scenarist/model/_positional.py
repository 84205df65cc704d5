"""``Positional``: pydantic models that also accept Veval's positional construction.

Veval's types are dataclasses, so ported code may build them positionally
(``ScenarioItem("refund", None, "Where is my refund?")``). A model listing Veval's
field order in ``__positional__`` accepts the same arguments, and its signature says
so (``inspect.signature`` shows them as positional-or-keyword, in that order, then
the model's other fields as keyword-only). Keyword construction is unchanged. A name in
``__positional__`` that is no field's (nor alias's) is a derived value of Veval's: the
model's ``mode="before"`` validator reads or drops it.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from pydantic import BaseModel

__all__ = ["Positional"]


class _Factory:
    """The default shown in a signature for a field built by a default factory."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _default(field: Any) -> Any:
    if field.is_required():
        return inspect.Parameter.empty
    if field.default_factory is not None:
        return _FACTORY
    return field.default


class Positional(BaseModel):
    """A model whose first fields can be given by position, in ``__positional__`` order."""

    __positional__: ClassVar[tuple[str, ...]] = ()

    def __init__(self, /, *args: Any, **data: Any) -> None:
        if args:
            order = type(self).__positional__
            if len(args) > len(order):
                raise TypeError(
                    f"{type(self).__name__}() takes at most {len(order)} positional "
                    f"arguments ({', '.join(order)}), got {len(args)}"
                )
            for name, value in zip(order, args, strict=False):
                if name in data:
                    raise TypeError(f"{type(self).__name__}() got multiple values for {name!r}")
                data[name] = value
        super().__init__(**data)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._install_signature()

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        # Building a deferred model sets pydantic's own signature again: put ours back.
        super().__pydantic_on_complete__()
        cls._install_signature()

    @classmethod
    def _install_signature(cls) -> None:
        fields = cls.model_fields
        by_input_name = {
            choice: name for name, field in fields.items() for choice in _input_names(name, field)
        }
        # A name that is no field's is a derived value the model's validator reads (or drops).
        taken = {by_input_name[n] for n in cls.__positional__ if n in by_input_name}
        params = [
            inspect.Parameter(
                n,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=_default(fields[by_input_name[n]]) if n in by_input_name else None,
            )
            for n in cls.__positional__
        ]
        params += [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_default(field))
            for name, field in fields.items()
            if name not in taken
        ]
        cls.__signature__ = inspect.Signature(params)


def _input_names(name: str, field: Any) -> list[str]:
    """The names a field is given by: its own and its validation aliases."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices is not None:
        return [name, *(c for c in choices if isinstance(c, str))]
    return [name, alias] if isinstance(alias, str) else [name]
