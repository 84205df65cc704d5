"""The HTTP API on SQLite and PostgreSQL: ingestion, runs, history, items, traces,
snapshots, errors."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from tests.server.conftest import make_run_log, minutes_ago, run_log_json

pytestmark = pytest.mark.anyio

VEVAL_TRACE: dict[str, Any] = {
    "trace_id": "tr_15df2d6d3ef64111a6ecf467f8a96166",
    "agent_name": "support-agent",
    "input": "where is my refund?",
    "output": "answer for billing",
    "status": "success",
    "error": None,
    "started_at": "2026-11-30T06:59:35.441412+00:00",
    "completed_at": "2026-11-30T06:59:35.441562Z",
    "duration_ms": 0,
    "total_cost_usd": 0.0004,
    "metadata": {"customer": "acme"},
    "steps": [
        {
            "step_id": "77a7bec8-aad8-4258-8060-21b273658a38",
            "parent_step_id": None,
            "name": "classify",
            "type": "llm",
            "input": "where is my refund?",
            "output": {"label": "billing"},
            "status": "success",
            "error": None,
            "started_at": "2026-11-30T06:59:35.441443Z",
            "completed_at": "2026-11-30T06:59:35.441530+00:00",
            "duration_ms": 0,
            "cost_usd": 0.0004,
            "tokens_in": 12,
            "tokens_out": 3,
            "model": "gpt-4o-mini",
            "metadata": {"temperature": 0.2},
        },
        {
            "step_id": "328ac6c3-a405-451e-901b-f013bf755b34",
            "parent_step_id": "77a7bec8-aad8-4258-8060-21b273658a38",
            "name": "search",
            "type": "tool",
            "input": {"q": "where is my refund?"},
            "output": ["doc1", "doc2"],
            "status": "error",
            "error": "index offline",
            "started_at": None,
            "completed_at": None,
            "duration_ms": None,
            "cost_usd": None,
            "tokens_in": None,
            "tokens_out": None,
            "model": None,
            "metadata": {},
        },
    ],
}


def _same_instant(a: str | None, b: str | None) -> bool:
    from datetime import datetime

    if a is None or b is None:
        return a is b
    return datetime.fromisoformat(a) == datetime.fromisoformat(b)


async def test_run_log_ingest_is_idempotent(app_client: httpx2.AsyncClient) -> None:
    body = run_log_json(make_run_log("run-1"))
    first = await app_client.post("/api/runs", json=body)
    again = await app_client.post("/api/runs", json=body)
    assert (first.status_code, first.json()["created"]) == (201, True)
    assert (again.status_code, again.json()["created"]) == (200, False)
    runs = (await app_client.get("/api/runs")).json()
    assert [r["run_id"] for r in runs["items"]] == ["run-1"]
    detail = (await app_client.get("/api/runs/run-1")).json()
    assert (detail["passed_count"], detail["failed_count"], detail["complete"]) == (1, 1, True)
    assert [(s["scenario_name"], s["status"]) for s in detail["scenarios"]] == [
        ("refund", "pass"),
        ("greeting", "fail"),
    ]
    assert [c["check_kind"] for c in detail["scenarios"][1]["checks"]] == ["equals"]
    assert detail["document"]["header"]["suite_name"] == "support"


async def test_run_log_complete_upload_replaces_an_incomplete_one(
    app_client: httpx2.AsyncClient,
) -> None:
    log = make_run_log("run-cut")
    partial = run_log_json(log) | {"footer": None, "scenarios": run_log_json(log)["scenarios"][:1]}
    assert (await app_client.post("/api/runs", json=partial)).json()["created"] is True
    assert (await app_client.get("/api/runs/run-cut")).json()["complete"] is False
    assert (await app_client.post("/api/runs", json=run_log_json(log))).json()["created"] is True
    detail = (await app_client.get("/api/runs/run-cut")).json()
    assert (detail["complete"], len(detail["scenarios"])) == (True, 2)
    assert (await app_client.get("/api/runs")).json()["items"][0]["run_id"] == "run-cut"


async def test_run_log_accepts_json_lines(app_client: httpx2.AsyncClient) -> None:
    log = make_run_log("run-jsonl")
    lines = "\n".join(r.model_dump_json(fallback=str) for r in log.records())
    response = await app_client.post(
        "/api/runs", content=lines, headers={"content-type": "application/x-ndjson"}
    )
    assert response.status_code == 201
    assert response.json()["scenario_count"] == 2


async def test_runs_list_pages_with_cursors_newest_first(app_client: httpx2.AsyncClient) -> None:
    for i in range(7):
        log = make_run_log(f"run-{i}", outcomes={"a": True}, started_at=minutes_ago(10 - i))
        assert (await app_client.post("/api/runs", json=run_log_json(log))).status_code == 201
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = (await app_client.get("/api/runs", params=params)).json()
        seen += [r["run_id"] for r in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"run-{i}" for i in reversed(range(7))]


async def test_bad_cursor_is_a_422(app_client: httpx2.AsyncClient) -> None:
    response = await app_client.get("/api/runs", params={"cursor": "not-a-cursor"})
    assert response.status_code == 422
    assert "cursor" in response.json()["error"]["message"]


async def test_scenario_history_is_one_suites_scenario(app_client: httpx2.AsyncClient) -> None:
    """A scenario is (project, suite, name): the ``support`` suite's ``refund`` and the
    Veval-style scenario ``refund`` are two histories; without ``?suite=`` the API
    answers 409 naming both, never a merged history."""
    for i, ok in enumerate([True, False, True]):
        log = make_run_log(f"h-{i}", outcomes={"refund": ok}, started_at=minutes_ago(30 - i))
        await app_client.post("/api/runs", json=run_log_json(log))
    only_support = (await app_client.get("/api/scenarios/refund/history")).json()
    assert only_support["suite_name"] == "support"  # one suite holds it: an old link works
    assert [p["run_id"] for p in only_support["points"]] == ["h-2", "h-1", "h-0"]
    summary = {"passed": False, "pass_count": 1, "fail_count": 1, "run_id": "v-1",
               "started_at": minutes_ago(1).isoformat(),
               "results": [{"name": "a", "passed": True, "failures": []},
                           {"name": "b", "passed": False, "failures": ["too slow"]}]}  # fmt: skip
    assert (await app_client.post("/v1/scenarios/refund/runs", json=summary)).status_code == 201
    ambiguous = await app_client.get("/api/scenarios/refund/history")
    assert ambiguous.status_code == 409
    assert ambiguous.json()["error"]["suites"] == ["", "support"]
    assert "?suite=" in ambiguous.json()["error"]["message"]
    history = (
        await app_client.get("/api/scenarios/refund/history", params={"suite": "support"})
    ).json()
    assert [(p["run_id"], p["status"]) for p in history["points"]] == [
        ("h-2", "pass"),
        ("h-1", "fail"),
        ("h-0", "pass"),
    ]
    assert history["pass_rate"] == 2 / 3
    veval = (await app_client.get("/api/scenarios/refund/history", params={"suite": ""})).json()
    assert [(p["run_id"], p["status"]) for p in veval["points"]] == [("v-1", "fail")]
    params: dict[str, Any] = {"suite": "support", "limit": 2}
    page = (await app_client.get("/api/scenarios/refund/history", params=params)).json()
    params = {"suite": "support", "cursor": page["next_cursor"]}
    rest = (await app_client.get("/api/scenarios/refund/history", params=params)).json()
    assert [p["run_id"] for p in rest["points"]] == ["h-0"]


async def test_veval_scenario_runs_are_listed_oldest_first(app_client: httpx2.AsyncClient) -> None:
    for i in range(2):
        body = {"passed": True, "pass_count": 1, "fail_count": 0, "run_id": f"sr-{i}",
                "started_at": minutes_ago(5 - i).isoformat(),
                "results": [{"name": "x", "passed": True, "failures": [],
                             "judgments": [{"criteria": "polite", "score": 1}]}]}  # fmt: skip
        await app_client.post("/v1/scenarios/team%2Fbilling/runs", json=body)
    page = (await app_client.get("/v1/scenarios/team%2Fbilling/runs")).json()
    assert [r["run_id"] for r in page["items"]] == ["sr-0", "sr-1"]
    assert page["items"][0]["scenario_name"] == "team/billing"
    assert page["items"][0]["items"][0]["name"] == "x"


async def test_items_crud(app_client: httpx2.AsyncClient) -> None:
    base = "/v1/scenarios/support%2Frefunds/items"
    assert (await app_client.get(base)).json() == {"items": []}
    trace = {"trace_id": "tr_1", "agent_name": "support", "input": "q", "steps": []}
    assert (await app_client.post("/v1/traces", json=trace)).status_code == 201
    check = {"kind": "equals", "expected_value": 1, "target_key": "trace.last.outputs"}
    items = [
        {"name": "one", "input": "hi"},
        {"name": "two", "trace_id": "tr_1", "assertions": [check]},
    ]
    stored = (await app_client.put(base, json={"items": items})).json()["items"]
    assert [i["name"] for i in stored] == ["one", "two"]
    assert stored[1]["assertions"][0]["kind"] == "equals"
    added = await app_client.post(base, json={"name": "three", "input": {"q": 1}})
    assert added.status_code == 201
    item_id = added.json()["id"]
    replaced = await app_client.put(f"{base}/{item_id}", json={"name": "3", "input": "x"})
    assert replaced.json()["name"] == "3"
    assert (await app_client.delete(f"{base}/{stored[0]['id']}")).status_code == 204
    assert (await app_client.delete(f"{base}/{stored[0]['id']}")).status_code == 404
    listed = (await app_client.get(base)).json()["items"]
    assert [(i["name"], i["input"]) for i in listed] == [("two", None), ("3", "x")]
    # another scenario's namespace is separate
    assert (await app_client.get("/v1/scenarios/support/items")).json() == {"items": []}


async def test_items_bad_payload_names_the_field(app_client: httpx2.AsyncClient) -> None:
    base = "/v1/scenarios/s/items"
    bad = await app_client.put(
        base, json={"items": [{"name": "ok", "input": "x"}, {"assertions": "nope"}]}
    )
    assert bad.status_code == 422
    assert bad.json()["error"]["fields"][0]["field"].startswith("items.1.assertions")
    path = await app_client.post(base, json={"name": "p", "trace": "/etc/passwd"})
    assert path.status_code == 422
    assert path.json()["error"]["fields"][0]["field"] == "trace"


async def test_veval_trace_round_trips(app_client: httpx2.AsyncClient) -> None:
    response = await app_client.post("/v1/traces", json=VEVAL_TRACE)
    assert response.status_code == 201
    got = (await app_client.get(f"/v1/traces/{VEVAL_TRACE['trace_id']}")).json()
    times = ("started_at", "completed_at")
    for key in VEVAL_TRACE:
        if key in times:
            assert _same_instant(got[key], VEVAL_TRACE[key])
        elif key == "total_cost_usd":
            assert got[key] == pytest.approx(VEVAL_TRACE[key])
        elif key != "steps":
            assert got[key] == VEVAL_TRACE[key], key
    assert len(got["steps"]) == 2
    for sent, back in zip(VEVAL_TRACE["steps"], got["steps"], strict=True):
        for key in sent:
            if key in times:
                assert _same_instant(back[key], sent[key])
            else:
                assert back[key] == sent[key], key
    missing = await app_client.get("/v1/traces/tr_missing")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


async def test_a_veval_trace_that_cost_nothing_reads_back_without_a_total(
    app_client: httpx2.AsyncClient,
) -> None:
    """Veval's SDK sends a zero total as ``None``; the server keeps it so (the steps cost
    0), and the trace list still shows the steps' cost, 0."""
    free_steps = [
        VEVAL_TRACE["steps"][0] | {"cost_usd": 0},
        VEVAL_TRACE["steps"][1] | {"cost_usd": None},
    ]
    free = VEVAL_TRACE | {"trace_id": "tr_free", "total_cost_usd": None, "steps": free_steps}
    assert (await app_client.post("/v1/traces", json=free)).status_code == 201
    got = (await app_client.get("/v1/traces/tr_free")).json()
    assert got["total_cost_usd"] is None
    assert [s["cost_usd"] for s in got["steps"]] == [0, None]
    listed = (await app_client.get("/api/traces")).json()["items"]
    assert [(t["trace_id"], t["cost_usd"]) for t in listed] == [("tr_free", 0.0)]


async def test_a_veval_snapshot_step_without_a_type_is_stored_without_one(
    app_client: httpx2.AsyncClient,
) -> None:
    """Veval's SnapshotStep type defaults to None and its SDK sends it as such."""
    steps = [{"name": "plan", "type": None, "input": "q"}, {"name": "answer", "type": "llm"}]
    body = {"name": "typeless", "source_trace_id": "tr_1", "steps": steps}
    saved = await app_client.post("/v1/snapshots", json=body)
    assert saved.status_code == 201, saved.text
    got = (await app_client.get("/v1/snapshots/typeless")).json()
    assert [(s["name"], s["type"], s["kind"]) for s in got["steps"]] == [
        ("plan", None, None),
        ("answer", "llm", "llm"),
    ]


async def test_trace_search_by_agent_and_status(app_client: httpx2.AsyncClient) -> None:
    for i in range(5):
        trace = VEVAL_TRACE | {
            "trace_id": f"tr_{i}",
            "agent_name": "a" if i % 2 else "b",
            "status": "error" if i == 3 else "success",
            "started_at": minutes_ago(10 - i).isoformat(),
        }
        await app_client.post("/v1/traces", json=trace)
    by_agent = (await app_client.get("/api/traces", params={"agent_name": "a"})).json()
    assert [t["trace_id"] for t in by_agent["items"]] == ["tr_3", "tr_1"]
    errors = (await app_client.get("/api/traces", params={"status": "error"})).json()
    assert [t["trace_id"] for t in errors["items"]] == ["tr_3"]
    first = (await app_client.get("/api/traces", params={"limit": 4})).json()
    second = (await app_client.get("/api/traces", params={"cursor": first["next_cursor"]})).json()
    assert [t["trace_id"] for t in first["items"] + second["items"]] == [
        f"tr_{i}" for i in reversed(range(5))
    ]


async def test_snapshots_are_versioned(app_client: httpx2.AsyncClient) -> None:
    def snapshot(step: str) -> dict[str, Any]:
        return {"name": "golden", "steps": [{"name": step, "kind": "tool", "input": {"q": 1}}]}

    for step in ("search", "lookup"):
        body = {"name": "team/golden", "snapshot": snapshot(step)}
        assert (await app_client.post("/v1/snapshots", json=body)).status_code == 201
    got = (await app_client.get("/v1/snapshots/team%2Fgolden")).json()
    assert [s["name"] for s in got["steps"]] == ["lookup"]
    listed = (await app_client.get("/v1/snapshots")).json()["items"]
    assert [(s["name"], s["version"]) for s in listed] == [("team/golden", 2)]
    assert (await app_client.get("/v1/snapshots/nope")).status_code == 404
    bad = await app_client.post("/v1/snapshots", json={"name": "x", "snapshot": {"steps": 3}})
    assert bad.status_code == 422
    assert bad.json()["error"]["fields"][0]["field"] == "snapshot.steps"


async def test_bad_payloads_are_4xx_json_naming_the_field(app_client: httpx2.AsyncClient) -> None:
    no_id = await app_client.post("/api/runs", json={"header": {"suite_name": "s"}})
    assert no_id.status_code == 422
    assert no_id.json()["error"]["fields"][0]["field"] == "header.run_id"
    body = run_log_json(make_run_log("r"))
    body["scenarios"][0]["index"] = "first"
    wrong_type = await app_client.post("/api/runs", json=body)
    assert wrong_type.status_code == 422
    assert wrong_type.json()["error"]["fields"][0]["field"] == "scenarios.0.index"
    broken = await app_client.post("/api/runs", content=b"{nope")
    assert (broken.status_code, broken.json()["error"]["code"]) == (400, "invalid_json")
    trace = await app_client.post("/v1/traces", json={"agent_name": "x"})
    assert trace.status_code == 422
    assert trace.json()["error"]["fields"][0] == {
        "field": "trace_id",
        "message": "Field required",
        "type": "missing",
    }
    newer = await app_client.post(
        "/api/runs", json={"header": {"run_id": "n", "format_version": 99}}
    )
    assert newer.status_code == 422
    long_name = await app_client.post(
        "/v1/traces", json={"trace_id": "t", "steps": [{"step_id": "s", "name": "n" * 2000}]}
    )
    assert long_name.status_code == 422
    assert (await app_client.get("/api/runs/nope")).status_code == 404
    unknown = await app_client.get("/nowhere")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    assert (await app_client.get("/api/runs", params={"limit": 0})).status_code == 422


async def test_oversized_bodies_get_413(database_url: str) -> None:
    from scenarist.server.app import create_app

    app = create_app(database_url, max_body_bytes=1000)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            big = VEVAL_TRACE | {"input": "x" * 5000}
            declared = await client.post("/v1/traces", json=big)
            assert declared.status_code == 413
            assert declared.json()["error"]["code"] == "payload_too_large"

            async def chunks() -> Any:
                for _ in range(10):
                    yield json.dumps({"pad": "y" * 300}).encode()

            streamed = await client.post(
                "/api/runs", content=chunks(), headers={"content-type": "application/json"}
            )
            assert streamed.status_code == 413
            small = await client.post("/v1/traces", json={"trace_id": "ok"})
            assert small.status_code == 201


async def test_openapi_document_describes_the_api(app_client: httpx2.AsyncClient) -> None:
    doc = (await app_client.get("/openapi.json")).json()
    paths = set(doc["paths"])
    assert {
        "/v1/traces",
        "/v1/traces/{trace_id}",
        "/v1/scenarios/{name}/items",
        "/v1/scenarios/{name}/runs",
        "/v1/snapshots",
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/scenarios/{name}/history",
        "/api/health",
    } <= paths
    assert "application/x-ndjson" in doc["paths"]["/api/runs"]["post"]["requestBody"]["content"]
    health = (await app_client.get("/api/health")).json()
    assert health["status"] == "ok"
    assert (await app_client.get("/")).json()["openapi"] == "/openapi.json"
