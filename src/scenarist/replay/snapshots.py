"""Snapshots: a run's step sequence kept as a baseline, and diffs against it.

A :class:`SnapshotData` is the ordered list of a run's steps (name, kind, input, output,
status, depth), taken from a stored :class:`~scenarist.tracing.TraceRecord`, a live
:class:`~scenarist.tracing.RunContext` or a :class:`~scenarist.model.trace.Trace`.
:func:`compare_snapshots` aligns a later run against it and lists what drifted: steps
added, removed or moved, inputs and (optionally) outputs changed, each with a compact line
diff. ``TraceAssert.matches_snapshot`` turns a drift into a failed check.

Storage goes through a :class:`~scenarist.store.Store`: :func:`save_snapshot_async`,
:func:`get_snapshot_async`, :func:`load_snapshot_async` and :func:`compare_snapshot_async`
take the store first; each has a sync twin without the suffix (Veval's naming).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import AliasChoices, ConfigDict, Field, model_validator

from scenarist._jsonable import to_json_value
from scenarist._sync import run_sync
from scenarist.errors import UserError
from scenarist.model._positional import Positional
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span, Trace
from scenarist.model.usage import is_captured_call
from scenarist.replay.snapshot_diff import (
    SnapshotAlignmentRow,
    SnapshotChange,
    SnapshotDiff,
    SnapshotOptions,
    SnapshotStep,
    diff_steps,
)
from scenarist.tracing.context import RunContext

__all__ = [
    "SnapshotAlignmentRow",
    "SnapshotChange",
    "SnapshotData",
    "SnapshotDiff",
    "SnapshotOptions",
    "SnapshotSource",
    "SnapshotStep",
    "compare_snapshot",
    "compare_snapshot_async",
    "compare_snapshots",
    "get_snapshot",
    "get_snapshot_async",
    "load_snapshot",
    "load_snapshot_async",
    "save_snapshot",
    "save_snapshot_async",
]


def _empty(value: Any) -> bool:
    return value is None or value == []


class SnapshotData(Positional):
    """A named baseline: the steps of one run, in pre-order (parents before children).

    ``trace_id`` is the run it was taken from (Veval calls it ``source_trace_id``, which
    is accepted on input and readable). ``schema_version`` is the format of this
    document. Veval's other fields: ``id`` and ``version`` (as a server numbered the
    baseline; ``None`` for one built here), and ``step_count``, a stored number as in
    Veval: set to the number of steps when a snapshot is taken from a run, 0 when not
    given. ``names_only`` (given as Veval's ``step_order``) holds the step names of a
    names-only baseline (Veval's legacy snapshots: no inputs or outputs, compared on the
    sequence alone). ``step_order`` and ``step_names`` read the steps' names; the latter is
    ignored on input. A document of schema version 1 (when scenarist derived the count and
    did not store it) is read with the count of its steps.
    """

    model_config = ConfigDict(defer_build=True, populate_by_name=True)
    __positional__ = (
        "id",
        "name",
        "source_trace_id",
        "version",
        "created_at",
        "steps",
        "step_names",
        "step_order",
        "step_count",
    )

    schema_version: int = 2
    id: str | None = Field(default=None, exclude_if=_empty)
    name: str | None = None
    trace_id: str | None = Field(
        default=None, validation_alias=AliasChoices("trace_id", "source_trace_id")
    )
    version: int | None = Field(default=None, exclude_if=_empty)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    steps: list[SnapshotStep] = Field(default_factory=list)
    names_only: list[str] = Field(
        default_factory=list,
        validation_alias=AliasChoices("names_only", "step_order"),
        exclude_if=_empty,
    )
    step_count: int = 0

    @model_validator(mode="before")
    @classmethod
    def _veval_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given_names = data.get("step_names") or []
        data = {k: v for k, v in data.items() if k != "step_names"}
        if data.get("schema_version") == 1 and data.get("step_count") is None:
            named = data.get("steps") or data.get("names_only") or data.get("step_order")
            data["step_count"] = len(named) if isinstance(named, list) else 0
            data["schema_version"] = 2
        if data.get("step_count") is None:
            data.pop("step_count", None)
        if data.get("created_at") is None:
            data.pop("created_at", None)
        if not data.get("steps") and not data.get("step_order") and not data.get("names_only"):
            names = [n for n in given_names if isinstance(n, str)]
            if names:  # a names-only baseline that gave its names only as step_names
                data["names_only"] = names
        if data.get("steps"):  # with content, the step names come from the steps
            data.pop("step_order", None)
            data.pop("names_only", None)
        return data

    @property
    def source_trace_id(self) -> str | None:
        """Veval's name for :attr:`trace_id`."""
        return self.trace_id

    @property
    def has_step_content(self) -> bool:
        """Whether the steps carry inputs and outputs (not a names-only baseline)."""
        return bool(self.steps)

    def ordered_steps(self) -> list[SnapshotStep]:
        """The steps in order; a names-only baseline's as steps without content."""
        if self.steps or not self.names_only:
            return list(self.steps)
        return [SnapshotStep(name=name) for name in self.names_only]

    @property
    def step_names(self) -> list[str]:
        """The step names, in order."""
        return [step.name for step in self.ordered_steps()]

    @property
    def step_order(self) -> list[str]:
        """Veval's name for the step names in order."""
        return self.step_names

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SnapshotData:
        """A snapshot from its JSON: ours, or Veval's (``source_trace_id``, ``type``...)."""
        if not isinstance(data, dict):
            raise TypeError(f"SnapshotData.from_dict expects a dict, got {type(data).__name__}")
        return cls.model_validate(data)

    # -- building ---------------------------------------------------------------------

    @classmethod
    def from_spans(
        cls, roots: Iterable[Span], *, name: str | None = None, trace_id: str | None = None
    ) -> SnapshotData:
        """The snapshot of span trees (``roots`` and everything under them, pre-order).

        An LLM call the capture recorded inside a tracked step is left out: the step stands
        for it (as in Veval, which sees the steps only, and in ``max_steps``); a call made
        outside any step is a step of the snapshot (an SDK agent without tracked steps)."""
        steps: list[SnapshotStep] = []

        def visit(span: Span, depth: int, parent: int | None) -> None:
            if parent is not None and is_captured_call(span):
                return
            here = len(steps)
            steps.append(
                SnapshotStep(
                    name=span.name,
                    kind=span.kind,
                    input=to_json_value(span.input),
                    output=to_json_value(span.output),
                    status=span.status,
                    depth=depth,
                    parent_index=parent,
                )
            )
            for child in span.children:
                visit(child, depth + 1, here)

        for root in roots:
            visit(root, 0, None)
        return cls(name=name, trace_id=trace_id, steps=steps, step_count=len(steps))

    @classmethod
    def from_record(cls, record: TraceRecord, *, name: str | None = None) -> SnapshotData:
        """The snapshot of a recorded run."""
        return cls.from_spans(record.steps, name=name, trace_id=record.trace_id)

    @classmethod
    def from_context(cls, ctx: RunContext, *, name: str | None = None) -> SnapshotData:
        """The snapshot of a run in progress or just finished (Veval's ``from_context``)."""
        return cls.from_spans(ctx.recorder.roots, name=name, trace_id=ctx.trace_id)

    @classmethod
    def from_trace(
        cls,
        trace: Trace[Any, Any] | TraceRecord,
        *,
        interaction: int | None = None,
        name: str | None = None,
    ) -> SnapshotData:
        """The snapshot of every interaction's spans, or of one (``interaction=-1``).

        The trace id is taken from the interactions' metadata (where agent runs keep it)
        when they agree on one. An index out of range raises ``IndexError``.
        """
        if isinstance(trace, TraceRecord):  # Veval's from_trace(TraceData)
            return cls.from_record(trace, name=name)
        log = trace.interactions
        chosen = list(log) if interaction is None else [log[interaction]]
        ids = {i.metadata.get("trace_id") for i in chosen}
        trace_id = ids.pop() if len(ids) == 1 else None
        roots = [root for i in chosen for root in i.spans]
        return cls.from_spans(
            roots, name=name, trace_id=trace_id if isinstance(trace_id, str) else None
        )

    @classmethod
    def from_source(cls, source: SnapshotSource, *, name: str | None = None) -> SnapshotData:
        """A snapshot of any supported source; a ``SnapshotData`` is returned as it is
        (renamed when ``name`` is given)."""
        if isinstance(source, SnapshotData):
            return source if name is None else source.model_copy(update={"name": name})
        if isinstance(source, TraceRecord):
            return cls.from_record(source, name=name)
        if isinstance(source, RunContext):
            return cls.from_context(source, name=name)
        if isinstance(source, Trace):
            return cls.from_trace(source, name=name)
        raise UserError(
            "a snapshot is taken from a SnapshotData, TraceRecord, RunContext or Trace "
            f"(or a stored trace id when saving), got {type(source).__name__}: {source!r}"
        )


SnapshotSource = SnapshotData | TraceRecord | RunContext | Trace[Any, Any]
"""What a snapshot can be taken from (saving also accepts a stored trace id)."""


def compare_snapshots(
    snapshot: SnapshotData,
    current: SnapshotSource,
    options: SnapshotOptions | None = None,
) -> SnapshotDiff:
    """How ``current`` (a run, a trace or another snapshot) drifted from ``snapshot``.

    Local: nothing is read from or written to a store.

    >>> base = SnapshotData(steps=[SnapshotStep(name="plan"), SnapshotStep(name="answer")])
    >>> now = SnapshotData(steps=[SnapshotStep(name="answer")])
    >>> print(compare_snapshots(base, now).summary("demo"))
    Snapshot 'demo': 1 change(s)
      - removed 'plan' (was at position 0)
    """
    if not isinstance(snapshot, SnapshotData):
        raise UserError(
            f"compare_snapshots expects a SnapshotData baseline first, got "
            f"{type(snapshot).__name__}; take one with SnapshotData.from_source(...)"
        )
    after = SnapshotData.from_source(current)
    options = options or SnapshotOptions()
    with_content = snapshot.has_step_content  # else a legacy (names-only) baseline
    if not with_content:  # a names-only baseline: only the sequence can be compared
        options = options.model_copy(update={"compare_inputs": False, "compare_outputs": False})
    return diff_steps(
        snapshot.ordered_steps(), after.ordered_steps(), options, compared_content=with_content
    )


# -- through a store ------------------------------------------------------------------


class SnapshotStore(Protocol):
    """What the snapshot functions need of a store (every :class:`~scenarist.store.Store`
    has it): the replay layer sits below the stores and names only this much of them."""

    async def get_trace(self, trace_id: str) -> TraceRecord | None: ...

    async def save_snapshot(self, name: str, snapshot: SnapshotData) -> None: ...

    async def get_snapshot(self, name: str) -> SnapshotData | None: ...


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise UserError(f"a snapshot name must be a non-empty string, got {name!r}")
    return name


async def save_snapshot_async(
    store: SnapshotStore, name: str, source: str | SnapshotSource
) -> SnapshotData:
    """Take a snapshot of ``source`` and keep it in ``store`` as ``name`` (replacing one).

    ``source`` is a stored trace id, a ``RunContext``, a ``TraceRecord``, a ``Trace`` or
    a ``SnapshotData``. A trace id that is not in the store raises ``UserError``.
    """
    _check_name(name)
    if isinstance(source, str):
        record = await store.get_trace(source)
        if record is None:
            raise UserError(
                f"cannot save snapshot {name!r}: no trace {source!r} in the store; "
                "record the run first (client.run_async), or pass its RunContext or "
                "TraceRecord instead of the id"
            )
        source = record
    snapshot = SnapshotData.from_source(source, name=name)
    await store.save_snapshot(name, snapshot)
    return snapshot


async def get_snapshot_async(store: SnapshotStore, name: str) -> SnapshotData | None:
    """The snapshot saved as ``name``, or ``None``."""
    return await store.get_snapshot(_check_name(name))


async def load_snapshot_async(store: SnapshotStore, trace_id: str) -> SnapshotData | None:
    """A snapshot of the stored run ``trace_id`` (not saved), or ``None`` if there is none."""
    record = await store.get_trace(trace_id)
    return None if record is None else SnapshotData.from_record(record)


def missing_snapshot_message(name: str) -> str:
    """What to say when no snapshot is saved under ``name``, with how to make one."""
    return (
        f"no snapshot named {name!r} in the store; create it from a good run with "
        f"save_snapshot(store, {name!r}, trace_id_or_ctx) "
        f"(or client.save_snapshot({name!r}, trace_id_or_ctx))"
    )


async def compare_snapshot_async(
    store: SnapshotStore,
    name: str,
    current: SnapshotSource,
    options: SnapshotOptions | None = None,
) -> SnapshotDiff:
    """Compare ``current`` with the snapshot saved as ``name``; ``UserError`` if none."""
    snapshot = await get_snapshot_async(store, name)
    if snapshot is None:
        raise UserError(missing_snapshot_message(name))
    return compare_snapshots(snapshot, current, options)


def save_snapshot(store: SnapshotStore, name: str, source: str | SnapshotSource) -> SnapshotData:
    """Sync twin of :func:`save_snapshot_async`."""
    return run_sync(save_snapshot_async, store, name, source)


def get_snapshot(store: SnapshotStore, name: str) -> SnapshotData | None:
    """Sync twin of :func:`get_snapshot_async`."""
    return run_sync(get_snapshot_async, store, name)


def load_snapshot(store: SnapshotStore, trace_id: str) -> SnapshotData | None:
    """Sync twin of :func:`load_snapshot_async`."""
    return run_sync(load_snapshot_async, store, trace_id)


def compare_snapshot(
    store: SnapshotStore,
    name: str,
    current: SnapshotSource,
    options: SnapshotOptions | None = None,
) -> SnapshotDiff:
    """Sync twin of :func:`compare_snapshot_async`."""
    return run_sync(compare_snapshot_async, store, name, current, options)
