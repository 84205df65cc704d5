"""Reading LLM HTTP exchanges: which requests are LLM calls, SSE events, streams, usage.

Pure functions over bytes and JSON, shared by the capture (and later by replay). They
know OpenAI's wire format (chat completions, legacy completions, responses, embeddings;
spoken by many other servers too, and by Azure OpenAI's
``/openai/deployments/<name>/...`` paths), Anthropic's messages, Gemini's
``:generateContent`` / ``:streamGenerateContent`` (SSE with ``alt=sse``, else one JSON
array) and Ollama's ``/api/chat`` / ``/api/generate`` (JSON, or NDJSON lines). Anything
unexpected in a payload degrades to "less detail" (no usage, raw text), never to an
exception inside the caller's HTTP call.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from scenarist._json_limits import fast_loads

__all__ = [
    "Endpoint",
    "SSEParser",
    "Usage",
    "assemble_stream",
    "classify",
    "error_message",
    "is_token_event",
    "model_of",
    "normalize",
    "parse_body",
    "parse_event",
    "parse_ndjson",
    "parse_sse",
    "stream_finished",
    "usage_of",
]

# Path suffix → (provider, span name). Checked longest first, so `/chat/completions` is
# never mistaken for `/completions`.
_ENDPOINTS: tuple[tuple[str, str, str], ...] = (
    ("/chat/completions", "openai", "openai.chat.completions"),
    ("/completions", "openai", "openai.completions"),
    ("/responses", "openai", "openai.responses"),
    ("/embeddings", "openai", "openai.embeddings"),
    ("/messages", "anthropic", "anthropic.messages"),
    (":generateContent", "gemini", "gemini.generate_content"),
    (":streamGenerateContent", "gemini", "gemini.stream_generate_content"),
    ("/api/chat", "ollama", "ollama.chat"),
    ("/api/generate", "ollama", "ollama.generate"),
)
_decode_json = fast_loads
"""A stream event's or a JSON line's text decoded: ``json.loads``'s answer (msgspec reads
it when installed; a stream of 13 events spent a third of its capture in json's decoder)."""


class Endpoint(NamedTuple):
    """An LLM endpoint recognised from a request: the provider format and span name."""

    provider: str
    name: str


class Usage(NamedTuple):
    """Token counts of one call. ``tokens_in`` includes cached input tokens."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read: int = 0
    cache_write: int = 0


@functools.lru_cache(maxsize=1024)
def classify(method: str, path: str) -> Endpoint | None:
    """The endpoint a request calls, or ``None`` when it is not an LLM call."""
    if method != "POST":
        return None
    path = path.rstrip("/")
    for suffix, provider, name in _ENDPOINTS:
        if path.endswith(suffix):
            # OpenAI's Assistants API has `/threads/{id}/messages`: storage, not a call.
            if provider == "anthropic" and "/threads/" in path:
                return None
            return Endpoint(provider, name)
    return None


def parse_body(body: bytes) -> Any:
    """A JSON body decoded, else its text, else ``None`` when empty."""
    if not body:
        return None
    try:
        return fast_loads(body)  # json.loads's answer, read by msgspec when installed
    except ValueError:
        return body.decode("utf-8", "replace")


class SSEParser:
    """Incremental server-sent events: feed bytes, get each complete event's raw block.

    Splitting is cheap; decoding (:func:`parse_event`) is left to the caller, so a
    stream can be passed through with little work and decoded once at its end.
    """

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer + chunk
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        *blocks, self._buffer = buffer.split(b"\n\n")
        return blocks

    def flush(self) -> list[bytes]:
        rest, self._buffer = self._buffer, b""
        return [rest] if rest.strip() else []


def parse_ndjson(body: bytes) -> list[Any]:
    """Every JSON line of an NDJSON body (Ollama's stream); lines that are not JSON skipped."""
    from scenarist._jsonable import split_jsonl  # the one line splitting of JSON Lines

    numbered, rest = split_jsonl(body)
    out: list[Any] = []
    for line in [line for _, line in numbered] + [rest]:
        if line.strip():
            try:
                out.append(_decode_json(line.decode("utf-8", "replace")))
            except ValueError:
                continue
    return out


def normalize(name: str, output: Any) -> Any:
    """A non-SSE stream's chunks (Ollama NDJSON, Gemini's JSON array) as one response."""
    if isinstance(output, list) and all(isinstance(c, dict) for c in output):
        if name.startswith("gemini."):
            return _assemble_gemini(output)
        if name.startswith("ollama."):
            return _assemble_ollama(output)
    return output


def model_of(output: Any, request: Any, path: str) -> str | None:
    """The model a call used: the response's, else the request's, else Gemini's path."""
    for source, field in ((output, "model"), (output, "modelVersion"), (request, "model")):
        value = source.get(field) if isinstance(source, dict) else None
        if isinstance(value, str) and value:
            return value
    if ":" in path and "/models/" in path:  # /v1beta/models/<model>:generateContent
        return path.rsplit("/models/", 1)[1].split(":", 1)[0] or None
    return None


def parse_sse(body: bytes) -> list[dict[str, Any]]:
    """Every event of a complete SSE body, decoded (see :func:`parse_event`)."""
    parser = SSEParser()
    blocks = parser.feed(body) + parser.flush()
    return [e for e in map(parse_event, blocks) if e is not None]


def parse_event(block: bytes) -> dict[str, Any] | None:
    """One event block as ``{"data": ...}`` (JSON decoded when possible), with
    ``"event"`` when the server named it (Anthropic does, OpenAI chat does not); ``None``
    for a block without data (a comment, a keep-alive)."""
    name: str | None = None
    lines: list[bytes] = []
    for line in block.split(b"\n"):
        if line.startswith(b"data:"):
            lines.append(line[6:] if line.startswith(b"data: ") else line[5:])
        elif line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
    if not lines:
        return None
    text = (lines[0] if len(lines) == 1 else b"\n".join(lines)).decode("utf-8", "replace")
    data: Any = text
    if text != "[DONE]":
        try:
            data = _decode_json(text)
        except ValueError:
            data = text
    event: dict[str, Any] = {"data": data}
    if name is not None:
        event["event"] = name
    return event


def is_token_event(event: dict[str, Any]) -> bool:
    """Whether a stream event carries generated content (for time to first token)."""
    data = event["data"]
    if not isinstance(data, dict):
        return False
    kind = data.get("type")
    if isinstance(kind, str):  # Anthropic and OpenAI responses name their deltas
        return kind.endswith("delta") and kind not in ("message_delta", "response.delta")
    for candidate in data.get("candidates") or ():  # Gemini
        parts = (candidate.get("content") or {}).get("parts") if isinstance(candidate, dict) else ()
        if any(
            isinstance(p, dict) and (p.get("text") or p.get("functionCall")) for p in parts or ()
        ):
            return True
    for choice in data.get("choices") or ():
        delta = choice.get("delta") or {}
        if choice.get("text") or delta.get("content") or delta.get("tool_calls"):
            return True
        if delta.get("refusal") or delta.get("reasoning_content"):
            return True
    return False


_FINAL_EVENTS = frozenset(
    {"message_stop", "error", "response.completed", "response.incomplete", "response.failed"}
)


def stream_finished(events: list[dict[str, Any]]) -> bool:
    """Whether a stream's events include its final one (``[DONE]``, ``message_stop``...)."""
    for event in reversed(events):
        data = event["data"]
        if data == "[DONE]" or (isinstance(data, dict) and data.get("type") in _FINAL_EVENTS):
            return True
        candidates = data.get("candidates") if isinstance(data, dict) else None
        if candidates and isinstance(candidates[0], dict) and candidates[0].get("finishReason"):
            return True  # Gemini: the last chunk carries the finish reason
    return False


def assemble_stream(name: str, events: list[dict[str, Any]]) -> Any:
    """The response a stream amounts to, shaped like the non-streamed response."""
    payloads = [e["data"] for e in events if isinstance(e["data"], dict)]
    if name == "anthropic.messages":
        return _assemble_anthropic(payloads)
    if name.startswith("gemini."):
        return _assemble_gemini(payloads)
    if name == "openai.responses":
        for data in reversed(payloads):
            if isinstance(data.get("response"), dict) and data.get("type") in (
                "response.completed",
                "response.incomplete",
                "response.failed",
            ):
                return data["response"]
        return None
    return _assemble_openai(payloads)


class _Concat:
    """``target[key] = base + value``, over and over, in linear time.

    A stream's text arrives a few characters a chunk; adding each piece to the text so far
    copies it again (a 16,000-chunk answer cost 2.3 µs a chunk against 0.9 for 1,000). The
    first addition to a key is done as written (with its errors); while the value is text,
    later pieces are kept and joined once, by :meth:`flush` (every key) or
    :meth:`flush_one` (before anything else writes that key). ``empty_if_falsy`` gives the
    ``(target.get(key) or "")`` base, otherwise ``target.get(key, "")``.
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[tuple[int, Any], tuple[dict[Any, Any], Any, list[str]]] = {}

    def add(self, target: dict[Any, Any], key: Any, value: Any, *, empty_if_falsy: bool) -> None:
        pending = self._open.get((id(target), key))
        if pending is not None:
            if type(value) is str:
                pending[2].append(value)
                return
            self.flush_one(target, key)
        base = (target.get(key) or "") if empty_if_falsy else target.get(key, "")
        target[key] = joined = base + value
        if type(joined) is str and type(value) is str:
            self._open[(id(target), key)] = (target, key, [joined])

    def flush_one(self, target: dict[Any, Any], key: Any) -> None:
        pending = self._open.pop((id(target), key), None)
        if pending is not None:
            target[key] = "".join(pending[2])

    def flush(self) -> None:
        for target, key, pieces in self._open.values():
            target[key] = "".join(pieces)
        self._open.clear()


def _assemble_openai(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    texts = _Concat()
    for chunk in chunks:
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                out.setdefault(key, chunk[key])
        if chunk.get("usage"):
            out["usage"] = chunk["usage"]
        for part in chunk.get("choices") or ():
            choice = choices.setdefault(part.get("index", 0), {"index": part.get("index", 0)})
            if part.get("finish_reason") is not None:
                choice["finish_reason"] = part["finish_reason"]
            if "text" in part:  # legacy completions
                texts.add(choice, "text", part["text"] or "", empty_if_falsy=False)
            if isinstance(part.get("delta"), dict):
                _merge_delta(choice.setdefault("message", {}), part["delta"], texts)
    texts.flush()
    if any("text" in c for c in choices.values()):
        out["object"] = "text_completion"
    else:
        out["object"] = "chat.completion"
    out["choices"] = [choices[i] for i in sorted(choices)]
    return out


def _merge_delta(message: dict[str, Any], delta: dict[str, Any], texts: _Concat) -> None:
    for key, value in delta.items():
        if key == "tool_calls":
            if not value:
                continue
            calls: list[dict[str, Any]] = message.setdefault("tool_calls", [])
            for piece in value:
                index = piece.get("index", len(calls))
                while len(calls) <= index:
                    calls.append({"id": None, "type": "function", "function": {}})
                call = calls[index]
                call["id"] = piece.get("id") or call["id"]
                call["type"] = piece.get("type") or call["type"]
                function = call["function"]
                for field, part in (piece.get("function") or {}).items():
                    if part is not None:
                        texts.add(function, field, part, empty_if_falsy=False)
        elif isinstance(value, str) and key != "role":
            texts.add(message, key, value, empty_if_falsy=True)
        elif value is not None or key not in message:
            texts.flush_one(message, key)
            message[key] = value


def _assemble_anthropic(events: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    texts = _Concat()
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            blocks[event.get("index", 0)] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index = event.get("index", 0)
            block = blocks.setdefault(index, {})
            delta = event.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                texts.add(partial_json, index, delta.get("partial_json", ""), empty_if_falsy=False)
            elif delta.get("type") == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            else:
                for key, value in delta.items():
                    if key != "type" and isinstance(value, str):
                        texts.add(block, key, value, empty_if_falsy=False)
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            usage = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            message["usage"] = {**(message.get("usage") or {}), **usage}
    texts.flush()
    for index, text in partial_json.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError:
            blocks[index]["input"] = text
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _assemble_gemini(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    candidates: dict[int, dict[str, Any]] = {}
    texts = _Concat()
    for chunk in chunks:
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if chunk.get(key) is not None:
                out[key] = chunk[key]
        for part in chunk.get("candidates") or ():
            if not isinstance(part, dict):
                continue
            index = part.get("index", 0)
            candidate = candidates.setdefault(index, {"content": {"parts": []}, "index": index})
            content = part.get("content") or {}
            if content.get("role"):
                candidate["content"]["role"] = content["role"]
            parts = candidate["content"]["parts"]
            for piece in content.get("parts") or ():
                if (
                    parts
                    and "text" in piece
                    and set(parts[-1]) == {"text"}
                    and set(piece) == {"text"}
                ):
                    texts.add(parts[-1], "text", piece["text"], empty_if_falsy=False)
                else:
                    parts.append(dict(piece))
            for key, value in part.items():
                if key not in ("content", "index") and value is not None:
                    candidate[key] = value
    texts.flush()
    out["candidates"] = [candidates[i] for i in sorted(candidates)]
    return out


def _assemble_ollama(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    text: list[str] = []
    tool_calls: list[Any] = []
    chat = False
    for chunk in chunks:
        out.update({k: v for k, v in chunk.items() if k not in ("message", "response")})
        if isinstance(chunk.get("message"), dict):
            chat = True
            message = chunk["message"]
            text.append(message.get("content") or "")
            tool_calls += message.get("tool_calls") or ()
            out.setdefault("_role", message.get("role", "assistant"))
        elif isinstance(chunk.get("response"), str):
            text.append(chunk["response"])
    role = out.pop("_role", "assistant")
    if chat:
        message = {"role": role, "content": "".join(text)}
        if tool_calls:
            message["tool_calls"] = tool_calls
        out["message"] = message
    else:
        out["response"] = "".join(text)
    return out


def usage_of(response: Any) -> Usage:
    """Token counts from a response's ``usage`` (either provider's field names)."""
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        if not isinstance(response, dict):
            return Usage()
        gemini = response.get("usageMetadata")
        if isinstance(gemini, dict):  # cached tokens are part of promptTokenCount
            return Usage(
                _int(gemini.get("promptTokenCount")),
                _int(gemini.get("candidatesTokenCount")),
                _int(gemini.get("cachedContentTokenCount")) or 0,
            )
        if "eval_count" in response or "prompt_eval_count" in response:  # Ollama
            return Usage(_int(response.get("prompt_eval_count")), _int(response.get("eval_count")))
        return Usage()
    if "prompt_tokens" in usage:  # OpenAI chat, completions, embeddings
        details = usage.get("prompt_tokens_details") or {}
        return Usage(
            _int(usage.get("prompt_tokens")),
            _int(usage.get("completion_tokens")),
            _int(details.get("cached_tokens")) or 0,
        )
    tokens_in = _int(usage.get("input_tokens"))
    read = _int(usage.get("cache_read_input_tokens"))
    write = _int(usage.get("cache_creation_input_tokens"))
    if read is not None or write is not None:  # Anthropic counts cache apart from input
        tokens_in = (tokens_in or 0) + (read or 0) + (write or 0)
    else:  # OpenAI responses: cached tokens are part of input_tokens
        read = _int((usage.get("input_tokens_details") or {}).get("cached_tokens"))
    return Usage(tokens_in, _int(usage.get("output_tokens")), read or 0, write or 0)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def error_message(status: int, body: Any) -> str:
    """``HTTP 429: <the provider's message>`` for a failed call."""
    detail: Any = body
    if isinstance(body, dict):
        error = body.get("error")
        detail = error.get("message", error) if isinstance(error, dict) else error or body
    if detail is None:
        return f"HTTP {status}"
    text = detail if isinstance(detail, str) else json.dumps(detail, default=str)
    return f"HTTP {status}: {text[:500]}" if text else f"HTTP {status}"
