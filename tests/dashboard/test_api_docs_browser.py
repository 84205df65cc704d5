"""``/docs`` in a real headless Chromium with every request off this server refused: the
API reference shows every operation and schema (FastAPI's Swagger UI page loaded its
script from a CDN and was blank offline)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, Route, expect
from tests.dashboard.conftest import NO_CHROMIUM
from tests.server.conftest import LiveServer

pytestmark = NO_CHROMIUM


def test_the_api_page_shows_the_reference_with_nothing_from_outside(
    page: Page, server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    outside: list[str] = []

    def only_this_server(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:  # offline: a CDN is not there
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(server.url + "/")
    page.get_by_role("link", name="API", exact=True).click()
    expect(page).to_have_url(server.url + "/docs")
    expect(page.locator("h1")).to_contain_text("scenarist API")
    document = page.request.get(server.url + "/openapi.json").json()
    operations = [(m.upper(), p) for p, item in document["paths"].items() for m in item]
    shown = page.locator(".api-operation h3")
    expect(shown).to_have_count(len(operations))
    run = page.locator(".api-operation", has_text="/api/runs/{run_id}").first
    expect(run).to_be_visible()
    expect(run.locator("table.api-fields")).to_contain_text("run_id")
    expect(page.locator("#common-responses")).to_contain_text("401")
    schemas = page.locator(".api-schema")
    expect(schemas).to_have_count(len(document["components"]["schemas"]))
    page.screenshot(path=screenshots / "api-reference.png", full_page=False)
    last = page.locator("#api-toc a").last
    last.click()  # the contents link to each operation
    expect(page.locator(last.get_attribute("href") or "#none")).to_be_in_viewport()
    assert outside == []
    assert console_errors == []
