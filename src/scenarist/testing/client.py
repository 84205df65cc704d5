"""``TestClient``: a client for tests that never touches the network (Veval's test SDK).

Everything is kept in memory. Recorded traces are added with :meth:`TestClient.with_replay`
(any number, served by trace id to trace-backed items and ``replay``; as in Veval's test
SDK, the last one given also replays every ``run`` / ``run_async``), snapshots with
:meth:`TestClient.with_snapshot`. Synthetic items run the agent, but a live LLM call
(through the OpenAI or Anthropic SDK, or any OpenAI-compatible HTTP call, ``urllib.request``
included, and from threads started without the run's context) is blocked with an error
that names it, unless ``allow_live_llm_calls=True``. Unlike Veval's test
SDK, nothing is ever posted anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING, Any, Self

from scenarist._sync import run_sync
from scenarist.errors import LiveCallBlockedError
from scenarist.model.record import TraceRecord
from scenarist.store.memory import MemoryStore
from scenarist.tracing.context import RunContext
from scenarist.veval.client import Client
from scenarist.veval.execution import Agent

if TYPE_CHECKING:
    from scenarist.replay.step_replay import Divergence

__all__ = ["LiveCallBlockedError", "TestClient"]


class _BlockLiveCalls:
    """A response source that refuses every LLM call, naming it (and remembering it)."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def _refuse(self, request: Any) -> LiveCallBlockedError:
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            body = {}
        model = body.get("model") if isinstance(body, dict) else None
        message = (
            f"TestClient blocked a live LLM call: {request.method} {request.url.path}"
            f"{f' (model {model!r})' if model else ''}. Replay it with with_replay(...) or a "
            "cassette, or create TestClient(allow_live_llm_calls=True)."
        )
        self.refused.append(message)
        return LiveCallBlockedError(message)

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        raise self._refuse(request)

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        raise self._refuse(request)


def _blocking_guard(blocker: _BlockLiveCalls, source: Any = None) -> Any:
    """A network guard refusing the LLM calls no hook sees (``urllib.request``) and, as
    the process's strict guard, those of threads started outside the run's context."""
    from scenarist.tracing.http._network_guard import NetworkGuard

    class BlockingGuard(NetworkGuard):
        llm_only = True

        def refuse(
            self,
            host: str,
            port: int | None,
            path: str | None,
            *,
            stray: str = "",
            named: str | None = None,
        ) -> LiveCallBlockedError:
            where = f"{named} at " if named and named != host else ""
            message = (
                f"TestClient blocked a live LLM call: POST {path} (to {where}{host}"
                f"{f':{port}' if port else ''}). Replay it with with_replay(...) or a "
                "cassette, or create TestClient(allow_live_llm_calls=True)."
            )
            blocker.refused.append(message + stray)
            return self._count(message + stray)

    return BlockingGuard(None, "a TestClient run", source=blocker if source is None else source)


class TestClient(Client):
    """An in-memory client whose runs never reach a model unless allowed."""

    __test__ = False  # not a pytest test class

    def __init__(self, options: Any = None, *, allow_live_llm_calls: bool = False) -> None:
        """``options`` (Veval's ``VevalTestSdk(options)``: a ``ClientOptions`` or any
        options object) is accepted for ported code and unused: nothing leaves memory."""
        from scenarist.judges.mocks import JudgeMocks

        if isinstance(options, bool):
            raise TypeError(
                "TestClient(options): the first argument is the client options; "
                f"write TestClient(allow_live_llm_calls={options!r})"
            )
        super().__init__(store=MemoryStore())
        self.options = options
        self.allow_live_llm_calls = allow_live_llm_calls
        self.blocked: list[str] = []
        self.judge_mocks = JudgeMocks()
        self._last_status: str | None = None
        self._last_error: str | None = None
        self._run_replay: TraceRecord | None = None
        self._run_divergence: Divergence = "serve"

    @property
    def last_status(self) -> str | None:
        """How the last traced run ended: ``"success"``, ``"error"``, or ``None`` before any."""
        return self._last_status

    @property
    def last_error(self) -> str | None:
        """The last traced run's error message (``None`` when it succeeded)."""
        return self._last_error

    def with_judge_mock(
        self, criteria: str, passed: bool, score: float = 1.0, reasoning: str = ""
    ) -> Self:
        """Queue a verdict for ``TraceAssert.judge(criteria)`` (first in, first out); a
        judge with no verdict left is an error naming its criteria, never a real call."""
        self.judge_mocks.add(criteria, passed, score, reasoning)
        return self

    def _assertion_scope(self) -> AbstractContextManager[None]:
        from scenarist.judges.mocks import using_judge_mocks

        return using_judge_mocks(self.judge_mocks)

    def with_replay(
        self,
        trace: TraceRecord | dict[str, Any],
        *traces: TraceRecord | dict[str, Any],
        on_divergence: Divergence = "serve",
    ) -> Self:
        """Make recorded traces available by id (``TraceRecord`` objects, their JSON or
        Veval's); any number, unlike Veval's one. The last one given also replays every
        :meth:`run_async` (Veval's documented use: build the double with a recorded trace,
        then call the service normally). ``on_divergence`` is for those runs: ``"serve"``
        (Veval's) serves a step whose input changed from the recording and notes it in
        ``ctx.replay_fidelity``; ``"fail"`` raises ``ReplayDivergenceError`` with a diff,
        as a trace-backed scenario item does by default."""
        for each in (trace, *traces):
            record = each if isinstance(each, TraceRecord) else TraceRecord.from_dict(each)
            run_sync(self.store.save_trace, record)
            self._run_replay = record
        self._run_divergence = on_divergence
        return self

    async def run_async(self, agent_name: str, callback: Agent, input: Any = None) -> Any:
        """:meth:`Client.run_async`; after :meth:`with_replay`, the run replays the last
        trace given (Veval's test SDK), whatever its input: its tracked steps and LLM calls
        are served from the recording (a changed input is served too, and noted as
        diverged, unless ``with_replay(..., on_divergence="fail")``); a step the recording
        lacks raises ``ReplayNoMockError``, and a recorded step the agent never called
        fails the run (``ReplayError``): both ``RuntimeError``, as in Veval."""
        recording = self._run_replay
        if recording is None:
            return await super().run_async(agent_name, callback, input)
        from scenarist.errors import ReplayError
        from scenarist.replay.recorded_calls import RecordedCalls
        from scenarist.replay.step_replay import Replayer, ReplayOptions
        from scenarist.tracing.http._network_guard import guard_network
        from scenarist.tracing.http.capture import serve_llm_calls
        from scenarist.veval.execution import check_agent

        check_agent(callback, "callback")
        replayer = Replayer(
            recording, ReplayOptions(mock_llm_responses=True, on_divergence=self._run_divergence)
        )
        ctx = RunContext(input=input, agent_name=agent_name, is_replay=True, replayer=replayer)
        ctx.set_metadata("replay_of", recording.trace_id)
        calls = RecordedCalls(recording)
        blocker = _BlockLiveCalls()  # what no recording serves (urllib.request) never leaves
        with ExitStack() as stack:
            stack.enter_context(serve_llm_calls(calls))
            if not self.allow_live_llm_calls:
                stack.enter_context(guard_network(_blocking_guard(blocker, calls)))
            record, error = await self._execute(ctx, callback)
        if blocker.refused:
            self.blocked.extend(blocker.refused)
            error = LiveCallBlockedError(blocker.refused[0])
            self._last_status, self._last_error = "error", str(error)
        if error is None and replayer.finish():
            error = ReplayError(replayer.unused_message())
            self._last_status, self._last_error = "error", str(error)
        if error is not None:
            raise error
        return record.output

    def with_snapshot(
        self, snapshot_name: str | None = None, snapshot: Any = None, *, name: str | None = None
    ) -> Self:
        """Make a snapshot available by name (a ``SnapshotData`` or what it is built from);
        ``name=`` is the older keyword for ``snapshot_name``."""
        from scenarist.replay.snapshots import SnapshotData
        from scenarist.veval.client import _snapshot_name

        data = (
            snapshot if isinstance(snapshot, SnapshotData) else SnapshotData.from_source(snapshot)
        )
        run_sync(self.store.save_snapshot, _snapshot_name(snapshot_name, name), data)
        return self

    async def _execute(
        self, ctx: RunContext, agent: Agent, *, save: bool = True
    ) -> tuple[TraceRecord, BaseException | None]:
        record, error = await self._execute_blocking(ctx, agent, save)
        self._last_status = "error" if error is not None else "success"
        self._last_error = None if error is None else (str(error) or type(error).__name__)
        return record, error

    async def _execute_blocking(
        self, ctx: RunContext, agent: Agent, save: bool
    ) -> tuple[TraceRecord, BaseException | None]:
        if self.allow_live_llm_calls or ctx.is_replay:  # replays serve their own calls
            return await super()._execute(ctx, agent, save=save)
        from scenarist.tracing.http._network_guard import guard_network
        from scenarist.tracing.http.capture import serve_llm_calls

        blocker = _BlockLiveCalls()
        with serve_llm_calls(blocker), guard_network(_blocking_guard(blocker)):
            record, error = await super()._execute(ctx, agent, save=save)
        if blocker.refused:  # SDKs wrap transport errors; name the blocked call instead
            self.blocked.extend(blocker.refused)
            error = LiveCallBlockedError(blocker.refused[0])
        return record, error
