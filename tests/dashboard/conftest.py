"""Browser fixtures: the seeded app served by uvicorn on 127.0.0.1 (a free port, in a
background thread) and Debian's Chromium driven by Playwright's Python API.

Screenshots are kept as test artefacts in ``$SCENARIST_TEST_ARTIFACTS/screenshots``
(default ``.test-artifacts/screenshots`` at the repository root, git-ignored), one file
per view, overwritten on each run.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``.ci/run``
installs Debian's package) with the flags known to work on these machines. Without that
binary the tests are skipped, and the skip says why (``NO_CHROMIUM``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright
from tests.helpers.limits import HANG_MS
from tests.server.conftest import LiveServer
from tests.server.dashboard_data import seed
from tests.server.dashboard_views_data import seed_views

from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore

if TYPE_CHECKING:
    from playwright.sync_api._context_manager import PlaywrightContextManager

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_NO_CHROMIUM_REASON = (
    f"{CHROMIUM} not found: install Debian's chromium package to run browser tests"
)
NO_CHROMIUM = pytest.mark.skipif(not CHROMIUM.exists(), reason=_NO_CHROMIUM_REASON)


async def _seed(url: str, fill: Callable[[SqlStore], Awaitable[object]] = seed) -> None:
    store = SqlStore(url)
    try:
        await fill(store)
    finally:
        await store.close()


def _seeded_server(
    tmp_path_factory: pytest.TempPathFactory, fill: Callable[[SqlStore], Awaitable[object]]
) -> Iterator[LiveServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('dashboard') / 'scenarist.db'}"
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API may hold this thread's loop
        pool.submit(anyio.run, _seed, url, fill).result()
    with LiveServer(create_app(url)) as live:
        yield live


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The dashboard on a real socket, over a seeded SQLite file."""
    yield from _seeded_server(tmp_path_factory, seed)


@pytest.fixture(scope="module")
def views_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The dashboard over the richer views' data (``tests/server/dashboard_views_data``)."""
    yield from _seeded_server(tmp_path_factory, seed_views)


# Playwright's waits are limits, not verdicts: `expect` retries for 5 s and actions for
# 30 s by default, and a loaded machine has taken longer to draw a page. What a user sees
# is the assertion; how fast is the benchmarks' business.
BROWSER_TIMEOUT_MS = 60_000
expect.set_options(timeout=BROWSER_TIMEOUT_MS)

ARTIFACTS_ENV = "SCENARIST_TEST_ARTIFACTS"


@pytest.fixture(scope="session")
def screenshots(pytestconfig: pytest.Config) -> Path:
    """Where browser tests keep their screenshots (kept after the run, for review)."""
    root = os.environ.get(ARTIFACTS_ENV) or str(pytestconfig.rootpath / ".test-artifacts")
    folder = Path(root) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class _SharedChromium:
    """One Playwright driver and one Chromium for the browser tests run in a row.

    A launch (Playwright's Node driver, then Chromium) cost 2-3 s of CPU, once per module
    when the browser was module-scoped. Each test still gets its own browser context (its
    own cookies, storage and cache: ``page``), so sharing the process shares no state a
    test could see. The sync API holds this thread's event loop while it is started (an
    ``anyio`` test would fail to run its own), so the browser is closed as soon as the
    next test is not one of this folder's (``pytest_runtest_teardown`` below); the xdist
    scheduler in ``tests/conftest.py`` hands this folder to one worker as a whole.
    """

    def __init__(self) -> None:
        self._driver: PlaywrightContextManager | None = None
        self._playwright: Playwright | None = None
        self._chromium: Browser | None = None

    def playwright(self) -> Playwright:
        if self._playwright is None:
            self._driver = sync_playwright()
            self._playwright = self._driver.start()
        return self._playwright

    def chromium(self) -> Browser:
        if self._chromium is None:
            self._chromium = self.playwright().chromium.launch(
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS,
                timeout=HANG_MS,  # Playwright's own limit is 30 s: a loaded machine's, not ours
            )
        return self._chromium

    def close(self) -> None:
        chromium, driver = self._chromium, self._driver
        self._chromium = self._playwright = self._driver = None
        try:
            if chromium is not None:
                chromium.close()
        finally:
            if driver is not None:
                driver.__exit__(None, None, None)


_SHARED = _SharedChromium()
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield  # the test's own fixtures (its browser context) are torn down first
    if nextitem is None or HERE not in Path(nextitem.path).resolve().parents:
        _SHARED.close()


@pytest.fixture
def playwright() -> Playwright:
    """The shared Playwright driver, for a test that launches a browser of its own."""
    if not CHROMIUM.exists():  # every browser test skips, marked or not
        pytest.skip(_NO_CHROMIUM_REASON)
    return _SHARED.playwright()


@pytest.fixture
def browser() -> Browser:
    """The shared headless Chromium (launched by the first browser test in a row)."""
    if not CHROMIUM.exists():  # every browser test skips, marked or not
        pytest.skip(_NO_CHROMIUM_REASON)
    return _SHARED.chromium()


@pytest.fixture
def console_errors() -> list[str]:
    """Errors the page logged (a CSP violation or a failed script shows up here)."""
    return []


@pytest.fixture
def page(browser: Browser, console_errors: list[str]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    tab = context.new_page()
    tab.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: console_errors.append(str(e)))
    try:
        yield tab
    finally:
        context.close()
