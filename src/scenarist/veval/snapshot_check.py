"""``MatchesSnapshot``: the trace's step sequence has not drifted from a saved baseline.

Built by ``TraceAssert.matches_snapshot``. The baseline is either held inline (a
:class:`~scenarist.replay.SnapshotData`, written to JSON with the check, so a suite file
carries its own baseline) or named, and then looked up when the check runs: through the
source given to the factory (any object with Veval's ``get_snapshot_async(name)``: a
client, the test double, one of your own), or in the store given, else in the default
client's store (``scenarist.get_client()``). A bound source or store is not part of the
check's JSON; a check read back from JSON looks the name up in the default client's store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, PrivateAttr, StrictInt, model_validator

from scenarist.checks._values import optional
from scenarist.checks.base import Check
from scenarist.checks.fn import omits_callables
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace
from scenarist.replay.snapshot_diff import SnapshotOptions
from scenarist.replay.snapshots import SnapshotData, compare_snapshots

if TYPE_CHECKING:
    from scenarist.store.base import Store

__all__ = ["MatchesSnapshot"]

PREFIX = "MatchesSnapshot"

SnapshotLookup = Callable[[str], Awaitable[Any]]
"""``lookup(name)``: the snapshot saved as ``name`` (or ``None``), read when the check runs."""


@Check.register("trace_matches_snapshot")
class MatchesSnapshot(Check):
    """The spans (every interaction's, or ``interaction``'s) match a snapshot's steps.

    Exactly one of ``snapshot`` (inline) and ``snapshot_name`` (looked up at run time).
    Drift is a FAIL whose message is the diff's summary. A name with no saved snapshot,
    or a source that raises, FAILs too, as in Veval (a missing baseline never passes
    silently), with Veval's messages: ``no snapshot named '<name>'. ...`` and ``could not
    load snapshot '<name>' — <the error's text>`` (the error's type is in ``details``).
    """

    snapshot: SnapshotData | None = optional()
    snapshot_name: str | None = optional()
    options: SnapshotOptions = Field(default_factory=SnapshotOptions)
    interaction: StrictInt | None = optional()
    _lookup: SnapshotLookup | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _one_baseline(self) -> Self:
        if (self.snapshot is None) == (self.snapshot_name is None):
            got = "both" if self.snapshot is not None else "neither"
            raise ValueError(
                "give exactly one of 'snapshot' (a SnapshotData) or 'snapshot_name' "
                f"(a saved snapshot's name), got {got}"
            )
        if self.snapshot_name == "":
            raise ValueError("snapshot_name must not be empty")
        return self

    def bind_store(self, store: Store | None) -> Self:
        """Look ``snapshot_name`` up in ``store`` instead of the default client's."""
        self._lookup = None if store is None else store.get_snapshot
        return self

    def bind_source(self, source: Any) -> Self:
        """Look ``snapshot_name`` up with ``source.get_snapshot_async(name)`` (Veval's
        interface: a client, the test double, or any object that has that method)."""
        self._lookup = source.get_snapshot_async
        return self

    # A ``normalize`` function cannot be written to JSON: say so with our own exception,
    # not pydantic's wrapper around it (the same contract as ``FnCheck``).

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; JSON mode raises ``SerializationError``
        when the options hold a ``normalize`` function."""
        error = self.options.unserialisable()
        if error and kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            raise error
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """As :meth:`pydantic.BaseModel.model_dump_json`; raises ``SerializationError``
        when the options hold a ``normalize`` function."""
        error = self.options.unserialisable()
        if error and not omits_callables(kwargs.get("context")):
            raise error
        return super().model_dump_json(*args, **kwargs)

    @property
    def baseline_label(self) -> str | None:
        """The snapshot's name as messages show it."""
        return self.snapshot_name or (self.snapshot.name if self.snapshot else None)

    async def _baseline(self) -> SnapshotData | CheckResult:
        if self.snapshot is not None:
            return self.snapshot
        name = self.snapshot_name or ""
        details = {"snapshot": name}
        try:
            lookup = self._lookup
            if lookup is None:
                from scenarist.veval.default_client import get_client

                lookup = get_client().store.get_snapshot
            found = await lookup(name)
        except Exception as exc:  # a baseline that cannot be read fails, as in Veval
            return CheckResult.failure(
                f"{PREFIX}: could not load snapshot '{name}' — {exc}",
                details={**details, "error_type": type(exc).__name__},
            )
        if found is None:
            return CheckResult.failure(
                f"{PREFIX}: no snapshot named '{name}'. Save one with save_snapshot_async first.",
                details=details,
            )
        if isinstance(found, dict):  # a source that answers the snapshot's JSON
            return SnapshotData.model_validate(found)
        if not isinstance(found, SnapshotData):
            return CheckResult.failure(
                f"{PREFIX}: could not load snapshot '{name}' — the source answered "
                f"{type(found).__name__}, not a SnapshotData",
                details=details,
            )
        return found

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Compare the trace's steps with the baseline."""
        n, index = len(trace.interactions), self.interaction
        if index is not None and not -n <= index < n:
            return CheckResult.error(
                f"{PREFIX}: no interaction at index {index}; the trace has {n} interaction(s).",
                details={"interaction": index, "interactions": n},
            )
        baseline = await self._baseline()
        if isinstance(baseline, CheckResult):
            return baseline
        current = SnapshotData.from_trace(trace, interaction=index)
        diff = compare_snapshots(baseline, current, self.options)
        label = self.baseline_label
        details: dict[str, Any] = {
            "snapshot": label,
            "baseline_steps": diff.baseline_steps,
            "current_steps": diff.current_steps,
            "changes": [change.model_dump(mode="json") for change in diff.changes],
        }
        if index is not None:
            details["interaction"] = index
        if diff.has_changes:
            return CheckResult.failure(f"{PREFIX}: {diff.summary(label)}", details=details)
        return CheckResult.success(f"{PREFIX}: {diff.summary(label)}", details=details)
