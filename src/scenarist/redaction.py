"""Secrets kept out of everything scenarist records: one redaction, applied at capture.

An LLM request is redacted where the HTTP capture first sees it, before it becomes a
span's input, so nothing downstream ever holds the secret: not the trace, the run log,
a cassette, the local database, the server's database, ``/v1/traces/{id}`` nor the
dashboard. Cassettes and trace-backed replay redact with the same function, so a live
request, its recording and the recorded span agree on what they hold (and a replay key
never needs a secret).

What is redacted: every mapping entry, at any depth of a JSON body (request or response;
in a response ``token`` is left alone, as it is data there: logprobs), whose key is a
redacted field name, and every query parameter of a recorded URL whose
name is one or looks like a credential (contains ``key``, ``token``, ``secret``,
``sig``, ``password``, ``auth`` or ``credential``: a query string carries no prompt, so
guessing wide costs nothing there, while in a body ``max_tokens`` must stay). The value
becomes ``"[redacted]"``; the key stays, so a reader sees that something was sent.
Request headers are never recorded at all (cassettes keep four response headers:
``content-type``, ``x-request-id``, ``request-id``, ``x-should-retry``). An error recorded
as text (a span's error, a step's message and traceback) has the URLs quoted in it
redacted as a recorded URL is, and the credentials of connection strings
(``Server=db;Password=...``, ``host=db password=...``, ``postgresql://user:pass@db``)
(:func:`redact_text`).

A trace that reached us without passing our capture (an OTLP export, a Veval upload, a
file) is redacted the same way before it is stored (:func:`redact_received`): its LLM
requests and responses as captured ones, and its OpenTelemetry attributes at any depth
(key-value lists, arrays, JSON held as text): an entry whose name is a redacted field
(``api_key``, ``http.request.header.authorization``), and every text through
:func:`redact_text` (``url.full``, ``db.connection_string``, an exception's message).

Names match case-insensitively, with ``-`` and ``_`` alike (``X-Api-Key`` is
``x_api_key``). The defaults are :data:`DEFAULT_REDACTED_FIELDS`; add your own with the
``SCENARIST_REDACT_FIELDS`` environment variable (comma-separated:
``SCENARIST_REDACT_FIELDS=customer_email,session_id``), with
:func:`set_redacted_fields` in code, or for one cassette with ``cassette(redact=[...])``.
The defaults cannot be switched off.

A value nested deeper than :data:`scenarist._json_limits.MAX_DEPTH` levels is recorded as
``"[nested too deep]"``: every reader of a recording (a run log, the server) refuses
deeper JSON, so what is recorded stays readable.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from scenarist._json_limits import MAX_DEPTH, fast_loads, too_deep_text

__all__ = [
    "DEFAULT_REDACTED_FIELDS",
    "ENV_VAR",
    "REDACTED",
    "RESPONSE_DATA_FIELDS",
    "TOO_DEEP",
    "redact",
    "redact_attributes",
    "redact_body",
    "redact_received",
    "redact_text",
    "redact_url",
    "redacted_fields",
    "response_fields",
    "set_redacted_fields",
]

REDACTED = "[redacted]"
TOO_DEEP = "[nested too deep]"
ENV_VAR = "SCENARIST_REDACT_FIELDS"

DEFAULT_REDACTED_FIELDS = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "api_key",
        "apikey",
        "x_api_key",
        "x_goog_api_key",
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "password",
        "secret",
        "client_secret",
        "cookie",
        "set_cookie",
    }
)
"""Field names always redacted (normalised: lower case, ``_`` for ``-``)."""

RESPONSE_DATA_FIELDS = frozenset({"token"})
"""Names a response uses for data, never redacted there: OpenAI's logprobs give each
generated ``token``. (In a request, ``token`` is a credential.)"""

_QUERY_WORDS = ("key", "token", "secret", "sig", "password", "passwd", "pwd", "auth", "credential")
_PAIR_ENDINGS = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "accesskey",
    "accountkey",
    "private_key",
    "secret_key",
)
"""A ``name=value`` pair that opens a text or follows a space or comma (a connection
string's first pair, libpq's ``password=...``) is redacted when its name is a redacted
field or ends with one of these: stricter than a query string (whose names guess wide), as
free text says ``max_tokens=5`` and a repr ``target_key=...``."""

_configured: frozenset[str] = frozenset()


def _normal(name: str) -> str:
    return name.lower().replace("-", "_")


@functools.lru_cache(maxsize=32)
def _fields(env: str, configured: frozenset[str], extra: tuple[str, ...]) -> frozenset[str]:
    names = [*env.split(","), *extra]
    return DEFAULT_REDACTED_FIELDS | configured | {_normal(n.strip()) for n in names if n.strip()}


_ENVIRON = os.environ
_ENV_DATA: Any = getattr(os.environ, "_data", None)
_ENV_KEY: Any = os.environ.encodekey(ENV_VAR) if hasattr(os.environ, "encodekey") else None


def _env_value() -> str:
    """``os.environ.get(ENV_VAR, "")``, read on every captured call. When the variable
    is unset (most runs), ``os.environ`` answers by raising and catching a ``KeyError``
    inside: 6 µs a call in a replay at scale (``bench/replay_at_scale.py``), against a
    dictionary lookup in its store (``os._Environ``'s own, what ``get`` reads too)."""
    environ = os.environ
    if environ is _ENVIRON and _ENV_DATA is not None and _ENV_KEY not in _ENV_DATA:
        return ""
    return environ.get(ENV_VAR, "")


def redacted_fields(extra: Iterable[str] = ()) -> frozenset[str]:
    """The field names redacted now: the defaults, ``SCENARIST_REDACT_FIELDS``, those set
    with :func:`set_redacted_fields`, and ``extra``; normalised."""
    return _fields(_env_value(), _configured, tuple(extra))


@functools.lru_cache(maxsize=32)
def response_fields(fields: frozenset[str]) -> frozenset[str]:
    """The names redacted in a response body: ``fields`` but :data:`RESPONSE_DATA_FIELDS`."""
    return fields - RESPONSE_DATA_FIELDS


def set_redacted_fields(names: Iterable[str] | None) -> None:
    """Redact these field names too, from now on, in every capture and cassette of the
    process (in addition to the defaults and ``SCENARIST_REDACT_FIELDS``; ``None``
    clears what was set)."""
    global _configured
    if isinstance(names, str):
        raise TypeError(f"set_redacted_fields takes a list of field names, got {names!r}")
    _configured = frozenset(_normal(n.strip()) for n in names or () if n.strip())


def redact(value: Any, fields: frozenset[str] | None = None, *, depth: int = MAX_DEPTH) -> Any:
    """``value`` (parsed JSON) with every mapping entry named in ``fields`` (default
    :func:`redacted_fields`) replaced by ``"[redacted]"``, at any depth; a copy. A
    container more than ``depth`` levels down becomes ``"[nested too deep]"`` (less than
    :data:`MAX_DEPTH` for a value a record holds further down: a cassette line)."""
    return _redact(value, redacted_fields() if fields is None else fields, depth)


def redact_body(raw: bytes, value: Any, fields: frozenset[str] | None = None) -> Any:
    """:func:`redact` for ``value`` parsed from the JSON bytes ``raw`` (a captured LLM
    request or response), without walking it when its text holds nothing to redact.

    The text says so exactly, or errs towards the walk: a key normalises to a redacted
    name only if the lowered text, ``-`` read as ``_``, holds that name between quotes
    (a key's characters lower one by one, as the whole text's do, and only a ``\\u``
    escape could spell one otherwise: such a text is walked), and a value can only be
    too deep in a text that nests too deep. ``raw`` is decoded as ``json`` decodes it.
    Returns ``value`` itself when nothing is redacted (a capture's body is its own).
    """
    fields = redacted_fields() if fields is None else fields
    if type(value) in _LEAVES:
        return value
    screen_for = _screen(fields)
    try:
        text = raw.decode(_encoding_of(raw))
    except (UnicodeDecodeError, LookupError):
        return _redact(value, fields, MAX_DEPTH)
    if screen_for is None or "\\u" in text or too_deep_text(text):
        return _redact(value, fields, MAX_DEPTH)
    if screen_for.search(text.lower().replace("-", "_")):
        return _redact(value, fields, MAX_DEPTH)
    return value


def _encoding_of(raw: bytes) -> str:
    """``json.detect_encoding(raw)``, answered at once for the usual body: one that opens
    with ``{`` or ``[`` and no NUL after it is UTF-8 (a BOM or UTF-16/32 looks otherwise)."""
    if raw[:1] in (b"{", b"[") and raw[1:2] != b"\x00":
        return "utf-8"
    return json.detect_encoding(raw)


@functools.lru_cache(maxsize=32)
def _screen(fields: frozenset[str]) -> re.Pattern[str] | None:
    """The names between quotes, as one pattern; ``None`` if one is not ASCII (lowering a
    whole text and lowering one key then differ around a capital sigma)."""
    if not all(name.isascii() for name in fields):
        return None
    return re.compile("|".join(re.escape(f'"{name}"') for name in sorted(fields)))


_LEAVES = frozenset({str, int, float, bool, type(None)})
_normal_names: dict[str, str] = {}
"""Keys seen, normalised: a body's keys are a few names over and over (``role``,
``content``), and the walk asks for each at every call. Bounded: a body of data keys
(ids as keys) stops adding once it is full."""


def _normal_key(name: str) -> str:
    normal = _normal_names.get(name)
    if normal is None:
        normal = _normal(name)
        if len(_normal_names) < 4096:
            _normal_names[name] = normal
    return normal


def _redact(value: Any, fields: frozenset[str], depth_left: int) -> Any:
    kind = type(value)
    if kind in _LEAVES:
        return value
    if isinstance(value, dict):
        if depth_left < 1:
            return TOO_DEEP
        below = depth_left - 1
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and _normal_key(k) in fields:
                out[k] = REDACTED
            else:
                out[k] = v if type(v) in _LEAVES else _redact(v, fields, below)
        return out
    if isinstance(value, list):
        if depth_left < 1:
            return TOO_DEEP
        below = depth_left - 1
        return [v if type(v) in _LEAVES else _redact(v, fields, below) for v in value]
    return value


class _HasSpans(Protocol):
    """A recorded run (a :class:`~scenarist.model.record.TraceRecord`): its spans, flattened."""

    @property
    def spans(self) -> list[Any]: ...


Received = TypeVar("Received", bound=_HasSpans)


def redact_received(record: Received) -> Received:
    """``record`` (a trace that reached us without passing our capture: an upload to
    ``POST /v1/traces``, an OTLP export or file) redacted as our capture would have, in
    place: each LLM span's request (its input) and response (its output), every span's
    error message and the record's (:func:`redact_text`), and every span's recorded OTel
    attributes (:func:`redact_attributes`). Returns ``record``."""
    fields = redacted_fields()
    answers = response_fields(fields)
    for span in record.spans:
        if span.kind == "llm":
            span.input = _redact(span.input, fields, MAX_DEPTH)
            span.output = _redact(span.output, answers, MAX_DEPTH)
        attributes = span.metadata.get("otel_attributes")
        if isinstance(attributes, dict):
            span.metadata["otel_attributes"] = redact_attributes(attributes, fields)
        span.error = _redact_error(span.error, fields)
    if hasattr(record, "error"):
        record.error = _redact_error(record.error, fields)
    return record


def _redact_error(error: Any, fields: frozenset[str]) -> Any:
    """A span's or record's error (a ``SpanError``: a ``str`` with a ``type``), its
    message through :func:`redact_text`; as it is when nothing changes."""
    if not isinstance(error, str):
        return error
    redacted = redact_text(str(error), fields)
    if redacted == str(error):
        return error
    if not hasattr(error, "type"):
        return redacted
    span_error: Any = type(error)  # the model's SpanError (this leaf cannot import it)
    return span_error(redacted, error.type)


def redact_attributes(
    attributes: dict[str, Any], fields: frozenset[str] | None = None
) -> dict[str, Any]:
    """OpenTelemetry attributes (span, event or resource) with their secrets redacted, at
    any depth; a copy. An entry whose name, or its last dotted part, is a redacted field
    becomes ``"[redacted]"`` (``http.request.header.authorization``, an ``api_key`` in a
    key-value list); every text goes through :func:`redact_text` (a URL's user info and
    credential-like query values, a connection string's password: ``url.full``,
    ``db.connection_string``); a text holding JSON is redacted inside
    (``llm.invocation_parameters``). A value nested deeper than
    :data:`~scenarist._json_limits.MAX_DEPTH` becomes ``"[nested too deep]"``."""
    names = redacted_fields() if fields is None else fields
    redacted = _redact_attribute(attributes, names, MAX_DEPTH)
    assert isinstance(redacted, dict)
    return redacted


def _secret_name(name: Any, fields: frozenset[str]) -> bool:
    return _normal_key(str(name).rpartition(".")[2]) in fields


def _redact_attribute(value: Any, fields: frozenset[str], depth_left: int) -> Any:
    if isinstance(value, str):
        if value[:1] in ("{", "["):
            return _redact_json_text(value, fields)
        return redact_text(value, fields)
    if isinstance(value, dict):
        if depth_left < 1:
            return TOO_DEEP
        return {
            k: REDACTED if _secret_name(k, fields) else _redact_attribute(v, fields, depth_left - 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        if depth_left < 1:
            return TOO_DEEP
        return [_redact_attribute(v, fields, depth_left - 1) for v in value]
    return value


def _redact_json_text(value: str, fields: frozenset[str]) -> str:
    """An attribute holding JSON as text (``llm.invocation_parameters``), redacted inside
    (names and texts, as attributes are); as it is when nothing changes."""
    try:
        parsed = fast_loads(value)
    except (ValueError, RecursionError):
        return redact_text(value, fields)
    redacted = _redact_attribute(parsed, fields, MAX_DEPTH)
    return value if redacted == parsed else json.dumps(redacted, ensure_ascii=False)


def redact_url(url: str, fields: frozenset[str] | None = None) -> str:
    """``url`` without user info, and with credential-like query values redacted."""
    return _redact_url(url, redacted_fields() if fields is None else fields)


@functools.lru_cache(maxsize=256)
def _redact_url(url: str, fields: frozenset[str]) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [
            (k, REDACTED if _secret_parameter(k, fields) else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


_URL_SECRETS = re.compile(
    r"(?P<lead>[?&;](?P<name>[\w.\-%\[\]]+)=)(?P<value>[^&;#\s'\"()<>]*)"
    r"|(?P<scheme>\b[a-zA-Z][\w+.\-]*://)(?P<userinfo>[^/?#\s'\"<>]+@)"
    r"|(?P<pair>(?:^|(?<=[\s,]))(?P<key>[A-Za-z][\w.\-]*)[ \t]*=[ \t]*)"
    r"(?P<secret>[^;&,#\s'\"()<>]*)"
)


def redact_text(text: str, fields: frozenset[str] | None = None) -> str:
    """``text`` (an error message, a traceback, an attribute) with the URLs in it
    redacted as :func:`redact_url` redacts one (credential-like query values and user
    info), and a connection string's credentials: a ``;``-separated pair named like a
    query credential (``Server=db;Password=...``), and a pair that opens the text or
    follows a space or comma whose name is a redacted field or ends like a password,
    secret, key or token (``Pwd=...;Server=db``, libpq's ``host=db password=...``).

    HTTP clients quote the URL they failed on (``requests``: ``Max retries exceeded
    with url: /v1/chat/completions?key=...``), so an error recorded as text would hold
    the key the span's URL never had. Text without ``=`` or ``@`` is returned as is.
    """
    if "=" not in text and "@" not in text:
        return text
    names = redacted_fields() if fields is None else fields

    def replace(match: re.Match[str]) -> str:
        if match["scheme"] is not None:
            return f"{match['scheme']}{REDACTED}@"
        if match["pair"] is not None:
            key = _normal(match["key"])
            secret = key in names or key.endswith(_PAIR_ENDINGS)
            return f"{match['pair']}{REDACTED}" if secret and match["secret"] else match[0]
        if _secret_parameter(match["name"], names):
            return f"{match['lead']}{REDACTED}"
        return match[0]

    return _URL_SECRETS.sub(replace, text)


def _secret_parameter(name: str, fields: frozenset[str]) -> bool:
    normal = _normal(name)
    return normal in fields or any(word in normal for word in _QUERY_WORDS)
