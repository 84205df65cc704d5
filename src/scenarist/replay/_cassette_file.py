"""Cassette files: versioned JSON Lines, one call per line, safe to commit.

::

    {"format_version":1,"kind":"scenarist.cassette"}
    {"request":{"body":{...},"method":"POST","path":"/v1/chat/completions"},"response":{...}}
    {"request":{...},"response":{"events":["data: {...}","data: [DONE]"],"headers":{...},...}}

The first line is a header; every other line is one call in the order it was made. Keys
are sorted and each call is one line, so a re-recording shows up in review as the lines
that changed. A response holds exactly one of ``body`` (JSON), ``text``, ``body_base64``
(other bytes) or ``events`` (a server-sent-event stream, one raw event per item). Nothing
else is kept: no URL host or query, no request headers, only a few response headers.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from scenarist import _json_limits
from scenarist.errors import CassetteError

__all__ = ["FORMAT_VERSION", "CassetteRecord", "dumps", "read", "resolve_path", "write"]

FORMAT_VERSION = 1
KIND = "scenarist.cassette"
_HEADER = {"format_version": FORMAT_VERSION, "kind": KIND}
_BODY_FIELDS = ("body", "text", "body_base64", "events")
_RERECORD = "re-record it with mode='refresh' (or SCENARIST_RECORD_MODE=refresh)"


class CassetteRecord(NamedTuple):
    """One recorded call: its request, its response, its line in the file, and the lane
    (scenario or item, see ``scenarist.engine._lanes``) that made it, if any."""

    line: int
    request: dict[str, Any]
    response: dict[str, Any]
    lane: str | None = None


def resolve_path(path: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None) -> Path:
    """The cassette file for ``path``; inside ``base_dir`` (symlinks resolved) when given."""
    if base_dir is None:
        return Path(path)
    base = Path(base_dir).resolve()
    target = (base / path).resolve()
    if target == base or not target.is_relative_to(base):
        raise CassetteError(
            f"cassette path {os.fspath(path)!r} leaves its base directory {str(base)!r}; "
            "use a name inside it (no '..', no absolute path elsewhere, no symlink out)"
        )
    return target


def dumps(value: Any) -> str:
    """One line of JSON with sorted keys (readable Unicode when it can be written)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \\ud800 escape: keep it escaped
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text


def read(path: Path) -> list[CassetteRecord]:
    """Every call recorded in ``path``, validated; a bad file raises :class:`CassetteError`."""
    refuse_directory(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CassetteError(f"{path}: not UTF-8 text ({error}); {_RERECORD}") from None
    except OSError as error:
        raise CassetteError(f"{path}: cannot be read ({error.strerror or error})") from None
    from scenarist._jsonable import split_jsonl  # the one line splitting of JSON Lines

    numbered, rest = split_jsonl(text)
    if rest.strip():  # a last line without its newline is still read (and checked)
        numbered.append((text.count("\n") + 1, rest))
    first = numbered[0] if numbered else (1, "")
    if first[0] != 1:  # the header must be the first line, not after blank ones
        first = (1, "")
    _check_header(path, first[1])
    return [_record(path, number, line) for number, line in numbered[1:]]


def refuse_directory(path: Path) -> None:
    """A :class:`CassetteError` if ``path`` is a directory (a cassette is one file)."""
    if path.is_dir():
        raise CassetteError(
            f"{path}: is a directory, not a cassette file; give a file path such as "
            f"{str(path / 'calls.jsonl')!r}"
        )


def _check_header(path: Path, line: str) -> None:
    try:
        header = _json_limits.loads(line, strict_values=False)
    except ValueError:
        header = None
    version = header.get("format_version") if isinstance(header, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteError(
            f"{path}:1: not a scenarist cassette (the first line must be a header like "
            f"{dumps(_HEADER)}); {_RERECORD}"
        )
    assert isinstance(header, dict)
    if header.get("kind") != KIND:
        raise CassetteError(
            f"{path}:1: not a scenarist cassette (the header's kind is "
            f"{_printable(header.get('kind'))}, not {KIND!r}); {_RERECORD}"
        )
    if version > FORMAT_VERSION:
        raise CassetteError(
            f"{path}:1: cassette format_version {version} was written by a newer scenarist "
            f"(this one reads up to {FORMAT_VERSION}); upgrade scenarist or {_RERECORD}"
        )
    if version < 1:
        raise CassetteError(f"{path}:1: unknown cassette format_version {version!r}; {_RERECORD}")


def _record(path: Path, number: int, line: str) -> CassetteRecord:
    def bad(problem: str) -> CassetteError:
        return CassetteError(f"{path}:{number}: {problem}; fix or delete the line, or {_RERECORD}")

    try:
        value = _json_limits.loads(line, strict_values=False)
    except _json_limits.JsonLimitError as error:
        raise bad(error.problem + (f" (at {error.field})" if error.path else "")) from None
    except ValueError as error:
        raise bad(f"invalid JSON ({error})") from None
    if not isinstance(value, dict):
        raise bad("a call must be a JSON object with 'request' and 'response'")
    request, response = value.get("request"), value.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise bad("a call must be a JSON object with 'request' and 'response'")
    if not isinstance(request.get("method"), str) or not isinstance(request.get("path"), str):
        raise bad("the request needs a 'method' and a 'path' (strings)")
    request.setdefault("body", None)
    status = response.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise bad(f"the response status must be an HTTP status code, not {status!r}")
    headers = response.setdefault("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise bad("the response headers must be an object of strings")
    present = [f for f in _BODY_FIELDS if f in response]
    if len(present) != 1:
        raise bad(f"the response needs exactly one of {', '.join(_BODY_FIELDS)}")
    if present[0] in ("text", "body_base64") and not isinstance(response[present[0]], str):
        raise bad(f"the response {present[0]!r} must be a string")
    if present[0] == "body_base64":
        try:
            base64.b64decode(response["body_base64"], validate=True)
        except (binascii.Error, ValueError) as error:
            raise bad(f"the response 'body_base64' is not valid base64 ({error})") from None
    events = response.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise bad("the response 'events' must be a list of strings")
    lane = value.get("lane")
    if lane is not None and not isinstance(lane, str):
        raise bad(f"the call's 'lane' must be a string (a scenario or item), not {lane!r}")
    return CassetteRecord(number, request, response, lane)


def _printable(value: Any) -> str:
    """``value``'s repr, cut short: a hand-edited header may hold anything."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def write(
    path: Path,
    calls: Iterable[tuple[dict[str, Any], dict[str, Any], str | None]],
    *,
    append: bool,
) -> None:
    """Write ``calls`` (request, response, lane): appended to an existing file, or as a new
    file (atomically). A call made outside any lane is written without one."""
    lines = [
        dumps({"request": request, "response": response, **({"lane": lane} if lane else {})})
        for request, response, lane in calls
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    if append and path.exists():
        with path.open("rb") as existing:
            existing.seek(max(existing.seek(0, os.SEEK_END) - 1, 0))
            if existing.read(1) not in (b"\n", b""):  # a hand-edited last line
                lines.insert(0, "")
        with path.open("a", encoding="utf-8", newline="\n") as file:
            file.writelines(line + "\n" for line in lines)
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w", encoding="utf-8", newline="\n") as file:
        file.write(dumps(_HEADER) + "\n")
        file.writelines(line + "\n" for line in lines)
    os.replace(temporary, path)
