"""``/projects`` and the overview's empty state: the caller's projects with what each
holds; a key limited to some projects sees those only, not even the others' names."""

from __future__ import annotations

import httpx2
from tests.server.conftest import LiveServer, make_run_log, run_log_json, tenant_admin_keys

from scenarist.server.app import create_app

HTML = {"accept": "text/html"}


def _seed(client: httpx2.Client, project: str, count: int) -> None:
    for n in range(count):
        log = make_run_log(f"{project}-run-{n}")
        posted = client.post("/api/runs", json=run_log_json(log), params={"project": project})
        assert posted.status_code in (200, 201), posted.text


def test_an_empty_project_names_the_projects_that_hold_runs(database_url: str) -> None:
    keys = tenant_admin_keys(database_url, ("alpha", "beta", "gamma"))
    with LiveServer(create_app(database_url)) as server:
        alpha = httpx2.Client(
            base_url=server.url, headers={"authorization": f"Bearer {keys['alpha']}"}
        )
        beta = httpx2.Client(
            base_url=server.url, headers={"authorization": f"Bearer {keys['beta']}"}
        )
        _seed(alpha, "alpha", 3)
        _seed(beta, "beta", 1)
        gamma = httpx2.Client(
            base_url=server.url, headers={"authorization": f"Bearer {keys['gamma']}"}
        )
        # gamma's key opens gamma only: its empty overview names no other project
        alone = gamma.get("/", headers=HTML).text
        assert 'id="runs-elsewhere"' not in alone and "alpha" not in alone
        listed = gamma.get("/projects.json").json()
        assert [p["project"] for p in listed["projects"]] == ["gamma"]
        assert "beta" not in gamma.get("/projects", headers=HTML).text
        # alpha's key sees its three runs and nothing of beta
        mine = alpha.get("/projects.json").json()["projects"]
        assert [(p["project"], p["runs"]) for p in mine] == [("alpha", 3)]
        for client in (alpha, beta, gamma):
            client.close()


def test_an_open_server_lists_every_project_and_points_at_the_runs(
    database_url: str,
) -> None:
    server = LiveServer(create_app(database_url))
    with server, httpx2.Client(base_url=server.url) as client:  # open mode: every project
        _seed(client, "alpha", 3)
        _seed(client, "beta", 1)
        overview = client.get("/", headers=HTML).text
        assert 'id="runs-elsewhere"' in overview
        assert '<a href="/?project=alpha">alpha</a> (3 runs)' in overview
        assert '<a href="/?project=beta">beta</a> (1 run)' in overview
        twin = client.get("/index.json").json()
        assert {(p["project"], p["runs"]) for p in twin["elsewhere"]} == {
            ("alpha", 3),
            ("beta", 1),
        }
        projects = client.get("/projects.json").json()
        by_name = {p["project"]: p for p in projects["projects"]}
        assert by_name["alpha"]["runs"] == 3 and by_name["beta"]["runs"] == 1
        assert by_name["default"]["runs"] == 0
        assert projects["current"] == "default"
        chosen = client.get("/?project=alpha", headers=HTML).text
        assert 'id="runs-elsewhere"' not in chosen and "alpha-run-0" in chosen
