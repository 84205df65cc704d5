"""JSON answers every reader parses, whatever is stored.

Ingestion refuses ``NaN`` and infinities (``scenarist._json_limits``), but the library
writes to the database directly, and a store filled by an older version may hold them.
Python's ``json`` would write them as ``NaN``/``Infinity`` (not JSON) or, as Starlette
does, raise, so the page would answer 500 forever. :class:`FiniteJSONResponse` writes
them as ``null`` instead: the default answer class of the app and of the pages' JSON
twins. (Answers with a response model already go through pydantic, which does the same.)
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from scenarist._json_limits import finite

__all__ = ["FiniteJSONResponse"]


class FiniteJSONResponse(JSONResponse):
    """A ``JSONResponse`` that writes non-finite numbers as ``null``."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:  # "Out of range float values are not JSON compliant"
            return super().render(finite(content))
