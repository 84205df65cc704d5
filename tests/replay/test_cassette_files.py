"""Cassette files: the format, bad files refused with file and line, paths kept inside."""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.replay.cassette_support import ConnectionCounter, echo_script

from scenarist.errors import CassetteError, UserError
from scenarist.replay import cassette
from scenarist.replay._cassette_file import FORMAT_VERSION, resolve_path
from scenarist.testing import FakeLLMServer

BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "héllo"}]}
HEADER = '{"format_version":1,"kind":"scenarist.cassette"}'


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server, cassette(path), httpx2.Client() as http:
        url = server.openai_url + "/chat/completions"
        http.post(url, json=BODY)
        http.post(url, json={**BODY, "stream": True}).read()
    return path


def test_the_file_is_a_header_then_one_sorted_line_per_call(recorded: Path) -> None:
    header, plain, streamed = recorded.read_text(encoding="utf-8").splitlines()
    assert header == HEADER
    assert json.loads(header)["format_version"] == FORMAT_VERSION
    assert plain.startswith('{"request":{"body":{"messages":[{"content":"héllo","role":"user"}]')
    record = json.loads(plain)
    assert list(record) == ["request", "response"]
    assert list(record["response"]) == ["body", "headers", "status"]
    assert record["response"]["body"]["choices"][0]["message"]["content"] == "echo 1: héllo"
    events = json.loads(streamed)["response"]["events"]
    assert events[0].startswith('data: {"id": "chatcmpl-fake-2"')
    assert events[-1] == "data: [DONE]"


def test_a_re_recording_keeps_the_order_and_spelling_of_unchanged_calls(recorded: Path) -> None:
    before = recorded.read_text().splitlines()
    with (
        FakeLLMServer(echo_script()) as server,
        cassette(recorded, "refresh"),
        httpx2.Client() as http,
    ):
        url = server.openai_url + "/chat/completions"
        http.post(url, json=BODY)
        http.post(url, json={**BODY, "messages": [{"role": "user", "content": "new"}]})
    after = recorded.read_text().splitlines()
    assert after[0] == before[0]

    def request_part(line: str) -> str:  # the fake's ids and timestamps change each run
        return line.split(',"response":')[0]

    assert request_part(after[1]) == request_part(before[1])
    assert '"content":"new"' in request_part(after[2])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", ":1: not a scenarist cassette"),
        ("not json\n", ":1: not a scenarist cassette"),
        (
            '{"format_version": 99, "kind": "scenarist.cassette"}\n',
            ":1: cassette format_version 99 was written by a newer",
        ),
        (HEADER + "\n{broken\n", ":2: invalid JSON"),
        (HEADER + "\n\n[1, 2]\n", ":3: a call must be a JSON object"),
        (HEADER + '\n{"request": {"path": "/x"}, "response": {}}\n', ":2: the request needs"),
        (
            HEADER + '\n{"request": {"method": "POST", "path": "/x"}, "response": {"status": 7}}',
            ":2: the response status must be an HTTP status code, not 7",
        ),
        (
            HEADER + '\n{"request": {"method": "POST", "path": "/x"}, "response": {"status": 200}}',
            ":2: the response needs exactly one of body, text, body_base64, events",
        ),
        (
            HEADER + '\n{"request": {"method": "POST", "path": "/x"}, '
            '"response": {"status": 200, "events": [1]}}',
            ":2: the response 'events' must be a list of strings",
        ),
        (
            '{"format_version": 1, "kind": "scenarist.formats.runlog"}\n',
            ":1: not a scenarist cassette (the header's kind is 'scenarist.formats.runlog'",
        ),
        ('{"format_version": 1}\n', ":1: not a scenarist cassette (the header's kind is None"),
        (
            HEADER + '\n{"request": {"method": "POST", "path": "/x"}, '
            '"response": {"status": 200, "body_base64": "not base64!"}}',
            ":2: the response 'body_base64' is not valid base64",
        ),
        pytest.param(
            HEADER
            + '\n{"request": {"method": "POST", "path": "/x", "body": '
            + "[" * 50_000
            + "]" * 50_000
            + '}, "response": {"status": 200, "text": ""}}',
            ":2: nested deeper than 128 levels",
            id="50000-deep",
        ),
        pytest.param(
            HEADER
            + '\n{"request": {"method": "POST", "path": "/x", "body": '
            + "[" * 900
            + "]" * 900
            + '}, "response": {"status": 200, "text": ""}}',
            ":2: nested deeper than 128 levels",
            id="900-deep",
        ),
    ],
)
def test_bad_files_are_refused_naming_file_and_line(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    for mode in ("replay", "once", "record"):
        with pytest.raises(CassetteError) as caught:
            cassette(path, mode).__enter__()  # type: ignore[arg-type]
        assert str(caught.value).startswith(f"{path}{expected}")
        assert "mode='refresh'" in str(caught.value)
    assert path.read_text() == content  # never touched


@pytest.mark.parametrize("mode", ["replay", "once", "record", "refresh"])
def test_a_directory_given_as_the_cassette_is_refused_in_every_mode(
    tmp_path: Path, mode: str
) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    with pytest.raises(CassetteError) as caught, cassette(folder, mode):  # type: ignore[arg-type]
        pass
    assert str(caught.value).startswith(f"{folder}: is a directory, not a cassette file")
    assert list(folder.iterdir()) == []  # nothing written into it


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CassetteError, match="not UTF-8 text"):
        cassette(path, "replay").__enter__()


def test_replay_of_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist, and mode 'replay' never records"):
        cassette(tmp_path / "nowhere.jsonl", "replay").__enter__()


def test_a_cassette_is_entered_once(tmp_path: Path) -> None:
    tape = cassette(tmp_path / "once.jsonl")
    with tape, pytest.raises(UserError, match="already active"):
        tape.__enter__()


def test_appending_to_a_hand_edited_file_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "edited.jsonl"
    path.write_text(HEADER)  # no final newline
    with (
        FakeLLMServer(echo_script()) as server,
        cassette(path, "record"),
        httpx2.Client() as http,
    ):
        http.post(server.openai_url + "/chat/completions", json=BODY)
    header, call = path.read_text().splitlines()
    assert header == HEADER and json.loads(call)["response"]["status"] == 200


@pytest.mark.parametrize(
    "name", ["../escape.jsonl", "a/../../escape.jsonl", "/etc/passwd", ".", "sub/.."]
)
def test_paths_leaving_the_base_directory_are_refused(tmp_path: Path, name: str) -> None:
    base = tmp_path / "cassettes"
    base.mkdir()
    with pytest.raises(CassetteError, match="leaves its base directory"):
        cassette(name, base_dir=base)


def test_a_symlink_out_of_the_base_directory_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "cassettes"
    base.mkdir()
    (base / "link").symlink_to(tmp_path)
    with pytest.raises(CassetteError, match="leaves its base directory"):
        cassette("link/x.jsonl", base_dir=base)
    assert cassette("sub/ok.jsonl", base_dir=base).path == (base / "sub/ok.jsonl").resolve()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["..", ".", "a", "b", "c.jsonl", "", "/"]), max_size=6))
def test_resolved_paths_stay_inside_the_base_directory(parts: list[str]) -> None:
    base = Path(os.environ.get("TMPDIR", "/tmp")).resolve() / "scenarist-cassette-base"
    name = "/".join(parts) or "x"
    try:
        resolved = resolve_path(name, base)
    except CassetteError:
        return
    assert resolved.is_relative_to(base) and resolved != base


class _GzipHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        data = gzip.compress(json.dumps({"model": "m", "choices": []}).encode())
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-encoding", "gzip")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def gzip_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GzipHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_compressed_responses_are_stored_decoded(gzip_url: str, tmp_path: Path) -> None:
    path = tmp_path / "gzip.jsonl"
    with cassette(path), httpx2.Client() as http:
        live = http.post(gzip_url + "/v1/chat/completions", json=BODY).json()
    response = json.loads(path.read_text().splitlines()[1])["response"]
    assert response == {
        "body": live,
        "headers": {"content-type": "application/json"},
        "status": 200,
    }
    with ConnectionCounter() as port, cassette(path), httpx2.Client() as http:
        assert http.post(port.url + "/v1/chat/completions", json=BODY).json() == live
