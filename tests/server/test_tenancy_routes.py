"""Projects are tenants over HTTP (a real uvicorn server, SQLite and PostgreSQL): alpha's
key using beta's ids (runs, Veval scenario runs, OTLP and Veval traces, snapshots, pins,
items, comparisons, dashboard pages) gets exactly the answer a free id gets, and beta's
data is as it was. The store-level twin is ``tests/store/sql/test_tenancy.py``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from tests.otel import otlp_data as d
from tests.server.conftest import LiveServer, make_run_log, run_log_json, tenant_admin_keys

from scenarist._sync import run_sync
from scenarist.model.record import TraceRecord
from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore

OTLP_TRACE = f"tr_{d.TRACE}"
OTHER_OTLP_TRACE = "tr_" + "ab" * 16


class Tenants:
    """A live server and a client for each of alpha and beta (keys limited to one)."""

    def __init__(self, server: LiveServer, keys: dict[str, str], database_url: str) -> None:
        self.server, self.database_url = server, database_url
        self.alpha, self.beta = (
            httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {keys[p]}"})
            for p in ("alpha", "beta")
        )

    def close(self) -> None:
        self.alpha.close()
        self.beta.close()


@pytest.fixture
def tenants(database_url: str) -> Iterator[Tenants]:
    keys = tenant_admin_keys(database_url)
    with LiveServer(create_app(database_url)) as server:
        both = Tenants(server, keys, database_url)
        try:
            yield both
        finally:
            both.close()


def same_answer(taken: httpx2.Response, taken_id: str, free: httpx2.Response, free_id: str) -> None:
    """``taken`` (an id of another project) answered as ``free`` (an unused id) was."""
    assert taken.status_code == free.status_code, (taken.text, free.text)
    assert taken.text.replace(taken_id, "<id>") == free.text.replace(free_id, "<id>")


def _incomplete(run_id: str, **outcomes: bool) -> dict[str, Any]:
    log = make_run_log(run_id, outcomes=outcomes)
    log.footer = None
    return run_log_json(log)


def _otlp(agent: str, trace: str = d.TRACE) -> dict[str, Any]:
    return d.document(
        d.span(1, "agent", {"gen_ai.agent.name": agent}, trace=trace),
        d.span(2, f"{agent}-step", {}, parent=1, trace=trace),
        service=agent,
    )


def test_one_run_id_uploaded_by_two_projects_keeps_both(tenants: Tenants) -> None:
    alpha, beta = tenants.alpha, tenants.beta
    assert beta.post("/api/runs", json=_incomplete("shared", refund=False)).status_code == 201
    before = beta.get("/api/runs/shared").json()
    taken = alpha.post("/api/runs", json=run_log_json(make_run_log("shared")))
    free = alpha.post("/api/runs", json=run_log_json(make_run_log("free-id")))
    same_answer(taken, "shared", free, "free-id")
    assert taken.status_code == 201 and taken.json()["created"] is True
    assert beta.get("/api/runs/shared").json() == before
    assert before["complete"] is False and len(before["scenarios"]) == 1
    mine = alpha.get("/api/runs/shared").json()
    assert mine["complete"] is True and len(mine["scenarios"]) == 2
    page = beta.get("/runs/shared.json").json()  # the dashboard's run page, beta's run
    assert page["run"]["complete"] is False
    # each project's own id again: stored once
    assert alpha.post("/api/runs", json=run_log_json(make_run_log("shared"))).status_code == 200
    assert beta.post("/api/runs", json=_incomplete("shared", refund=False)).status_code == 200
    assert [r["run_id"] for r in beta.get("/api/runs").json()["items"]] == ["shared"]


def test_a_veval_scenario_run_with_another_projects_run_id_is_alphas_own(
    tenants: Tenants,
) -> None:
    alpha, beta = tenants.alpha, tenants.beta
    assert beta.post("/api/runs", json=_incomplete("beta-run")).status_code == 201
    before = beta.get("/api/runs/beta-run").json()
    summary = {"passed": True, "pass_count": 1, "fail_count": 0}
    taken = alpha.post("/v1/scenarios/refund/runs", json={**summary, "run_id": "beta-run"})
    free = alpha.post("/v1/scenarios/refund/runs", json={**summary, "run_id": "free-run"})
    same_answer(taken, "beta-run", free, "free-run")
    assert taken.status_code == 201
    assert beta.get("/api/runs/beta-run").json() == before
    assert before["scenarios"] == [] and before["kind"] == "suite"
    assert beta.get("/runs/beta-run.json").json()["run"]["kind"] == "suite"
    assert beta.get("/v1/scenarios/refund/runs").json()["items"] == []
    mine = alpha.get("/api/runs/beta-run").json()
    assert mine["kind"] == "scenario" and [s["status"] for s in mine["scenarios"]] == ["pass"]
    listed = alpha.get("/v1/scenarios/refund/runs").json()["items"]
    assert sorted(r["run_id"] for r in listed) == ["beta-run", "free-run"]


def test_a_trace_with_another_projects_trace_id_is_alphas_own(tenants: Tenants) -> None:
    alpha, beta = tenants.alpha, tenants.beta
    assert beta.post("/otlp/v1/traces", json=_otlp("beta-agent")).status_code == 200
    assert beta.post("/v1/traces", json={"trace_id": "tr-v", "agent_name": "beta-bot"}).is_success
    otlp_before = beta.get(f"/v1/traces/{OTLP_TRACE}").json()
    veval_before = beta.get("/v1/traces/tr-v").json()
    assert otlp_before["agent_name"] == "beta-agent"

    taken = alpha.post("/otlp/v1/traces", json=_otlp("alpha-agent"))
    free = alpha.post("/otlp/v1/traces", json=_otlp("alpha-agent", trace="ab" * 16))
    same_answer(taken, OTLP_TRACE, free, OTHER_OTLP_TRACE)
    taken = alpha.post("/v1/traces", json={"trace_id": "tr-v", "agent_name": "alpha-bot"})
    free = alpha.post("/v1/traces", json={"trace_id": "tr-free", "agent_name": "alpha-bot"})
    same_answer(taken, "tr-v", free, "tr-free")
    # the OTLP body at Veval's path too (the receiver's dispatch)
    assert alpha.post("/v1/traces", json=_otlp("alpha-again")).status_code == 200
    # a resource's scenarist.record naming beta's trace id: a trace of alpha's too
    aimed = _otlp("alpha-agent", trace="cd" * 16)
    aimed["resourceSpans"][0]["resource"]["attributes"] += d.attrs(
        {"scenarist.record": {"trace_id": "tr-v", "agent_name": "alpha-record"}}
    )
    assert alpha.post("/otlp/v1/traces", json=aimed).status_code == 200

    assert beta.get(f"/v1/traces/{OTLP_TRACE}").json() == otlp_before
    assert beta.get("/v1/traces/tr-v").json() == veval_before
    mine = alpha.get(f"/v1/traces/{OTLP_TRACE}").json()
    assert mine["agent_name"] in ("alpha-agent", "alpha-again")
    assert "beta-agent-step" not in {s["name"] for s in mine["steps"]}  # not merged with beta's
    assert alpha.get("/v1/traces/tr-v").json()["agent_name"] == "alpha-record"
    listed = beta.get("/api/traces").json()["items"]
    assert sorted(t["trace_id"] for t in listed) == sorted([OTLP_TRACE, "tr-v"])


def _snapshot(step: str) -> dict[str, Any]:
    return {"steps": [{"name": step, "kind": "tool"}]}


def test_snapshots_belong_to_one_project(tenants: Tenants, monkeypatch: pytest.MonkeyPatch) -> None:
    alpha, beta = tenants.alpha, tenants.beta
    posted = beta.post("/v1/snapshots", json={"name": "golden", "snapshot": _snapshot("b")})
    assert posted.status_code == 201
    same_answer(
        alpha.get("/v1/snapshots/golden"), "golden", alpha.get("/v1/snapshots/nope"), "nope"
    )
    assert alpha.get("/v1/snapshots").json()["items"] == []
    for step in ("a1", "a2"):
        mine = alpha.post("/v1/snapshots", json={"name": "golden", "snapshot": _snapshot(step)})
        assert mine.status_code == 201
    assert [s["name"] for s in beta.get("/v1/snapshots/golden").json()["steps"]] == ["b"]
    assert [s["name"] for s in alpha.get("/v1/snapshots/golden").json()["steps"]] == ["a2"]
    versions = {
        p: [(i["name"], i["version"]) for i in c.get("/v1/snapshots").json()["items"]]
        for p, c in (("alpha", alpha), ("beta", beta))
    }
    assert versions == {"alpha": [("golden", 2)], "beta": [("golden", 1)]}

    # a snapshot or an item of beta's trace, asked by alpha: as of a trace that is not there
    assert beta.post("/v1/traces", json={"trace_id": "t-beta"}).status_code == 201
    same_answer(
        alpha.post("/v1/snapshots", json={"name": "s", "trace_id": "t-beta"}),
        "t-beta",
        alpha.post("/v1/snapshots", json={"name": "s", "trace_id": "t-free"}),
        "t-free",
    )
    for action, body in (("snapshot", {"name": "s"}), ("item", {"scenario_name": "s"})):
        same_answer(
            alpha.post(f"/api/traces/t-beta/{action}", json=body),
            "t-beta",
            alpha.post(f"/api/traces/t-free/{action}", json=body),
            "t-free",
        )
    assert beta.get("/v1/snapshots/s").status_code == 404

    # pruning: alpha's snapshot of trace id "old" keeps alpha's "old", not beta's
    store = SqlStore(tenants.database_url)
    old = datetime.now(UTC) - timedelta(days=100)
    for project in ("alpha", "beta"):
        run_sync(store.scoped(project).save_trace, TraceRecord(trace_id="old", started_at=old))
    alpha.post("/v1/snapshots", json={"name": "of-old", "trace_id": "old"})
    monkeypatch.setenv("SCENARIST_RETENTION_DAYS", "30")
    pruned = beta.post("/api/retention/prune")
    assert pruned.status_code == 200 and pruned.json()["traces_deleted"] == 1
    assert beta.get("/v1/traces/old").status_code == 404
    assert alpha.get("/v1/traces/old").status_code == 200
    assert alpha.post("/api/retention/prune").json()["traces_deleted"] == 0  # its snapshot's


def test_another_projects_ids_are_not_found_for_pins_items_and_pages(tenants: Tenants) -> None:
    alpha, beta = tenants.alpha, tenants.beta
    assert beta.post("/api/runs", json=run_log_json(make_run_log("r-beta"))).status_code == 201
    assert alpha.post("/api/runs", json=run_log_json(make_run_log("r-alpha"))).status_code == 201
    assert beta.post("/v1/traces", json={"trace_id": "t-beta"}).status_code == 201
    item = beta.post("/v1/scenarios/s/items", json={"name": "b", "input": "hi"})
    item_id = item.json()["id"]
    for method in ("POST", "DELETE"):
        for what, taken in (("runs", "r-beta"), ("traces", "t-beta")):
            same_answer(
                alpha.request(method, f"/api/{what}/{taken}/pin"),
                taken,
                alpha.request(method, f"/api/{what}/free-id/pin"),
                "free-id",
            )
            assert alpha.request(method, f"/api/{what}/{taken}/pin").status_code == 404
    replacement = {"name": "a", "input": "x"}
    same_answer(
        alpha.put(f"/v1/scenarios/s/items/{item_id}", json=replacement),
        item_id,
        alpha.put("/v1/scenarios/s/items/item_free", json=replacement),
        "item_free",
    )
    same_answer(
        alpha.delete(f"/v1/scenarios/s/items/{item_id}"),
        item_id,
        alpha.delete("/v1/scenarios/s/items/item_free"),
        "item_free",
    )
    assert alpha.delete(f"/v1/scenarios/s/items/{item_id}").status_code == 404
    for path in (
        "/api/runs/{}",
        "/api/runs/{}/compare?baseline=r-alpha",
        "/api/runs/r-alpha/compare?baseline={}",
        "/runs/{}.json",
        "/runs/{}/scenarios/0.json",
        "/runs/{}/compare.json?baseline=r-alpha",
    ):
        same_answer(
            alpha.get(path.format("r-beta")), "r-beta", alpha.get(path.format("free-id")), "free-id"
        )
    for path in ("/v1/traces/{}", "/traces/{}.json"):
        same_answer(
            alpha.get(path.format("t-beta")), "t-beta", alpha.get(path.format("free-id")), "free-id"
        )
    assert [i["name"] for i in beta.get("/v1/scenarios/s/items").json()["items"]] == ["b"]
    assert beta.get("/api/runs/r-beta").json()["scenarios"]  # untouched
    assert beta.post("/api/runs/r-beta/pin").status_code == 200  # beta's own: found
