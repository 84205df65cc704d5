"""Offline LLM providers: a real HTTP server on 127.0.0.1 that answers from a script.

``FakeLLMServer`` speaks OpenAI chat completions (also at Azure OpenAI's
``/openai/deployments/<name>/chat/completions`` paths), the OpenAI Responses API and
embeddings (deterministic vectors that use no scripted reply), Anthropic messages,
Gemini ``models/<model>:generateContent`` / ``:streamGenerateContent`` (SSE with
``alt=sse``, else a JSON array) and Ollama ``/api/chat`` / ``/api/generate`` (NDJSON
streams, Ollama's default), with JSON and streaming (usage included), so the official
SDKs talk to it for real and the HTTP capture sees it as any provider::

    script = ScriptedLLM(["Hello!", Reply(tool_calls=[ToolCall("search", {"q": "x"})])])
    with FakeLLMServer(script) as server:
        client = openai.OpenAI(base_url=server.openai_url, api_key="test")
        anthropic.Anthropic(base_url=server.anthropic_url, api_key="test")

A script is a queue of replies (texts or :class:`Reply`) or a function of the
:class:`FakeRequest`. ``Reply(status=429)`` answers with the provider's error body.
``FakeLLMServer(workers=1)`` answers one request at a time, like a single-worker model
server (llama.cpp): the others wait, with nothing sent, not even headers, until it is
their turn; with ``Reply(delay_s=...)`` that makes queueing under ``--parallel`` real.
Token counts are words (deterministic), unless a reply sets them. Every request is kept
in ``server.requests``. ``FakeLLMServer(tls=context)`` serves HTTPS with a server-side
``ssl.SSLContext`` (its ``url`` is then ``https://127.0.0.1:<port>``; a test names a
provider's host by TLS server name with a certificate it made). Standard library only:
no SDK is imported.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

__all__ = ["FakeLLMServer", "FakeRequest", "Reply", "ScriptedLLM", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake model makes: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``status`` ≥ 400 answers with an error body (``error``)."""

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    status: int = 200
    error: str = "scripted error"
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    delay_s: float = 0.0
    """Wait this long before the first generated content (a slow first token); a reply
    that is not streamed waits this long before its response (headers and body)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers (``{"retry-after": "1"}`` on a 429)."""
    refusal: str | None = None
    """The model refuses: OpenAI's ``message.refusal``, Anthropic's ``stop_reason: refusal``."""
    usage: bool = True
    """``False``: the OpenAI chat and Anthropic answers carry no ``usage`` (a proxy or
    provider that does not report it)."""


@dataclass(frozen=True)
class FakeRequest:
    """A request the fake server received (headers lower-cased and kept: a test log)."""

    provider: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def stream(self) -> bool:
        if ":streamGenerateContent" in self.path:
            return True
        if self.provider == "ollama":  # Ollama streams unless told not to
            return not isinstance(self.body, dict) or self.body.get("stream", True) is not False
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def text(self) -> str:
        """The text of the last message (or the embeddings input, or the prompt)."""
        body = self.body if isinstance(self.body, dict) else {}
        if body.get("contents"):  # Gemini
            last = body["contents"][-1]
            return _text(last.get("parts") if isinstance(last, dict) else "")
        if isinstance(body.get("prompt"), str):  # Ollama generate
            return str(body["prompt"])
        input_ = body.get("input", "")
        if isinstance(input_, list) and input_ and isinstance(input_[-1], dict):  # Responses
            return _text(input_[-1].get("content"))
        messages = body.get("messages") or [{"content": input_}]
        return _text(messages[-1].get("content") if isinstance(messages[-1], dict) else "")


Script = Iterable["str | Reply"] | Callable[[FakeRequest], "str | Reply"]


class ScriptedLLM:
    """The fake model: queued replies, or a function making a reply from the request.

    When the queue runs out, ``default`` answers (if given); otherwise the server
    answers 500 with a message saying the script is exhausted.
    """

    def __init__(self, replies: Script = (), *, default: str | Reply | None = None) -> None:
        self._fn = replies if callable(replies) else None
        self._queue: deque[str | Reply] = deque() if callable(replies) else deque(replies)
        self._default = default
        self._lock = threading.Lock()
        self.calls = 0

    def add(self, *replies: str | Reply) -> None:
        """Queue more replies."""
        with self._lock:
            self._queue.extend(replies)

    def reply_to(self, request: FakeRequest) -> Reply:
        with self._lock:
            self.calls += 1
            if self._fn is not None:
                answer: str | Reply | None = self._fn(request)
            else:
                answer = self._queue.popleft() if self._queue else self._default
        if answer is None:
            message = f"ScriptedLLM has no reply left after {self.calls - 1}; queue more"
            return Reply(status=500, error=message)
        return Reply(text=answer) if isinstance(answer, str) else answer


class FakeLLMServer:
    """A threaded HTTP server on a free port of 127.0.0.1; use it as a context manager."""

    def __init__(
        self,
        script: ScriptedLLM | Script | None = None,
        *,
        workers: int | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script = script if isinstance(script, ScriptedLLM) else ScriptedLLM(script or ())
        self.requests: list[FakeRequest] = []
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1 (or None: no limit), got {workers}")
        self._workers = threading.BoundedSemaphore(workers) if workers else None
        self._ids = itertools.count(1)
        self._tls = tls
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (``https``: with ``tls``); also the Anthropic
        SDK's ``base_url``."""
        if self._server is None:
            raise RuntimeError("FakeLLMServer is not running; use it as `with FakeLLMServer()`")
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        """The OpenAI SDK's ``base_url``: ``<url>/v1``."""
        return self.url + "/v1"

    anthropic_url = url

    def start(self) -> FakeLLMServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        if self._tls is not None:  # each connection's handshake runs on its own thread
            server.socket = self._tls.wrap_socket(
                server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_id(self) -> int:
        return next(self._ids)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # many parallel clients (the default backlog of 5 resets them)
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream is normal (it stopped reading), or mid-TLS
        handshake; stay quiet."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError) and type(error).__module__ != "ssl":
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small SSE writes must not wait for delayed ACKs
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            return None
        return self._json(404, {"error": {"message": f"no route {self.path!r}"}})

    def do_POST(self) -> None:
        workers = self.server.fake._workers
        if workers is None:
            return self._post()
        with workers:  # a busy single-worker server: wait for a free worker, silently
            return self._post()

    def _post(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?")[0].rstrip("/")
        provider = _provider(path)
        fake: FakeLLMServer = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = FakeRequest(provider, "POST", self.path, headers, body)
        fake.requests.append(request)
        if path.endswith("/embeddings"):  # deterministic vectors; no scripted reply used
            self._json(200, _Call(request, Reply(), fake._next_id()).embeddings())
            return
        kind = _route(path)
        if kind is None:
            self._json(404, {"error": {"message": f"no route {self.path!r}"}})
            return
        reply = fake.script.reply_to(request)
        if reply.status >= 400:
            self._json(reply.status, _error_body(provider, reply), reply.headers)
            return
        call = _Call(request, reply, fake._next_id())
        if not request.stream:
            payload = getattr(call, kind)()
            time.sleep(reply.delay_s)  # the whole answer is its first content
            self._json(200, payload)
            return
        content_type = "text/event-stream"
        if provider == "ollama":
            content_type = "application/x-ndjson"
        elif provider == "gemini" and "alt=sse" not in self.path:
            content_type = "application/json"
        events = getattr(call, kind + "_events")()
        if content_type == "application/json":  # Gemini without alt=sse: one JSON array
            events = _json_array(events)
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in events:
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", f"req_fake_{id(payload):x}")
        self.end_headers()
        self.wfile.write(data)


class _Call:
    """The payloads of one answer, in either provider's format."""

    def __init__(self, request: FakeRequest, reply: Reply, number: int) -> None:
        self.reply, self.body = reply, request.body if isinstance(request.body, dict) else {}
        self.model = reply.model or request.model or "fake-model"
        self.number = number
        prompt = " ".join(_text(m.get("content")) for m in self.body.get("messages") or ())
        prompt += " " + _text(self.body.get("system") or self.body.get("input"))
        args = "".join(json.dumps(c.arguments) for c in reply.tool_calls)
        self.tokens_in = reply.tokens_in if reply.tokens_in is not None else _words(prompt)
        out = reply.tokens_out
        self.tokens_out = out if out is not None else _words(f"{reply.text} {args}")
        self.tools = [(c.id or f"call_{number}_{i}", c) for i, c in enumerate(reply.tool_calls)]
        self.gemini_model = request.path.split("?")[0].rsplit("/models/", 1)[-1].split(":")[0]
        if not reply.model and "/models/" in request.path:
            self.model = self.gemini_model

    def embeddings(self) -> dict[str, Any]:
        inputs = self.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or ())
        data = []
        for i, text in enumerate(texts):
            digest = hashlib.sha256(str(text).encode()).digest()
            vector = [b / 255 for b in digest[:8]]
            packed = base64.b64encode(struct.pack("<8f", *vector)).decode()
            embedding = packed if self.body.get("encoding_format") == "base64" else vector
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        usage = {"prompt_tokens": self.tokens_in, "total_tokens": self.tokens_in}
        return {"object": "list", "data": data, "model": self.model, "usage": usage}

    def openai(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.text or None}
        if self.reply.refusal is not None:
            message["refusal"] = self.reply.refusal
        if self.tools:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": c.name, "arguments": a}}
                for i, c, a in self._tool_args()
            ]
        return {
            **self._openai_head("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": self._finish("tool_calls", "stop"),
                }
            ],
            **({"usage": self._openai_usage()} if self.reply.usage else {}),
        }

    def openai_events(self) -> Iterator[str]:
        head = self._openai_head("chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse(None, {**head, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        time.sleep(self.reply.delay_s)
        for piece in _pieces(self.reply.text):
            yield chunk({"content": piece})
        for index, (call_id, call, arguments) in enumerate(self._tool_args()):
            fn = {"name": call.name, "arguments": ""}
            yield chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call_id, "type": "function", "function": fn}
                    ]
                }
            )
            for piece in _halves(arguments):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, self._finish("tool_calls", "stop"))
        if self.reply.usage and (self.body.get("stream_options") or {}).get("include_usage"):
            yield _sse(None, {**head, "choices": [], "usage": self._openai_usage()})
        yield "data: [DONE]\n\n"

    def anthropic(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.reply.text}]
        content = content if self.reply.text or not self.tools else []
        content += [
            {"type": "tool_use", "id": i, "name": c.name, "input": c.arguments}
            for i, c in self.tools
        ]
        if self.reply.refusal is not None:
            content = [{"type": "text", "text": self.reply.refusal}]
        return {
            **self._anthropic_head(),
            "content": content,
            "stop_reason": "refusal"
            if self.reply.refusal
            else self._finish("tool_use", "end_turn"),
            **(
                {"usage": {"input_tokens": self.tokens_in, "output_tokens": self.tokens_out}}
                if self.reply.usage
                else {}
            ),
        }

    def anthropic_events(self) -> Iterator[str]:
        usage = {"input_tokens": self.tokens_in, "output_tokens": 1}
        start = {**self._anthropic_head(), "content": [], "stop_reason": None, "usage": usage}
        yield _sse("message_start", {"type": "message_start", "message": start})
        yield _sse("ping", {"type": "ping"})
        time.sleep(self.reply.delay_s)
        for index, block in enumerate(self.anthropic()["content"]):
            first = {**block, "input": {}} if block["type"] == "tool_use" else {**block, "text": ""}
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
            if block["type"] == "text":
                deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
            else:
                parts = _halves(json.dumps(block["input"]))
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
            for delta in deltas:
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        stop = {"stop_reason": self._finish("tool_use", "end_turn"), "stop_sequence": None}
        yield _sse(
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": self.tokens_out}},
        )
        yield _sse("message_stop", {"type": "message_stop"})

    def responses(self) -> dict[str, Any]:
        """An OpenAI Responses API ``response`` object."""
        output: list[dict[str, Any]] = []
        if self.reply.text:
            text = {"type": "output_text", "text": self.reply.text, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": f"msg_fake_{self.number}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [text],
                }
            )
        for call_id, call, arguments in self._tool_args():
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": arguments,
                    "status": "completed",
                }
            )
        return {
            "id": f"resp_fake_{self.number}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": self.model,
            "output": output,
            "usage": {
                "input_tokens": self.tokens_in,
                "output_tokens": self.tokens_out,
                "total_tokens": self.tokens_in + self.tokens_out,
            },
        }

    def responses_events(self) -> Iterator[str]:
        final = self.responses()
        start = {**final, "status": "in_progress", "output": [], "usage": None}
        yield _sse("response.created", {"type": "response.created", "response": start})
        time.sleep(self.reply.delay_s)
        for piece in _pieces(self.reply.text):
            delta = {"type": "response.output_text.delta", "output_index": 0, "delta": piece}
            yield _sse("response.output_text.delta", {**delta, "content_index": 0})
        yield _sse("response.completed", {"type": "response.completed", "response": final})

    def gemini(self) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": self.reply.text}] if self.reply.text else []
        parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for _, c in self.tools]
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": self._gemini_usage(),
            "modelVersion": self.model,
        }

    def gemini_events(self) -> Iterator[str]:
        """SSE chunks; the handler sends them as a JSON array without ``alt=sse``."""
        pieces = _pieces(self.reply.text) or [""]
        time.sleep(self.reply.delay_s)
        for i, piece in enumerate(pieces):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}}
            chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model}
            if i == len(pieces) - 1:
                candidate["finishReason"] = "STOP"
                chunk["usageMetadata"] = self._gemini_usage()
            yield _sse(None, chunk)

    def _gemini_usage(self) -> dict[str, int]:
        return {
            "promptTokenCount": self.tokens_in,
            "candidatesTokenCount": self.tokens_out,
            "totalTokenCount": self.tokens_in + self.tokens_out,
        }

    def ollama_chat(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.text}
        if self.tools:
            message["tool_calls"] = [
                {"function": {"name": c.name, "arguments": c.arguments}} for _, c in self.tools
            ]
        return {**self._ollama_head(), "message": message, **self._ollama_done()}

    def ollama_chat_events(self) -> Iterator[str]:
        time.sleep(self.reply.delay_s)
        for piece in _pieces(self.reply.text):
            message = {"role": "assistant", "content": piece}
            yield json.dumps({**self._ollama_head(), "message": message, "done": False}) + "\n"
        last = {"role": "assistant", "content": ""}
        yield json.dumps({**self._ollama_head(), "message": last, **self._ollama_done()}) + "\n"

    def ollama_generate(self) -> dict[str, Any]:
        return {**self._ollama_head(), "response": self.reply.text, **self._ollama_done()}

    def ollama_generate_events(self) -> Iterator[str]:
        time.sleep(self.reply.delay_s)
        for piece in _pieces(self.reply.text):
            yield json.dumps({**self._ollama_head(), "response": piece, "done": False}) + "\n"
        yield json.dumps({**self._ollama_head(), "response": "", **self._ollama_done()}) + "\n"

    def _ollama_head(self) -> dict[str, Any]:
        return {"model": self.model, "created_at": "2026-01-01T00:00:00Z"}

    def _ollama_done(self) -> dict[str, Any]:
        return {
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": self.tokens_in,
            "eval_count": self.tokens_out,
        }

    def _tool_args(self) -> list[tuple[str, ToolCall, str]]:
        return [(i, c, json.dumps(c.arguments)) for i, c in self.tools]

    def _finish(self, tools: str, text: str) -> str:
        return tools if self.tools else text

    def _openai_head(self, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{self.number}",
            "object": kind,
            "created": int(time.time()),
            "model": self.model,
        }

    def _openai_usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.tokens_in,
            "completion_tokens": self.tokens_out,
            "total_tokens": self.tokens_in + self.tokens_out,
        }

    def _anthropic_head(self) -> dict[str, Any]:
        return {
            "id": f"msg_fake_{self.number}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "stop_sequence": None,
        }


_ROUTES = (
    ("/chat/completions", "openai"),
    ("/responses", "responses"),
    ("/messages", "anthropic"),
    (":generateContent", "gemini"),
    (":streamGenerateContent", "gemini"),
    ("/api/chat", "ollama_chat"),
    ("/api/generate", "ollama_generate"),
)


def _json_array(events: Iterator[str]) -> Iterator[str]:
    """SSE ``data:`` events re-sent as the pieces of one streamed JSON array."""
    for i, event in enumerate(events):
        yield ("[" if i == 0 else ",\r\n") + event.removeprefix("data: ").strip()
    yield "]"


def _route(path: str) -> str | None:
    """Which payload method of :class:`_Call` answers ``path`` (``None``: no route)."""
    for suffix, kind in _ROUTES:
        if path.endswith(suffix):
            return kind
    return None


def _provider(path: str) -> str:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith(("GenerateContent", ":generateContent")):
        return "gemini"
    if path.endswith(("/api/chat", "/api/generate")):
        return "ollama"
    return "openai"


def _error_body(provider: str, reply: Reply) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 401: "authentication_error"}.get(reply.status, "api_error")
    if provider == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": reply.error}}
    return {"error": {"message": reply.error, "type": kind, "code": None, "param": None}}


def _sse(event: str | None, data: Any) -> str:
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {json.dumps(data)}\n\n"


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [text[:middle], text[middle:]] if middle else [text]


def _words(text: str) -> int:
    return max(1, len(text.split()))


def _text(content: Any) -> str:
    """The text of a message content (a string, or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_text(p.get("text") if isinstance(p, dict) else p) for p in content)
    return ""
