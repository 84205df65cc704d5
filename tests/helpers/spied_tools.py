"""A module whose functions the WithSpy tests patch."""

from __future__ import annotations


def lookup(item: str, source: str = "web") -> dict[str, str]:
    return {"found": item, "source": source}


class Client:
    """A class whose method the WithSpy tests patch."""

    def send(self, message: str, *, urgent: bool = False) -> str:
        return f"sent {message}{' (urgent)' if urgent else ''}"
