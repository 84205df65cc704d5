"""``/docs`` is rendered here from the OpenAPI document: every operation and schema, no
external asset; ``/redoc`` leads to it. (Browser view: tests/dashboard.)"""

from __future__ import annotations

import re

import httpx2
import pytest

from scenarist.server.dashboard.api_docs import api_docs_page, type_of

anyio = pytest.mark.anyio


@anyio
async def test_docs_lists_every_operation_and_loads_nothing_from_outside(
    app_client: httpx2.AsyncClient,
) -> None:
    document = (await app_client.get("/openapi.json")).json()
    page = await app_client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    for path, item in document["paths"].items():
        for method in item:
            assert f"{method.upper()}</span> <code>{path}</code>" in html
    for name in document["components"]["schemas"]:
        assert f'id="schema-{name}"' in html
    external = re.findall(r'(?:src|href)="(https?:)?//', html)
    assert external == []  # scripts, styles and links are this server's own


@anyio
async def test_redoc_redirects_to_docs(app_client: httpx2.AsyncClient) -> None:
    answer = await app_client.get("/redoc")
    assert answer.status_code == 308
    assert answer.headers["location"] == "/docs"


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"$ref": "#/components/schemas/RunSummary"}, "RunSummary"),
        ({"type": "array", "items": {"type": "string"}}, "list[str]"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "int | null"),
        ({"type": "object", "additionalProperties": {"type": "number"}}, "dict[str, float]"),
        ({"enum": ["pass", "fail"]}, "'pass' | 'fail'"),
        ({"type": "string", "format": "date-time"}, "str (date-time)"),
        ({}, "any"),
    ],
)
def test_schema_types_are_shown_short(schema: dict[str, object], shown: str) -> None:
    assert type_of(schema) == shown


def test_an_answer_every_operation_gives_is_listed_once() -> None:
    error = {"description": "no API key", "content": {"application/json": {"schema": {}}}}
    document = {
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {"get": {"responses": {"200": {"description": "ok"}, "401": error}}},
            "/b": {"post": {"responses": {"201": {"description": "made"}, "401": error}}},
        },
    }
    page = api_docs_page(document)
    assert [r.status for r in page.common_responses] == ["401"]
    assert [[r.status for r in op.responses] for op in page.sections[0].operations] == [
        ["200"],
        ["201"],
    ]
