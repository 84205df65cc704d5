"""Cookies are ``Secure`` whenever the request came over https: directly, or through a
proxy the server was told to trust (``X-Forwarded-Proto``, handled by uvicorn); never
from an ``X-Forwarded-Proto`` the server does not trust, and never over plain http."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from scenarist.server.app import create_app
from scenarist.server.cli import uvicorn_options
from scenarist.server.threaded import ThreadedServer

pytestmark = pytest.mark.anyio

PAGE = {"accept": "text/html"}
PAGES = ("/login", "/items/support", "/?project=alpha")


def _cookies(response: httpx2.Response) -> dict[str, str]:
    """``name -> the whole Set-Cookie line`` of a response."""
    lines = response.headers.get_list("set-cookie")
    return {line.split("=", 1)[0]: line for line in lines}


def _secure(line: str) -> bool:
    return "secure" in [part.strip().lower() for part in line.split(";")]


async def _client(database_url: str, base_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=base_url) as client:
            yield client


async def _set_cookies(client: httpx2.AsyncClient) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in PAGES:
        response = await client.get(path, headers=PAGE)
        assert response.status_code == 200, (path, response.text[:300])
        found |= _cookies(response)
    return found


async def test_cookies_over_https_are_secure(database_url: str) -> None:
    async for client in _client(database_url, "https://127.0.0.1"):
        cookies = await _set_cookies(client)
    assert {"scenarist_csrf", "scenarist_project"} <= set(cookies), cookies
    for name in ("scenarist_csrf", "scenarist_project"):
        assert _secure(cookies[name]), cookies[name]
        assert "httponly" in cookies[name].lower()


async def test_cookies_over_http_are_not_secure(database_url: str) -> None:
    """(A Secure cookie over plain http would never come back: the dashboard would break.)"""
    async for client in _client(database_url, "http://127.0.0.1"):
        cookies = await _set_cookies(client)
    assert {"scenarist_csrf", "scenarist_project"} <= set(cookies), cookies
    assert not any(_secure(line) for line in cookies.values()), cookies


def test_behind_a_trusted_proxy_x_forwarded_proto_counts(database_url: str) -> None:
    https = {**PAGE, "x-forwarded-proto": "https"}
    trusted = ThreadedServer(create_app(database_url), **uvicorn_options(["127.0.0.1"]))
    with trusted, httpx2.Client(base_url=trusted.url) as http:
        for path in PAGES:
            http.cookies.clear()  # each page as a first visit: every cookie set anew
            cookies = _cookies(http.get(path, headers=https))
            assert cookies and all(_secure(line) for line in cookies.values()), (path, cookies)
    untrusted = ThreadedServer(create_app(database_url), **uvicorn_options([]))
    with untrusted, httpx2.Client(base_url=untrusted.url) as http:
        for path in PAGES:
            http.cookies.clear()
            cookies = _cookies(http.get(path, headers=https))
            assert cookies and not any(_secure(line) for line in cookies.values()), (path, cookies)
