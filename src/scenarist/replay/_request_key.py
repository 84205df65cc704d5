"""What a cassette remembers of a request, its replay key, and how a miss is explained.

A request is stored as ``{"method", "path", "body"}``: the path without host or query (a
recording made against one base URL replays against another; query strings carry keys
and API versions, not prompts), and the JSON body without the volatile fields (who is
calling, bookkeeping: they never change what the model says) and with secret or
configured fields replaced by ``"[redacted]"`` (:mod:`scenarist.redaction`, the one
redaction the capture applies to spans too). The key is a hash of exactly that stored
form, so a request and its recording are compared on what the file holds, and a
recording never needs a secret to be matched.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from scenarist._json_limits import MAX_DEPTH, fast_loads
from scenarist.redaction import redact
from scenarist.tracing.http._llm_call import NOT_PARSED

try:  # a core dependency; json below when it is missing all the same
    import msgspec

    _sorted_bytes: Callable[[Any], bytes] | None = msgspec.json.Encoder(order="sorted").encode
except ImportError:  # pragma: no cover
    _sorted_bytes = None

_blake2b = hashlib.blake2b

BODY_DEPTH = MAX_DEPTH - 2
"""How deep a stored body may nest: a cassette line holds it two levels down
(``{"request": {"body": …}}``, ``{"response": {"body": …}}``) and is read back only if
the whole line is within :data:`MAX_DEPTH`."""

__all__ = [
    "VOLATILE_FIELDS",
    "MatchOn",
    "RequestMatcher",
    "describe",
    "nearest_diff",
    "stored_request",
]

VOLATILE_FIELDS = frozenset({"user", "metadata", "store", "prompt_cache_key", "safety_identifier"})
"""Top-level body fields left out of the file and the key: caller identity and bookkeeping.

``stream`` and ``stream_options`` stay in: they change the shape of the response (events
instead of JSON, a usage event or not), which a recording must match.
"""

MatchOn = Sequence[str] | Callable[[dict[str, Any]], Any] | None
"""What a key covers besides method and path: body field names, or a function of the
stored request returning any JSON value; ``None`` for the whole stored body."""


def stored_request(
    method: str, path: str, content: bytes, names: frozenset[str], parsed: Any = NOT_PARSED
) -> dict[str, Any]:
    """The request as a cassette stores it (see the module docstring); ``names``: the
    redacted field names (``scenarist.redaction.redacted_fields``); ``parsed``: the body
    already parsed as here (``json.loads``, its text when not JSON, ``None`` when empty),
    read, never changed."""
    body: Any = parsed
    if body is NOT_PARSED:
        try:
            body = fast_loads(content) if content else None  # json.loads's answer
        except ValueError:
            body = content.decode("utf-8", "replace")
    stored = redact(body, names, depth=BODY_DEPTH)  # a copy: the volatile fields go from it
    if type(stored) is dict and not stored.keys().isdisjoint(VOLATILE_FIELDS):
        stored = {k: v for k, v in stored.items() if k not in VOLATILE_FIELDS}
    return {"method": method, "path": path.rstrip("/") or "/", "body": stored}


_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def canonical(value: Any) -> str:
    """One spelling per JSON value: sorted keys, no spaces, Unicode kept."""
    return _canonical(value)


class RequestMatcher:
    """Computes replay keys: a stable hash of method, path and the (selected) body."""

    __slots__ = ("_fields", "_fn")

    def __init__(self, match_on: MatchOn = None) -> None:
        self._fn = match_on if callable(match_on) else None
        self._fields = None if match_on is None or callable(match_on) else tuple(match_on)
        if isinstance(match_on, str):
            raise TypeError(f"match_on takes a list of field names, got {match_on!r}")

    def key(self, request: dict[str, Any]) -> str:
        body = request["body"]
        if self._fn is not None:
            body = self._fn(request)
        elif self._fields is not None and isinstance(body, dict):
            body = {k: body[k] for k in self._fields if k in body}
        text = _key_bytes([request["method"], request["path"], body], parsed=self._fn is None)
        return _blake2b(text, digest_size=16).hexdigest()


def _key_bytes(value: Any, *, parsed: bool) -> bytes:
    """One spelling of ``value``: :func:`canonical`'s, or msgspec's for parsed JSON.

    msgspec's sorted encoding is ten times faster, and any one spelling per value will do:
    keys are only ever compared within a process, each computed here. Parsed JSON (the
    stored body or fields of it; not what a ``match_on`` function returns, which json
    may refuse) goes to msgspec unless its text says ``null``: msgspec writes NaN and
    infinities as ``null`` (a request holding NaN would match one holding ``null``), so
    such a value, as one with a lone surrogate (which msgspec refuses), is spelled by
    json. The choice depends on the value alone, so a request and its recording agree.
    """
    if parsed and _sorted_bytes is not None:
        try:
            text = _sorted_bytes(value)
        except (UnicodeEncodeError, TypeError, OverflowError):
            pass
        else:
            if b"null" not in text:
                return text
    # a lone surrogate (a JSON \ud800 escape) is text too: hashed, never refused
    return _canonical(value).encode("utf-8", "surrogatepass")


def describe(request: dict[str, Any]) -> str:
    """``POST /v1/chat/completions (model 'gpt-4o-mini', last message 'Hi?')``."""
    body = request["body"] if isinstance(request["body"], dict) else {}
    details = []
    if isinstance(body.get("model"), str):
        details.append(f"model {body['model']!r}")
    excerpt = _last_text(body)
    if excerpt is not None:
        short = excerpt if len(excerpt) <= 80 else excerpt[:77] + "..."
        details.append(f"last message {short!r}")
    suffix = f" ({', '.join(details)})" if details else ""
    return f"{request['method']} {request['path']}{suffix}"


def _last_text(body: dict[str, Any]) -> str | None:
    for field in ("messages", "input", "prompt"):
        value = body.get(field)
        if isinstance(value, list) and value:
            value = value[-1]
        if value is not None:
            return _text(value)
    return None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _text(value.get("content", value.get("text", "")))
    if isinstance(value, list):
        return " ".join(t for t in map(_text, value) if t)
    return json.dumps(value)


def nearest_diff(
    request: dict[str, Any], recorded: Iterable[tuple[int, dict[str, Any]]], *, limit: int = 40
) -> tuple[int, str] | None:
    """The recorded request (by line number) closest to ``request``, and a unified diff.

    Only recordings of the same method and path compete; ``None`` when there is none.
    """
    lines = _pretty(request["body"])
    best: tuple[float, int, list[str]] | None = None
    for line_number, candidate in recorded:
        if (candidate["method"], candidate["path"]) != (request["method"], request["path"]):
            continue
        theirs = _pretty(candidate["body"])
        ratio = difflib.SequenceMatcher(None, theirs, lines, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, line_number, theirs)
    if best is None:
        return None
    _, line_number, theirs = best
    diff = list(difflib.unified_diff(theirs, lines, "recorded", "this request", n=2, lineterm=""))
    if len(diff) > limit:
        diff = [*diff[:limit], f"... ({len(diff) - limit} more diff lines)"]
    return line_number, "\n".join(diff)


def _pretty(body: Any) -> list[str]:
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
