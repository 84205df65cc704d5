"""Keys are a tenant's too (issue 29, items 1 and 2): an admin key limited to projects
lists, creates and revokes only keys within its projects, never a global key, and never
mints a wider key, over REST (``/api/keys``) and over the ``/settings`` form (a session,
with its CSRF token). Through the real HTTP server, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

import httpx2
import pytest
from tests.helpers.limits import HANG_S
from tests.server.conftest import LiveServer

from scenarist.server.app import create_app
from scenarist.store import admin

HTML = {"Accept": "text/html"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
NEW_KEY = re.compile(r'id="new-key-value">(sk_scen_[^<]+)<')


class Key(NamedTuple):
    key_id: str
    key: str


class World(NamedTuple):
    url: str
    database_url: str
    owner: Key  # global admin
    alpha_admin: Key
    alpha_read: Key
    beta_read: Key
    alpha_beta_ingest: Key  # opens alpha and beta: not within alpha alone
    global_ingest: Key


def _key(database_url: str, scopes: list[str], projects: list[str] | None) -> Key:
    info, key = admin.create_key(scopes, database_url=database_url, projects=projects)
    return Key(info.key_id, key)


@pytest.fixture
def world(database_url: str) -> Iterator[World]:
    keys = [
        _key(database_url, ["admin"], None),
        _key(database_url, ["admin"], ["alpha"]),
        _key(database_url, ["read"], ["alpha"]),
        _key(database_url, ["read"], ["beta"]),
        _key(database_url, ["ingest"], ["alpha", "beta"]),
        _key(database_url, ["ingest"], None),
    ]
    with LiveServer(create_app(database_url)) as server:
        yield World(server.url, database_url, *keys)


def _client(world: World, key: Key | None = None) -> httpx2.Client:
    headers = {"Authorization": f"Bearer {key.key}"} if key else {}
    return httpx2.Client(base_url=world.url, headers=headers, timeout=HANG_S)


def _active(world: World, key: Key) -> bool:
    listed = {k.key_id: k for k in admin.list_keys(world.database_url)}
    return listed[key.key_id].revoked_at is None


def _projects_of(world: World, key_id: str) -> list[str] | None:
    listed = {k.key_id: k for k in admin.list_keys(world.database_url)}
    return listed[key_id].projects


def test_a_project_limited_admin_manages_only_its_projects_keys_over_rest(world: World) -> None:
    with _client(world, world.alpha_admin) as client:
        listed = client.get("/api/keys")
        assert listed.status_code == 200, listed.text
        # its own key and alpha's read key; never the global keys, never beta's
        assert {k["key_id"] for k in listed.json()} == {
            world.alpha_admin.key_id,
            world.alpha_read.key_id,
        }

        wider = client.post("/api/keys", json={"scopes": ["read"], "projects": ["alpha", "beta"]})
        assert wider.status_code == 403
        assert "may grant the project(s) alpha only" in wider.json()["error"]["message"]
        made = client.post("/api/keys", json={"scopes": ["read"]})
        assert made.status_code == 201 and made.json()["projects"] == ["alpha"]
        assert _projects_of(world, made.json()["key_id"]) == ["alpha"]

        unknown = client.delete("/api/keys/000000000000")
        assert unknown.status_code == 404
        for outside in (world.beta_read, world.alpha_beta_ingest, world.owner, world.global_ingest):
            refused = client.delete(f"/api/keys/{outside.key_id}")
            assert refused.status_code == 404, outside  # as if unknown: no id learnt
            assert refused.json()["error"]["message"] == f"no active key {outside.key_id!r}"
            assert _active(world, outside)
        assert client.delete(f"/api/keys/{world.alpha_read.key_id}").status_code == 204
        assert not _active(world, world.alpha_read)

    with _client(world, world.owner) as client:  # the owner's global key: every key
        assert len(client.get("/api/keys").json()) == 7
        assert client.delete(f"/api/keys/{world.beta_read.key_id}").status_code == 204


def test_a_limited_admin_of_several_projects_grants_them_or_fewer(world: World) -> None:
    _, key = admin.create_key(["admin"], database_url=world.database_url, projects=["a", "b"])
    named = {"Authorization": f"Bearer {key}", "X-Scenarist-Project": "a"}
    with httpx2.Client(base_url=world.url, headers=named, timeout=HANG_S) as client:
        made = client.post("/api/keys", json={"scopes": ["ingest"]})
        assert made.status_code == 201 and made.json()["projects"] == ["a", "b"]
        fewer = client.post("/api/keys", json={"scopes": ["ingest"], "projects": ["b"]})
        assert fewer.status_code == 201 and fewer.json()["projects"] == ["b"]
        empty = client.post("/api/keys", json={"scopes": ["ingest"], "projects": []})
        assert empty.status_code == 422
        assert "at least one project" in empty.json()["error"]["message"]
        listed = {k["key_id"] for k in client.get("/api/keys").json()}
        assert listed == {made.json()["key_id"], fewer.json()["key_id"], key.split("_")[2]}


def _login(client: httpx2.Client, key: Key) -> None:
    page = client.get("/login", headers=HTML)
    found = TOKEN.search(page.text)
    assert found is not None
    form = {"csrf_token": found.group(1), "api_key": key.key, "next": "/settings"}
    answer = client.post("/login", data=form, headers=HTML)
    assert answer.status_code == 303, answer.text


def _settings_token(client: httpx2.Client) -> str:
    page = client.get("/settings", headers=HTML)
    assert page.status_code == 200, page.text
    found = TOKEN.search(page.text)
    assert found is not None
    return found.group(1)


def test_a_limited_admin_session_on_the_settings_form(world: World) -> None:
    with _client(world) as client:
        _login(client, world.alpha_admin)
        token = _settings_token(client)
        page = client.get("/settings", headers=HTML)
        for hidden in (world.owner, world.beta_read, world.alpha_beta_ingest, world.global_ingest):
            assert hidden.key_id not in page.text
        twin = client.get("/settings.json")
        assert {k["key_id"] for k in twin.json()["keys"]} == {
            world.alpha_admin.key_id,
            world.alpha_read.key_id,
        }

        create = {"csrf_token": token, "action": "create", "scope": ["read"]}
        made = client.post("/settings", data=create, headers=HTML)  # no project: its own
        assert made.status_code == 201, made.text
        found = NEW_KEY.search(made.text)
        assert found is not None
        new_id = found.group(1).split("_")[2]
        assert _projects_of(world, new_id) == ["alpha"]
        with httpx2.Client(
            base_url=world.url, headers={"Authorization": f"Bearer {found.group(1)}"}
        ) as as_new:
            assert as_new.get("/api/runs?project=beta").status_code == 403

        before = len(admin.list_keys(world.database_url))
        wider = client.post("/settings", data={**create, "project": "alpha, beta"}, headers=HTML)
        assert wider.status_code == 403
        assert "may grant the project(s) alpha only" in wider.text
        assert len(admin.list_keys(world.database_url)) == before

        revoke = {"csrf_token": token, "action": "revoke"}
        unknown = client.post("/settings", data={**revoke, "key_id": "000000000000"})
        assert unknown.status_code == 404
        for outside in (world.beta_read, world.owner, world.alpha_beta_ingest):
            refused = client.post("/settings", data={**revoke, "key_id": outside.key_id})
            assert refused.status_code == 404  # the same answer as for an unknown id
            assert f"there is no active key &#39;{outside.key_id}&#39;" in refused.text
            assert _active(world, outside)
        done = client.post("/settings", data={**revoke, "key_id": world.alpha_read.key_id})
        assert (done.status_code, done.headers["location"]) == (303, "/settings")
        assert not _active(world, world.alpha_read)


def test_the_global_admin_settings_form_creates_project_keys(world: World) -> None:
    with _client(world) as client:
        _login(client, world.owner)
        token = _settings_token(client)
        create = {"csrf_token": token, "action": "create", "scope": ["read"]}
        made = client.post("/settings", data={**create, "project": "beta"}, headers=HTML)
        assert made.status_code == 201, made.text
        found = NEW_KEY.search(made.text)
        assert found is not None
        assert _projects_of(world, found.group(1).split("_")[2]) == ["beta"]
        every = client.post("/settings", data=create, headers=HTML)
        found = NEW_KEY.search(every.text)
        assert found is not None
        assert _projects_of(world, found.group(1).split("_")[2]) is None
        bad = client.post("/settings", data={**create, "project": "no way"}, headers=HTML)
        assert bad.status_code == 422 and "is not a project name" in bad.text


def test_a_session_of_a_limited_key_is_limited_the_same_way(world: World) -> None:
    with _client(world) as client:
        _login(client, world.alpha_read)
        assert client.get("/index.json").status_code == 200  # its only project
        assert client.get("/index.json?project=alpha").status_code == 200
        other = client.get("/index.json?project=beta")
        assert other.status_code == 403
        assert "scoped to the project(s) alpha" in other.json()["error"]["message"]
        assert client.get("/api/runs", headers={"X-Scenarist-Project": "beta"}).status_code == 403
        assert client.get("/settings.json").status_code == 403  # read is not admin
