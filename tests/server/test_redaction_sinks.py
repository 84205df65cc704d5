"""Secrets an agent sends to its LLM in the request body never reach any sink: the span
input, the run log, a cassette, the database (SQLite and PostgreSQL), ``/api/runs``,
``/v1/traces/{id}`` and the dashboard's pages. The agent uses the real openai SDK against
the fake provider; the run and the trace travel to a real server over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai
import pytest
from sqlalchemy import select
from tests.server.conftest import LiveServer
from tests.server.test_api import VEVAL_TRACE

from scenarist import Client, Scenario, Suite
from scenarist.formats.runlog import run_log_from_suite_result, write_jsonl
from scenarist.replay import cassette
from scenarist.server.app import create_app
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.models import Base
from scenarist.store.sql.store import SqlStore
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

LLM_KEY = "sk-LLM-KEY-never-stored"
ACCESS = "ACCESS-TOKEN-never-stored"
BODY_KEY = "BODY-API-KEY-never-stored"
SECRETS = (LLM_KEY, ACCESS, BODY_KEY)


def _agent(fake: FakeLLMServer) -> Any:
    def agent(question: str) -> str:
        with openai.OpenAI(api_key=LLM_KEY, base_url=fake.openai_url, max_retries=0) as llm:
            reply = llm.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": question}],
                extra_body={"credentials": {"access_token": ACCESS}, "api_key": BODY_KEY},
            )
        return reply.choices[0].message.content or ""

    return agent


async def _every_row(database_url: str) -> str:
    """Every value of every table, as text: what the database holds."""
    store = SqlStore(database_url)
    try:
        engine = await store.engine()
        async with engine.connect() as connection:
            rows = [
                repr(row)
                for table in Base.metadata.sorted_tables
                for row in (await connection.execute(select(table))).all()
            ]
        return "\n".join(rows)
    finally:
        await store.close()


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_secrets_in_llm_request_bodies_reach_no_sink(database_url: str, tmp_path: Path) -> None:
    fake = FakeLLMServer(ScriptedLLM(default=Reply("fine")))
    with fake, LiveServer(create_app(database_url)) as live:
        agent = _agent(fake)
        with cassette(tmp_path / "calls.jsonl"):
            result = Suite(name="leaky", scenarios=[Scenario("s").interact("q", agent)]).run_sync()
        log = run_log_from_suite_result(result, run_id="run-leaky")
        write_jsonl(log, tmp_path / "run.jsonl")
        anyio.run(RemoteStore(live.url, raise_on_send_failure=True).upload_run_log, log)
        client = Client(base_url=live.url, raise_on_send_failure=True)
        client.run("leaky-agent", lambda ctx: agent(str(ctx.input)), input="q")

        with httpx2.Client(base_url=live.url) as http:
            (trace,) = http.get("/api/traces", params={"agent_name": "leaky-agent"}).json()["items"]
            answers = {
                path: http.get(path)
                for path in (
                    "/api/runs/run-leaky",
                    "/runs/run-leaky.json",
                    "/runs/run-leaky/scenarios/0.json",
                    "/runs/run-leaky/scenarios/0?format=html",
                    f"/v1/traces/{trace['trace_id']}",
                    f"/traces/{trace['trace_id']}.json",
                    f"/traces/{trace['trace_id']}?format=html",
                )
            }

    sent = [request.body for request in fake.requests]
    assert len(sent) == 2 and all(b["credentials"]["access_token"] == ACCESS for b in sent)
    (span,) = [s for s in result.results[0].final_trace.spans if s.kind == "llm"]
    assert span.input["credentials"] == {"access_token": "[redacted]"}
    assert span.input["api_key"] == "[redacted]"
    assert _leaks(span.model_dump_json()) == []
    assert _leaks((tmp_path / "run.jsonl").read_text(encoding="utf-8")) == []
    assert _leaks((tmp_path / "calls.jsonl").read_text(encoding="utf-8")) == []
    for path, answer in answers.items():
        assert answer.status_code == 200, (path, answer.text)
        assert _leaks(answer.text) == [], path
        if "/scenarios/" in path or "traces/" in path:  # these show the request
            assert "[redacted]" in answer.text, path
    assert _leaks(anyio.run(_every_row, database_url)) == []


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_API_KEY", raising=False)


def test_secrets_in_traces_from_outside_our_capture_reach_no_sink(
    database_url: str, tmp_path: Path
) -> None:
    """An OTel-instrumented agent exporting to the receiver, a Veval-format upload and an
    OTLP file import: each is redacted as our own capture would have been."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from tests.otel import otlp_data as d
    from tests.otel.real_sdk import instrumented
    from typer.testing import CliRunner

    from scenarist.cli.app import app as cli

    fake = FakeLLMServer(ScriptedLLM(default=Reply("fine")))
    with fake, LiveServer(create_app(database_url)) as live:
        exporter = OTLPSpanExporter(endpoint=f"{live.url}/otlp/v1/traces")
        with instrumented(exporter) as (provider, _):
            tracer = provider.get_tracer("leaky")
            with tracer.start_as_current_span("leaky agent"):
                _agent(fake)("q")
        step = VEVAL_TRACE["steps"][0] | {
            "input": {"model": "m", "api_key": BODY_KEY, "messages": []}
        }
        veval = VEVAL_TRACE | {"trace_id": "tr_uploaded", "steps": [step]}
        with httpx2.Client(base_url=live.url) as http:
            assert http.post("/v1/traces", json=veval).status_code == 201
            stored = http.get("/v1/traces/tr_uploaded").json()
    assert stored["steps"][0]["input"]["api_key"] == "[redacted]"

    file = tmp_path / "trace.otlp.json"
    header = {"http.request.header.authorization": f"Bearer {LLM_KEY}"}
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": '[{"role": "user", "parts": []}]',
        "llm.invocation_parameters": f'{{"credentials": {{"access_token": "{ACCESS}"}}}}',
    }
    file.write_text(__import__("json").dumps(d.document(d.span(1, "chat", chat | header))))
    imported = CliRunner().invoke(
        cli, ["traces", "import", str(file)], env={"SCENARIST_DATABASE_URL": database_url}
    )
    assert imported.exit_code == 0, imported.output
    rows = anyio.run(_every_row, database_url)
    assert "gpt-4o-mini" in rows and "[redacted]" in rows  # the traces are there
    assert _leaks(rows) == []
