"""JSON errors (``{"error": {"code", "message", ...}}``) and the request-size limit.

Client mistakes get 4xx, never 500: unparseable JSON is 400 ``invalid_json``; a body or
parameter that does not fit the schema is 422 ``invalid_payload`` with one entry per bad
field (``field`` is the dotted path, ``message`` says what is wrong); a scenarist
``UserError`` raised while storing (a name too long, a bad cursor) is 422 too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scenarist._extras import missing_extra
from scenarist.errors import UserError

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict, ValidationError
    from sqlalchemy.exc import DataError, DBAPIError
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("server", exc) from exc

__all__ = [
    "ERROR_RESPONSES",
    "BodySizeLimit",
    "ErrorBody",
    "error_response",
    "install_error_handlers",
    "payload_error",
    "validation_fields",
]

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    421: "host_not_allowed",
    422: "invalid_payload",
    429: "rate_limited",
}


def error_response(
    status: int,
    message: str,
    *,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = {"error": {"code": code or _CODES.get(status, "error"), "message": message, **extra}}
    return JSONResponse(body, status_code=status, headers=dict(headers) if headers else None)


def validation_fields(errors: Any, prefix: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Pydantic errors as ``{"field", "message", "type"}`` (``body.`` left off)."""
    fields = []
    for error in errors:
        loc = [*prefix, *error.get("loc", ())]
        if loc and loc[0] == "body":
            loc = loc[1:]
        fields.append(
            {
                "field": ".".join(str(part) for part in loc) or "(body)",
                "message": str(error.get("msg", "invalid")),
                "type": str(error.get("type", "")),
            }
        )
    return fields


def payload_error(fields: list[dict[str, Any]], *, message: str | None = None) -> JSONResponse:
    """422 ``invalid_payload`` listing ``fields``; ``message`` defaults to the first one."""
    if message is None:
        first = fields[0] if fields else {"field": "(body)", "message": "invalid"}
        message = f"{first['field']}: {first['message']}"
        if len(fields) > 1:
            message += f" (and {len(fields) - 1} more)"
    return error_response(422, message, fields=fields)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError | ValidationError)
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, "the request body is not valid JSON", code="invalid_json")
    return payload_error(validation_fields(errors))


async def _user_error(request: Request, exc: Exception) -> JSONResponse:
    return error_response(422, str(exc))


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(_allowed_methods(request)) or headers.get("Allow", "")
    fields = getattr(exc, "fields", None)  # _input_limits.InvalidInput names them
    extra = {"fields": fields} if fields is not None else {}
    return error_response(exc.status_code, str(exc.detail), headers=headers or None, **extra)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette's 405 names only the first
    route that matched the path, and one path often has a route per method)."""
    from starlette.routing import Match

    routes = request.app.router.routes
    return [
        method
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
        if any(r.matches({**request.scope, "method": method})[0] is Match.FULL for r in routes)
    ]


class ErrorBody(BaseModel):
    """Every error answer: ``{"error": {"code", "message", ...}}``."""

    class Detail(BaseModel):
        model_config = ConfigDict(extra="allow")

        code: str
        message: str

    error: Detail


def _described(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _described("the body is not valid JSON"),
    401: _described("no API key, or a wrong one"),
    403: _described("the key lacks the scope, or the request came from another origin"),
    404: _described("not found"),
    413: _described("the body is larger than the server accepts"),
    415: _described("the body is not JSON (``Content-Type``)"),
    421: _described("the ``Host`` is not a name this server answers to"),
    422: _described("the request does not fit the schema (``fields`` lists why)"),
    429: _described("rate limited (``Retry-After``)"),
    503: _described("the database is locked or unreachable (``database_unavailable``)"),
}
"""The error statuses every API operation may answer, for the OpenAPI document."""


def _unstorable_cause(exc: BaseException) -> BaseException | None:
    """The value error behind a database error, if there is one: Python's own
    (``OverflowError``, ``UnicodeEncodeError``) or the driver's ``DataError`` (asyncpg's
    "value out of int32 range" reaches SQLAlchemy as a plain ``DBAPIError``)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, OverflowError | UnicodeEncodeError | DataError) or (
            type(seen).__name__ == "DataError"
        ):
            return seen
        seen = getattr(seen, "orig", None) or seen.__cause__ or seen.__context__
    return None


async def _unstorable(request: Request, exc: Exception) -> JSONResponse:
    """A value the database cannot hold, found while writing it (the transaction is
    rolled back): a number beyond the column's range, text with an unpaired UTF-16
    surrogate (``"\\ud800"`` parses as JSON but is not UTF-8). Any other database error
    stays a server error."""
    cause = _unstorable_cause(exc)
    if cause is None:
        raise exc
    if isinstance(cause, UnicodeEncodeError):
        message = "a text value contains an unpaired UTF-16 surrogate, which cannot be stored"
    elif isinstance(cause, OverflowError):
        message = "a number is too large to be stored"
    else:
        reason = str(getattr(cause, "orig", None) or cause).strip().splitlines()
        message = f"a value cannot be stored: {reason[0][:300] if reason else type(cause)}"
    return error_response(422, message, code="invalid_payload")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(ValidationError, _validation)
    app.add_exception_handler(UserError, _user_error)
    for unstorable in (OverflowError, UnicodeEncodeError, DBAPIError):
        app.add_exception_handler(unstorable, _unstorable)
    app.add_exception_handler(StarletteHTTPException, _http)


class BodySizeLimit:
    """Refuse request bodies over ``max_bytes`` with 413, declared or streamed.

    A ``Content-Length`` over the limit is answered before the body is read; a chunked
    body is counted as it arrives and cut off at the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> str:
        return f"the request body is larger than this server's limit of {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    response = error_response(413, self._too_large())
                    await response(scope, receive, send)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(status_code=413, detail=self._too_large())
            return message

        await self.app(scope, limited, send)
