"""Two programs' JSON results compared leaf by leaf (the whole-program differentials)."""

from __future__ import annotations

from typing import Any

ABSENT = "<absent>"


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its dotted path (list items by index); an empty
    container is a leaf holding its type's name."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return {path: value}
    out: dict[str, Any] = {path: type(value).__name__} if not value else {}
    for key, child in items:
        out.update(leaves(child, f"{path}.{key}" if path else str(key)))
    return out


def differences(theirs: Any, ours: Any) -> dict[str, tuple[Any, Any]]:
    """The leaves that differ, by path: ``(theirs, ours)``, :data:`ABSENT` where missing."""
    a, b = leaves(theirs), leaves(ours)
    return {
        path: (a.get(path, ABSENT), b.get(path, ABSENT))
        for path in sorted(set(a) | set(b))
        if a.get(path, ABSENT) != b.get(path, ABSENT)
    }
