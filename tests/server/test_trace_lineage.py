"""A production trace becomes a regression test from the trace page, for each source we
ingest (our traces, Veval uploads, OTLP), and the trace page then links its replays and
the items made from it with their verdicts; a replay links its original; items passed
inline are listed on the items page under their run. A real uvicorn server over SQLite
and PostgreSQL; runs made by a real client on the same database."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent
from tests.server.conftest import LiveServer

from scenarist import ScenarioItem, TraceAssert
from scenarist._sync import run_sync
from scenarist.model.veval_wire import to_veval
from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore
from scenarist.testing import FakeLLMServer, ScriptedLLM
from scenarist.tracing import RunContext
from scenarist.veval.client import Client

HTML = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def lookup_agent(ctx: RunContext) -> str:
    found = ctx.track_step("lookup", "A1", lambda: {"order": "A1", "status": "late"})
    return f"order {found['order']} is {found['status']}"


def changed_agent(ctx: RunContext) -> str:
    ctx.track_step("lookup", "B2", lambda: {"order": "B2", "status": "late"})
    return "order B2"


class Site:
    """The live server, a browser-like client (cookies kept) and the same database."""

    def __init__(self, server: LiveServer, database_url: str) -> None:
        self.server = server
        self.http = httpx2.Client(base_url=server.url)
        self.store = SqlStore(database_url)

    def record(self, agent: Any = lookup_agent, question: str = "where is A1?") -> str:
        ctx = RunContext(input=question, agent_name="support")
        run_sync(Client(store=self.store)._execute, ctx, agent)
        return ctx.trace_id

    def token(self, trace_id: str) -> str:
        page = self.http.get(f"/traces/{trace_id}", headers=HTML)
        assert page.status_code == 200, page.text
        match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
        assert match
        return match.group(1)

    def make_item(self, trace_id: str, scenario: str, name: str | None = None) -> Any:
        form = {"csrf_token": self.token(trace_id), "scenario_name": scenario}
        if name:
            form["name"] = name
        made = self.http.post(f"/traces/{trace_id}/item.json", data=form)
        assert made.status_code == 201, made.text
        return made.json()

    def page(self, path: str) -> dict[str, Any]:
        response = self.http.get(f"{path}.json")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    def html(self, path: str) -> str:
        response = self.http.get(path, headers=HTML)
        assert response.status_code == 200, response.text
        return response.text


@pytest.fixture
def site(database_url: str) -> Iterator[Site]:
    with LiveServer(create_app(database_url)) as server:
        made = Site(server, database_url)
        try:
            yield made
        finally:
            made.http.close()


def test_a_trace_page_links_its_replays_and_items_with_their_verdicts(site: Site) -> None:
    trace_id = site.record()
    made = site.make_item(trace_id, "regressions", "late order")
    assert made["item"]["trace_id"] == trace_id and made["replay_problem"] is None
    assert made["items_url"] == "/items/regressions"
    client = Client(store=site.store)
    runs = [client.run_scenario("regressions", lookup_agent) for _ in range(3)]
    assert all(run.passed for run in runs)

    lineage = site.page(f"/traces/{trace_id}")["lineage"]
    replay_ids = {run.results[0].trace_id for run in runs}
    assert {r["trace_id"] for r in lineage["replays"]} == replay_ids
    for replay in lineage["replays"]:
        (verdict,) = replay["verdicts"]
        assert verdict["passed"] and verdict["scenario_name"] == "regressions"
    (item,) = lineage["items"]
    assert item["item_id"] == made["item_id"] and item["label"] == "late order"
    assert item["latest"]["run_id"] == runs[-1].run_id and item["latest"]["passed"]
    assert lineage["judged"] is True

    html = site.html(f"/traces/{trace_id}")
    assert 'id="no-verdict"' not in html
    for replay_id in replay_ids:
        assert f'href="/traces/{replay_id}"' in html
    assert f'href="/runs/{runs[-1].run_id}"' in html

    # the replay links its original, as a link
    replay_id = runs[0].results[0].trace_id or ""
    assert site.page(f"/traces/{replay_id}")["lineage"]["replay_of"] == trace_id
    replay_html = site.html(f"/traces/{replay_id}")
    assert re.search(rf'id="replay-of">Replay of <a href="/traces/{trace_id}">', replay_html)

    # the agent changes: the newest verdict of the item is a failure, with its reason
    broken = client.run_scenario("regressions", changed_agent)
    assert not broken.passed
    (item,) = site.page(f"/traces/{trace_id}")["lineage"]["items"]
    assert item["latest"]["run_id"] == broken.run_id and not item["latest"]["passed"]
    assert item["latest"]["failures"]


def test_a_trace_nobody_replayed_still_says_so(site: Site) -> None:
    trace_id = site.record()
    lineage = site.page(f"/traces/{trace_id}")["lineage"]
    assert lineage["replays"] == [] and lineage["items"] == [] and not lineage["judged"]
    assert lineage["replay_of"] is None
    assert 'id="no-verdict"' in site.html(f"/traces/{trace_id}")


def test_another_projects_replays_and_items_of_the_same_id_stay_out(site: Site) -> None:
    trace_id = site.record()
    other = site.store.scoped("other")
    other_client = Client(store=other)
    ctx = RunContext(input="where is A1?", agent_name="support")
    ctx.trace_id = trace_id  # the same id, in another project
    run_sync(other_client._execute, ctx, lookup_agent)
    run_sync(other.add_item, "theirs", ScenarioItem(trace_id=trace_id))
    assert other_client.run_scenario("theirs", lookup_agent).passed
    lineage = site.page(f"/traces/{trace_id}")["lineage"]
    assert lineage["replays"] == [] and lineage["items"] == [] and not lineage["judged"]
    assert lineage["item_scenarios"] == []


def test_a_veval_upload_becomes_an_item_that_replays(site: Site) -> None:
    ctx = RunContext(input="where is A1?", agent_name="support")
    record, _ = run_sync(Client(store=site.store.scoped("scratch"))._execute, ctx, lookup_agent)
    uploaded = site.http.post("/v1/traces", json=to_veval(record))
    assert uploaded.status_code == 201, uploaded.text
    made = site.make_item(record.trace_id, "from veval")
    assert made["replay_problem"] is None
    run = Client(store=site.store).run_scenario(
        "from veval", lookup_agent, [TraceAssert.output_contains("late", where="final")]
    )
    assert run.passed, run.report_lines()
    (item,) = site.page(f"/traces/{record.trace_id}")["lineage"]["items"]
    assert item["latest"]["passed"]


def test_an_otlp_trace_becomes_an_item_that_replays_offline(site: Site) -> None:
    with FakeLLMServer(script()) as server, instrumented() as (provider, sink):
        support_agent(provider, server.openai_url, "Where is order A1?")
        body = encode_spans(sink.get_finished_spans()).SerializeToString()
    sent = site.http.post(
        "/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}
    )
    assert sent.status_code == 200, sent.text
    (summary,) = run_sync(site.store.search_traces).items
    made = site.make_item(summary.trace_id, "from otel")
    assert made["replay_problem"] is None
    with FakeLLMServer(ScriptedLLM()) as live, instrumented() as (provider, _):

        def agent(ctx: Any) -> str:
            return support_agent(provider, live.openai_url, ctx.input)

        run = Client(store=site.store).run_scenario("from otel", agent)
        assert live.requests == []
    assert run.passed, run.report_lines()
    (item,) = site.page(f"/traces/{summary.trace_id}")["lineage"]["items"]
    assert item["latest"]["passed"]


def test_an_otlp_trace_without_llm_content_says_why_it_cannot_replay(site: Site) -> None:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
    }
    doc = d.document(d.span(1, "chat gpt-4o-mini", attributes))
    sent = site.http.post(
        "/v1/traces", content=d.encoded(doc), headers={"content-type": "application/json"}
    )
    assert sent.status_code == 200, sent.text
    trace_id = f"tr_{d.TRACE}"
    problem = site.page(f"/traces/{trace_id}")["lineage"]["replay_problem"]
    assert "without the content of 1 of its 1 LLM call(s)" in problem
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in problem
    assert 'id="replay-problem"' in site.html(f"/traces/{trace_id}")
    made = site.make_item(trace_id, "bare")
    assert made["replay_problem"] == problem


def test_the_item_form_json_twin_answers_errors_as_json(site: Site) -> None:
    trace_id = site.record()
    token = site.token(trace_id)
    empty = site.http.post(
        f"/traces/{trace_id}/item.json", data={"csrf_token": token, "scenario_name": " "}
    )
    assert empty.status_code == 422
    assert empty.json()["error"]["message"] == "scenario name must not be empty"
    missing = site.http.post(
        "/traces/tr_nope/item.json", data={"csrf_token": token, "scenario_name": "x"}
    )
    assert missing.status_code == 404 and "tr_nope" in missing.json()["error"]["message"]
    forged = site.http.post(f"/traces/{trace_id}/item.json", data={"scenario_name": "x"})
    assert forged.status_code == 403 and forged.json()["error"]["code"] == "csrf_failed"
    plain = site.http.post(
        f"/traces/{trace_id}/item", data={"csrf_token": token, "scenario_name": "x"}
    )
    assert plain.status_code == 303  # the HTML form keeps its redirect
    offered = site.page(f"/traces/{trace_id}")["lineage"]["item_scenarios"]
    assert offered == ["x"]
    assert '<option value="x">' in site.html(f"/traces/{trace_id}")


def test_items_passed_inline_are_listed_under_their_run(site: Site) -> None:
    trace_id = site.record()
    items = [
        ScenarioItem(name="inline replay", trace_id=trace_id),
        ScenarioItem(name="inline live", input="where is A1?"),
    ]
    run = Client(store=site.store).run_scenario("inline only", lookup_agent, items=items)
    assert run.passed, run.report_lines()
    page = site.page(f"/items/{quote('inline only', safe='')}")
    assert page["items"] == []  # nothing stored
    (shown,) = page["runs"]
    assert shown["run_id"] == run.run_id and shown["inline"] and shown["passed"]
    assert [(i["name"], i["passed"], i["replay_of"]) for i in shown["items"]] == [
        ("inline replay", True, trace_id),
        ("inline live", True, None),
    ]
    html = site.html(f"/items/{quote('inline only', safe='')}")
    assert "items passed inline" in html and "inline replay" in html
    assert f'href="/runs/{run.run_id}"' in html
