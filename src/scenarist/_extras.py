"""The message for a missing optional extra, with the exact command that installs it."""

from __future__ import annotations

__all__ = ["missing_extra"]


def missing_extra(extra: str, error: ImportError) -> ImportError:
    """An ``ImportError`` naming the module that is missing and the install command.

    Raise it ``from`` the original error where an optional dependency is imported::

        try:
            import fastapi
        except ImportError as exc:
            raise missing_extra("server", exc) from exc
    """
    name = error.name or str(error)
    return ImportError(
        f"scenarist needs {name!r} here, which is not installed; "
        f"run: pip install 'scenarist[{extra}]'"
    )
