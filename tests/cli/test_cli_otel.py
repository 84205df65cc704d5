"""``traces import`` of OTLP files, ``items add --trace``, ``traces export --format otlp``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent
from typer.testing import Result

from scenarist._sync import run_sync
from scenarist.store import SqlStore
from scenarist.testing import FakeLLMServer, ScriptedLLM
from scenarist.veval.client import Client

Cli = Callable[..., Result]


def _real_trace_file(path: Path) -> None:
    with FakeLLMServer(script()) as server, instrumented() as (provider, sink):
        support_agent(provider, server.openai_url, "Where is order A1?")
        path.write_bytes(encode_spans(sink.get_finished_spans()).SerializeToString())


def _stored(trace_id: str) -> Any:
    return run_sync(SqlStore().get_trace, trace_id)


def test_an_otlp_protobuf_file_becomes_an_item_that_replays_offline(cli: Cli, home: Path) -> None:
    _real_trace_file(home / "trace.pb")
    imported = cli("traces", "import", "trace.pb")
    assert imported.exit_code == 0, imported.output
    assert "imported 1 trace(s) (4 spans)" in imported.stdout
    store = SqlStore()
    (summary,) = run_sync(store.search_traces).items
    trace_id = summary.trace_id
    assert _stored(trace_id).metadata["source"] == "otel"

    added = cli("items", "add", "support", "--trace", trace_id, "--name", "order A1")
    assert added.exit_code == 0, added.output
    assert f"(trace {trace_id}) to scenario 'support'" in added.stdout and not added.stderr
    assert f"order A1\ttrace {trace_id}" in cli("items", "list", "support").stdout

    with FakeLLMServer(ScriptedLLM()) as live, instrumented() as (provider, _):

        def agent(ctx: Any) -> str:
            return support_agent(provider, live.openai_url, ctx.input)

        result = Client(store=SqlStore()).run_scenario("support", agent)
        assert live.requests == []  # served from the trace: nothing reached the provider
    (item,) = result.results
    assert item.passed, item.failures
    assert item.output == "It shipped."


def test_a_replay_whose_agent_changed_fails_and_never_goes_live(cli: Cli, home: Path) -> None:
    _real_trace_file(home / "trace.pb")
    cli("traces", "import", "trace.pb")
    (summary,) = run_sync(SqlStore().search_traces).items
    cli("items", "add", "support", "--trace", summary.trace_id)
    with FakeLLMServer(script()) as live, instrumented() as (provider, _):

        def agent(ctx: Any) -> str:
            return support_agent(provider, live.openai_url, "a different question")

        (item,) = Client(store=SqlStore()).run_scenario("support", agent).results
        assert live.requests == []
    assert not item.passed
    assert any(
        "diverged from the recording" in f and "a different question" in f for f in item.failures
    )


def test_an_item_from_a_trace_without_content_says_how_to_capture_it(cli: Cli, home: Path) -> None:
    doc = d.document(
        d.span(
            1,
            "chat gpt-4o-mini",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
            },
        )
    )
    (home / "bare.json").write_bytes(d.encoded(doc))
    assert cli("traces", "import", "bare.json").exit_code == 0
    trace_id = f"tr_{d.TRACE}"
    added = cli("items", "add", "support", "--trace", trace_id)
    assert (
        added.exit_code == 0
        and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in added.stderr
    )

    def agent(ctx: Any) -> str:
        raise AssertionError("the agent must not run without recorded content")

    (item,) = Client(store=SqlStore()).run_scenario("support", agent).results
    assert not item.passed
    (failure,) = item.failures
    assert "without the content of 1 of its 1 LLM call(s)" in failure
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in failure


def test_spans_of_one_trace_in_two_files_are_merged(cli: Cli, home: Path) -> None:
    (home / "child.json").write_bytes(d.encoded(d.document(d.span(2, "child", {}, parent=1))))
    (home / "root.json").write_bytes(
        d.encoded(d.document(d.span(1, "root", {"gen_ai.agent.name": "a"})))
    )
    assert cli("traces", "import", "child.json").exit_code == 0
    assert cli("traces", "import", "root.json").exit_code == 0
    (root,) = _stored(f"tr_{d.TRACE}").steps
    assert (root.name, [c.name for c in root.children]) == ("root", ["child"])


def test_export_otlp_then_import_elsewhere_is_lossless(
    cli: Cli, home: Path, monkeypatch: Any
) -> None:
    _real_trace_file(home / "trace.pb")
    cli("traces", "import", "trace.pb")
    (summary,) = run_sync(SqlStore().search_traces).items
    before = _stored(summary.trace_id)
    exported = cli("traces", "export", summary.trace_id, "--format", "otlp", "-o", "out.json")
    assert exported.exit_code == 0, exported.output
    document = json.loads((home / "out.json").read_text())
    assert (
        document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] == summary.trace_id[3:]
    )
    monkeypatch.setenv("SCENARIST_HOME", str(home / "elsewhere"))
    assert cli("traces", "import", "out.json").exit_code == 0
    after = _stored(summary.trace_id)
    assert after.model_dump(mode="json") == before.model_dump(mode="json")


def test_bad_otlp_files_name_the_file_and_field(cli: Cli, home: Path) -> None:
    (home / "bad.json").write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]})
    )
    bad = cli("traces", "import", "bad.json")
    assert bad.exit_code == 2
    assert (
        "bad.json: not an OTLP trace file: resourceSpans[0].scopeSpans[0].spans[0].traceId"
        in bad.stderr
    )
    (home / "junk.bin").write_bytes(b"\x00\xff\xfe garbage")
    junk = cli("traces", "import", "junk.bin")
    assert junk.exit_code == 2 and "junk.bin: not an OTLP trace file" in junk.stderr
    missing = cli("items", "add", "support", "--trace", "tr_nope")
    assert missing.exit_code == 2 and "--trace 'tr_nope': no such trace" in missing.stderr
