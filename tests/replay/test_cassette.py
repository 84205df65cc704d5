"""Cassettes through raw httpx and httpx2 clients: modes, keys, lanes, concurrency, secrets."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import httpx2
import pytest
from tests.replay.cassette_support import OPENAI_KEY, ConnectionCounter, echo_script

from scenarist.errors import CassetteError, ReplayMissError, UserError
from scenarist.replay import RECORD_MODE_ENV, cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing.http import capture_active

LIBRARIES = [pytest.param(httpx, id="httpx"), pytest.param(httpx2, id="httpx2")]
HEADERS = {"authorization": f"Bearer {OPENAI_KEY}", "x-api-key": OPENAI_KEY}


def body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}], **extra}


def answer(response: Any) -> str:
    return str(response.json()["choices"][0]["message"]["content"])


@pytest.fixture
def server() -> Any:
    with FakeLLMServer(echo_script()) as fake:
        yield fake


def record(path: Path, base_url: str, *texts: str, lib: ModuleType = httpx2) -> list[str]:
    with cassette(path, "record"), lib.Client(headers=HEADERS) as http:
        return [answer(http.post(base_url + "/chat/completions", json=body(t))) for t in texts]


@pytest.mark.parametrize("lib", LIBRARIES)
def test_raw_client_json_and_stream_replay_without_network(
    lib: ModuleType, server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "raw.jsonl"

    def agent(base_url: str) -> tuple[str, bytes]:
        url = base_url + "/chat/completions?key=query-secret"
        with lib.Client(headers=HEADERS) as http:
            plain = answer(http.post(url, json=body("plain")))
            with http.stream("POST", url, json=body("streamed", stream=True)) as response:
                assert response.headers["content-type"] == "text/event-stream"
                raw = b"".join(response.iter_raw())
        return plain, raw

    with cassette(path):
        recorded = agent(server.openai_url)
    assert recorded[1].endswith(b"data: [DONE]\n\n")
    with ConnectionCounter() as port, cassette(path) as tape:
        assert agent(port.openai_url) == recorded
    assert (port.connections, tape.stats.replayed) == (0, 2)
    assert "query-secret" not in path.read_text()


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.anyio
async def test_raw_async_client_replays(
    lib: ModuleType, server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "async.jsonl"

    async def agent(base_url: str) -> list[str]:
        async with lib.AsyncClient(timeout=60) as http:
            plain = await http.post(base_url + "/chat/completions", json=body("a"))
            async with http.stream(
                "POST", base_url + "/chat/completions", json=body("b", stream=True)
            ) as response:
                lines = [line async for line in response.aiter_lines() if line]
        return [answer(plain), *lines]

    with cassette(path):
        recorded = await agent(server.openai_url)
    with ConnectionCounter() as port, cassette(path, "replay"):
        assert await agent(port.openai_url) == recorded
    assert port.connections == 0


def test_changed_prompt_in_replay_mode_raises_a_miss_with_a_diff(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "miss.jsonl"
    record(path, server.openai_url, "What is the refund policy?", "Thanks")
    with (
        ConnectionCounter() as port,
        pytest.raises(ReplayMissError) as caught,
        cassette(path, "replay") as tape,
        httpx2.Client() as http,
    ):
        http.post(port.openai_url + "/chat/completions", json=body("What is the return policy?"))
    message = str(caught.value)
    assert message.startswith(
        f"Replay miss: no recorded response in cassette {str(path)!r} for "
        "POST /v1/chat/completions (model 'gpt-4o-mini', last message "
        "'What is the return policy?')."
    )
    assert "Nearest recorded request (line 2) differs:" in message
    assert '-      "content": "What is the refund policy?",' in message
    assert '+      "content": "What is the return policy?",' in message
    assert "mode='refresh'" in message and f"{RECORD_MODE_ENV}=refresh" in message
    assert port.connections == 0
    assert (tape.stats.missed, tape.stats.unused) == (1, 2)
    assert tape.misses == [caught.value]


def test_a_miss_on_an_unknown_endpoint_says_nothing_was_recorded(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "endpoint.jsonl"
    record(path, server.openai_url, "hi")
    with (
        pytest.raises(ReplayMissError) as caught,
        cassette(path, "replay"),
        httpx2.Client() as http,
    ):
        http.post(server.openai_url + "/embeddings", json={"model": "m", "input": "x"})
    assert "Nothing was recorded for POST /v1/embeddings." in str(caught.value)


def test_identical_calls_replay_in_recorded_order_then_miss(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "lanes.jsonl"
    recorded = record(path, server.openai_url, "same", "other", "same", "same")
    assert recorded == ["echo 1: same", "echo 2: other", "echo 3: same", "echo 4: same"]
    with ConnectionCounter() as port, cassette(path, "replay") as tape, httpx2.Client() as http:
        url = port.openai_url + "/chat/completions"
        replayed = [answer(http.post(url, json=body(t))) for t in ("same", "same", "other", "same")]
        assert replayed == ["echo 1: same", "echo 3: same", "echo 2: other", "echo 4: same"]
        with pytest.raises(ReplayMissError, match="already served") as caught:
            http.post(url, json=body("same"))
        tape.misses.clear()  # this miss was expected: do not raise it again on exit
    assert "more times than when recorded" in str(caught.value)
    assert port.connections == 0


@pytest.mark.anyio
async def test_concurrent_fan_out_replays_in_recorded_order(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "fan-out.jsonl"

    async def fan_out(base_url: str) -> list[str]:
        async with httpx2.AsyncClient(timeout=60) as http:
            url = base_url + "/chat/completions"
            replies = await asyncio.gather(*(http.post(url, json=body("same")) for _ in range(6)))
        return [answer(r) for r in replies]

    with cassette(path):
        recorded = await fan_out(server.openai_url)
    assert sorted(recorded) == sorted(f"echo {i}: same" for i in range(1, 7))
    with ConnectionCounter() as port, cassette(path):
        assert await fan_out(port.openai_url) == recorded
    assert port.connections == 0


@pytest.mark.anyio
async def test_eight_concurrent_scenarios_with_their_own_cassettes_never_mix(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    async def scenario(number: int, base_url: str) -> list[str]:
        async with (
            cassette(tmp_path / f"scenario-{number}.jsonl"),
            httpx2.AsyncClient(timeout=60) as http,
        ):
            answers = []
            for turn in range(3):
                text = f"scenario {number} turn {turn}"
                response = await http.post(base_url + "/chat/completions", json=body(text))
                answers.append(answer(response))
                await asyncio.sleep(0.001 * (8 - number))  # interleave the scenarios
            return answers

    recorded = await asyncio.gather(*(scenario(n, server.openai_url) for n in range(8)))
    assert len(server.requests) == 24
    for number in range(8):
        lines = (tmp_path / f"scenario-{number}.jsonl").read_text().splitlines()[1:]
        prompts = [json.loads(line)["request"]["body"]["messages"][0]["content"] for line in lines]
        assert prompts == [f"scenario {number} turn {turn}" for turn in range(3)]
    with ConnectionCounter() as port:
        replayed = await asyncio.gather(*(scenario(n, port.openai_url) for n in range(8)))
    assert replayed == recorded
    assert port.connections == 0
    assert not capture_active()


def test_record_appends_refresh_rewrites_once_records_then_replays(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "modes.jsonl"
    with cassette(path) as tape, httpx2.Client() as http:  # once, no file: records
        http.post(server.openai_url + "/chat/completions", json=body("first"))
    assert (tape.replaying, tape.stats.live) == (False, 1)
    record(path, server.openai_url, "second")
    assert len(path.read_text().splitlines()) == 3  # header + two appended calls
    with cassette(path) as tape, httpx2.Client() as http:  # once, file exists: replays
        http.post(server.openai_url + "/chat/completions", json=body("second"))
    assert (tape.replaying, tape.stats.replayed, tape.stats.unused) == (True, 1, 1)
    assert not tape.stats.faithful
    requests_before = len(server.requests)
    with cassette(path, "refresh") as tape, httpx2.Client() as http:
        http.post(server.openai_url + "/chat/completions", json=body("third"))
    assert len(server.requests) == requests_before + 1
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and "third" in lines[1]


def test_env_var_sets_the_default_mode_only(
    server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env.jsonl"
    monkeypatch.setenv(RECORD_MODE_ENV, "replay")
    with pytest.raises(CassetteError, match="does not exist, and mode 'replay' never records"):
        cassette(path).__enter__()
    record(path, server.openai_url, "hi")  # an explicit mode wins over the variable
    monkeypatch.setenv(RECORD_MODE_ENV, "refresh")
    assert cassette(path).mode == "refresh"
    monkeypatch.setenv(RECORD_MODE_ENV, "sometimes")
    with pytest.raises(UserError, match="SCENARIST_RECORD_MODE='sometimes' is not a cassette"):
        cassette(path)
    with pytest.raises(UserError, match="mode='always' is not a cassette mode"):
        cassette(path, "always")  # type: ignore[arg-type]


def test_volatile_fields_are_neither_stored_nor_matched_and_stream_is(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "volatile.jsonl"
    with cassette(path), httpx2.Client() as http:
        http.post(
            server.openai_url + "/chat/completions",
            json=body("hi", user="customer-42", metadata={"ticket": "T-1"}, temperature=0.2),
        )
    stored = json.loads(path.read_text().splitlines()[1])["request"]
    assert stored == {
        "method": "POST",
        "path": "/v1/chat/completions",
        "body": body("hi", temperature=0.2),
    }
    with cassette(path) as tape, httpx2.Client() as http:
        url = server.openai_url + "/chat/completions"
        http.post(url, json=body("hi", user="someone-else", temperature=0.2))
        with pytest.raises(ReplayMissError, match='"stream": true'):
            http.post(url, json=body("hi", temperature=0.2, stream=True))
        tape.misses.clear()
    assert tape.stats.replayed == 1


def test_match_on_limits_the_key_to_chosen_fields(server: FakeLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "match-on.jsonl"
    with cassette(path), httpx2.Client() as http:
        http.post(server.openai_url + "/chat/completions", json=body("hi", temperature=0.1))
    with cassette(path, match_on=("model", "messages")) as tape, httpx2.Client() as http:
        http.post(server.openai_url + "/chat/completions", json=body("hi", temperature=0.9))
    assert tape.stats.replayed == 1
    with pytest.raises(TypeError, match="list of field names"):
        cassette(path, match_on="model")


def test_secrets_and_configured_fields_are_never_written(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "secrets.jsonl"
    payload = body("hi", api_key="body-secret", extra={"customer_email": "ann@example.com"})
    with cassette(path, redact=["Customer_Email"]), httpx2.Client(headers=HEADERS) as http:
        http.post(server.openai_url + "/chat/completions?key=query-secret", json=payload)
    text = path.read_text()
    for secret in (OPENAI_KEY, "body-secret", "query-secret", "ann@example.com", "Bearer"):
        assert secret not in text
    assert text.count("[redacted]") == 2
    assert json.loads(text.splitlines()[1])["response"]["headers"].keys() == {
        "content-type",
        "x-request-id",
    }
    with cassette(path, redact=["customer_email"]) as tape, httpx2.Client() as http:
        other = body("hi", api_key="another", extra={"customer_email": "bob@example.com"})
        http.post(server.openai_url + "/chat/completions", json=other)
    assert tape.stats.replayed == 1  # redacted values do not take part in the key


def test_error_responses_replay_as_recorded(tmp_path: Path) -> None:
    path = tmp_path / "errors.jsonl"
    script = ScriptedLLM([Reply(status=429, error="slow down")])
    with FakeLLMServer(script) as fake, cassette(path), httpx2.Client() as http:
        live = http.post(fake.openai_url + "/chat/completions", json=body("hi"))
    with ConnectionCounter() as port, cassette(path), httpx2.Client() as http:
        replayed = http.post(port.openai_url + "/chat/completions", json=body("hi"))
    assert (replayed.status_code, replayed.json()) == (429, live.json())


def test_a_swallowed_miss_still_fails_when_the_cassette_closes(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "swallowed.jsonl"
    record(path, server.openai_url, "hi")
    with (
        pytest.raises(ReplayMissError, match="last message 'fallback please'"),
        cassette(path, "replay"),
        httpx2.Client() as http,
        contextlib.suppress(ReplayMissError),  # an agent that catches errors and carries on
    ):
        http.post(server.openai_url + "/chat/completions", json=body("fallback please"))


def test_hooks_are_installed_only_while_a_cassette_is_active(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    original = httpx2.HTTPTransport.__dict__["handle_request"]
    with cassette(tmp_path / "hooks.jsonl"), httpx2.Client() as http:
        assert capture_active()
        assert httpx2.HTTPTransport.__dict__["handle_request"] is not original
        assert http.get(server.openai_url + "/models").status_code == 200  # passes through
    assert httpx2.HTTPTransport.__dict__["handle_request"] is original
    assert not capture_active()
    with httpx2.Client() as http:  # outside any cassette: untouched, not recorded
        http.post(server.openai_url + "/chat/completions", json=body("free"))
    assert "free" not in (tmp_path / "hooks.jsonl").read_text()


def test_calls_with_line_separators_in_them_replay(server: FakeLLMServer, tmp_path: Path) -> None:
    """U+2028, U+2029 and U+0085 stay raw inside a cassette line (JSON allows it): the
    reader splits at ``\\n`` alone, like every JSON Lines reader of scenarist."""
    text = "one\u2028two\u2029three\x85four"
    path = tmp_path / "separators.jsonl"
    recorded = record(path, server.openai_url, text)
    assert text in recorded[0] and "\u2028" in path.read_text(encoding="utf-8")
    with (
        ConnectionCounter() as port,
        cassette(path, "replay") as tape,
        httpx2.Client(headers=HEADERS) as http,
    ):
        replayed = answer(http.post(port.openai_url + "/chat/completions", json=body(text)))
    assert replayed == recorded[0]
    assert (port.connections, tape.stats.replayed) == (0, 1)
