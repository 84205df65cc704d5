"""A hostile tenant against a real ``scenarist serve`` (uvicorn, SQLite and PostgreSQL):
alpha holds keys limited to alpha and tries to reach, lock out, or learn about beta
through the paths a route x project x scope matrix does not walk (cookies, forged
cursors, links, odd names). ``tests/server/test_tenancy_routes.py`` holds the id reuse
cases; each test here failed on the code before its fix."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from tests.otel import otlp_data as d
from tests.server.conftest import LiveServer, make_run_log, run_log_json, tenant_admin_keys

from scenarist._sync import run_sync
from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore

HTML = {"Accept": "text/html"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
CURRENT = re.compile(r'<b id="current-project">([^<]+)</b>')


class Tenants:
    """A live server; Bearer clients for alpha and beta (keys limited to one project,
    every scope), and the keys themselves (for dashboard logins)."""

    def __init__(self, server: LiveServer, keys: dict[str, str]) -> None:
        self.server, self.keys = server, keys
        self.clients: list[httpx2.Client] = []
        self.alpha, self.beta = (self.bearer(p) for p in ("alpha", "beta"))

    def client(self, **options: Any) -> httpx2.Client:
        client = httpx2.Client(base_url=self.server.url, **options)
        self.clients.append(client)
        return client

    def bearer(self, who: str) -> httpx2.Client:
        return self.client(headers={"Authorization": f"Bearer {self.keys[who]}"})

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def browser(self, who: str) -> httpx2.Client:
        """A browser signed in to the dashboard with ``who``'s key (a session cookie)."""
        client = self.client()
        token = TOKEN.search(client.get("/login", headers=HTML).text)
        assert token is not None
        form = {"csrf_token": token.group(1), "api_key": self.keys[who], "next": "/"}
        assert client.post("/login", data=form, headers=HTML).status_code == 303
        return client


@pytest.fixture
def tenants(database_url: str) -> Iterator[Tenants]:
    keys = tenant_admin_keys(database_url)
    with LiveServer(create_app(database_url)) as server:
        both = Tenants(server, keys)
        assert both.beta.post("/api/runs", json=run_log_json(make_run_log("r-beta"))).is_success
        assert both.alpha.post("/api/runs", json=run_log_json(make_run_log("r-alpha"))).is_success
        try:
            yield both
        finally:
            both.close()


def _run_ids(response: httpx2.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [r["run_id"] for r in response.json()["items"]]


def test_a_link_naming_another_project_does_not_lock_a_session_out(tenants: Tenants) -> None:
    """``/?project=beta`` (a link anyone can send) opened in alpha's session is refused,
    and must not leave a ``scenarist_project=beta`` cookie that makes every later page,
    and the API through the session, answer 403 until the user knows to clear it."""
    # pages served without a key (the login form) remember nothing: no one opened beta
    anonymous = tenants.client()
    for page in ("/login?project=beta", "/static/dashboard.css?project=beta"):
        served = anonymous.get(page, headers=HTML)
        assert served.status_code == 200
        assert "scenarist_project" not in served.headers.get("set-cookie", ""), page
    browser = tenants.browser("alpha")
    refused = browser.get("/?project=beta", headers=HTML)
    assert refused.status_code == 403
    assert "scenarist_project" not in refused.headers.get("set-cookie", "")
    page = browser.get("/", headers=HTML)
    assert page.status_code == 200
    assert CURRENT.findall(page.text) == ["alpha"]
    assert _run_ids(browser.get("/api/runs")) == ["r-alpha"]
    # a browser signed in before without a key (or a global one) that chose beta, then
    # alpha's key: the remembered choice is one alpha cannot open, so alpha's own project
    browser.cookies.set("scenarist_project", "beta")
    page = browser.get("/", headers=HTML)
    assert page.status_code == 200 and CURRENT.findall(page.text) == ["alpha"]
    assert _run_ids(browser.get("/api/runs")) == ["r-alpha"]
    assert [r["run_id"] for r in browser.get("/index.json").json()["runs"]] == ["r-alpha"]
    # naming beta explicitly is still refused, and reads nothing of beta's
    for asked in (
        browser.get("/api/runs?project=beta"),
        browser.get("/api/runs", headers={"X-Scenarist-Project": "beta"}),
        tenants.alpha.get("/api/runs", headers={"Cookie": "scenarist_project=beta"}),
    ):
        assert asked.status_code in (200, 403), asked.text
        assert "r-beta" not in asked.text
    assert browser.get("/api/runs?project=beta").status_code == 403
    # beta's own session is not affected by any of this
    assert _run_ids(tenants.browser("beta").get("/api/runs")) == ["r-beta"]


def test_a_planted_project_cookie_that_is_not_a_name_locks_nobody_out(tenants: Tenants) -> None:
    """A ``scenarist_project`` cookie the server never sets (a sibling subdomain can
    plant cookies) answered 400 on every request, ``/login`` included: the cookie is a
    remembered choice, so a bad one is ignored; ``?project=`` and the header stay strict."""
    browser = tenants.browser("alpha")
    for planted in ("../beta", "b%20eta", "x" * 80, "%C3%A9", '"beta"x'):
        browser.cookies.set("scenarist_project", planted)
        assert browser.get("/login", headers=HTML).status_code == 200, planted
        page = browser.get("/", headers=HTML)
        assert page.status_code == 200, (planted, page.text)
        assert CURRENT.findall(page.text) == ["alpha"]
        cookie = {"Cookie": f"scenarist_project={planted}"}
        assert _run_ids(tenants.alpha.get("/api/runs", headers=cookie)) == ["r-alpha"]
    bad = tenants.alpha.get("/api/runs", headers={"X-Scenarist-Project": "../beta"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_project"
    assert tenants.alpha.get("/api/runs?project=..%2Fbeta").status_code == 400


def _cursor(*values: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(values)).encode()).decode().rstrip("=")


FORGED = [
    _cursor("2026-01-01T00:00:00", 5),  # a number where an id goes
    _cursor("2026-01-01T00:00:00", {"run_id": "r-beta"}),
    _cursor(["2026-01-01"], "r-beta"),  # a list where a time goes
    _cursor(5, "r-beta"),
    _cursor(None, None),
    _cursor("not a time", "r-beta"),
    _cursor("2026-01-01T00:00:00", "r-beta", "x"),  # history: a position that is no number
    _cursor("2026-01-01T00:00:00", "r-beta", True),
    _cursor({"name": "golden"}),  # snapshots: a name that is no string
    _cursor(7),
]
LISTINGS = [
    "/api/runs",
    "/api/traces",
    "/api/scenarios/refund/history",
    "/v1/scenarios/refund/runs",
    "/v1/snapshots",
    "/index.json",
    "/suites/support.json",
    "/scenarios/refund.json",
]


def test_a_forged_paging_cursor_is_a_client_error(tenants: Tenants) -> None:
    """Cursors are opaque but readable (base64 JSON): one made up from beta's listing,
    or with values of the wrong type, is a 422 naming the cursor, never a 500 (and
    never a driver error that would tell how the query is built)."""
    alpha = tenants.alpha
    assert tenants.beta.post("/api/runs", json=run_log_json(make_run_log("r-beta2"))).is_success
    beta_cursor = tenants.beta.get("/api/runs?limit=1").json()["next_cursor"]
    assert beta_cursor is not None
    # beta's own cursor in alpha's listing: a position in time, alpha's rows only
    assert set(_run_ids(alpha.get("/api/runs", params={"cursor": beta_cursor}))) <= {"r-alpha"}
    for path in LISTINGS:
        for cursor in FORGED:
            answer = alpha.get(path, params={"cursor": cursor})
            assert answer.status_code in (200, 422), (path, cursor, answer.text)
            if answer.status_code == 422:
                assert "cursor" in answer.json()["error"]["message"], answer.text
            assert "r-beta" not in answer.text.replace(cursor, "")


def _otlp(agent: str, number: int) -> dict[str, Any]:
    trace = f"{number + 1:032x}"
    return d.document(
        d.span(1, "agent", {"gen_ai.agent.name": agent}, trace=trace),
        d.span(2, f"{agent}-step", {}, parent=1, trace=trace),
        service=agent,
    )


def test_interleaved_writes_of_two_tenants_with_the_same_ids_never_cross(
    tenants: Tenants,
) -> None:
    """alpha and beta write objects with the same ids at the same time, naming no
    project (each key's only one, chosen per request): the server's writes are queued
    and committed together (``Database._batched``), a request's project is a context
    variable, and every object must land in its writer's project whatever request
    commits the batch."""
    rounds = 12
    logs = {
        p: run_log_json(make_run_log("r", outcomes={p: True}, suite_name=p))
        for p in ("alpha", "beta")
    }

    def writes(project: str, client: httpx2.Client, i: int) -> list[int]:
        log = {**logs[project], "header": {**logs[project]["header"], "run_id": f"r{i}"}}
        summary = {"passed": True, "pass_count": 1, "fail_count": 0}
        step = {"name": project, "kind": "tool"}
        return [
            client.post("/v1/traces", json={"trace_id": f"t{i}", "agent_name": project}),
            client.post("/otlp/v1/traces", json=_otlp(project, i)),
            client.post(
                "/v1/scenarios/s/runs",
                json={
                    **summary,
                    "run_id": f"sr{i}",
                    "results": [{"name": project, "passed": True}],
                },
            ),
            client.post("/v1/snapshots", json={"name": f"snap{i}", "snapshot": {"steps": [step]}}),
            client.post("/v1/scenarios/s/items", json={"name": project, "input": "x"}),
            client.post("/api/runs", json=log),
        ]

    jobs = [
        (p, c, i)
        for i in range(rounds)
        for p, c in (("alpha", tenants.alpha), ("beta", tenants.beta))
    ]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda job: writes(*job), jobs))
    for answer in answers:
        assert all(r.is_success for r in answer), [r.text for r in answer if not r.is_success]

    for project, client in (("alpha", tenants.alpha), ("beta", tenants.beta)):
        traces = client.get("/api/traces", params={"limit": 500}).json()["items"]
        assert {t["agent_name"] for t in traces} == {project}, traces
        assert len(traces) == 2 * rounds
        items = client.get("/v1/scenarios/s/items").json()["items"]
        assert {i["name"] for i in items} == {project} and len(items) == rounds
        runs = client.get("/api/runs", params={"limit": 500}).json()["items"]
        names = {r["name"] for r in runs}
        assert names == {project, "s", "support"}, names  # ours, scenario runs, the fixture's
        assert len(runs) == 2 * rounds + 1  # r0..r11, sr0..sr11, and the fixture's run
        scenario_runs = client.get("/v1/scenarios/s/runs", params={"limit": 500}).json()
        assert len(scenario_runs["items"]) == rounds
        assert {i["name"] for r in scenario_runs["items"] for i in r["items"]} == {project}
        for i in range(rounds):
            got = client.get(f"/v1/snapshots/snap{i}").json()
            assert [s["name"] for s in got["steps"]] == [project]
            scenario_run = client.get(f"/api/runs/sr{i}").json()
            assert scenario_run["kind"] == "scenario" and scenario_run["passed_count"] == 1
            assert client.get(f"/api/runs/r{i}").json()["name"] == project
            assert client.get(f"/v1/traces/tr_{i + 1:032x}").json()["agent_name"] == project


def test_a_tenant_admin_cannot_revoke_the_last_key_and_open_the_server(
    database_url: str,
) -> None:
    """On a loopback server (a reverse proxy on the same machine included) open mode
    returns when no active key is left. alpha's admin may revoke its own keys; if they
    were the last ones (beta's were revoked by the owner, the owner works with the CLI),
    revoking them opened every project to anyone, who could then mint a global admin
    key. A project-limited admin's revocation that would leave no active key is refused
    (409); the owner (a global admin key, or ``scenarist keys revoke``) still may."""
    store = SqlStore(database_url)
    alpha_info, alpha_key = run_sync(
        store.create_api_key, ["admin"], "alpha admin", projects=["alpha"]
    )
    beta_info, beta_key = run_sync(store.create_api_key, ["admin"], "beta", projects=["beta"])
    run_sync(store.scoped("beta").ingest_run_log, make_run_log("r-beta"))
    assert run_sync(store.revoke_api_key, beta_info.key_id)  # the owner, with the CLI
    with LiveServer(create_app(database_url)) as server:
        alpha = httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {alpha_key}"})
        anonymous = httpx2.Client(base_url=server.url)
        try:
            refused = alpha.delete(f"/api/keys/{alpha_info.key_id}")
            assert refused.status_code == 409, refused.text
            assert "last active key" in refused.json()["error"]["message"]
            # the settings form: the same rule
            page = alpha.get("/settings", headers=HTML)
            token = TOKEN.search(page.text)
            assert token is not None
            form = {"csrf_token": token.group(1), "action": "revoke", "key_id": alpha_info.key_id}
            by_form = alpha.post("/settings", data=form, headers=HTML)
            assert by_form.status_code == 409 and "last active key" in by_form.text
            assert anonymous.get("/api/runs?project=beta").status_code == 401
            minted = anonymous.post("/api/keys", json={"scopes": ["admin"]})
            assert minted.status_code == 401
            assert alpha.get("/api/runs").status_code == 200  # alpha's key still works
            # with another active key (one of alpha's), alpha may revoke its first one
            second = alpha.post("/api/keys", json={"scopes": ["read"]}).json()
            assert alpha.delete(f"/api/keys/{alpha_info.key_id}").status_code == 204
            assert second["projects"] == ["alpha"]
        finally:
            alpha.close()
            anonymous.close()
    assert beta_key  # never used: beta's key was revoked before the server started


def _same_answer(
    taken: httpx2.Response, taken_id: str, free: httpx2.Response, free_id: str
) -> None:
    assert taken.status_code == free.status_code, (taken.text, free.text)
    assert taken.text.replace(taken_id, "<id>") == free.text.replace(free_id, "<id>")


def test_beta_ids_in_alphas_bodies_reach_nothing_of_betas(
    tenants: Tenants, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held: beta's trace id in bodies alpha sends. ``/v1/judge`` with a judge configured
    answers as for a free id and sends nothing of beta's trace to the judge model; a
    scenario run of alpha's whose items name beta's trace (failing, with a message) is
    shown on no page of beta's, and alpha's pages do not open beta's trace through it."""
    from scenarist.providers.defaults import reset_settings
    from scenarist.testing.fake_providers import FakeLLMServer

    beta, alpha = tenants.beta, tenants.alpha
    secret_trace = {"trace_id": "t-beta", "input": "BETA-SECRET-INPUT", "output": "no"}
    assert beta.post("/v1/traces", json=secret_trace).status_code == 201
    verdict = json.dumps({"passed": True, "reason": "fine", "score": 1.0})
    with FakeLLMServer([verdict] * 4) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
        monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/gpt-4o-mini")
        reset_settings()
        try:
            _same_answer(
                alpha.post("/v1/judge", json={"criteria": "x", "trace_id": "t-beta"}),
                "t-beta",
                alpha.post("/v1/judge", json={"criteria": "x", "trace_id": "t-free"}),
                "t-free",
            )
            assert (
                alpha.post("/v1/judge", json={"criteria": "x", "trace_id": "t-beta"}).status_code
                == 404
            )
            assert llm.requests == []
            mine = beta.post("/v1/judge", json={"criteria": "x", "trace_id": "t-beta"})
            assert mine.status_code == 200 and llm.requests  # beta's own trace: judged
        finally:
            reset_settings()

    run = {
        "run_id": "sr-alpha",
        "passed": False,
        "pass_count": 0,
        "fail_count": 1,
        "results": [
            {
                "name": "forged",
                "passed": False,
                "failures": ["ALPHA-WAS-HERE"],
                "trace_id": "t-beta",
            }
        ],
    }
    assert alpha.post("/v1/scenarios/s/runs", json=run).status_code == 201
    for page in ("/traces/t-beta.json", "/traces/t-beta.json?run=sr-alpha", "/traces/t-beta"):
        seen = beta.get(page, headers=HTML if not page.endswith(("json", "alpha")) else {})
        assert seen.status_code == 200, seen.text
        assert "ALPHA-WAS-HERE" not in seen.text and "sr-alpha" not in seen.text.replace(
            "run=sr-alpha", ""
        )
    for page in ("/traces/t-beta.json?run=sr-alpha", "/runs/sr-alpha.json"):
        assert "BETA-SECRET-INPUT" not in alpha.get(page).text
    assert alpha.get("/traces/t-beta.json?run=sr-alpha").status_code == 404


def test_the_item_form_refuses_a_trace_id_this_project_does_not_hold(tenants: Tenants) -> None:
    """``PUT``/``POST /v1/scenarios/{name}/items`` refuse an item whose ``trace_id`` is not
    stored (422 naming it); the dashboard's item form stored it (303): an item of alpha's
    naming beta's trace id, which alpha can never replay. Now the form answers as the API
    does, the same for beta's id and a free one, and stores nothing."""
    assert tenants.beta.post("/v1/traces", json={"trace_id": "t-beta"}).status_code == 201
    assert tenants.alpha.post("/v1/traces", json={"trace_id": "t-alpha"}).status_code == 201
    browser = tenants.browser("alpha")
    token = TOKEN.search(browser.get("/items/s", headers=HTML).text)
    assert token is not None

    def create(trace_id: str) -> httpx2.Response:
        form = {"csrf_token": token.group(1), "action": "create", "trace_id": trace_id}
        return browser.post("/items/s", data=form, headers=HTML)

    taken, free = create("t-beta"), create("t-free")
    assert taken.status_code == free.status_code == 422, taken.text
    assert "is not stored" in taken.text
    assert taken.text.replace("t-beta", "<id>") == free.text.replace("t-free", "<id>")
    assert tenants.alpha.get("/v1/scenarios/s/items").json()["items"] == []
    assert create("t-alpha").status_code == 303  # alpha's own trace: the item is made
    items = tenants.alpha.get("/v1/scenarios/s/items").json()["items"]
    assert [i["trace_id"] for i in items] == ["t-alpha"]


def test_two_tenants_revoking_their_last_keys_at_once_leave_one(database_url: str) -> None:
    """alpha and beta each revoke their only key at the same moment, and those are the
    server's last active keys: one revocation goes through, the other is refused (409),
    never both (the active keys are read locked), so the server never opens."""
    store = SqlStore(database_url)
    made = {
        p: run_sync(store.create_api_key, ["admin"], p, projects=[p]) for p in ("alpha", "beta")
    }
    with LiveServer(create_app(database_url)) as server:
        clients = {
            p: httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"})
            for p, (_, key) in made.items()
        }
        try:
            with ThreadPoolExecutor(max_workers=2) as pool:
                answers = list(
                    pool.map(
                        lambda p: clients[p].delete(f"/api/keys/{made[p][0].key_id}").status_code,
                        ("alpha", "beta"),
                    )
                )
        finally:
            for client in clients.values():
                client.close()
    assert sorted(answers) == [204, 409], answers
    assert run_sync(store.has_active_keys)
