"""One redaction of secrets, applied where an LLM request is captured: the span input,
its URL and the cassette hold the same redacted request, through the real openai SDK."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from tests.integrations.conftest import OPENAI_KEY, active_run, llm_spans

from scenarist.redaction import (
    DEFAULT_REDACTED_FIELDS,
    REDACTED,
    redact,
    redact_text,
    redact_url,
    redacted_fields,
    set_redacted_fields,
)
from scenarist.replay import cassette
from scenarist.replay.recorded_calls import RecordedCalls
from scenarist.testing import FakeLLMServer
from scenarist.tracing.http import serve_llm_calls

ACCESS = "oauth-ACCESS-never-recorded"
BODY_KEY = "body-APIKEY-never-recorded"
NESTED = "nested-PASSWORD-never-recorded"
QUERY = "query-TOKEN-never-recorded"
CUSTOM = "customer-REF-never-recorded"
SECRETS = (OPENAI_KEY, ACCESS, BODY_KEY, NESTED, QUERY)

EXTRA_BODY = {
    "credentials": {"access_token": ACCESS, "scope": "chat"},
    "API-Key": BODY_KEY,
    "tool_settings": [{"vault": {"Password": NESTED}}],
    "max_tokens": 50,  # not a secret: a body keeps every field that is not named
    "customer_ref": CUSTOM,
}


def _call(server: FakeLLMServer) -> None:
    with openai.OpenAI(api_key=OPENAI_KEY, base_url=server.openai_url, max_retries=0) as llm:
        llm.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            extra_body=EXTRA_BODY,
            extra_query={"token": QUERY, "api-version": "1"},
        )


def test_secrets_in_the_body_and_query_never_reach_the_span(server: FakeLLMServer) -> None:
    with active_run() as ctx:
        _call(server)
    sent = server.requests[-1]
    assert sent.body["credentials"]["access_token"] == ACCESS and QUERY in sent.path  # sent
    (span,) = llm_spans(ctx)
    assert span.input["credentials"] == {"access_token": REDACTED, "scope": "chat"}
    assert span.input["API-Key"] == REDACTED
    assert span.input["tool_settings"] == [{"vault": {"Password": REDACTED}}]
    assert span.input["max_tokens"] == 50 and span.input["customer_ref"] == CUSTOM
    assert "token=%5Bredacted%5D" in span.metadata["url"]
    assert "api-version=1" in span.metadata["url"]
    dumped = span.model_dump_json()
    assert not [secret for secret in SECRETS if secret in dumped]


def test_a_cassette_stores_what_the_span_holds(server: FakeLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "tape.jsonl"
    with cassette(path), active_run() as ctx:
        _call(server)
    text = path.read_text(encoding="utf-8")
    assert not [secret for secret in SECRETS if secret in text]
    stored = json.loads(text.splitlines()[1])["request"]["body"]
    (span,) = llm_spans(ctx)
    assert stored == span.input  # one redaction: the file and the trace agree
    with cassette(path, "replay") as tape, active_run():
        _call(server)  # replays: the key never needed the secrets
    assert tape.stats.replayed == 1


def test_users_add_field_names_by_environment_and_in_code(
    server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_REDACT_FIELDS", " Customer-Ref , ")
    path = tmp_path / "custom.jsonl"
    with cassette(path), active_run() as ctx:
        _call(server)
    (span,) = llm_spans(ctx)
    assert span.input["customer_ref"] == REDACTED
    assert CUSTOM not in path.read_text(encoding="utf-8")
    monkeypatch.delenv("SCENARIST_REDACT_FIELDS")
    try:
        set_redacted_fields(["scope"])
        assert "scope" in redacted_fields() and "customer_ref" not in redacted_fields()
        with active_run() as ctx:
            _call(server)
        (span,) = llm_spans(ctx)
        assert span.input["credentials"] == {"access_token": REDACTED, "scope": REDACTED}
        assert span.input["customer_ref"] == CUSTOM
    finally:
        set_redacted_fields(None)
    assert redacted_fields() == DEFAULT_REDACTED_FIELDS
    with pytest.raises(TypeError, match="list of field names"):
        set_redacted_fields("scope")  # type: ignore[arg-type]


def test_the_default_list_matches_any_case_and_spelling_at_any_depth() -> None:
    names = [
        "Authorization", "api_key", "api-key", "APIKEY", "X-Api-Key", "access_token",
        "refresh_token", "token", "Password", "secret", "client_secret",
    ]  # fmt: skip
    value = {"a": [{"b": dict.fromkeys(names, "s3cret")}], "tokens": 3, "keys": ["k"]}
    redacted = redact(value)
    assert redacted["a"][0]["b"] == dict.fromkeys(names, REDACTED)
    assert (redacted["tokens"], redacted["keys"]) == (3, ["k"])
    assert value["a"][0]["b"]["token"] == "s3cret"  # a copy: the caller's value is kept
    deep: object = "leaf"
    for _ in range(200):
        deep = [deep]
    assert "[nested too deep]" in json.dumps(redact(deep))  # recorded stays readable
    assert redact_url("https://u:pw@h/p?Sig=1&x=2&Api_Key=3") == (
        "https://h/p?Sig=%5Bredacted%5D&x=2&Api_Key=%5Bredacted%5D"
    )


def test_trace_backed_replay_matches_requests_on_the_redacted_body(
    server: FakeLLMServer,
) -> None:
    """A recorded span holds the redacted request; replaying it redacts the live request
    the same way, so the secret-bearing call still finds its recording."""
    with active_run() as ctx:
        _call(server)
    record = ctx.to_record()
    calls = RecordedCalls(record)
    before = len(server.requests)
    with serve_llm_calls(calls), httpx2.Client() as http:
        http.post(
            server.openai_url + "/chat/completions?token=other",
            json={
                "model": "gpt-4o-mini",
                "messages": [{"role": "user", "content": "hi"}],
                **EXTRA_BODY,
                "credentials": {"access_token": "a different secret", "scope": "chat"},
            },
        )
    assert calls.served == 1 and len(server.requests) == before  # served, not live


class _LogprobsHandler(BaseHTTPRequestHandler):
    """A chat completion with logprobs: each entry's ``token`` is data, not a secret."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        entry = {"token": "Hello", "logprob": -0.1, "top_logprobs": [{"token": "Hi"}]}
        body = json.dumps(
            {
                "id": "c1",
                "model": "gpt-4o-mini",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Hello"},
                        "logprobs": {"content": [entry]},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def logprobs_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LogprobsHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_response_keeps_its_logprob_tokens(logprobs_url: str, tmp_path: Path) -> None:
    """``token`` is a secret in a request and data in a response (OpenAI's logprobs)."""
    path = tmp_path / "logprobs.jsonl"
    request = {"model": "gpt-4o-mini", "messages": [], "logprobs": True, "token": "s3cret"}
    with cassette(path), active_run() as ctx, httpx2.Client() as http:
        http.post(logprobs_url + "/chat/completions", json=request)
    (span,) = llm_spans(ctx)
    assert span.input["token"] == REDACTED
    logprobs = span.output["choices"][0]["logprobs"]["content"][0]
    assert (logprobs["token"], logprobs["top_logprobs"][0]["token"]) == ("Hello", "Hi")
    text = path.read_text(encoding="utf-8")
    assert "s3cret" not in text and '"token":"Hello"' in text
    with cassette(path, "replay"), httpx2.Client() as http:
        replayed = http.post(logprobs_url + "/chat/completions", json=request).json()
    assert replayed["choices"][0]["logprobs"]["content"][0]["token"] == "Hello"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Max retries exceeded with url: /v1/chat?api-key=K1&n=2 (Caused by X('no'))",
            "Max retries exceeded with url: /v1/chat?api-key=[redacted]&n=2 (Caused by X('no'))",
        ),
        (
            "POST 'https://u:K1@h/x?key=K1#f' failed",
            "POST 'https://[redacted]@h/x?key=[redacted]#f' failed",
        ),
        ("x = f(a=1) and mail a@b.c", "x = f(a=1) and mail a@b.c"),
        ("no url here", "no url here"),
        ("https://bob:p@ss@h/x", "https://[redacted]@h/x"),  # an @ in the password too
        (
            "Server=db;User Id=sa;Password=K1;Pwd=K2",
            "Server=db;User Id=sa;Password=[redacted];Pwd=[redacted]",
        ),
        ("Password=K1;Server=db", "Password=[redacted];Server=db"),
        ("host=db user=app password=K1 dbname=a", "host=db user=app password=[redacted] dbname=a"),
        ("AccountName=a;AccountKey=K1", "AccountName=a;AccountKey=[redacted]"),
        ("max_tokens=5 is over, id=3, token=K1", "max_tokens=5 is over, id=3, token=[redacted]"),
        ("Equals(a, target_key=trace.last)", "Equals(a, target_key=trace.last)"),
        (
            "SharedAccessKeyName=n,SharedAccessKey=K1",
            "SharedAccessKeyName=n,SharedAccessKey=[redacted]",
        ),
    ],
)
def test_urls_quoted_in_error_text_lose_their_credentials(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_received_attributes_are_redacted_at_any_depth() -> None:
    from scenarist.redaction import redact_attributes

    attributes = {
        "http.request.header.x-api-key": "K1",
        "config": {"endpoint": "https://h", "nested": [{"client_secret": "K2"}, "ok"]},
        "urls": ["https://h/?sig=K3", "https://u:K4@h/"],
        "params": json.dumps({"auth": {"password": "K5"}, "url": "mysql://r:K6@db/a"}),
        "count": 3,
    }
    redacted = redact_attributes(attributes)
    text = json.dumps(redacted)
    assert not [n for n in range(1, 7) if f"K{n}" in text], text
    assert redacted["config"]["endpoint"] == "https://h"
    assert redacted["config"]["nested"] == [{"client_secret": REDACTED}, "ok"]
    assert redacted["count"] == 3
    assert attributes["config"]["nested"][0]["client_secret"] == "K2"  # a copy
