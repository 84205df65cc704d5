"""Every exception scenarist raises, in one tree.

    ScenaristError
    ├── UserError                  misuse of the API, raised early with the fix
    │   ├── SerializationError     something that cannot be written as JSON (a callable)
    │   ├── RunLogError            a run log that cannot be read (names the file, line, field)
    │   ├── CassetteError          a cassette file that cannot be used (corrupt, newer, outside)
    │   ├── OtlpError              an OTLP trace payload that cannot be read (names the field)
    │   │   └── OtlpTooLarge       more spans than the receiver takes a request (otel.wire)
    │   ├── ScenarioSourceError    a suite's streamed scenarios raised or yielded a non-scenario
    │   └── PathSyntaxError        a ``trace.…`` path that cannot be parsed
    ├── StepGenerationError        a step could not be produced (carried as data on results)
    │   ├── InteractionGenerationError  inputs or outputs could not be produced
    │   └── InputGenerationException    an input generator could not produce an input
    ├── StepTimeoutError           an interaction did not finish within ``timeout_s``
    ├── AbortedCallError           user code raised ``SystemExit`` or a stray ``CancelledError``
    ├── ProviderError              an LLM provider could not answer (SDK, key, HTTP, refusal)
    │   └── StructuredOutputError  the answer is not JSON matching the requested schema
    ├── JudgeInputError            a judge check cannot read a value its rubric needs (→ ERROR)
    ├── PromptError                a rubric template cannot be loaded or rendered (→ ERROR)
    ├── RequestError               a scenarist server could not be reached or refused a request
    │   └── SendError              data could not be uploaded to a scenarist server
    └── ReplayError                replay could not serve a call from the recording
        ├── ReplayDivergenceError  a step's input differs from every recorded one
        ├── ReplayNoMockError      no recorded step of that name is left to serve
        ├── ReplayMissError        an LLM call has no recorded response left in its cassette
        ├── EmptyRecordingError    a recording with no steps to serve (a ``UserError`` too)
        └── LiveCallBlockedError   ``TestClient`` refused a live LLM call

Defined elsewhere, never seen by users (each is caught where it is raised):
``providers._retry.Transient`` (an attempt worth retrying, becomes ``ProviderError`` when
retries run out), ``checks.comparison._Unsupported`` (becomes the check's ERROR),
``_json_limits.JsonLimitError`` (JSON over a limit: each reader turns it into its own
``CassetteError``, ``RunLogError`` or 422), and the
server's own, each turned into an HTTP answer by its route: ``store.sql.compare.CompareError``
(404), ``server.trace_actions.TraceNotFound`` (404), ``server.judging.JudgeNotConfigured``
(503), ``server.ratelimit.RateLimited`` (429), ``store.sql.keys.LastActiveKey`` (409),
``store.sql.live.RunNotFound`` (404) and ``store.sql.live.RunClosed`` (409),
``server.reviews.ResultNotFound`` (404),
``server.dashboard._csrf.CsrfError`` (403), ``server.dashboard.session.LoginRequired`` (a
redirect to the login page), and the
request errors ``server._input_limits.InvalidInput``, ``server.routes_api._BadLog`` and
``server.routes_veval._ItemError`` (422). The core never imports the server, so they stay
in its modules.

Verdicts are data: a failing check never raises. Exceptions raised by user code (a target,
a check, a generator) propagate unchanged unless ``return_exception=True``, in which case
they are recorded as ERROR results (see :mod:`scenarist.model.results`). ``UserError`` derives
from :class:`ValueError` too, so code written against giskard-checks that catches
``ValueError`` for misuse keeps working; ``ReplayError`` derives from
:class:`RuntimeError` too, what Veval raises for the same replay failures.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AbortedCallError",
    "CassetteError",
    "EmptyRecordingError",
    "InputGenerationException",
    "InteractionGenerationError",
    "JudgeInputError",
    "LiveCallBlockedError",
    "OtlpError",
    "PathSyntaxError",
    "PromptError",
    "ProviderError",
    "ReplayDivergenceError",
    "ReplayError",
    "ReplayMissError",
    "ReplayNoMockError",
    "RequestError",
    "RunLogError",
    "ScenarioSourceError",
    "ScenaristError",
    "SendError",
    "SerializationError",
    "StepGenerationError",
    "StepTimeoutError",
    "StructuredOutputError",
    "UserError",
]


class ScenaristError(Exception):
    """Base class of every exception raised by scenarist itself."""


class UserError(ScenaristError, ValueError):
    """The API was used in a way that cannot work; the message says how to fix it."""


class OtlpError(UserError):
    """An OTLP trace payload that cannot be read; the message names the field."""


class ScenarioSourceError(UserError):
    """A suite's streamed scenarios raised or yielded a non-scenario (see docs/streaming.md)."""

    # The scenarios before it ran: ``Suite.run`` attaches their results as ``result`` (a
    # ``SuiteResult`` marked ``incomplete``), ``iter_results`` yields them before raising.
    # The source's own exception is the ``__cause__``.

    def __init__(self, message: str, *, index: int) -> None:
        super().__init__(message)
        self.index = index
        """How many scenarios the source had given before it failed."""
        self.result: Any = None
        """With ``Suite.run``: the ``SuiteResult`` of the scenarios that ran."""


class SerializationError(UserError):
    """A value (usually a callable) cannot be written to JSON."""


class PathSyntaxError(UserError):
    """A ``trace.…`` path that cannot be parsed; the message shows where."""


class RunLogError(UserError):
    """A run log (a file or a request body) that cannot be read; says where and how to fix it."""

    # ``fields``: the invalid fields (``{"field", "message", "type"}``, ``field`` a dotted
    # path such as ``scenarios.0.index``); ``invalid_json``: a record is not JSON.

    def __init__(
        self,
        message: str,
        *,
        fields: list[dict[str, str]] | None = None,
        invalid_json: bool = False,
    ) -> None:
        super().__init__(message)
        self.fields = fields or []
        self.invalid_json = invalid_json


class StepGenerationError(ScenaristError):
    """A scenario step could not be produced; recorded on the step's result."""


class InteractionGenerationError(StepGenerationError):
    """The inputs or outputs of an interaction could not be produced."""

    # ``partial_trace``: the trace as far as it got, when known (as giskard-checks).
    def __init__(self, message: object = "", partial_trace: Any = None) -> None:
        super().__init__(message)
        self.partial_trace = partial_trace


class InputGenerationException(InteractionGenerationError):
    """An input generator (a simulated user, a dataset) could not produce the next input."""


class StepTimeoutError(ScenaristError, TimeoutError):
    """An interaction took longer than the configured ``timeout_s``."""


class AbortedCallError(ScenaristError):
    """User code raised ``SystemExit`` or an ``asyncio.CancelledError`` nobody asked for."""

    # Both are ``BaseException``: left as they are, a stray ``CancelledError`` reads as
    # "the run was cancelled" to whatever awaits the scenario (serial runs stopped early
    # and reported green, parallel ones dropped the scenario), and ``SystemExit`` ends the
    # process without a verdict. Recorded as that scenario's ERROR, the original exception
    # as ``__cause__`` (see scenarist.engine._user_code).


class ProviderError(ScenaristError):
    """A provider could not answer: missing SDK or key, HTTP failure after retries, refusal."""


class StructuredOutputError(ProviderError):
    """The model answered, but not with JSON matching the requested schema."""

    # The refused answers (ChatResponse: text, tokens, cost), oldest first, when the
    # adapter knows them: a caller with its own retry policy (a judge) keeps every
    # attempt's raw answer and usage instead of losing them with the exception.
    responses: tuple[Any, ...] = ()


class JudgeInputError(ScenaristError):
    """A value the rubric needs could not be read from the trace (the check reports ERROR)."""


class PromptError(ScenaristError):
    """A rubric template could not be loaded or rendered; the check reports ERROR."""


class RequestError(ScenaristError):
    """A scenarist server could not be reached, or answered a request with an error."""

    def __init__(
        self, message: str, status: int | None = None, *, status_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code if status_code is not None else status

    @property
    def status(self) -> int | None:
        """The HTTP status the server answered with (Veval's name), ``None`` if none."""
        return self.status_code


class SendError(RequestError):
    """Data (a trace, a run, items, a snapshot) could not be uploaded to a scenarist server."""


class ReplayError(ScenaristError, RuntimeError):
    """Replay could not serve a call from the recording (and never calls live instead)."""


class ReplayDivergenceError(ReplayError):
    """A tracked step's input differs from every unused recorded step of that name."""


class ReplayNoMockError(ReplayError):
    """A tracked step has no unused recorded step of that name to be served from."""


class ReplayMissError(ReplayError):
    """An LLM call in strict replay has no recorded response left (no network call made)."""


class EmptyRecordingError(ReplayError, UserError):
    """A recording with no steps to serve: a ``RuntimeError`` (Veval's) and a ``ValueError``."""

    @classmethod
    def for_trace(cls, trace_id: str) -> EmptyRecordingError:
        """The error for ``trace_id``: Veval's text, then what records steps."""
        return cls(
            f"Replay trace '{trace_id}' has no steps. Cannot mock LLM calls. Ensure the trace "
            "was recorded with steps before using it for replay. (Steps are what track_step / "
            "step record; a live call is never made instead.)"
        )


class LiveCallBlockedError(ReplayError):
    """A test made a live LLM call; ``TestClient`` blocks them unless explicitly allowed."""


class CassetteError(UserError):
    """A cassette file cannot be used: corrupt, from a newer scenarist, or outside its base."""
