"""OTLP traces (protobuf and JSON, every convention we read) into our trace model."""

from __future__ import annotations

import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent

from scenarist.model.record import TraceRecord
from scenarist.otel import OtlpError, merge_records, parse_otlp, to_otlp_json
from scenarist.testing import FakeLLMServer


def _real_trace_bytes() -> bytes:
    with FakeLLMServer(script()) as server, instrumented() as (provider, sink):
        assert support_agent(provider, server.openai_url, "Where is order A1?") == "It shipped."
        return encode_spans(sink.get_finished_spans()).SerializeToString()


def test_a_real_openinference_trace_becomes_a_record_with_nested_spans() -> None:
    (record,) = parse_otlp(_real_trace_bytes(), "application/x-protobuf")
    assert record.trace_id.startswith("tr_") and len(record.trace_id) == 35
    assert record.metadata["source"] == "otel"
    assert (record.input, record.output, record.status) == (
        "Where is order A1?",
        "It shipped.",
        "success",
    )
    (root,) = record.steps
    assert (root.kind, root.name) == ("agent", "support agent")
    assert [c.kind for c in root.children] == ["llm", "tool", "llm"]
    first, tool, second = root.children
    assert first.model == "gpt-4o-mini" and first.metadata["provider"] == "openai"
    assert first.tokens_in is not None and first.tokens_out is not None
    assert first.cost_usd is not None and first.cost_usd > 0  # genai-prices knows gpt-4o-mini
    assert first.input["messages"] == [{"role": "user", "content": "Where is order A1?"}]
    assert first.output["tool_calls"][0]["function"]["name"] == "lookup"
    assert json.loads(first.output["tool_calls"][0]["function"]["arguments"]) == {"order": "A1"}
    assert first.metadata["finish_reason"] == "tool_calls"
    assert (tool.metadata["tool_name"], tool.input, tool.output) == (
        "lookup",
        {"order": "A1"},
        {"status": "shipped"},
    )
    assert [m["role"] for m in second.input["messages"]] == ["user", "assistant", "tool"]
    assert second.output["content"] == "It shipped."
    assert second.metadata["content"] == "captured"


def test_current_genai_semconv_names() -> None:
    doc = d.document(
        d.span(
            1,
            "invoke_agent support",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ),
        d.span(
            2,
            "chat gpt-4o",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.request.temperature": 0.2,
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}],
                "gen_ai.input.messages": [
                    {"role": "user", "parts": [{"type": "text", "content": "Hi"}]}
                ],
                "gen_ai.output.messages": [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "Hello"}],
                        "finish_reason": "stop",
                    }
                ],
            },
            parent=1,
        ),
        d.span(
            3,
            "execute_tool search",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.id": "call_9",
                "gen_ai.tool.call.arguments": '{"q": "x"}',
                "gen_ai.tool.call.result": "no results",
            },
            parent=1,
            error="search backend down",
            events=[
                ("exception", {"exception.type": "TimeoutError", "exception.message": "timed out"})
            ],
        ),
    )
    (record,) = parse_otlp(d.encoded(doc))
    (agent,) = record.steps
    llm, tool = agent.children
    assert (agent.kind, agent.metadata["agent_name"], record.agent_name) == (
        "agent",
        "support",
        "support",
    )
    assert llm.model == "gpt-4o-2024-08-06" and (llm.tokens_in, llm.tokens_out) == (120, 30)
    assert llm.input == {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "temperature": 0.2,
    }
    assert llm.output == {"role": "assistant", "content": "Hello"}
    assert llm.metadata["finish_reason"] == "stop" and llm.metadata["convention"] == "gen_ai"
    assert llm.cost_usd is not None
    assert (tool.kind, tool.input, tool.output, tool.metadata["tool_call_id"]) == (
        "tool",
        {"q": "x"},
        "no results",
        "call_9",
    )
    assert tool.status == "error"
    assert (tool.error.message, tool.error.type) == ("search backend down", "TimeoutError")  # type: ignore[union-attr]
    assert record.status == "success"  # the agent span itself did not fail


def test_previous_genai_names_with_message_events() -> None:
    doc = d.document(
        d.span(
            1,
            "chat",
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.prompt_tokens": 7,
                "gen_ai.usage.completion_tokens": 3,
            },
            events=[
                ("gen_ai.system.message", {"content": "Be brief."}),
                ("gen_ai.user.message", {"content": "Hi"}),
                (
                    "gen_ai.choice",
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": '{"role": "assistant", "content": "Hello"}',
                    },
                ),
            ],
        )
    )
    (record,) = parse_otlp(d.encoded(doc))
    (llm,) = record.steps
    assert (llm.kind, llm.model, llm.tokens_in, llm.tokens_out) == ("llm", "gpt-4o-mini", 7, 3)
    assert llm.metadata["provider"] == "openai"
    assert llm.input["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert llm.output == {"role": "assistant", "content": "Hello"}
    assert llm.metadata["finish_reason"] == "stop"
    assert (record.input, record.output) == ("Hi", "Hello")


def test_openllmetry_flattened_prompt_and_completion() -> None:
    doc = d.document(
        d.span(
            1,
            "openai.chat",
            {
                "llm.request.type": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Weather?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "c1",
                "gen_ai.completion.0.tool_calls.0.name": "weather",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}',
            },
        )
    )
    (llm,) = parse_otlp(d.encoded(doc))[0].steps
    assert llm.input["messages"] == [{"role": "user", "content": "Weather?"}]
    assert llm.output["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert llm.metadata["finish_reason"] == "tool_calls"


def test_logfire_pydantic_ai_spans() -> None:
    doc = d.document(
        d.span(
            1,
            "agent run",
            {"agent_name": "support", "final_result": "Done.", "logfire.msg": "support run"},
        ),
        d.span(
            2,
            "chat gpt-4o",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o",
                "events": [
                    {"event.name": "gen_ai.user.message", "content": "Do it", "role": "user"},
                    {
                        "event.name": "gen_ai.choice",
                        "index": 0,
                        "message": {"role": "assistant", "content": "Done."},
                    },
                ],
            },
            parent=1,
        ),
        d.span(
            3,
            "running tool: save",
            {"gen_ai.tool.name": "save", "tool_arguments": '{"id": 3}', "tool_response": "saved"},
            parent=1,
        ),
    )
    (record,) = parse_otlp(d.encoded(doc))
    (agent,) = record.steps
    llm, tool = agent.children
    assert (agent.kind, record.agent_name, record.output) == ("agent", "support", "Done.")
    assert llm.input["messages"] == [{"role": "user", "content": "Do it"}]
    assert llm.output == {"role": "assistant", "content": "Done."}
    assert (tool.kind, tool.input, tool.output) == ("tool", {"id": 3}, "saved")


def test_content_not_captured_is_marked_missing_not_invented() -> None:
    doc = d.document(
        d.span(
            1,
            "chat gpt-4o-mini",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 5,
            },
        ),
        d.span(
            2,
            "execute_tool lookup",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
        ),
    )
    (record,) = parse_otlp(d.encoded(doc))
    llm, tool = record.steps
    assert (llm.input, llm.output) == (None, None)
    assert llm.metadata["content"] == "missing" and llm.metadata["missing"] == ["input", "output"]
    assert (tool.input, tool.output, tool.metadata["content"]) == (None, None, "missing")
    assert record.metadata["content"] == "missing"
    assert record.input is None and record.output is None


def test_an_unknown_model_has_no_cost() -> None:
    doc = d.document(
        d.span(
            1,
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "no-such-model",
                "gen_ai.usage.input_tokens": 5,
                "gen_ai.usage.output_tokens": 5,
            },
        )
    )
    (llm,) = parse_otlp(d.encoded(doc))[0].steps
    assert llm.cost_usd is None


def test_one_document_with_two_traces_gives_two_records_and_orphans_become_roots() -> None:
    other = "0af7651916cd43dd8448eb211c80319c"
    doc = d.document(
        d.span(1, "a", {}), d.span(2, "b", {}, parent=99), d.span(3, "c", {}, trace=other)
    )
    first, second = parse_otlp(d.encoded(doc))
    assert [s.name for s in first.steps] == ["a", "b"]
    assert second.trace_id == f"tr_{other}"


def test_parent_ids_in_a_cycle_lose_no_span() -> None:
    doc = d.document(
        d.span(1, "a", {}, parent=2), d.span(2, "b", {}, parent=1), d.span(3, "c", {}, parent=3)
    )
    (record,) = parse_otlp(d.encoded(doc))
    assert sorted(s.name for s in record.spans) == ["a", "b", "c"]


def test_spans_of_one_trace_sent_in_two_exports_merge() -> None:
    child = parse_otlp(d.encoded(d.document(d.span(2, "child", {}, parent=1))))[0]
    root = parse_otlp(
        d.encoded(d.document(d.span(1, "root", {"openinference.span.kind": "AGENT"})))
    )[0]
    merged = merge_records(child, root)
    (top,) = merged.steps
    assert (top.name, [c.name for c in top.children]) == ("root", ["child"])


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "the document: expected dict"),
        ({"spans": []}, "no resourceSpans"),
        ({"resourceSpans": {}}, "resourceSpans: expected list"),
        (
            d.document(d.span(1, "x", {}) | {"traceId": "xyz"}),
            r"resourceSpans\[0\].scopeSpans\[0\].spans\[0\].traceId: expected 32 hex digits",
        ),
        (
            d.document(d.span(1, "x", {}) | {"spanId": "0" * 16}),
            r"spans\[0\].spanId: an all-zero id is invalid",
        ),
        (
            d.document(
                d.span(1, "x", {}) | {"attributes": [{"key": "a", "value": {"intValue": "x1"}}]}
            ),
            r"attributes\[0\].value.intValue: expected an integer",
        ),
        (
            d.document(
                d.span(1, "x", {}) | {"attributes": [{"key": "a", "value": {"fooValue": 1}}]}
            ),
            "unknown AnyValue key 'fooValue'",
        ),
        (
            d.document(d.span(1, "x", {}) | {"status": {"code": 7}}),
            r"status.code: expected 0, 1 or 2, got 7",
        ),
        (
            d.document(d.span(1, "x", {}) | {"startTimeUnixNano": 1.5}),
            "startTimeUnixNano: expected an integer",
        ),
    ],
)
def test_hostile_json_is_refused_naming_the_field(doc: object, message: str) -> None:
    with pytest.raises(OtlpError, match=message):
        parse_otlp(json.dumps(doc).encode())


def test_hostile_protobuf_is_refused() -> None:
    with pytest.raises(OtlpError, match="not an OTLP protobuf"):
        parse_otlp(b"\xff\xff\xff\xff", "application/x-protobuf")
    with pytest.raises(OtlpError, match="not OTLP JSON"):
        parse_otlp(b"{nope", "application/json")


def test_json_nested_beyond_the_parser_is_refused() -> None:
    with pytest.raises(OtlpError, match="nested too deeply"):
        parse_otlp(b'{"resourceSpans": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")


def test_an_attribute_of_json_nested_too_deep_stays_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    doc = d.document(d.span(1, "x", {"input.value": deep}))
    (span,) = parse_otlp(d.encoded(doc))[0].steps
    assert span.input == deep


def test_deeply_nested_values_are_refused() -> None:
    nested: dict[str, object] = {"stringValue": "x"}
    for _ in range(40):
        nested = {"arrayValue": {"values": [nested]}}
    doc = d.document(d.span(1, "x", {}) | {"attributes": [{"key": "a", "value": nested}]})
    with pytest.raises(OtlpError, match="nested deeper than 32"):
        parse_otlp(json.dumps(doc).encode())


def test_export_then_import_is_lossless_for_our_fields() -> None:
    (imported,) = parse_otlp(_real_trace_bytes())
    native = TraceRecord.model_validate(
        {
            "trace_id": "tr_abc",
            "agent_name": "mine",
            "input": {"q": [1, "2"]},
            "output": "ok",
            "metadata": {"k": "v"},
            "steps": [
                {
                    "span_id": "1",
                    "name": "plan",
                    "kind": "custom",
                    "input": {"n": 1},
                    "output": [1, 2],
                    "children": [
                        {
                            "span_id": "2",
                            "parent_id": "1",
                            "name": "t",
                            "kind": "tool",
                            "input": "x",
                            "output": None,
                            "cost_usd": 0.5,
                        }
                    ],
                },
            ],
        }
    )
    for record in (imported, native):
        document = to_otlp_json([record])
        (back,) = parse_otlp(json.dumps(document).encode())
        assert back.model_dump(mode="json") == record.model_dump(mode="json")


def test_export_uses_genai_semconv_names() -> None:
    (imported,) = parse_otlp(_real_trace_bytes())
    document = to_otlp_json([imported])
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    names = {s["name"]: {a["key"]: a["value"] for a in s["attributes"]} for s in spans}
    assert len({s["spanId"] for s in spans}) == 4 and all(len(s["spanId"]) == 16 for s in spans)
    llm = next(
        a for a in names.values() if a.get("gen_ai.operation.name") == {"stringValue": "chat"}
    )
    assert llm["gen_ai.request.model"] == {"stringValue": "gpt-4o-mini"}
    assert llm["gen_ai.provider.name"] == {"stringValue": "openai"}
    assert "gen_ai.usage.input_tokens" in llm and "gen_ai.input.messages" in llm
    assert names["lookup"]["gen_ai.tool.name"] == {"stringValue": "lookup"}
    assert names["support agent"]["gen_ai.operation.name"] == {"stringValue": "invoke_agent"}
    # and a reader that knows only GenAI semconv sees the same model and messages
    stripped = json.loads(json.dumps(document))
    for s in stripped["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        s["attributes"] = [a for a in s["attributes"] if not a["key"].startswith("scenarist.")]
    stripped["resourceSpans"][0]["resource"]["attributes"] = []
    (plain,) = parse_otlp(json.dumps(stripped).encode())
    first = plain.steps[0].children[0]
    assert first.model == "gpt-4o-mini"
    assert first.input["messages"] == imported.steps[0].children[0].input["messages"]
    assert first.output["tool_calls"][0]["function"]["name"] == "lookup"


def test_docs_list_every_attribute_the_tables_read() -> None:
    from pathlib import Path

    from scenarist.otel import mapping

    docs = (Path(__file__).parents[2] / "docs" / "otel.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for table in (
        mapping.MODEL, mapping.PROVIDER, mapping.TOKENS_IN, mapping.TOKENS_OUT,
        mapping.FINISH_REASONS, mapping.TOOL_NAME, mapping.TOOL_CALL_ID, mapping.TOOL_ARGUMENTS,
        mapping.TOOL_RESULT, mapping.AGENT_NAME, mapping.SPAN_INPUT, mapping.SPAN_OUTPUT,
    ):  # fmt: skip
        names.update(table)
    names.update(attribute for attribute, _ in mapping.KIND_BY_ATTRIBUTE)
    names.update(attribute for attribute, _ in mapping.KIND_BY_PRESENCE)
    names.update(mapping.REQUEST_PARAMETERS)
    names.update(mapping.MESSAGE_EVENTS)
    assert sorted(n for n in names if f"`{n}`" not in docs) == []
