"""``/docs``: the API reference, rendered here from the OpenAPI document (no CDN).

FastAPI's Swagger UI and ReDoc pages load their scripts from a CDN, so offline (where
scenarist is meant to run) they were blank. This page is server-rendered HTML in the
dashboard's layout, made from ``app.openapi()``: the operations by tag (method, path,
summary, parameters, body, the responses particular to it), the error answers every
operation may give, listed once, and the schemas the API names. It needs no script.
``/openapi.json`` stays the machine-readable description (the JSON twin); ``/redoc``
redirects here. Public, as the OpenAPI document is: it holds no project data.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from scenarist.server._input_limits import CheckedRoute
from scenarist.server.dashboard._render import render

__all__ = ["ApiDocsPage", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)

_METHODS = ("get", "post", "put", "patch", "delete")


class ApiField(BaseModel):
    """A parameter of an operation, or a property of a schema."""

    name: str
    type: str
    required: bool
    where: str = ""
    """``path``, ``query``, ``header`` (parameters only)."""
    description: str = ""


class ApiResponse(BaseModel):
    status: str
    description: str
    type: str = ""


class ApiOperation(BaseModel):
    method: str
    path: str
    anchor: str
    summary: str
    description: str
    parameters: list[ApiField]
    body: str = ""
    """The request body's type (a schema name, or a type), empty without one."""
    responses: list[ApiResponse]


class ApiSection(BaseModel):
    tag: str
    operations: list[ApiOperation]


class ApiSchema(BaseModel):
    name: str
    description: str
    fields: list[ApiField]
    type: str = ""
    """The schema's type when it has no properties (an enum, a list...)."""


class ApiDocsPage(BaseModel):
    title: str
    version: str
    openapi: str = "/openapi.json"
    common_responses: list[ApiResponse]
    """Answers every operation may give (listed once, not on each operation)."""
    sections: list[ApiSection]
    schemas: list[ApiSchema]


def type_of(schema: Any) -> str:
    """A short type for a JSON Schema: ``RunRecord``, ``list[str]``, ``int | null``..."""
    if not isinstance(schema, dict) or not schema:
        return "any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(repr(value) for value in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " | ".join(dict.fromkeys(type_of(part) for part in schema[union]))
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return type_of(schema["allOf"][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(type_of({**schema, "type": one}) for one in kind)
    if kind == "array":
        return f"list[{type_of(schema.get('items'))}]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"dict[str, {type_of(extra)}]" if isinstance(extra, dict) else "object"
    names = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
    if isinstance(kind, str):
        shown = names.get(kind, kind)
        return f"{shown} ({schema['format']})" if "format" in schema else shown
    return "any"


def _text(value: Any) -> str:
    """A docstring's text for the page: reStructuredText's ````code```` as Markdown's."""
    return str(value or "").replace("``", "`")


def _response(status: str, answer: dict[str, Any]) -> ApiResponse:
    content = answer.get("content") or {}
    media: dict[str, Any] = next(iter(content.values()), {})
    shown = type_of(media.get("schema")) if media.get("schema") else ""
    return ApiResponse(
        status=status,
        description=_text(answer.get("description")),
        type="" if shown == "any" else shown,
    )


def _operation(path: str, method: str, spec: dict[str, Any], common: set[str]) -> ApiOperation:
    parameters = [
        ApiField(
            name=str(parameter.get("name", "")),
            type=type_of(parameter.get("schema")),
            required=bool(parameter.get("required")),
            where=str(parameter.get("in", "")),
            description=_text(parameter.get("description")),
        )
        for parameter in spec.get("parameters", [])
    ]
    body = ""
    content = (spec.get("requestBody") or {}).get("content") or {}
    if content:
        media_type, media = next(iter(content.items()))
        body = f"{type_of(media.get('schema'))} ({media_type})"
    responses = [
        _response(status, answer)
        for status, answer in spec.get("responses", {}).items()
        if status not in common
    ]
    return ApiOperation(
        method=method.upper(),
        path=path,
        anchor=str(spec.get("operationId") or f"{method}-{path}"),
        summary=str(spec.get("summary") or ""),
        description=_text(spec.get("description")),
        parameters=parameters,
        body=body,
        responses=responses,
    )


def _schema(name: str, spec: dict[str, Any]) -> ApiSchema:
    required = set(spec.get("required", []))
    fields = [
        ApiField(
            name=field,
            type=type_of(value),
            required=field in required,
            description=_text(value.get("description")) if isinstance(value, dict) else "",
        )
        for field, value in (spec.get("properties") or {}).items()
    ]
    return ApiSchema(
        name=name,
        description=_text(spec.get("description")),
        fields=fields,
        type="" if fields else type_of(spec),
    )


def api_docs_page(document: dict[str, Any]) -> ApiDocsPage:
    """The reference page of an OpenAPI document."""
    operations = [
        (path, method, spec)
        for path, item in document.get("paths", {}).items()
        for method, spec in item.items()
        if method in _METHODS
    ]
    # an answer every operation documents the same way is listed once, at the top
    seen = Counter(
        (status, str(answer.get("description", "")))
        for _, _, spec in operations
        for status, answer in spec.get("responses", {}).items()
    )
    common = {
        status for (status, _), count in seen.items() if count == len(operations) and operations
    }
    common_responses: list[ApiResponse] = []
    if operations:
        first = operations[0][2].get("responses", {})
        common_responses = [_response(status, first[status]) for status in sorted(common)]
    sections: dict[str, list[ApiOperation]] = {}
    for path, method, spec in operations:
        tag = (spec.get("tags") or ["other"])[0]
        sections.setdefault(tag, []).append(_operation(path, method, spec, common))
    info = document.get("info", {})
    schemas = document.get("components", {}).get("schemas", {})
    return ApiDocsPage(
        title=str(info.get("title", "API")),
        version=str(info.get("version", "")),
        common_responses=common_responses,
        sections=[ApiSection(tag=tag, operations=ops) for tag, ops in sections.items()],
        schemas=[_schema(name, spec) for name, spec in sorted(schemas.items())],
    )


@router.get("/docs")
async def api_docs(request: Request) -> Response:
    """The API reference (HTML; ``/openapi.json`` is its machine-readable twin)."""
    page = api_docs_page(request.app.openapi())
    return render("api_docs.html", page, wants_json=False)


@router.get("/redoc")
async def redoc() -> Response:
    """The former ReDoc page's address: the reference is ``/docs``."""
    return RedirectResponse("/docs", status_code=308)
