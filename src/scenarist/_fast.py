"""Building already-valid pydantic models without validation, on the run's hot path.

The runner creates thousands of interactions and results per second from values it
produced itself. ``BaseModel.model_construct`` skips validation but still walks every
field's defaults (several microseconds a call); :func:`construct` takes every field
explicitly and only sets the instance state, which is what ``model_construct`` ends up
doing. Callers must pass a value for every field.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["construct", "replace"]

M = TypeVar("M", bound=BaseModel)

_setattr = object.__setattr__


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` whose fields are exactly ``values`` (no validation)."""
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", values)
    _setattr(obj, "__pydantic_fields_set__", set(values))
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj


def replace(model: M, **changes: Any) -> M:
    """A shallow copy of ``model`` with some fields replaced (no validation)."""
    cls = type(model)
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", {**model.__dict__, **changes})
    _setattr(obj, "__pydantic_fields_set__", model.__pydantic_fields_set__ | changes.keys())
    _setattr(obj, "__pydantic_extra__", model.__pydantic_extra__)
    private = model.__pydantic_private__
    _setattr(obj, "__pydantic_private__", None if private is None else dict(private))
    return obj
