"""A module whose function the WithSpy tests patch."""

from __future__ import annotations


def lookup(item: str) -> dict[str, str]:
    return {"found": item}
