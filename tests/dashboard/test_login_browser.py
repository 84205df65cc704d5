"""Signing in through the login form in a real Chromium, then creating a key on the
settings page: the new key is shown once, and never again."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM
from tests.server.conftest import LiveServer
from tests.server.dashboard_data import seed

from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore

pytestmark = NO_CHROMIUM


async def _seed_with_admin_key(url: str) -> str:
    store = SqlStore(url)
    try:
        await seed(store)
        _, key = await store.create_api_key(["admin"], "owner")
        return key
    finally:
        await store.close()


@pytest.fixture
def locked_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LiveServer, str]]:
    """The seeded dashboard with an admin key (so no open mode) and its key."""
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    url = f"sqlite:///{tmp_path / 'scenarist.db'}"
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API may hold this thread's loop
        key = pool.submit(anyio.run, _seed_with_admin_key, url).result()
    with LiveServer(create_app(url)) as live:
        yield live, key


def test_login_then_settings_creates_a_key_shown_once(
    page: Page, locked_server: tuple[LiveServer, str], console_errors: list[str]
) -> None:
    server, admin_key = locked_server
    page.goto(server.url + "/")
    expect(page).to_have_url(server.url + "/login?next=%2F")
    page.fill("input[name=api_key]", admin_key[:-2] + "xx")
    page.click("button[type=submit]")
    expect(page.locator("#login-error")).to_contain_text("not valid")

    page.fill("input[name=api_key]", admin_key)
    page.click("button[type=submit]")
    expect(page).to_have_url(server.url + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["scenarist_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert admin_key not in session["value"]

    page.click("header nav >> text=Settings")
    expect(page.locator("h1")).to_have_text("Settings")
    expect(page.locator("table.keys tbody tr")).to_have_count(1)
    page.fill("form.add-key input[name=name]", "laptop")
    page.check("form.add-key input[value=ingest]")
    page.click("#create-key")
    new_key = page.locator("#new-key-value").inner_text()
    assert new_key.startswith("sk_scen_") and new_key != admin_key
    expect(page.locator("table.keys tbody tr")).to_have_count(2)
    expect(page.locator("table.keys")).to_contain_text("ingest, read")

    page.goto(server.url + "/settings")
    expect(page.locator("table.keys tbody tr")).to_have_count(2)
    expect(page.locator("#new-key")).to_have_count(0)
    assert new_key not in page.content()  # shown once, never again

    page.click("#logout")
    expect(page).to_have_url(server.url + "/login")
    page.goto(server.url + "/settings")
    expect(page).to_have_url(server.url + "/login?next=%2Fsettings")
    wrong_key = "the server responded with a status of 401"  # the deliberate bad login
    assert [e for e in console_errors if wrong_key not in e] == []
