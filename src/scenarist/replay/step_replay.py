"""Step-level replay: serve tracked steps from a recorded run, and say how faithful it was.

While a recording is loaded into a run, every tracked step (``ctx.track_step``,
``track_step_async``, a ``@step`` function, a ``with step(...)`` block) is **bound** to a
recorded step:

1. candidates are the recorded steps with the same name that no call has used yet;
2. one whose input is identical under a canonical JSON form (types kept: ``"1"`` is not
   ``1``), or, for a value JSON cannot hold, under the text Veval's SDK stores for it (a
   datetime, a dataclass, a UUID: what a recording made by Veval holds), is **matched**,
   wherever it is among them (as in Veval);
3. otherwise the call **diverged** and is bound to the next unused same-name recording in
   recorded order (Veval's rule; ``serve_same_position=True`` prefers the one at the
   call's ordinal position among same-name steps, so a call that changed does not take
   the recording a later, unchanged call matches). ``on_divergence`` decides: ``"serve"``
   (Veval's, the default of ``replay_async``, ``load_mock_outputs`` and the test double)
   serves that recording and reports the call as diverged; ``"fail"``
   (what trace-backed scenario items pass: Veval silently serves the wrong output)
   raises :class:`ReplayDivergenceError` with a line diff; ``"live"`` runs the step;
4. no candidate at all raises :class:`ReplayNoMockError` (Veval's text) and records neither
   a step nor a binding, since the call never ran: a replay never falls back to a live call
   (unless asked: ``on_missing="live"``, Veval's ``load_mock_outputs(strict=False)``, which
   runs it bound to nothing; with ``live_model_steps`` an extra call of a step recorded as
   ``llm`` runs live).

A served step returns the recorded output without running the step's code, keeps the
recorded model, tokens, cost and duration as ``recorded_*`` metadata (so budgets still
test the recording), and spends nothing (``cost_usd=0``, or ``None`` when the recording
had no cost). It stands for its recorded subtree: the steps and captured LLM calls
recorded inside it are copied under it, marked replayed, and count as served (never
"unused"), so the replayed trace counts what the recording counted. A step that runs
instead (a ``with`` block, ``on_divergence="live"``) gets the LLM calls made inside it
from the calls recorded inside the step it is bound to (see ``recorded_calls``). ``with``
blocks cannot skip their body: they are bound (for fidelity) and run live. With
``live_model_steps`` the recorded ``llm`` steps run live and everything else is served.
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, computed_field

from scenarist._jsonable import to_json_value
from scenarist.errors import ReplayDivergenceError, ReplayNoMockError
from scenarist.model._positional import Positional
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.replay.snapshot_diff import SnapshotDiff, SnapshotOptions
from scenarist.tracing.recorder import Decision

__all__ = [
    "ReplayBinding",
    "ReplayFidelity",
    "ReplayOptions",
    "ReplayResult",
    "Replayer",
    "UnusedRecording",
    "canonical",
]

Divergence = Literal["fail", "serve", "live"]
Outcome = Literal["matched", "diverged", "live"]


def canonical(value: Any) -> str:
    """A canonical JSON form: equal values give equal strings, ``"1"`` and ``1`` differ."""
    return json.dumps(to_json_value(value), sort_keys=True, ensure_ascii=False)


def as_sent(value: Any) -> str | None:
    """:func:`canonical` of ``value`` as Veval's SDK stores it (JSON written with
    ``default=str``: a datetime, a dataclass, a UUID as its text), ``None`` if it cannot
    be written. A recording made by Veval holds that text, and its own replay matches a
    call against it; JSON values keep their types (``"1"`` is still not ``1``)."""
    try:
        return canonical(json.loads(json.dumps(value, default=str)))
    except (TypeError, ValueError, RecursionError):
        return None


class ReplayOptions(Positional):
    """How a replay behaves (Veval's names, plus ``on_divergence``, ``on_missing`` and
    ``allow_network``).

    ``mock_llm_responses``: serve every tracked step and LLM call from the recording (a
    strict replay: nothing the recording could serve runs live). Veval's default is
    ``False``, and so is ours: ``ReplayOptions()`` runs the agent again **live**, marked as
    a replay (``ctx.is_replay``), with nothing served and no fidelity report, as Veval
    does; ``live_model_steps=True`` serves everything but the recorded ``llm`` steps.
    Trace-backed scenario items, ``load_mock_outputs``, the test double and
    ``scenarist replay`` always mock.

    ``on_divergence``: a tracked call whose input differs from every unused recording of
    its step. ``"serve"`` (Veval's behaviour, the default) serves a recording anyway and
    reports the call as diverged in ``ReplayResult.fidelity``; ``"fail"`` raises
    :class:`~scenarist.errors.ReplayDivergenceError` with a line diff, so the replay fails
    (what trace-backed scenario items do); ``"live"`` runs that step's code, its LLM calls
    still served from the recording. None of them ever makes a live call the recording
    could have served.

    ``compare_with_recording``: ``True`` (default snapshot options) or a
    :class:`~scenarist.replay.snapshot_diff.SnapshotOptions` compares the replayed step
    sequence with the recorded one into ``ReplayResult.recording_diff``, and a drift fails
    the replay (Veval's ``Replay drifted from its recording``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    __positional__ = (
        "mock_llm_responses",
        "assertions",
        "compare_with_recording",
        "live_model_steps",
    )

    mock_llm_responses: bool = False
    live_model_steps: bool = False
    assertions: list[Any] = Field(default_factory=list)
    compare_with_recording: bool | SnapshotOptions | None = None
    on_divergence: Divergence = "serve"
    on_missing: Literal["fail", "live"] = "fail"
    """A call no recorded step can serve: ``"fail"`` raises :class:`ReplayNoMockError`;
    ``"live"`` runs it (what Veval's ``load_mock_outputs(strict=False)`` asks for)."""
    serve_same_position: bool = False
    """Bind a diverged call to the unused same-name recording at its own ordinal position
    (the 2nd ``lookup`` call to the 2nd recorded ``lookup``) rather than to the next unused
    one in recorded order (Veval's rule, the default)."""
    allow_network: list[str] = Field(default_factory=list)
    """Loopback destinations (``"127.0.0.1:5432"``, ``"localhost"``) the replayed agent
    may connect to; every other connection nothing served is refused (a strict replay)."""
    llm_hosts: list[str] = Field(default_factory=list)
    """More hosts whose every request is an LLM call (``"llm.internal"``,
    ``"*.llm.corp"``), besides the known providers' and ``$SCENARIST_LLM_HOSTS``: a
    strict replay refuses their requests from threads outside its context as it refuses
    a known provider's (``tracing/http/_llm_hosts.py``)."""

    @property
    def serves_from_recording(self) -> bool:
        """Whether the replay serves anything from the recording: ``mock_llm_responses``
        or ``live_model_steps`` (which, as in Veval, takes precedence and serves every
        step but the recorded ``llm`` ones)."""
        return self.mock_llm_responses or self.live_model_steps


class ReplayBinding(Positional):
    """How one tracked call was bound to the recording: Veval's fields, in Veval's order
    (``kind`` is how it was bound: ``matched``, ``diverged``, ``live``), then ours."""

    __positional__ = ("step_name", "kind", "recorded_index", "recorded_input", "actual_input")

    step_name: str
    kind: Outcome
    recorded_index: int | None = None
    recorded_input: Any = None
    actual_input: Any = None
    step_kind: str = "custom"
    """The kind of the call's span (``custom`` for ``track_step``, ``tool``, ``llm``...)."""
    served: bool = False
    """Whether the recorded output was returned without running the step's code."""

    @property
    def step(self) -> str:
        """The step's name (:attr:`step_name`)."""
        return self.step_name

    @property
    def outcome(self) -> Outcome:
        """How the call was bound (:attr:`kind`)."""
        return self.kind


class UnusedRecording(Positional):
    """A recorded step no call asked for: Veval's ``(step_name, recorded_index)``, then its
    kind and input."""

    __positional__ = ("step_name", "recorded_index")

    step_name: str
    recorded_index: int
    kind: str = "custom"
    input: Any = None

    @property
    def step(self) -> str:
        """The step's name (:attr:`step_name`)."""
        return self.step_name

    @property
    def index(self) -> int:
        """Its position in the recording, from 0 (:attr:`recorded_index`)."""
        return self.recorded_index


class ReplayFidelity(BaseModel):
    """How closely a replay followed its recording.

    Built as Veval builds it, ``ReplayFidelity(recorded)``: the recorded steps, all unused
    until calls bind them; or with its fields by keyword."""

    bindings: list[ReplayBinding] = Field(default_factory=list)
    unused: list[UnusedRecording] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    """Live connections the network guard refused (each counts in :attr:`live`)."""

    def __init__(self, recorded: Iterable[UnusedRecording] | None = None, **data: Any) -> None:
        if recorded is not None:
            if "unused" in data:
                raise TypeError("ReplayFidelity() got both recorded and unused")
            data["unused"] = list(recorded)
        super().__init__(**data)

    @property
    def matched(self) -> int:
        return sum(1 for b in self.bindings if b.kind == "matched")

    @property
    def diverged(self) -> int:
        return sum(1 for b in self.bindings if b.kind == "diverged")

    @property
    def live(self) -> int:
        """Steps run live, plus connections the guard refused (they tried to go live)."""
        return sum(1 for b in self.bindings if b.kind == "live") + len(self.refused)

    @property
    def is_faithful(self) -> bool:
        """No call diverged, every recording was used (Veval's rule; steps run live do not
        count against it), and no connection went out."""
        return self.diverged == 0 and not self.unused and not self.refused


class CallSource(Protocol):
    """The HTTP-level side of the same replay (a ``RecordedCalls``), told about the steps
    served whole so the LLM calls recorded inside them are not served again."""

    def consume_within(self, recorded: Span) -> None: ...


@dataclass
class Replayer:
    """Binds the tracked calls of one run to one recording (thread-safe)."""

    recording: TraceRecord
    options: ReplayOptions
    fidelity: ReplayFidelity = field(default_factory=ReplayFidelity)
    errors: list[str] = field(default_factory=list)
    _steps: list[Span] = field(default_factory=list)
    _used: set[int] = field(default_factory=set)
    _calls_by_name: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _bound: dict[int, tuple[Span, Outcome]] = field(default_factory=dict)
    recorded_calls: CallSource | None = None
    """The HTTP-level source of the same replay, told about served subtrees."""

    def __post_init__(self) -> None:
        from scenarist.model.usage import is_captured_call

        # Calls the HTTP capture recorded replay at the HTTP layer (RecordedCalls), not here.
        self._steps = [s for s in self.recording.spans if not is_captured_call(s)]

    def serve(self, span: Span, recorded: Span, new_span_id: Callable[[], str]) -> None:
        """Fill the open ``span`` of a served call from its ``recorded`` step: what
        produced the output, and copies of the spans recorded inside it."""
        values = served_span_values(recorded)
        span.metadata.update(values.pop("metadata"))
        for name, value in values.items():
            setattr(span, name, value)
        span.children = served_subtree(recorded, new_span_id, span)

    def bound_step(self, span: Span) -> tuple[Span, Outcome] | None:
        """The recorded step a running (not served) span is bound to, and how."""
        return self._bound.get(id(span))

    def bind(
        self, name: str, kind: str, actual_input: Any, *, can_skip: bool, span: Span | None = None
    ) -> Decision:
        """Decide how the call ``name(actual_input)`` is served; record the binding.

        ``span`` is the replayed span of the call: when it runs rather than being served,
        LLM calls made inside it are answered from its bound recording's calls."""
        decision = self._bind(name, kind, actual_input, can_skip=can_skip)
        recorded = decision.recorded
        if recorded is None:
            return decision
        binding = self.fidelity.bindings[-1]
        if decision.serve:
            if self.recorded_calls is not None:
                self.recorded_calls.consume_within(recorded)
        elif span is not None:
            self._bound[id(span)] = (recorded, binding.kind)
        return decision

    def _bind(self, name: str, kind: str, actual_input: Any, *, can_skip: bool) -> Decision:
        with self._lock:
            ordinal = self._calls_by_name.get(name, 0)
            self._calls_by_name[name] = ordinal + 1
            same_name = [i for i, s in enumerate(self._steps) if s.name == name]
            candidates = [i for i in same_name if i not in self._used]
            recorded_llm = any(self._steps[i].kind == "llm" for i in same_name)
            if not candidates and self.options.live_model_steps and recorded_llm:
                # one more call of a model step than recorded: it runs live, as in Veval
                self._note(name, kind, "live", None, actual_input, served=False)
                return Decision(serve=False)
            if not candidates and self.options.on_missing == "live":
                return Decision(serve=False)  # runs live, bound to nothing (as in Veval)
            if not candidates:  # no binding: the call never happened (as in Veval)
                message = self._no_mock_message(name)
                self.errors.append(message)  # kept even if the agent swallows the error
                raise ReplayNoMockError(message)
            wanted = canonical(actual_input)
            exact = [i for i in candidates if canonical(self._steps[i].input) == wanted]
            sent = None if exact else as_sent(actual_input)
            if sent is not None and sent != wanted:
                exact = [i for i in candidates if canonical(self._steps[i].input) == sent]
            if exact:
                return self._use(exact[0], name, kind, actual_input, "matched", can_skip)
            policy = self.options.on_divergence
            nearest = candidates[0]  # Veval's: the next unused one in recorded order
            position = same_name[ordinal] if ordinal < len(same_name) else None
            if self.options.serve_same_position and position in candidates:
                nearest = position
            if self.options.live_model_steps and self._steps[nearest].kind == "llm":
                policy = "live"  # a model step runs live: a live step upstream changes its input
            if policy == "fail":
                self._note(name, kind, "diverged", nearest, actual_input, served=False)
                message = self._divergence_message(name, nearest, actual_input)
                self.errors.append(message)
                raise ReplayDivergenceError(message)
            if policy == "live":
                self._used.add(nearest)
                self._note(name, kind, "live", nearest, actual_input, served=False)
                return Decision(serve=False, recorded=self._steps[nearest])
            return self._use(nearest, name, kind, actual_input, "diverged", can_skip)

    def _use(
        self, index: int, name: str, kind: str, actual: Any, outcome: Outcome, can_skip: bool
    ) -> Decision:
        self._used.add(index)
        recorded = self._steps[index]
        live_model = self.options.live_model_steps and recorded.kind == "llm"
        serve = can_skip and self.options.serves_from_recording and not live_model
        if live_model and outcome == "matched":
            outcome = "live"
        self._note(name, kind, outcome, index, actual, served=serve)
        return Decision(serve=serve, output=recorded.output, recorded=recorded)

    def _note(
        self,
        name: str,
        kind: str,
        outcome: Outcome,
        index: int | None,
        actual: Any,
        *,
        served: bool,
    ) -> None:
        self.fidelity.bindings.append(
            ReplayBinding(
                step_name=name,
                kind=outcome,
                step_kind=kind,
                recorded_index=index,
                recorded_input=self._steps[index].input if index is not None else None,
                actual_input=actual,
                served=served,
            )
        )

    def finish(self) -> list[UnusedRecording]:
        """The recorded steps left unused; also stored on :attr:`fidelity`."""
        with self._lock:
            # A recording a failed call diverged from is reported with that call already.
            accounted = self._used | {b.recorded_index for b in self.fidelity.bindings}
            self.fidelity.unused = [
                UnusedRecording(step_name=s.name, recorded_index=i, kind=s.kind, input=s.input)
                for i, s in enumerate(self._steps)
                if i not in accounted and not self._inside_served(i)
            ]
            return self.fidelity.unused

    def _inside_served(self, index: int) -> bool:
        """A step recorded inside a served step: serving the parent skipped its code."""
        target = self._steps[index]
        served = {b.recorded_index for b in self.fidelity.bindings if b.served}
        parent_id = target.parent_id
        by_id = {s.span_id: i for i, s in enumerate(self._steps)}
        while parent_id is not None:
            parent_index = by_id.get(parent_id)
            if parent_index is None:
                return False
            if parent_index in served:
                return True
            parent_id = self._steps[parent_index].parent_id
        return False

    def unused_message(self) -> str:
        """Veval's failure for recorded steps the replay never called (1-based positions)."""
        unused = self.fidelity.unused
        names = ", ".join(f"'{u.step}' (recorded step {u.index + 1})" for u in unused)
        return (
            f"Replay never called {len(unused)} recorded step(s) from trace "
            f"{self.recording.trace_id}: {names}. The agent skipped part of the recorded run, "
            "so its assertions may be passing on a path the recording does not cover."
        )

    def no_live_step_message(self) -> str | None:
        """Veval's failure for a replay with live model steps in which none ran live."""
        if self.fidelity.live > 0:
            return None
        return (
            f"Live replay of trace {self.recording.trace_id} ran no step live: none of the "
            "steps it called was recorded as type 'llm', so every output came from the "
            "recording and a prompt change could not show up. Mark model steps with "
            'set_meta("type", "llm") and record a new trace, or replay in mocked mode.'
        )

    def _no_mock_message(self, name: str) -> str:
        """Veval's text: the distinct names of the recorded steps left, in recorded order."""
        remaining = [s.name for i, s in enumerate(self._steps) if i not in self._used]
        available = ", ".join(dict.fromkeys(remaining))
        if self.options.live_model_steps:
            return (
                f"Live replay: step '{name}' has no recording to serve, and only steps "
                f"recorded as 'llm' run live. Available steps: {available}. Running it could "
                "have reached a real system."
            )
        return (
            f"Replay mode: no mock output for step '{name}'. Available steps: {available}. "
            "This would have made a real LLM call."
        )

    def _divergence_message(self, name: str, index: int, actual: Any) -> str:
        recorded = json.dumps(to_json_value(self._steps[index].input), indent=2, sort_keys=True)
        now = json.dumps(to_json_value(actual), indent=2, sort_keys=True)
        diff = "\n".join(
            difflib.unified_diff(
                recorded.splitlines(), now.splitlines(), "recorded", "actual", lineterm=""
            )
        )
        return (
            f"Replay diverged at step '{name}': its input differs from the recording "
            f"(trace {self.recording.trace_id}, recorded step {index + 1}).\n{diff}\n"
            "Re-record the trace, or replay with on_divergence='serve' or 'live'."
        )


def served_span_values(recorded: Span) -> dict[str, Any]:
    """Fields a served span takes from its recording: its kind, model and token usage (what
    produced the output), the recorded cost and duration kept aside, nothing spent now."""
    metadata = {
        "_source": "replay",
        "recorded_cost_usd": recorded.cost_usd,
        "recorded_tokens_in": recorded.tokens_in,
        "recorded_tokens_out": recorded.tokens_out,
        "recorded_duration_ms": recorded.duration_ms,
        "recorded_model": recorded.model,
    }
    return {
        "kind": recorded.kind,
        "model": recorded.model,
        "tokens_in": recorded.tokens_in,
        "tokens_out": recorded.tokens_out,
        "cost_usd": None if recorded.cost_usd is None else 0.0,
        "metadata": metadata,
    }


def served_subtree(recorded: Span, new_id: Callable[[], str], parent: Span) -> list[Span]:
    """Copies of the spans recorded inside ``recorded``, for the served ``parent``: steps
    as served steps, captured LLM calls marked ``replayed`` (cost kept as
    ``recorded_cost_usd``), at the parent's time, spending nothing."""
    from scenarist.model.usage import RECORDED_COST_KEY, is_captured_call

    copies: list[Span] = []
    for child in recorded.children:
        if is_captured_call(child):
            metadata = {**child.metadata, "replayed": True, "_source": "replay"}
            metadata[RECORDED_COST_KEY] = child.cost_usd
            metadata["recorded_duration_ms"] = child.duration_ms
            update: dict[str, Any] = {
                "metadata": metadata,
                "cost_usd": None if child.cost_usd is None else 0.0,
            }
        else:
            values = served_span_values(child)
            update = {**values, "metadata": {**child.metadata, **values["metadata"]}}
        copy = child.model_copy(
            update={
                **update,
                "span_id": new_id(),
                "parent_id": parent.span_id,
                "started_at": parent.started_at,
                "ended_at": parent.started_at,
                "duration_ms": 0.0,
                "children": [],
            }
        )
        copy.children = served_subtree(child, new_id, copy)
        copies.append(copy)
    return copies


class ReplayResult(Positional):
    """How a replay went: verdict, failures, the replayed run and its fidelity report.

    Veval's fields come first, in Veval's order (``ReplayResult(failures, replayed_context,
    output, started_at, completed_at, status, error, recording_diff, fidelity)``); ours
    follow: the recording's ``trace_id`` and the replayed run's ``replayed_record``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    __positional__ = (
        "failures",
        "replayed_context",
        "output",
        "started_at",
        "completed_at",
        "status",
        "error",
        "recording_diff",
        "fidelity",
    )

    failures: list[str] = Field(default_factory=list)
    replayed_context: Any = Field(default=None, exclude=True, repr=False)
    output: Any = None
    started_at: datetime | None = None
    """When the replayed run started, ``None`` if it never ran."""
    completed_at: datetime | None = None
    """When the replayed run ended, ``None`` if it never ran."""
    status: str = "success"
    error: str | None = None
    recording_diff: SnapshotDiff | None = None
    """The replayed steps against the recorded ones, when ``compare_with_recording`` asked."""
    fidelity: ReplayFidelity | None = None
    """How each call was bound to the recording; ``None`` for a replay that served
    nothing (``mock_llm_responses`` and ``live_model_steps`` both off), as in Veval."""
    trace_id: str = ""
    """The recording's trace id."""
    replayed_record: TraceRecord | None = Field(default=None, repr=False)
    certificate: ReplayCertificate | None = None
    """The replay certificate of its LLM calls (those of the replayed trace, and those
    made outside the agent's context that this replay served or refused)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """No failure (Veval's rule)."""
        return not self.failures
