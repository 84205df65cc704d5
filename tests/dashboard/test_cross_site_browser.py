"""A hostile page in a real Chromium, against a server in open mode on 127.0.0.1: it can
neither plant a run, prune, nor pin (cross-origin ``fetch`` with ``no-cors`` and
``text/plain``, a form posted into a hidden frame), nor read runs by rebinding its own
name to 127.0.0.1 (``--host-resolver-rules`` plays the attacker's DNS)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.sync_api import Playwright
from tests.dashboard.conftest import BROWSER_TIMEOUT_MS, CHROMIUM, CHROMIUM_FLAGS, NO_CHROMIUM
from tests.helpers.limits import HANG_MS
from tests.server.conftest import LiveServer, make_run_log, run_log_json

from scenarist.server.app import create_app

pytestmark = NO_CHROMIUM

ATTACK = """<!doctype html><title>cute cats</title>
<iframe name="sink" style="display:none"></iframe>
<form id="pin" method="post" target="sink" action="{api}/api/runs/seed/pin"></form>
<script>
(async () => {{
  const body = {planted};
  const attempts = [
    fetch("{api}/api/runs", {{method: "POST", mode: "no-cors",
      headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify(body)}}),
    fetch("{api}/api/retention/prune", {{method: "POST", mode: "no-cors"}}),
  ];
  document.getElementById("pin").submit();
  await Promise.allSettled(attempts);
  await new Promise((done) => document.querySelector("iframe").onload = done);
  document.title = "done";
}})();
</script>"""


class _Page(BaseHTTPRequestHandler):
    html = b""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(self.html)))
        self.end_headers()
        self.wfile.write(self.html)


@pytest.fixture
def hostile_site() -> Iterator[tuple[type[_Page], int]]:
    handler = type("Attack", (_Page,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield handler, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_page_on_another_site_cannot_plant_prune_pin_or_rebind(
    tmp_path: Path, hostile_site: tuple[type[_Page], int], playwright: Playwright
) -> None:
    handler, site_port = hostile_site
    with LiveServer(create_app(f"sqlite:///{tmp_path / 'scenarist.db'}")) as api:
        with httpx2.Client(base_url=api.url) as http:
            seeded = http.post("/api/runs", json=run_log_json(make_run_log("seed")))
            assert seeded.status_code == 201
        planted = run_log_json(make_run_log("planted"))
        handler.html = ATTACK.format(api=api.url, planted=json.dumps(planted)).encode()
        # its own Chromium (with a resolver rule for evil.example), on the shared driver
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_FLAGS, "--host-resolver-rules=MAP evil.example 127.0.0.1"],
            timeout=HANG_MS,  # Playwright's own limit is 30 s: a loaded machine's, not ours
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(BROWSER_TIMEOUT_MS)
            page.goto(f"http://evil.example:{site_port}/attack.html")
            page.wait_for_function("document.title === 'done'")
            rebound = page.goto(f"http://evil.example:{api.port}/api/runs")
            assert rebound is not None and rebound.status == 421
            assert "seed" not in page.content()
            own = page.goto(f"{api.url}/api/runs")  # the user's own visit still works
            assert own is not None and own.status == 200 and "seed" in page.content()
        finally:
            browser.close()
        with httpx2.Client(base_url=api.url) as http:
            runs = [run["run_id"] for run in http.get("/api/runs").json()["items"]]
            seed_run = http.get("/api/runs/seed").json()
    assert runs == ["seed"]  # nothing planted, nothing pruned
    assert not seed_run.get("pinned")
