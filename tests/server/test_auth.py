"""API keys and open mode, on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib

import httpx2
import pytest
from sqlalchemy import select

from scenarist.errors import UserError
from scenarist.server.app import create_app
from scenarist.store.sql.migrate import head_revision
from scenarist.store.sql.models import ApiKeyRow
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


async def test_auth_open_on_loopback_until_a_key_exists(app_client: httpx2.AsyncClient) -> None:
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    assert (await app_client.get("/api/runs")).status_code == 200
    _, ingest_key = await store.create_api_key(["ingest"], "ci")
    _, read_key = await store.create_api_key(["read"])
    info, admin_key = await store.create_api_key(["admin"])

    missing = await app_client.get("/api/runs")
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    assert missing.json()["error"]["code"] == "unauthorized"

    def auth(key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}

    wrong = ingest_key[:-4] + "abcd"
    assert (await app_client.get("/api/runs", headers=auth(wrong))).status_code == 401
    assert (await app_client.get("/api/runs", headers=auth("sk_scen_x"))).status_code == 401
    basic = {"Authorization": "Basic dXNlcjpwYXNz"}
    assert (await app_client.get("/api/runs", headers=basic)).status_code == 401
    assert (await app_client.get("/api/runs", headers=auth(read_key))).status_code == 200
    forbidden = await app_client.get("/api/runs", headers=auth(ingest_key))
    assert forbidden.status_code == 403
    assert "'read'" in forbidden.json()["error"]["message"]
    trace = {"trace_id": "t1"}
    assert (
        await app_client.post("/v1/traces", json=trace, headers=auth(ingest_key))
    ).status_code == 201
    assert (
        await app_client.post("/v1/traces", json=trace, headers=auth(read_key))
    ).status_code == 403
    assert (await app_client.get("/v1/traces/t1", headers=auth(admin_key))).status_code == 200
    assert (await app_client.get("/api/keys", headers=auth(read_key))).status_code == 403
    assert (await app_client.get("/api/health")).status_code == 200  # always open

    keys = (await app_client.get("/api/keys", headers=auth(admin_key))).json()
    assert len(keys) == 3 and all("key" not in k and "key_hash" not in k for k in keys)
    revoke = await app_client.delete(f"/api/keys/{info.key_id}", headers=auth(admin_key))
    assert revoke.status_code == 204
    assert (await app_client.get("/api/runs", headers=auth(admin_key))).status_code == 401


async def test_auth_keys_are_hashed_at_rest(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        info, key = await store.create_api_key(["read", "ingest"], "laptop")
        assert key.startswith("sk_scen_")
        async with store._read() as connection:
            rows = (await connection.execute(select(ApiKeyRow.__table__))).all()
        assert len(rows) == 1
        stored = " ".join(str(v) for v in rows[0])
        secret = key.split("_", 3)[-1]  # sk_scen_<id>_<secret>; the secret may contain "_"
        assert key not in stored
        assert secret not in stored
        assert rows[0].key_hash == hashlib.sha256(key.encode()).hexdigest()
        assert info.scopes == ["ingest", "read"]
        assert await store.verify_api_key(key) == ["ingest", "read"]
        assert await store.verify_api_key(key + "x") is None
        with pytest.raises(UserError, match="scopes must be"):
            await store.create_api_key(["root"])
    finally:
        await store.close()


async def test_auth_non_loopback_app_is_never_open(database_url: str) -> None:
    app = create_app(database_url, host="0.0.0.0")
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            assert (await client.get("/api/runs")).status_code == 401
            assert (await client.get("/api/health")).status_code == 200


def test_serve_refuses_a_public_host_without_keys(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from scenarist.server import cli
    from scenarist.store import admin

    started: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, **kw: started.append(host))
    url = f"sqlite:///{tmp_path}/s.db"
    with pytest.raises(UserError, match=r"refusing to listen on '0\.0\.0\.0'"):
        cli.serve("0.0.0.0", 8480, url)
    assert started == []
    cli.serve("127.0.0.1", 8480, url)
    info, _ = admin.create_key(["ingest", "read"], name="ci", database_url=url)
    cli.serve("0.0.0.0", 8480, url)
    assert started == ["127.0.0.1", "0.0.0.0"]
    assert [k.key_id for k in admin.list_keys(url)] == [info.key_id]
    admin.revoke_key(info.key_id, url)
    with pytest.raises(UserError, match="no active API key"):
        admin.revoke_key(info.key_id, url)
    assert admin.list_keys(url)[0].revoked_at is not None
    assert admin.db_upgrade(url) == head_revision()


async def test_auth_open_mode_serves_a_request_whatever_key_it_sends(
    app_client: httpx2.AsyncClient,
) -> None:
    """The Veval SDK always sends its API key: on a fresh loopback server (no key exists)
    the header is not checked; once a key exists, a wrong one is 401 again."""
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    for header in ("Bearer vk_live_from_veval", "Bearer ", "Basic dXNlcjpwYXNz"):
        answer = await app_client.get("/api/runs", headers={"Authorization": header})
        assert answer.status_code == 200, header
    posted = await app_client.post(
        "/v1/traces", json={"trace_id": "t_open"}, headers={"Authorization": "Bearer vk_x"}
    )
    assert posted.status_code == 201
    await store.create_api_key(["read"])
    closed = await app_client.get("/api/runs", headers={"Authorization": "Bearer vk_x"})
    assert closed.status_code == 401
    assert "not valid" in closed.json()["error"]["message"]
