"""The ``MISSING`` sentinel: "not given", distinct from ``None`` (which is a real value)."""

from __future__ import annotations

from typing import Any, Final, final

__all__ = ["MISSING", "Missing", "is_missing"]


@final
class Missing:
    """Type of :data:`MISSING`; a single instance exists."""

    _instance: Missing | None = None
    __slots__ = ()

    def __new__(cls) -> Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"

    def __copy__(self) -> Missing:
        return self

    def __deepcopy__(self, memo: Any) -> Missing:
        return self


MISSING: Final = Missing()


def is_missing(value: object) -> bool:
    """Whether ``value`` is the :data:`MISSING` sentinel."""
    return value is MISSING
