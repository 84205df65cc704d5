"""The fake provider server: scripts, logs, formats; and what importing costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from tests.helpers.limits import HANG_S

from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "a b c"}]}],
}


def test_replies_are_served_in_order_then_the_script_runs_out() -> None:
    with FakeLLMServer(["first", Reply("second", model="pinned")]) as server:
        url = server.openai_url + "/chat/completions"
        first = httpx2.post(url, json=CHAT).json()
        second = httpx2.post(url, json=CHAT).json()
        exhausted = httpx2.post(url, json=CHAT)
    assert first["choices"][0]["message"]["content"] == "first"
    assert first["model"] == "m" and second["model"] == "pinned"
    assert first["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert exhausted.status_code == 500
    assert "no reply left after 2" in exhausted.json()["error"]["message"]


def test_a_function_script_sees_the_request() -> None:
    def echo(request: FakeRequest) -> str:
        return f"{request.provider}:{request.model}:{request.text}"

    with FakeLLMServer(ScriptedLLM(echo)) as server:
        answer = httpx2.post(server.url + "/v1/messages", json=CHAT).json()
        assert server.requests[0].headers["content-type"] == "application/json"
    assert answer["content"] == [{"type": "text", "text": "anthropic:m:a b c"}]
    assert answer["stop_reason"] == "end_turn"


def test_openai_stream_carries_usage_only_when_asked() -> None:
    with FakeLLMServer(ScriptedLLM(default="x y")) as server:
        url = server.openai_url + "/chat/completions"
        plain = httpx2.post(url, json={**CHAT, "stream": True}).text
        options = {"stream_options": {"include_usage": True}}
        with_usage = httpx2.post(url, json={**CHAT, "stream": True, **options}).text
    assert '"usage"' not in plain
    last = json.loads(with_usage.split("data: ")[-2])
    assert last["choices"] == [] and last["usage"]["completion_tokens"] == 2
    assert plain.endswith("data: [DONE]\n\n")


def test_a_reply_not_streamed_waits_its_delay_and_holds_up_no_other_request() -> None:
    """``delay_s`` delays a JSON answer too (it was sent at once: a program's "reply too
    slow for the agent's timeout" never was). The delay outlasts any machine's stall, so
    the client's short timeout always fires first; the next request is answered meanwhile
    (the delay is not served under the script's lock)."""
    script = ScriptedLLM([Reply("too late", delay_s=HANG_S), "in time"])
    with FakeLLMServer(script) as server:
        url = server.openai_url + "/chat/completions"
        with pytest.raises(httpx2.ReadTimeout):
            httpx2.post(url, json=CHAT, timeout=httpx2.Timeout(HANG_S, read=0.2))
        answer = httpx2.post(url, json=CHAT, timeout=HANG_S).json()
    assert answer["choices"][0]["message"]["content"] == "in time"
    assert len(server.requests) == 2


def test_embeddings_are_deterministic_floats_or_base64() -> None:
    with FakeLLMServer() as server:
        url = server.openai_url + "/embeddings"
        floats = httpx2.post(url, json={"model": "e", "input": "hello"}).json()
        again = httpx2.post(url, json={"model": "e", "input": ["hello"]}).json()
        b64 = httpx2.post(url, json={"model": "e", "input": "hello", "encoding_format": "base64"})
    assert floats["data"][0]["embedding"] == again["data"][0]["embedding"]
    assert len(floats["data"][0]["embedding"]) == 8
    assert isinstance(b64.json()["data"][0]["embedding"], str)


def test_unknown_routes_are_404_and_the_url_needs_a_running_server() -> None:
    server = FakeLLMServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url
    with server:
        assert httpx2.post(server.url + "/v1/audio/speech", json={}).status_code == 404
        assert httpx2.get(server.openai_url + "/models").json()["data"][0]["id"] == "fake"


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_the_integrations_and_fakes_loads_no_sdk() -> None:
    heavy = {"openai", "anthropic", "httpx", "httpx2", "genai_prices"}
    assert _modules_after("import scenarist") & heavy == set()
    assert _modules_after("import scenarist.tracing.http, scenarist.testing") & heavy == set()
    started = _modules_after(
        "from scenarist.tracing.http import capture_llm_calls\nwith capture_llm_calls(): pass"
    )
    assert started & heavy == set()  # a run hooks what is imported, and imports nothing
    machinery = {
        "scenarist.tracing.http._httpx_hook",
        "scenarist.tracing.http._llm_call",
        "scenarist.redaction",
        "scenarist.providers.pricing",
        "importlib.resources",
    }
    # ...nor, with no HTTP library loaded, the LLM-call machinery (a run's first step)
    assert started & machinery == set()


def test_a_library_imported_during_a_run_is_hooked_and_restored_after() -> None:
    code = (
        "import sys\n"
        "from scenarist.tracing.http import capture_llm_calls\n"
        "with capture_llm_calls():\n"
        "    import httpx2\n"
        "    hooked = httpx2.HTTPTransport.handle_request\n"
        "    assert hasattr(hooked, '__wrapped__'), 'not hooked on import'\n"
        "    assert httpx2.__loader__.get_source('httpx2') is not None  # the loader's own\n"
        "assert not hasattr(httpx2.HTTPTransport.handle_request, '__wrapped__')\n"
        "assert all(type(f).__name__ != '_PatchOnImport' for f in sys.meta_path)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
