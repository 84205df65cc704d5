"""The capture itself, through raw httpx and httpx2 clients: hooks, scoping, failures."""

from __future__ import annotations

import asyncio
import socket
import threading
from types import ModuleType
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.integrations.conftest import OPENAI_KEY, active_run, assert_no_secrets, llm_spans

from scenarist.testing import FakeLLMServer
from scenarist.tracing import RunContext
from scenarist.tracing.http import capture_active, capture_llm_calls

LIBRARIES = [pytest.param(httpx, id="httpx"), pytest.param(httpx2, id="httpx2")]
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
HEADERS = {"authorization": f"Bearer {OPENAI_KEY}"}


def originals(lib: ModuleType) -> tuple[Any, Any]:
    return (
        lib.HTTPTransport.__dict__["handle_request"],
        lib.AsyncHTTPTransport.__dict__["handle_async_request"],
    )


@pytest.mark.parametrize("lib", LIBRARIES)
def test_raw_client_sync_json_and_stream(lib: ModuleType, server: FakeLLMServer) -> None:
    url = server.openai_url + "/chat/completions?api_key=leaky&api-version=1"
    with lib.Client(headers=HEADERS) as http, active_run() as ctx:
        assert http.post(url, json=BODY).json()["model"] == "gpt-4o-mini"
        with http.stream("POST", url, json={**BODY, "stream": True}) as response:
            raw = b"".join(response.iter_raw())
    assert raw.endswith(b"data: [DONE]\n\n")
    plain, streamed = llm_spans(ctx)
    assert plain.output["choices"][0]["message"]["content"] == "The answer is 42."
    assert streamed.output["choices"][0]["message"]["content"] == "The answer is 42."
    assert (plain.tokens_in, plain.tokens_out) == (12, 5)
    assert plain.metadata["url"].endswith(
        "/v1/chat/completions?api_key=%5Bredacted%5D&api-version=1"
    )
    assert "leaky" not in plain.model_dump_json()
    assert_no_secrets(ctx)


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.anyio
async def test_raw_client_async_json_and_stream(lib: ModuleType, server: FakeLLMServer) -> None:
    url = server.openai_url + "/chat/completions"
    async with lib.AsyncClient() as http:
        with active_run() as ctx:
            await http.post(url, json=BODY)
            async with http.stream("POST", url, json={**BODY, "stream": True}) as response:
                lines = [line async for line in response.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    plain, streamed = llm_spans(ctx)
    assert plain.status == streamed.status == "success"
    assert streamed.metadata["ttft_ms"] > 0


@pytest.mark.parametrize("lib", LIBRARIES)
def test_non_llm_requests_pass_through(lib: ModuleType, server: FakeLLMServer) -> None:
    with lib.Client() as http, active_run() as ctx:
        assert http.get(server.openai_url + "/models").status_code == 200
        assert http.post(server.openai_url + "/files", json={}).status_code == 404
        http.post(server.openai_url + "/threads/t1/messages", json={})  # storage, not a call
    assert ctx.spans == []


def test_hooks_exist_only_while_a_run_captures() -> None:
    before = {lib.__name__: originals(lib) for lib in (httpx, httpx2)}
    assert not capture_active()
    with capture_llm_calls():
        assert capture_active()
        assert httpx2.HTTPTransport.handle_request is not before["httpx2"][0]
        assert httpx.AsyncHTTPTransport.handle_async_request is not before["httpx"][1]
        with capture_llm_calls():  # nested and concurrent runs share the hooks
            pass
        assert capture_active()
    assert not capture_active()
    assert {lib.__name__: originals(lib) for lib in (httpx, httpx2)} == before


def test_hooks_are_removed_when_the_run_raises() -> None:
    before = originals(httpx2)
    with pytest.raises(RuntimeError), capture_llm_calls():
        raise RuntimeError("agent failed")
    assert originals(httpx2) == before and not capture_active()


def test_capture_without_a_recorder_records_nothing(server: FakeLLMServer) -> None:
    ctx = RunContext(input="q")
    with capture_llm_calls(), httpx2.Client() as http:  # hooks on, but no run here
        http.post(server.openai_url + "/chat/completions", json=BODY)
    with ctx.recorder, httpx2.Client() as http:  # a run, but no capture
        http.post(server.openai_url + "/chat/completions", json=BODY)
    assert ctx.spans == []
    assert len(server.requests) == 2


def test_a_call_inside_a_tracked_step_is_a_span_of_it_not_a_step(server: FakeLLMServer) -> None:
    """Veval lists the steps the agent tracked; the capture's call is the step's child, in
    ``ctx.spans`` only, so ``len(ctx.steps)`` agrees with ``max_steps``."""

    def classify() -> str:
        with httpx2.Client() as http:
            http.post(server.openai_url + "/chat/completions", json=BODY)
        return "refund"

    with active_run() as ctx:
        ctx.track_step("classify", "q", classify)
        ctx.track_step("answer", "refund", lambda: "on its way")
    assert [s.name for s in ctx.steps] == ["classify", "answer"]
    classify_span, call, _ = ctx.spans
    assert call.kind == "llm" and call.parent_step_id == classify_span.step_id
    assert classify_span.children == [call]


def test_threads_outside_the_run_are_not_recorded(server: FakeLLMServer) -> None:
    url = server.openai_url + "/chat/completions"
    with active_run() as ctx, httpx2.Client() as http:
        other = threading.Thread(target=lambda: http.post(url, json=BODY))
        other.start()
        other.join()
        http.post(url, json=BODY)
    assert len(llm_spans(ctx)) == 1


@pytest.mark.anyio
async def test_concurrent_runs_see_only_their_own_calls(server: FakeLLMServer) -> None:
    url = server.openai_url + "/chat/completions"

    async def agent(name: str, calls: int) -> RunContext:
        ctx = RunContext(input=name)
        with ctx.recorder, capture_llm_calls():
            async with httpx2.AsyncClient() as http:
                for i in range(calls):
                    body = {
                        "model": "gpt-4o-mini",
                        "messages": [{"role": "user", "content": f"{name} {i}"}],
                    }
                    await http.post(url, json=body)
                    await asyncio.sleep(0.005)
        return ctx

    first, second = await asyncio.gather(agent("alpha", 3), agent("beta", 4))
    assert not capture_active()
    for ctx, name, calls in ((first, "alpha", 3), (second, "beta", 4)):
        spans = llm_spans(ctx)
        assert len(spans) == calls
        assert {s.input["messages"][0]["content"].split()[0] for s in spans} == {name}


def test_transport_failure_is_an_error_span() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    with active_run() as ctx, httpx2.Client() as http, pytest.raises(httpx2.ConnectError):
        http.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=BODY)
    (span,) = llm_spans(ctx)
    assert span.status == "error"
    assert span.error is not None and span.error.type == "ConnectError"
    assert span.model == "gpt-4o-mini"  # from the request


def test_a_stream_closed_early_is_marked(server: FakeLLMServer) -> None:
    with active_run() as ctx, httpx2.Client() as http:
        url = server.openai_url + "/chat/completions"
        with http.stream("POST", url, json={**BODY, "stream": True}) as response:
            next(response.iter_raw(16))
    (span,) = llm_spans(ctx)
    assert span.status == "success"
    assert span.metadata["stream_closed_early"] is True


@pytest.mark.parametrize("lib", LIBRARIES)
def test_compressed_responses_are_decoded(lib: ModuleType, gzip_server: str) -> None:
    with active_run() as ctx, lib.Client() as http:
        assert http.post(gzip_server + "/v1/messages", json={"model": "x"}).json()["usage"]
    (span,) = llm_spans(ctx)
    assert span.output["model"] == "claude-3-5-haiku-latest"
    assert (span.tokens_in, span.tokens_out) == (13, 2)  # cache reads count as input
    assert span.cost_usd is not None and span.cost_usd > 0


_HEADER_NAMES = st.sampled_from(
    [
        "Content-Type",
        "content-encoding",
        "X-Request-ID",
        "request-id",
        "Date",
        "x-ratelimit-remaining",
    ]
)
_HEADER_VALUES = st.binary(max_size=12).filter(lambda v: b"\r" not in v and b"\n" not in v)


@pytest.mark.parametrize("lib", LIBRARIES)
@given(pairs=st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=8))
def test_the_recorded_headers_read_as_the_library_reads_them(
    lib: ModuleType, pairs: list[tuple[str, bytes]]
) -> None:
    """What a call records of the response headers (repeated names, any case, bytes that
    are not ASCII) is what the library's own ``Headers.get`` answers for each name."""
    from scenarist.tracing.http._llm_call import _WANTED_HEADERS, _wanted_headers

    headers = lib.Headers([(name.encode(), value) for name, value in pairs])
    expected = {n: headers.get(n) for n in _WANTED_HEADERS if headers.get(n) is not None}
    assert _wanted_headers(headers) == expected


def test_the_recorded_headers_of_a_shimmed_response_are_read_by_name() -> None:
    from scenarist.tracing.http._http_shim import Headers
    from scenarist.tracing.http._llm_call import _wanted_headers

    shim = Headers([("Content-Type", "application/json"), ("X-Request-Id", "req_1"), ("Date", "x")])
    assert _wanted_headers(shim) == {"content-type": "application/json", "x-request-id": "req_1"}
