"""LLM-call cassettes: record an agent's LLM calls once, replay them with no network.

::

    from scenarist.replay import cassette

    with cassette("tests/cassettes/refund.jsonl") as tape:
        answer = my_agent("Can I get a refund?")   # openai / anthropic / raw httpx inside
    assert tape.stats.missed == 0

A cassette is a :class:`~scenarist.tracing.http.capture.ResponseSource`: while one is
active in a context, every LLM call made there through ``httpx``/``httpx2`` (both official
SDKs, sync, async, streamed), ``requests``/``urllib3`` or ``aiohttp`` is answered by it,
run or no run. It is a context variable,
so concurrent scenarios each use their own cassette and never mix. Inside a traced run
the calls still become ``llm`` spans; a replayed one is marked ``metadata["replayed"]``,
spends nothing (``cost_usd=0``) and keeps the recorded cost as
``metadata["recorded_cost_usd"]``, which the budget assertions use.

Modes:

* ``"replay"`` — strict: each call is looked up by its key (see ``_request_key``) in
  per-key FIFO lanes (identical calls replay in recorded order) of the scenario or item
  that makes it (``scenarist.engine._lanes``: parallel scenarios sending the same request each
  get their own recorded responses, whatever the timing; a call recorded outside any
  lane answers any lane; one made outside any lane takes the oldest); a miss raises
  :class:`~scenarist.errors.ReplayMissError`, which names the request, diffs it against
  the nearest recorded one and says how to re-record. The network is never called: any
  other outbound connection made in the cassette's context (``urllib``, raw sockets,
  ``httpx``, ``requests`` or ``aiohttp`` to a non-LLM path) is refused with
  :class:`~scenarist.errors.LiveCallBlockedError` naming host and path, and counted
  (``stats.refused``, also in ``stats.live``), unless its loopback destination is in
  ``allow_network=["127.0.0.1:5432"]`` (the agent's own test database).
* ``"record"`` — every call goes to the network and is appended to the file.
* ``"refresh"`` — as ``record``, but the file is rewritten with this session's calls only.
* ``"once"`` (the default) — ``replay`` if the file exists, else ``record``.

``SCENARIST_RECORD_MODE`` sets the default mode (for cassettes opened without ``mode=``):
``replay`` in CI so nothing is ever recorded there, ``refresh`` to re-record everything.
Calls that are not LLM calls (``GET /models``...) pass through when recording; in
replay mode only to allow-listed loopback destinations.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, get_args

from scenarist.engine._gc import paused
from scenarist.engine._lanes import current_lane
from scenarist.engine._lanes import lane as cassette_lane
from scenarist.errors import CassetteError, LiveCallBlockedError, ReplayMissError, UserError
from scenarist.model.certificate import Guarantee, ReplayCertificate
from scenarist.redaction import redacted_fields, response_fields
from scenarist.replay import _cassette_file as files
from scenarist.replay import _cassette_http as http
from scenarist.replay._request_key import (
    MatchOn,
    RequestMatcher,
    describe,
    nearest_diff,
    stored_request,
)
from scenarist.tracing.http._llm_call import parsed_request
from scenarist.tracing.http._network_guard import NetworkGuard, guard_network
from scenarist.tracing.http._sandbox import guarantee as _guarantee
from scenarist.tracing.http.capture import serve_llm_calls

__all__ = [
    "RECORD_MODE_ENV",
    "Cassette",
    "CassetteMode",
    "CassetteStats",
    "cassette",
    "cassette_lane",
]

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
    """Calls that went, or tried to go, to the network: the recorded ones (record mode),
    the refused ones (replay mode, also counted in :attr:`refused`)."""
    unused: int = 0
    """Recorded calls no request asked for (replay mode)."""
    refused: int = 0
    """Connections nothing served that the network guard refused (replay mode)."""

    @property
    def faithful(self) -> bool:
        """Every call replayed, every recording used, nothing else tried the network."""
        return self.mode == "replay" and self.missed == 0 and self.unused == 0 and self.refused == 0

    def certificate(self, guarantee: Guarantee | None = None) -> ReplayCertificate:
        """As a replay certificate: ``live`` counts only the calls that were sent (the
        recorded ones), never the refused ones. ``guarantee``: by default the one its
        mode gives in this process (a replay: ``in-process`` or ``sandboxed``)."""
        if guarantee is None:
            guarantee = _guarantee(self.mode == "replay")
        return ReplayCertificate(
            replayed=self.replayed,
            missed=self.missed,
            refused=self.refused,
            live=self.live - self.refused if self.mode == "replay" else self.live,
            guarantee=guarantee,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "mode": self.mode,
            "replayed": self.replayed,
            "missed": self.missed,
            "live": self.live,
            "unused": self.unused,
            "refused": self.refused,
        }


class Cassette:
    """One cassette file and its session; a context manager (``with`` or ``async with``).

    Prefer :func:`cassette` to build one. Entering loads the file (a corrupt one or one
    from a newer scenarist raises :class:`~scenarist.errors.CassetteError` there) and
    activates it in the current context; leaving deactivates it and writes what was
    recorded. Leaving a replay in which a call missed raises that
    :class:`ReplayMissError`, even if the agent caught it (an SDK may wrap it in its own
    connection error), and likewise the first refused connection's
    :class:`LiveCallBlockedError`: a replay fails closed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: CassetteMode | None = None,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        redact: Sequence[str] = (),
        match_on: MatchOn = None,
        allow_network: Sequence[str] = (),
        llm_hosts: Sequence[str] = (),
    ) -> None:
        self.path: Path = files.resolve_path(path, base_dir)
        self._guard = NetworkGuard(
            None,
            f"cassette {str(self.path)!r}",
            allow_network,
            hint="cassette(..., allow_network=['127.0.0.1:PORT'])",
            source=self,
            llm_hosts=llm_hosts,
        )
        self.mode: CassetteMode = _mode(mode)
        self.misses: list[ReplayMissError] = []
        if isinstance(redact, str):
            raise UserError(f"redact takes a list of field names, got {redact!r}")
        self._redact_extra = tuple(redact)
        self._match_on = match_on
        self._allow_network = tuple(allow_network)
        self._matcher = RequestMatcher(match_on)
        self._lock = threading.Lock()
        self._replaying = False
        # (lane, key) -> the recorded responses, oldest first; lane None: recorded outside
        self._lanes: dict[tuple[str | None, str], deque[files.CassetteRecord]] = {}
        # every lane's queue of one key, for calls made outside any lane (no scan of all)
        self._by_key: dict[str, list[deque[files.CassetteRecord]]] = {}
        self._recorded: list[files.CassetteRecord] = []
        self._taken: set[int] = set()  # lines served (a call outside any lane takes any)
        self._served: dict[int, http.Served] = {}  # by line: each response ready to serve
        self._taped: list[list[Any]] = []  # [request, response, lane] slots
        self._open: dict[int, Any] = {}  # taped bodies not ended yet: at exit, kept as read
        self._counts = {"replayed": 0, "missed": 0, "live": 0}
        self._stack: ExitStack | None = None

    @property
    def replaying(self) -> bool:
        """Whether this session answers from the file (else it records)."""
        return self._replaying

    @property
    def stats(self) -> CassetteStats:
        with self._lock:
            unused = len(self._recorded) - len(self._taken) if self._replaying else 0
            mode: Literal["replay", "record"] = "replay" if self._replaying else "record"
            refused = len(self._guard.refused)
            counts = dict(self._counts, live=self._counts["live"] + refused)
            return CassetteStats(str(self.path), mode, **counts, unused=unused, refused=refused)

    @property
    def guarantee(self) -> Guarantee:
        """What this session guarantees: ``none`` when it records, else the strict
        replay's (``in-process``, or ``sandboxed`` inside ``scenarist run --sandbox``)."""
        return _guarantee(self._replaying)

    def certificate(self) -> ReplayCertificate:
        """The replay certificate of the calls this session saw so far, every context
        included (a thread started without the run's)."""
        return self.stats.certificate(self.guarantee)

    @property
    def refusals(self) -> list[str]:
        """The messages of the connections the network guard refused (replay mode)."""
        return list(self._guard.refused)

    @property
    def _redact(self) -> frozenset[str]:
        """The field names redacted now (``scenarist.redaction``) plus this cassette's."""
        return redacted_fields(self._redact_extra)

    # -- session ---------------------------------------------------------------------------

    def __enter__(self) -> Cassette:
        if self._stack is not None:
            raise UserError(f"cassette {str(self.path)!r} is already active; enter it once")
        files.refuse_directory(self.path)
        exists = self.path.exists()
        self._replaying = self.mode == "replay" or (self.mode == "once" and exists)
        if self._replaying and not exists:
            raise CassetteError(
                f"cassette {str(self.path)!r} does not exist, and mode 'replay' never "
                "records; record it first with mode='once' or mode='record' (or "
                f"{RECORD_MODE_ENV}=once)"
            )
        with paused():  # every call read stays: no collection walks them as they come
            if self._replaying or (self.mode == "record" and exists):
                self._recorded = files.read(self.path)  # validates a file we append to, too
            if self._replaying:
                for record in self._recorded:
                    key = self._matcher.key(record.request)
                    queue = self._lanes.get((record.lane, key))
                    if queue is None:
                        queue = self._lanes[record.lane, key] = deque()
                        self._by_key.setdefault(key, []).append(queue)
                    queue.append(record)
                    # encoded once, in bulk, not between the SDK's work on each call; a text
                    # with a lone surrogate is left to fail when served, as it always did
                    with suppress(UnicodeEncodeError):
                        self._served[record.line] = http.prepare(record.response)
        self._stack = ExitStack()
        self._stack.enter_context(serve_llm_calls(self))
        if self._replaying:  # strict: what the cassette does not serve never leaves
            self._stack.enter_context(guard_network(self._guard))
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
            with self._lock:
                still_open, self._open = list(self._open.values()), {}
            for body in still_open:
                body.abandoned()
            calls = [(req, resp, lane) for req, resp, lane in self._taped if resp is not None]
            files.write(self.path, calls, append=self.mode == "record")
        fails = error is None or isinstance(error, Exception)  # never mask a cancellation
        if self.misses and fails and not any(error is miss for miss in self.misses):
            raise self.misses[0]
        refused = self._guard.refused
        if refused and fails and not isinstance(error, LiveCallBlockedError):
            raise LiveCallBlockedError(refused[0])

    async def __aenter__(self) -> Cassette:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, traceback)

    # -- another process's share of the session (a Ray batch) ------------------------------

    def hand_off(self) -> dict[str, Any]:
        """What a worker needs to answer (or record) this session's calls elsewhere: the
        effective mode, the file's text when replaying, and the options."""
        if self._stack is None:
            raise UserError(f"cassette {str(self.path)!r} is not active; enter it first")
        text = self.path.read_text(encoding="utf-8") if self._replaying else None
        return {
            "path": str(self.path),
            "mode": "replay" if self._replaying else "refresh",
            "text": text,
            "redact": list(self._redact_extra),
            "match_on": self._match_on,
            "allow_network": list(self._allow_network),
            "llm_hosts": list(self._guard.llm_hosts),
        }

    def report(self) -> dict[str, Any]:
        """This session as :meth:`take_back` reads it (on a worker, after leaving)."""
        with self._lock:
            recorded = [[req, resp, lane] for req, resp, lane in self._taped if resp is not None]
            return {
                **self._counts,
                "recorded": recorded if not self._replaying else [],
                "taken": sorted(self._taken),
                "misses": [str(miss) for miss in self.misses],
                "refused": list(self._guard.refused),
            }

    def take_back(self, report: dict[str, Any]) -> None:
        """Fold a worker's session in: its counts, recorded calls, misses and refusals
        (the file is written, and a miss raised, when this cassette is left)."""
        with self._lock:
            for name in ("replayed", "missed", "live"):
                self._counts[name] += int(report.get(name, 0))
            for request, response, lane in report.get("recorded", ()):
                self._taped.append([request, response, lane])
            self._taken.update(int(line) for line in report.get("taken", ()))
        self.misses.extend(ReplayMissError(message) for message in report.get("misses", ()))
        self._guard.refused.extend(report.get("refused", ()))

    # -- the response source ---------------------------------------------------------------

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        try:
            content = request.content
        except Exception:  # a streamed request body not read yet
            content = request.read()
        parsed = parsed_request(content)  # the capture's parse of this body, if it made one
        stored = stored_request(request.method, request.url.path, content, self._redact, parsed)
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
        parsed = parsed_request(content)  # the capture's parse of this body, if it made one
        stored = stored_request(request.method, request.url.path, content, self._redact, parsed)
        if self._replaying:
            return self._serve(stored, module)
        slot = self._reserve(stored)
        return self._tape(module, await send(), slot)

    def _lanes_for(self, key: str, lane: str | None) -> list[deque[files.CassetteRecord]]:
        """Where a call of ``lane`` may be answered from: its own lane, then calls recorded
        outside any lane; a call outside any lane takes from every lane."""
        if lane is not None:
            found = [self._lanes.get((lane, key)), self._lanes.get((None, key))]
            return [q for q in found if q is not None]
        return self._by_key.get(key, [])

    def _take(self, key: str, lane: str | None) -> tuple[files.CassetteRecord | None, bool]:
        """The recorded call to serve (oldest first), and whether any was ever recorded."""
        taken = self._taken
        if lane is not None:  # its own lane first, then calls recorded outside any lane
            recorded = False
            for queue in (self._lanes.get((lane, key)), self._lanes.get((None, key))):
                if queue is None:
                    continue
                recorded = True
                while queue and queue[0].line in taken:
                    queue.popleft()
                if queue:
                    record = queue[0]
                    taken.add(record.line)
                    return record, True
            return None, recorded
        queues = self._lanes_for(key, lane)
        for queue in queues:
            while queue and queue[0].line in taken:
                queue.popleft()
        ready = [q for q in queues if q]
        if not ready:
            return None, bool(queues)
        record = min((q[0] for q in ready), key=lambda r: r.line)
        taken.add(record.line)
        return record, True

    def _serve(self, request: dict[str, Any], module: Any) -> Any:
        key = self._matcher.key(request)
        lane = current_lane()
        with self._lock:
            record, recorded = self._take(key, lane)
            self._counts["missed" if record is None else "replayed"] += 1
        if record is None:
            miss = self._miss(request, key, lane, exhausted=recorded)
            self.misses.append(miss)
            raise miss
        served = self._served.get(record.line)
        if served is None:
            return http.serve(module, record.response)
        return http.respond(module, served)

    def _reserve(self, request: dict[str, Any]) -> list[Any]:
        slot: list[Any] = [request, None, current_lane()]
        with self._lock:
            self._taped.append(slot)  # request order: identical calls replay in this order
            self._counts["live"] += 1
        return slot

    def _tape(self, module: Any, response: Any, slot: list[Any]) -> Any:
        status, headers = response.status_code, response.headers

        def done(chunks: list[bytes] | None) -> None:
            with self._lock:
                self._open.pop(id(slot), None)
            if chunks is not None:
                slot[1] = http.stored_response(
                    module, status, headers, chunks, response_fields(self._redact)
                )

        taped = http.tap(module, response, done)
        with self._lock:
            self._open[id(slot)] = taped.stream
        return taped

    def _miss(
        self, request: dict[str, Any], key: str, lane: str | None, *, exhausted: bool
    ) -> ReplayMissError:
        where = f"cassette {str(self.path)!r}"
        lines = [f"Replay miss: no recorded response in {where} for {describe(request)}."]
        if exhausted:
            lines.append(
                "The same request was recorded, but every recorded response to it was "
                "already served: the agent made this call more times than when recorded."
            )
        elif lane is not None and any(k == key for _, k in self._lanes):
            others = sorted({repr(name) for name, k in self._lanes if k == key and name})
            lines.append(
                f"The same request was recorded, but by other scenarios or items "
                f"({', '.join(others)}), not by {lane!r}: a replay answers each one from "
                "its own recordings only."
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
    allow_network: Sequence[str] = (),
    llm_hosts: Sequence[str] = (),
) -> Cassette:
    """A :class:`Cassette` for ``path``, to use as ``with cassette(...) as tape:``.

    ``mode``: ``"once"`` (default, or ``$SCENARIST_RECORD_MODE``), ``"record"``,
    ``"replay"`` or ``"refresh"`` (see the module docstring). ``base_dir``: refuse a
    ``path`` that resolves outside it. ``redact``: request and response JSON fields (any
    depth) never written, on top of API keys. ``match_on``: the body fields a key covers
    (default: the whole body minus volatile fields), or a function of the stored request.
    ``allow_network``: loopback ``"host"`` / ``"host:port"`` destinations a replay may
    still connect to (every other connection nothing served is refused). ``llm_hosts``:
    more hosts whose every request is an LLM call (``"llm.internal"``), refused from
    threads outside the cassette's context as a known provider's are.
    """
    return Cassette(
        path,
        mode,
        base_dir=base_dir,
        redact=redact,
        match_on=match_on,
        allow_network=allow_network,
        llm_hosts=llm_hosts,
    )


def _mode(mode: str | None) -> CassetteMode:
    source = "mode"
    if mode is None:
        mode, source = os.environ.get(RECORD_MODE_ENV) or "once", RECORD_MODE_ENV
    if mode not in _MODES:
        raise UserError(f"{source}={mode!r} is not a cassette mode; use one of {', '.join(_MODES)}")
    return mode  # type: ignore[return-value]
