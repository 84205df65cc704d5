"""Dashboard sessions (login, logout, expiry, revocation), the settings page and its CSRF
checks, on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from pathlib import Path

import httpx2
import pytest

from scenarist.server.app import create_app
from scenarist.server.dashboard.session import (
    SESSION_COOKIE,
    read_session,
    safe_next,
    sign_session,
)
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio

HTML = {"Accept": "text/html"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
NEW_KEY = re.compile(r'id="new-key-value">(sk_scen_[^<]+)<')


def _store(client: httpx2.AsyncClient) -> SqlStore:
    store: SqlStore = client.app.state.store  # type: ignore[attr-defined]
    return store


async def _token(client: httpx2.AsyncClient, path: str = "/login") -> str:
    page = await client.get(path, headers=HTML)
    assert page.status_code == 200, page.text
    found = TOKEN.search(page.text)
    assert found is not None
    return found.group(1)


async def _login(client: httpx2.AsyncClient, key: str, next_url: str = "/") -> httpx2.Response:
    token = await _token(client)
    form = {"csrf_token": token, "api_key": key, "next": next_url}
    return await client.post("/login", data=form, headers=HTML)


def _secret_file(home: Path) -> tuple[bytes, int]:
    """The stored secret and the permission bits it grants to group and others."""
    stored = home / "secret_key"
    return stored.read_text().strip().encode(), stored.stat().st_mode & 0o077


def test_session_cookie_is_signed_and_expires() -> None:
    secret = b"s" * 32
    now = int(time.time())
    value = sign_session(secret, "abc123", now + 60, "s1")
    assert read_session(secret, value) == ("abc123", "s1", now + 60)
    assert read_session(b"t" * 32, value) is None  # another server's secret
    assert read_session(secret, value, now=now + 61) is None  # expired
    version, key_id, session_id, expires, signature = value.split(".")
    assert read_session(secret, f"{version}.other.{session_id}.{expires}.{signature}") is None
    assert read_session(secret, f"{version}.{key_id}.s2.{expires}.{signature}") is None
    later = int(expires) + 9
    assert read_session(secret, f"{version}.{key_id}.{session_id}.{later}.{signature}") is None
    v1 = f"v1.{key_id}.{expires}."  # the old format, without a session id to end
    v1 += hmac.new(secret, v1[:-1].encode(), hashlib.sha256).hexdigest()
    for garbage in ("", "v2", "v2.a.b.c", "v2.a..1.x", "v2..s.1.x", value + ".x", v1):
        assert read_session(secret, garbage) is None
    assert [safe_next(v) for v in ("/runs/1?x=2", "//evil.example", "https://x", None)] == [
        "/runs/1?x=2",
        "/",
        "/",
        "/",
    ]
    assert safe_next("/\\evil") == safe_next("/login?next=/") == "/"


async def test_session_login_reads_pages_until_the_key_is_revoked(
    app_client: httpx2.AsyncClient,
) -> None:
    store = _store(app_client)
    read_info, read_key = await store.create_api_key(["read"], "viewer")
    _, ingest_key = await store.create_api_key(["ingest"], "ci")

    first = await app_client.get("/runs/r1?status=fail", headers=HTML)
    assert first.status_code == 303
    assert first.headers["location"] == "/login?next=%2Fruns%2Fr1%3Fstatus%3Dfail"
    htmx = await app_client.get("/", headers={"HX-Request": "true"})
    assert (htmx.status_code, htmx.headers["hx-redirect"]) == (401, "/login?next=%2F")
    api = await app_client.get("/api/runs", headers=HTML)  # the API never redirects
    assert api.status_code == 401 and api.json()["error"]["code"] == "unauthorized"
    assert (await app_client.get("/index.json")).status_code == 401

    no_csrf = await app_client.post("/login", data={"api_key": read_key}, headers=HTML)
    assert no_csrf.status_code == 403 and no_csrf.json()["error"]["code"] == "csrf_failed"
    wrong = await _login(app_client, read_key[:-3] + "xyz")
    assert wrong.status_code == 401 and "not valid" in wrong.text
    lacking = await _login(app_client, ingest_key)
    assert lacking.status_code == 403 and "lacks the &#39;read&#39; scope" in lacking.text
    assert SESSION_COOKIE not in app_client.cookies

    ok = await _login(app_client, read_key, next_url="/runs/r1?status=fail")
    assert (ok.status_code, ok.headers["location"]) == (303, "/runs/r1?status=fail")
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=43200" in cookie
    assert "Secure" not in cookie  # plain http here; https logins get Secure
    assert read_key not in cookie and read_info.key_id in cookie

    page = await app_client.get("/", headers=HTML)
    assert page.status_code == 200 and "<h1>Overview</h1>" in page.text
    assert (await app_client.get("/api/runs")).status_code == 200  # GET API with a session
    assert (await app_client.get("/settings", headers=HTML)).status_code == 403  # not admin
    trace = await app_client.post("/v1/traces", json={"trace_id": "t1"})
    assert trace.status_code == 403  # the session has the key's scopes, no more
    bad_header = await app_client.get("/api/runs", headers={"Authorization": "Bearer nope"})
    assert bad_header.status_code == 401  # a cookie never rescues a bad key

    assert await store.revoke_api_key(read_info.key_id)
    after = await app_client.get("/", headers=HTML)
    assert after.status_code == 303 and after.headers["location"].startswith("/login")
    assert (await app_client.get("/api/runs")).status_code == 401


async def test_session_logout_and_expiry_and_tampering(app_client: httpx2.AsyncClient) -> None:
    store = _store(app_client)
    info, key = await store.create_api_key(["read"])
    assert (await _login(app_client, key)).status_code == 303
    assert (await app_client.get("/", headers=HTML)).status_code == 200

    app = app_client.app  # type: ignore[attr-defined]
    secret: bytes = app.state.session_secret
    expired = sign_session(secret, info.key_id, int(time.time()) - 1, "old")
    app_client.cookies.clear()
    app_client.cookies.set(SESSION_COOKIE, expired)
    assert (await app_client.get("/", headers=HTML)).status_code == 303
    forged = sign_session(b"x" * 32, info.key_id, int(time.time()) + 3600, "forged")
    app_client.cookies.clear()
    app_client.cookies.set(SESSION_COOKIE, forged)
    assert (await app_client.get("/", headers=HTML)).status_code == 303
    app_client.cookies.clear()

    assert (await _login(app_client, key)).status_code == 303
    token = await _token(app_client, "/login")
    foreign = await app_client.post(
        "/logout", data={"csrf_token": token}, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    out = await app_client.post("/logout", data={"csrf_token": token})
    assert (out.status_code, out.headers["location"]) == (303, "/login")
    assert SESSION_COOKIE not in app_client.cookies
    assert (await app_client.get("/", headers=HTML)).status_code == 303


async def test_session_secret_survives_a_restart_and_can_be_configured(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys: list[str] = []

    async def session_after_login(app_secret_env: str | None) -> tuple[str, bytes]:
        if app_secret_env is None:
            monkeypatch.delenv("SCENARIST_SECRET_KEY", raising=False)
        else:
            monkeypatch.setenv("SCENARIST_SECRET_KEY", app_secret_env)
        app = create_app(database_url)
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(
                transport=transport, base_url="http://127.0.0.1"
            ) as client:
                client.app = app  # type: ignore[attr-defined]
                if not keys:
                    keys.append((await app.state.store.create_api_key(["read"]))[1])
                response = await _login(client, keys[0])
                assert response.status_code == 303
                secret: bytes = app.state.session_secret
                return client.cookies[SESSION_COOKIE], secret

    cookie, secret = await session_after_login(None)
    assert _secret_file(tmp_path / "home") == (secret, 0)  # readable by its owner only
    _, again = await session_after_login(None)
    assert again == secret  # a restart keeps sessions
    assert read_session(again, cookie) is not None
    _, configured = await session_after_login("a configured secret of some length")
    assert configured == b"a configured secret of some length"


async def test_settings_lists_creates_once_and_revokes_keys(
    app_client: httpx2.AsyncClient,
) -> None:
    store = _store(app_client)
    # open mode (loopback, no key): the settings page is open too
    open_page = await app_client.get("/settings.json")
    assert open_page.status_code == 200 and open_page.json()["open_mode"] is True
    info, admin_key = await store.create_api_key(["admin"], "owner")
    assert (await app_client.get("/settings.json")).status_code == 401
    as_bearer = await app_client.get("/settings", headers={"Authorization": f"Bearer {admin_key}"})
    assert as_bearer.status_code == 200 and as_bearer.json()["keys"][0]["key_id"] == info.key_id

    assert (await _login(app_client, admin_key, next_url="/settings")).status_code == 303
    token = await _token(app_client, "/settings")
    page = await app_client.get("/settings", headers=HTML)
    assert f'id="signed-in-as">{info.key_id}<' in page.text

    create = {"csrf_token": token, "action": "create", "name": "<b>ci</b>"}
    made = await app_client.post(
        "/settings", data={**create, "scope": ["ingest", "read"]}, headers=HTML
    )
    assert made.status_code == 201 and made.headers["cache-control"] == "no-store"
    assert "&lt;b&gt;ci&lt;/b&gt;" in made.text and "<b>ci</b>" not in made.text
    found = NEW_KEY.search(made.text)
    assert found is not None
    new_key = found.group(1)
    assert await store.verify_api_key(new_key) == ["ingest", "read"]
    listing = await app_client.get("/settings.json")
    again = await app_client.get("/settings", headers=HTML)
    assert new_key not in listing.text and new_key not in again.text
    keys = listing.json()["keys"]
    assert [k["scopes"] for k in keys] == [["admin"], ["ingest", "read"]]
    fields = {"key_id", "name", "scopes", "created_at", "revoked_at", "projects"}
    assert all(set(k) == fields and k["projects"] is None for k in keys)  # all projects

    no_scope = await app_client.post("/settings", data=create, headers=HTML)
    assert no_scope.status_code == 422 and "scopes must be" in no_scope.text
    unknown = await app_client.post(
        "/settings", data={"csrf_token": token, "action": "revoke", "key_id": "nope"}
    )
    assert unknown.status_code == 404  # as DELETE /api/keys/{id} answers
    forged = await app_client.post(
        "/settings", data={**create, "scope": "admin", "csrf_token": "0" * 64}
    )
    assert forged.status_code == 403 and forged.json()["error"]["code"] == "csrf_failed"
    cross_site = await app_client.post(
        "/settings",
        data={**create, "scope": "admin"},
        headers={"Origin": "https://evil.example"},
    )
    assert cross_site.status_code == 403  # a foreign origin changes nothing, session or not
    assert cross_site.json()["error"]["code"] == "cross_origin"
    assert len(await store.list_api_keys()) == 2

    new_id = keys[1]["key_id"]
    revoke = {"csrf_token": token, "action": "revoke", "key_id": new_id}
    done = await app_client.post("/settings", data=revoke)
    assert (done.status_code, done.headers["location"]) == (303, "/settings")
    assert await store.verify_api_key(new_key) is None
    await store.create_api_key(["ingest"])  # without an active key, open mode would return
    revoke_own = {"csrf_token": token, "action": "revoke", "key_id": info.key_id}
    assert (await app_client.post("/settings", data=revoke_own)).status_code == 303
    assert (await app_client.get("/settings", headers=HTML)).status_code == 303  # signed out


async def test_logout_revokes_the_session_on_the_server(
    database_url: str, app_client: httpx2.AsyncClient
) -> None:
    """A cookie copied before ``POST /logout`` (another tab, a stolen copy) opens nothing
    after it, also once the server restarted; the key's other sessions go on."""
    store = _store(app_client)
    _, admin_key = await store.create_api_key(["admin"], "owner")
    assert (await _login(app_client, admin_key, next_url="/settings")).status_code == 303
    copied = app_client.cookies[SESSION_COOKIE]
    assert (await app_client.get("/settings", headers=HTML)).status_code == 200
    app_client.cookies.clear()
    assert (await _login(app_client, admin_key)).status_code == 303
    other_tab = app_client.cookies[SESSION_COOKIE]
    assert other_tab != copied  # each login is its own session
    app_client.cookies.clear()
    app_client.cookies.set(SESSION_COOKIE, copied)
    token = await _token(app_client, "/settings")
    out = await app_client.post("/logout", data={"csrf_token": token})
    assert (out.status_code, out.headers["location"]) == (303, "/login")

    app_client.cookies.clear()
    app_client.cookies.set(SESSION_COOKIE, copied)
    replayed = await app_client.get("/settings", headers=HTML)
    assert replayed.status_code == 303 and replayed.headers["location"].startswith("/login")
    assert (await app_client.get("/settings.json")).status_code == 401
    assert (await app_client.get("/api/runs")).status_code == 401
    app_client.cookies.clear()
    app_client.cookies.set(SESSION_COOKIE, other_tab)
    assert (await app_client.get("/settings", headers=HTML)).status_code == 200

    restarted = create_app(database_url)  # same database, same secret file
    async with restarted.router.lifespan_context(restarted):
        transport = httpx2.ASGITransport(app=restarted)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            http.cookies.set(SESSION_COOKIE, copied)
            assert (await http.get("/settings.json")).status_code == 401
            http.cookies.set(SESSION_COOKIE, other_tab)
            assert (await http.get("/settings.json")).status_code == 200
