"""LLM-call cassettes: record an agent's LLM calls once, replay them with no network.

::

    from scenarist.replay import cassette

    with cassette("tests/cassettes/refund.jsonl") as tape:
        answer = my_agent("Can I get a refund?")   # openai / anthropic / raw httpx inside
    assert tape.stats.missed == 0

A cassette is a :class:`~scenarist.integrations.http_capture.ResponseSource`: while one is
active in a context, every LLM call made there through ``httpx``/``httpx2`` (both official
SDKs, sync, async, streamed) is answered by it, run or no run. It is a context variable,
so concurrent scenarios each use their own cassette and never mix. Inside a traced run
the calls still become ``llm`` spans; a replayed one is marked ``metadata["replayed"]``,
spends nothing (``cost_usd=0``) and keeps the recorded cost as
``metadata["recorded_cost_usd"]``, which the budget assertions use.

Modes:

* ``"replay"`` — strict: each call is looked up by its key (see ``_request_key``) in
  per-key FIFO lanes (identical calls replay in recorded order); a miss raises
  :class:`~scenarist.errors.ReplayMissError`, which names the request, diffs it against
  the nearest recorded one and says how to re-record. The network is never called.
* ``"record"`` — every call goes to the network and is appended to the file.
* ``"refresh"`` — as ``record``, but the file is rewritten with this session's calls only.
* ``"once"`` (the default) — ``replay`` if the file exists, else ``record``.

``SCENARIST_RECORD_MODE`` sets the default mode (for cassettes opened without ``mode=``):
``replay`` in CI so nothing is ever recorded there, ``refresh`` to re-record everything.
Calls that are not LLM calls (``GET /models``...) pass through in every mode.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, get_args

from scenarist.errors import CassetteError, ReplayMissError, UserError
from scenarist.integrations.http_capture import serve_llm_calls
from scenarist.replay import _cassette_file as files
from scenarist.replay import _cassette_http as http
from scenarist.replay._request_key import (
    SECRET_FIELDS,
    MatchOn,
    RequestMatcher,
    describe,
    nearest_diff,
    stored_request,
)

__all__ = ["RECORD_MODE_ENV", "Cassette", "CassetteMode", "CassetteStats", "cassette"]

CassetteMode = Literal["once", "record", "replay", "refresh"]
RECORD_MODE_ENV = "SCENARIST_RECORD_MODE"
_MODES: tuple[str, ...] = get_args(CassetteMode)


@dataclass(frozen=True, slots=True)
class CassetteStats:
    """A cassette's verdict: what its calls did (a snapshot; read ``tape.stats`` again)."""

    path: str
    mode: Literal["replay", "record"]
    replayed: int = 0
    """Calls answered from the recording."""
    missed: int = 0
    """Calls with no recording left (each raised :class:`ReplayMissError`)."""
    live: int = 0
    """Calls sent to the network (recorded)."""
    unused: int = 0
    """Recorded calls no request asked for (replay mode)."""

    @property
    def faithful(self) -> bool:
        """Every call replayed and every recording used: the run matched the tape."""
        return self.mode == "replay" and self.missed == 0 and self.unused == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "mode": self.mode,
            "replayed": self.replayed,
            "missed": self.missed,
            "live": self.live,
            "unused": self.unused,
        }


class Cassette:
    """One cassette file and its session; a context manager (``with`` or ``async with``).

    Prefer :func:`cassette` to build one. Entering loads the file (a corrupt one or one
    from a newer scenarist raises :class:`~scenarist.errors.CassetteError` there) and
    activates it in the current context; leaving deactivates it and writes what was
    recorded. Leaving a replay in which a call missed raises that
    :class:`ReplayMissError`, even if the agent caught it (an SDK may wrap it in its own
    connection error): a replay fails closed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: CassetteMode | None = None,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        redact: Sequence[str] = (),
        match_on: MatchOn = None,
    ) -> None:
        self.path: Path = files.resolve_path(path, base_dir)
        self.mode: CassetteMode = _mode(mode)
        self.misses: list[ReplayMissError] = []
        if isinstance(redact, str):
            raise UserError(f"redact takes a list of field names, got {redact!r}")
        self._redact = SECRET_FIELDS | {name.lower() for name in redact}
        self._matcher = RequestMatcher(match_on)
        self._lock = threading.Lock()
        self._replaying = False
        self._lanes: dict[str, deque[dict[str, Any]]] = {}
        self._recorded: list[files.CassetteRecord] = []
        self._taped: list[list[dict[str, Any] | None]] = []  # [request, response] slots
        self._counts = {"replayed": 0, "missed": 0, "live": 0}
        self._stack: ExitStack | None = None

    @property
    def replaying(self) -> bool:
        """Whether this session answers from the file (else it records)."""
        return self._replaying

    @property
    def stats(self) -> CassetteStats:
        with self._lock:
            unused = sum(map(len, self._lanes.values()))
            mode: Literal["replay", "record"] = "replay" if self._replaying else "record"
            return CassetteStats(str(self.path), mode, **self._counts, unused=unused)

    # -- session ---------------------------------------------------------------------------

    def __enter__(self) -> Cassette:
        if self._stack is not None:
            raise UserError(f"cassette {str(self.path)!r} is already active; enter it once")
        exists = self.path.exists()
        self._replaying = self.mode == "replay" or (self.mode == "once" and exists)
        if self._replaying and not exists:
            raise CassetteError(
                f"cassette {str(self.path)!r} does not exist, and mode 'replay' never "
                "records; record it first with mode='once' or mode='record' (or "
                f"{RECORD_MODE_ENV}=once)"
            )
        if self._replaying or (self.mode == "record" and exists):
            self._recorded = files.read(self.path)  # validates a file we append to, too
        if self._replaying:
            for record in self._recorded:
                key = self._matcher.key(record.request)
                self._lanes.setdefault(key, deque()).append(record.response)
        self._stack = ExitStack()
        self._stack.enter_context(serve_llm_calls(self))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()
        if not self._replaying:
            calls = [(req, resp) for req, resp in self._taped if req and resp is not None]
            files.write(self.path, calls, append=self.mode == "record")
        fails = error is None or isinstance(error, Exception)  # never mask a cancellation
        if self.misses and fails and not any(error is miss for miss in self.misses):
            raise self.misses[0]

    async def __aenter__(self) -> Cassette:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, traceback)

    # -- the response source ---------------------------------------------------------------

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        try:
            content = request.content
        except Exception:  # a streamed request body not read yet
            content = request.read()
        stored = stored_request(request.method, request.url.path, content, self._redact)
        if self._replaying:
            return self._serve(stored, module)
        slot = self._reserve(stored)
        return self._tape(module, send(), slot)

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        try:
            content = request.content
        except Exception:
            content = await request.aread()
        stored = stored_request(request.method, request.url.path, content, self._redact)
        if self._replaying:
            return self._serve(stored, module)
        slot = self._reserve(stored)
        return self._tape(module, await send(), slot)

    def _serve(self, request: dict[str, Any], module: Any) -> Any:
        key = self._matcher.key(request)
        with self._lock:
            lane = self._lanes.get(key)
            response = lane.popleft() if lane else None
            self._counts["missed" if response is None else "replayed"] += 1
        if response is None:
            miss = self._miss(request, exhausted=lane is not None)
            self.misses.append(miss)
            raise miss
        return http.serve(module, response)

    def _reserve(self, request: dict[str, Any]) -> list[dict[str, Any] | None]:
        slot: list[dict[str, Any] | None] = [request, None]
        with self._lock:
            self._taped.append(slot)  # request order: identical calls replay in this order
            self._counts["live"] += 1
        return slot

    def _tape(self, module: Any, response: Any, slot: list[dict[str, Any] | None]) -> Any:
        status, headers = response.status_code, response.headers

        def done(chunks: list[bytes] | None) -> None:
            if chunks is not None:
                slot[1] = http.stored_response(module, status, headers, chunks, self._redact)

        return http.tap(module, response, done)

    def _miss(self, request: dict[str, Any], *, exhausted: bool) -> ReplayMissError:
        where = f"cassette {str(self.path)!r}"
        lines = [f"Replay miss: no recorded response in {where} for {describe(request)}."]
        if exhausted:
            lines.append(
                "The same request was recorded, but every recorded response to it was "
                "already served: the agent made this call more times than when recorded."
            )
        else:
            found = nearest_diff(request, ((r.line, r.request) for r in self._recorded))
            if found is None:
                lines.append(f"Nothing was recorded for {request['method']} {request['path']}.")
            else:
                line, diff = found
                lines += [f"Nearest recorded request (line {line}) differs:", diff]
        lines.append(
            "Strict replay never calls the network. To re-record, run with mode='refresh' "
            f"(or {RECORD_MODE_ENV}=refresh), or delete the file and use mode='once'."
        )
        return ReplayMissError("\n".join(lines))


def cassette(
    path: str | os.PathLike[str],
    mode: CassetteMode | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    redact: Sequence[str] = (),
    match_on: MatchOn = None,
) -> Cassette:
    """A :class:`Cassette` for ``path``, to use as ``with cassette(...) as tape:``.

    ``mode``: ``"once"`` (default, or ``$SCENARIST_RECORD_MODE``), ``"record"``,
    ``"replay"`` or ``"refresh"`` (see the module docstring). ``base_dir``: refuse a
    ``path`` that resolves outside it. ``redact``: request and response JSON fields (any
    depth) never written, on top of API keys. ``match_on``: the body fields a key covers
    (default: the whole body minus volatile fields), or a function of the stored request.
    """
    return Cassette(path, mode, base_dir=base_dir, redact=redact, match_on=match_on)


def _mode(mode: str | None) -> CassetteMode:
    source = "mode"
    if mode is None:
        mode, source = os.environ.get(RECORD_MODE_ENV) or "once", RECORD_MODE_ENV
    if mode not in _MODES:
        raise UserError(f"{source}={mode!r} is not a cassette mode; use one of {', '.join(_MODES)}")
    return mode  # type: ignore[return-value]
