"""The replay path's shortcuts give exactly what the plain path gives.

A request's key is spelled by msgspec when it can be (sorted keys, ten times faster than
``json``), by ``json`` otherwise; a recorded response is encoded once when the cassette
opens (``prepare``), then served as ``serve`` would; a cassette's load runs with the
collector paused and leaves it as it was.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarist.engine._gc import paused
from scenarist.errors import ReplayMissError
from scenarist.replay import _cassette_http as http
from scenarist.replay import cassette
from scenarist.replay._request_key import RequestMatcher, canonical, stored_request

HEADER = '{"format_version":1,"kind":"scenarist.cassette"}'
URL = "http://llm.invalid/v1/chat/completions"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, exclude_categories=())),  # lone surrogates too
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


def request_of(body: Any) -> dict[str, Any]:
    return {"method": "POST", "path": "/v1/chat/completions", "body": body}


def same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same value, NaN equal to itself."""
    return bool(canonical(a) == canonical(b))


@settings(max_examples=400, deadline=None)
@given(json_values, json_values)
def test_two_bodies_share_a_key_exactly_when_json_spells_them_alike(a: Any, b: Any) -> None:
    key = RequestMatcher().key
    assert (key(request_of(a)) == key(request_of(b))) == same_json(a, b)
    assert key(request_of(a)) == key(request_of(json.loads(json.dumps(a))))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"temperature": float("nan")}, {"temperature": None}),  # msgspec writes NaN as null
        ({"x": float("inf")}, {"x": None}),
        ({"x": 1}, {"x": 1.0}),
        ({"x": 1}, {"x": True}),
        ({"x": 10**30}, {"x": 1e30}),
    ],
)
def test_values_json_tells_apart_never_share_a_key(
    one: dict[str, Any], other: dict[str, Any]
) -> None:
    key = RequestMatcher().key
    assert key(request_of(one)) != key(request_of(other))
    assert key(request_of(one)) == key(request_of(dict(one)))


def test_key_order_and_lone_surrogates_do_not_change_a_key() -> None:
    key = RequestMatcher().key
    assert key(request_of({"a": 1, "b": [2, {"d": 3, "c": 4}]})) == key(
        request_of({"b": [2, {"c": 4, "d": 3}], "a": 1})
    )
    lone = json.loads('{"content": "\\ud800 null"}')
    assert key(request_of(lone)) == key(request_of(json.loads(json.dumps(lone))))


def test_a_match_on_function_keeps_json_and_its_refusals() -> None:
    key = RequestMatcher(lambda request: {"fields": {1, 2}}).key
    with pytest.raises(TypeError):
        key(request_of({}))  # json refuses a set, as before (msgspec would not)


@pytest.mark.parametrize(
    "content",
    [
        b'{"model":"m","user":"u","metadata":{"a":1},"api_key":"sk-1","messages":[]}',
        b'{"model":"m","nested":{"Authorization":"Bearer x","keep":1}}',
        b'{"model":"m","x":NaN,"y":1e999}',
        b'["not", "a", "dict"]',
        b"not json \xff",
        b"",
    ],
)
def test_stored_request_is_the_redacted_body_without_volatile_fields(content: bytes) -> None:
    names = frozenset({"api_key", "authorization"})
    stored = stored_request("POST", "/v1/x/", content, names)
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", "replace")
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in {"user", "metadata"}}
        for k in list(body):
            if k == "api_key":
                body[k] = "[redacted]"
        if "nested" in body:
            body["nested"] = {**body["nested"], "Authorization": "[redacted]"}
    assert stored["path"] == "/v1/x"
    assert canonical(stored["body"]) == canonical(body)


RESPONSES: list[dict[str, Any]] = [
    {"status": 200, "headers": {"content-type": "application/json"}, "body": {"a": "é", "n": 1}},
    {"status": 200, "headers": {}, "body": json.loads('{"a": "\\ud800"}')},  # escaped again
    {"status": 429, "headers": {"x-should-retry": "false"}, "text": "slow down"},
    {"status": 200, "headers": {}, "body_base64": "AAEC/w=="},
    {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": ["data: 1"]},
]


@pytest.mark.parametrize("module", [httpx, httpx2])
@pytest.mark.parametrize("response", RESPONSES)
def test_a_prepared_response_is_served_as_serve_serves_it(
    module: Any, response: dict[str, Any]
) -> None:
    served = http.prepare(response)
    for made in (http.respond(module, served), http.respond(module, served)):
        plain = http.serve(module, response)
        assert made.status_code == plain.status_code
        assert list(made.headers.multi_items()) == list(plain.headers.multi_items())
        assert made.extensions == plain.extensions
        assert made.read() == plain.read()
    assert "content-length" not in response["headers"]  # the record is left as it was


def test_a_response_text_that_cannot_be_encoded_fails_when_served_not_at_load(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tape.jsonl"
    call = {
        "request": {"method": "POST", "path": "/v1/chat/completions", "body": {"q": 1}},
        "response": {"status": 200, "headers": {}, "text": "\ud800"},
    }
    path.write_text(f"{HEADER}\n{json.dumps(call)}\n", encoding="utf-8")
    tape = cassette(path, "replay")
    with tape, httpx2.Client() as client, pytest.raises(UnicodeEncodeError):
        client.post(URL, json={"q": 1})  # opening it worked


def test_a_call_in_a_lane_takes_its_own_lane_then_unlaned_calls_then_misses(
    tmp_path: Path,
) -> None:
    from scenarist.engine._lanes import lane

    path = tmp_path / "tape.jsonl"
    lines = [HEADER]
    for answer, where in (("shared", None), ("mine", "scenario:a"), ("theirs", "scenario:b")):
        call: dict[str, Any] = {
            "request": {"method": "POST", "path": "/v1/chat/completions", "body": {"q": 1}},
            "response": {"status": 200, "headers": {}, "text": answer},
        }
        if where:
            call["lane"] = where
        lines.append(json.dumps(call))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tape = cassette(path, "replay")
    answers: list[str] = []

    def replay() -> None:
        with tape, lane("scenario:a"), httpx2.Client() as client:
            answers.extend(client.post(URL, json={"q": 1}).text for _ in range(2))
            client.post(URL, json={"q": 1})

    with pytest.raises(ReplayMissError, match="already served"):
        replay()
    assert answers == ["mine", "shared"]
    assert (tape.stats.replayed, tape.stats.missed, tape.stats.unused) == (2, 1, 1)


def test_the_collector_is_paused_inside_and_left_as_it_was() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused():
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # someone else turned it off: it stays off
    finally:
        gc.enable()


def test_the_redaction_variable_is_read_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarist.redaction import ENV_VAR, redacted_fields

    monkeypatch.delenv(ENV_VAR, raising=False)
    assert "customer_email" not in redacted_fields()
    monkeypatch.setenv(ENV_VAR, "Customer-Email")
    assert "customer_email" in redacted_fields()
    monkeypatch.setenv(ENV_VAR, "")
    assert "customer_email" not in redacted_fields()
    monkeypatch.setattr("os.environ", {ENV_VAR: "session_id"})  # a replaced environment
    assert "session_id" in redacted_fields()


def test_certificates_of_the_same_counts_are_one_frozen_value() -> None:
    from scenarist.model.certificate import ReplayCertificate
    from scenarist.model.trace import Span

    def span(**metadata: Any) -> Span:
        return Span(name="openai.chat.completions", kind="llm", metadata=metadata)

    spans = [span(url="u", replayed=True), span(url="u"), span(), span(url="u", replayed=True)]
    one = ReplayCertificate.from_spans(spans, "in-process")
    assert one == ReplayCertificate(replayed=2, live=1, guarantee="in-process")
    assert ReplayCertificate.from_spans(list(spans), "in-process") is one
    with pytest.raises(ValueError):
        ReplayCertificate.from_spans(spans, "bogus")  # type: ignore[arg-type]

    class Mine(ReplayCertificate):
        pass

    assert type(Mine.from_spans(spans, "in-process")) is Mine


@pytest.mark.parametrize(
    "body_text",
    [
        '{"choices": [{"message": {"content": "h\\u00e9llo \\u2028"}}], "usage": {"x": 3}}',
        '{"a": "\\ud800", "n": 123456789012345678901234567890, "f": 1e16, "z": -0.0}',
        '{"x": NaN, "y": [1, 2, {"password": "p", "token": "t"}]}',  # redacted: a copy
        '"just a string"',
        "[1, 2, 3]",
        "null",
    ],
)
@pytest.mark.parametrize("module", [httpx, httpx2])
def test_a_replayed_span_output_is_what_parsing_the_served_body_gives(
    tmp_path: Path, module: Any, body_text: str
) -> None:
    from scenarist.redaction import redact, redacted_fields, response_fields
    from scenarist.tracing.recorder import RunRecorder

    path = tmp_path / "tape.jsonl"
    line = (
        '{"request":{"body":{"q":1},"method":"POST","path":"/v1/chat/completions"},'
        f'"response":{{"body":{body_text},"headers":{{}},"status":200}}}}'
    )
    path.write_text(f"{HEADER}\n{line}\n", encoding="utf-8")
    with cassette(path, "replay"), module.Client() as client, RunRecorder("t") as recorder:
        served = client.post(URL, json={"q": 1}).content
    (span,) = recorder.spans()
    expected = redact(json.loads(served), response_fields(redacted_fields()))
    assert canonical(span.output) == canonical(expected)
    assert span.metadata["replayed"] is True


@pytest.mark.parametrize("secret", [True, False])
@pytest.mark.parametrize("module", [httpx, httpx2])
def test_the_request_parsed_once_keys_the_call_and_stays_the_span_input(
    tmp_path: Path, module: Any, secret: bool
) -> None:
    from scenarist.tracing.recorder import RunRecorder

    path = tmp_path / "tape.jsonl"
    stored: dict[str, Any] = {"messages": [{"content": "h\u00e9", "role": "user"}]}
    if secret:
        stored["api_key"] = "[redacted]"
    line = json.dumps(
        {
            "request": {"body": stored, "method": "POST", "path": "/v1/chat/completions"},
            "response": {"body": {"ok": 1}, "headers": {}, "status": 200},
        }
    )
    path.write_text(f"{HEADER}\n{line}\n", encoding="utf-8")
    sent: dict[str, Any] = {"user": "u1", "messages": [{"content": "hé", "role": "user"}]}
    if secret:
        sent["api_key"] = "sk-secret"
    with cassette(path, "replay"), module.Client() as client, RunRecorder("t") as recorder:
        assert client.post(URL, json=sent).json() == {"ok": 1}
    (span,) = recorder.spans()
    expected = {**sent, "api_key": "[redacted]"} if secret else sent
    assert span.input == expected  # the volatile field stays in the span, the secret does not
