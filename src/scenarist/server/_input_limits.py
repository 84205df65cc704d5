"""What every route refuses before its handler runs: values no store or page can hold.

:class:`CheckedRoute` is the route class of every router (``APIRouter(route_class=...)``):

- **URL parameters with a NUL** (``%00``) in a path parameter or a query value are 422
  naming the parameter (``path.run_id``, ``query.name``): no id or name holds one, and
  PostgreSQL refuses NUL in text outright (a read would fail as a server error).
- **JSON bodies** are parsed through :mod:`scenarist._json_limits`: nesting deeper than
  ``MAX_DEPTH`` levels, ``NaN``/``Infinity`` and unpaired surrogates are 422 naming the
  field (``steps.0.cost_usd``), before pydantic or the store see them.

``POST /api/runs`` reads its body itself (JSON or JSON Lines); the run-log codec applies
the same limits to each record (``scenarist.formats.runlog``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from scenarist import _json_limits

__all__ = ["CheckedRequest", "CheckedRoute", "InvalidInput"]

_NUL = "contains a NUL character (%00), which no id or name holds"


class InvalidInput(HTTPException):
    """A 422 with the fields at fault (an ``HTTPException``, so FastAPI's body reading
    passes it through instead of turning it into a 400)."""

    def __init__(self, message: str, fields: list[dict[str, str]]) -> None:
        super().__init__(status_code=422, detail=message)
        self.fields = fields


class CheckedRequest(Request):
    """A request whose JSON body is parsed within the limits of ``_json_limits``."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = _json_limits.loads(await self.body())
            except _json_limits.JsonLimitError as exc:
                field = exc.field or "(body)"
                raise InvalidInput(
                    f"{field}: {exc.problem}",
                    [{"field": field, "message": exc.problem, "type": exc.kind}],
                ) from exc
        return self._json


def _refuse_nul(request: Request) -> None:
    bad = [f"path.{name}" for name, value in request.path_params.items() if "\x00" in str(value)]
    bad += [
        f"query.{name.replace(chr(0), '%00')}"
        for name, value in request.query_params.multi_items()
        if "\x00" in value or "\x00" in name
    ]
    if bad:
        raise InvalidInput(
            f"{bad[0]}: {_NUL}", [{"field": field, "message": _NUL, "type": "nul"} for field in bad]
        )


class CheckedRoute(APIRoute):
    """An ``APIRoute`` whose handler sees only inputs within the limits above."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            _refuse_nul(request)
            return await handler(CheckedRequest(request.scope, request.receive))

        return checked
