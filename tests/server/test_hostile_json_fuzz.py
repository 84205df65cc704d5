"""Fuzzing the JSON endpoints with hypothesis: valid bodies with one value replaced by
something hostile (NaN and infinities, lone surrogates, NUL, huge numbers, deep or wide
nesting, wrong types), sent over a real socket to the server on SQLite and PostgreSQL.
Every answer is a 2xx, or a 4xx with the JSON error body: never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.server.conftest import LiveServer, make_run_log, run_log_json
from tests.server.test_api import VEVAL_TRACE

from scenarist.server.app import create_app

TRACE_ID = str(VEVAL_TRACE["trace_id"])
RUN_LOG = run_log_json(make_run_log("fuzz"))

BODIES: list[tuple[str, str, Any]] = [
    ("POST", "/api/runs", RUN_LOG),
    ("POST", "/v1/traces", VEVAL_TRACE),
    (
        "POST",
        "/v1/scenarios/fuzz/runs",
        {"passed": True, "pass_count": 1, "fail_count": 0, "cost_usd": 0.1, "results": []},
    ),
    ("PUT", "/v1/scenarios/fuzz/items", {"items": [{"name": "i", "input": "q"}]}),
    ("POST", "/v1/scenarios/fuzz/items", {"name": "i", "input": {"q": [1, 2]}}),
    ("POST", "/v1/snapshots", {"name": "fuzz", "trace_id": TRACE_ID}),
    ("POST", f"/api/traces/{TRACE_ID}/item", {"scenario_name": "fuzz", "name": "i"}),
    ("POST", f"/api/traces/{TRACE_ID}/snapshot", {"name": "fuzz"}),
    ("POST", "/api/keys", {"scopes": ["read"], "name": "fuzz"}),
    ("POST", "/v1/judge", {"trace_id": TRACE_ID, "criteria": "polite"}),
]

_text = st.text(
    alphabet=st.characters(codec=None, categories=["L", "N", "P", "Cs", "Cc", "Zl", "Zp"]),
    max_size=8,
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _text
    | st.sampled_from(["\x00", "\ud800", "a\x00b", "\u2028", "\ufeff"])
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_text, children, max_size=3),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return copy


@pytest.fixture
def fuzzed_server(database_url: str) -> Iterator[LiveServer]:
    with LiveServer(create_app(database_url)) as server:
        with httpx2.Client(base_url=server.url) as http:  # a trace for the trace actions
            assert http.post("/v1/traces", json=VEVAL_TRACE).status_code == 201
        yield server


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_hostile_json_bodies_are_never_a_server_error(
    fuzzed_server: LiveServer, data: st.DataObject
) -> None:
    method, path, body = data.draw(st.sampled_from(BODIES), label="endpoint")
    target = data.draw(st.sampled_from(_paths(body)), label="replaced")
    hostile = data.draw(
        _values | st.integers(min_value=100, max_value=600).map(_nested), label="value"
    )
    document = _replaced(body, target, hostile)
    content = json.dumps(document, allow_nan=True)  # NaN, Infinity; surrogates escaped
    as_lines = path == "/api/runs" and data.draw(st.booleans(), label="as JSON Lines")
    headers = {"content-type": "application/json"}
    if as_lines and isinstance(document, dict) and isinstance(document.get("header"), dict):
        records = [
            {"record_type": "header", **document["header"]},
            *(
                {"record_type": "scenario", **s} if isinstance(s, dict) else s
                for s in document.get("scenarios") or []
            ),
        ]
        content = "\n".join(json.dumps(r, allow_nan=True) for r in records)
        headers = {"content-type": "application/x-ndjson"}
    with httpx2.Client(base_url=fuzzed_server.url, timeout=30) as http:
        answer = http.request(method, path, content=content, headers=headers)
    if answer.status_code == 503:  # explained, not a crash: this server has no judge
        assert answer.json()["error"]["code"] == "judge_not_configured", answer.text
        return
    assert answer.status_code < 500, (method, path, target, answer.text[:500])
    if answer.status_code >= 400:
        error = answer.json()["error"]
        assert error["code"] and error["message"]
