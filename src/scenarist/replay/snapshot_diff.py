"""What changed between a snapshot and a later run: options, changes, alignment, summary.

:func:`diff_steps` is the one comparison; :func:`~scenarist.replay.snapshots.compare_snapshots`
and ``TraceAssert.matches_snapshot`` call it. The alignment itself lives in
:mod:`scenarist.replay._align`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_serializer,
)

from scenarist.checks.fn import omits_callables
from scenarist.errors import SerializationError
from scenarist.replay._align import Item, align, canonical, line_diff, prepare

if TYPE_CHECKING:
    from scenarist.replay.snapshots import SnapshotStep

__all__ = ["SnapshotAlignmentRow", "SnapshotChange", "SnapshotDiff", "SnapshotOptions"]

ChangeKind = Literal["added", "removed", "moved", "input_changed", "output_changed"]
RowStatus = Literal["same", "changed", "added", "removed", "moved"]

Normalizer = Callable[[str, Any], Any]
"""``normalize(step_name, value) -> value``: rewrite a value before it is compared."""


class SnapshotOptions(BaseModel):
    """What counts as drift.

    ``compare_inputs`` / ``compare_outputs`` choose the step values compared (outputs are
    off by default: they are what LLMs vary most). ``ignore_steps`` leaves steps with those
    names out entirely. ``ignore_fields`` drops keys from compared values: a plain name at
    any depth, a dotted path (``"request.id"``) from the value's root. ``normalize(step_name,
    value)`` rewrites each compared value (after ``ignore_fields``), for ids or dates that
    change on every run; being a Python function it cannot be written to JSON, so a check
    that uses it cannot be saved in a suite file (dumping raises ``SerializationError``).
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    compare_inputs: bool = True
    compare_outputs: bool = False
    ignore_steps: list[str] = Field(default_factory=list)
    ignore_fields: list[str] = Field(default_factory=list)
    normalize: Annotated[
        Normalizer | None,
        WithJsonSchema({"description": "A Python callable; it cannot be written to JSON."}),
    ] = Field(default=None, exclude=True)

    @field_validator("ignore_steps", "ignore_fields", mode="before")
    @classmethod
    def _sorted_if_set(cls, value: Any) -> Any:
        # Veval takes sets; a sorted list dumps the same way every time.
        return sorted(value) if isinstance(value, set | frozenset) else value

    def unserialisable(self) -> SerializationError | None:
        """The error to raise when writing these options to JSON, or ``None`` if they can be."""
        if self.normalize is None:
            return None
        fn = getattr(self.normalize, "__name__", None) or repr(self.normalize)
        return SerializationError(
            f"SnapshotOptions.normalize is the Python callable {fn!r}, which cannot be "
            "written to JSON; drop what varies with ignore_fields instead, or keep this "
            "comparison in Python code"
        )

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; JSON mode raises ``SerializationError``
        when ``normalize`` is set."""
        error = self.unserialisable()
        if error and kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            raise error
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """As :meth:`pydantic.BaseModel.model_dump_json`; raises ``SerializationError``
        when ``normalize`` is set."""
        error = self.unserialisable()
        if error and not omits_callables(kwargs.get("context")):
            raise error
        return super().model_dump_json(*args, **kwargs)

    @model_serializer(mode="wrap")
    def _refuse_json_with_callable(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        # Nested in another model (pydantic wraps the error, but it still refuses).
        error = self.unserialisable()
        if error is not None and info.mode_is_json() and not omits_callables(info.context):
            raise error
        data: dict[str, Any] = handler(self)
        return data


class SnapshotChange(BaseModel):
    """One difference: a step ``added``, ``removed`` or ``moved``, or its
    ``input_changed`` / ``output_changed`` (with ``diff``, a compact line diff).

    Indices are positions in the baseline's and the current run's step lists (pre-order,
    from 0); ``None`` on the side where the step is absent. ``expected_index`` and
    ``actual_index`` are Veval's names for them.
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    kind: ChangeKind
    step_name: str
    baseline_index: int | None = None
    current_index: int | None = None
    diff: str | None = None

    @property
    def expected_index(self) -> int | None:
        return self.baseline_index

    @property
    def actual_index(self) -> int | None:
        return self.current_index

    def describe(self) -> str:
        """The change on one line (without its diff)."""
        name, before, after = self.step_name, self.baseline_index, self.current_index
        if self.kind == "added":
            return f"+ added '{name}' at index {after}"
        if self.kind == "removed":
            return f"- removed '{name}' (was index {before})"
        if self.kind == "moved":
            return f"~ moved '{name}' from index {before} to {after}"
        where = f"index {after}" if before == after else f"index {after}, was {before}"
        field = "input" if self.kind == "input_changed" else "output"
        return f"~ {field} of '{name}' changed ({where})"


class SnapshotAlignmentRow(BaseModel):
    """One row of the side-by-side view: a baseline step, a current step, or both."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    step_name: str
    baseline_index: int | None
    current_index: int | None
    status: RowStatus
    input_changed: bool = False
    output_changed: bool = False


class SnapshotDiff(BaseModel):
    """The result of a comparison: the changes, the alignment rows, and the step counts."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    changes: list[SnapshotChange] = Field(default_factory=list)
    rows: list[SnapshotAlignmentRow] = Field(default_factory=list)
    baseline_steps: int = 0
    current_steps: int = 0

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def summary(self, name: str | None = None, *, max_diff_lines: int = 8) -> str:
        """A readable account: a headline, then one line per change and its diff lines.

        Each diff is cut after ``max_diff_lines`` lines (the full one is on the change).
        """
        title = f"Snapshot '{name}'" if name else "Snapshot"
        if not self.changes:
            return f"{title}: no changes ({_count(self.baseline_steps, 'step')})"
        lines = [
            f"{title}: {_count(len(self.changes), 'change')} "
            f"({_count(self.baseline_steps, 'step')} before, {self.current_steps} now)"
        ]
        for change in self.changes:
            lines.append(f"  {change.describe()}")
            diff = change.diff.splitlines() if change.diff else []
            lines += [f"      {line}" for line in diff[:max_diff_lines]]
            if len(diff) > max_diff_lines:
                lines.append(f"      ... {_count(len(diff) - max_diff_lines, 'more line')}")
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def diff_steps(
    baseline: Sequence[SnapshotStep], current: Sequence[SnapshotStep], options: SnapshotOptions
) -> SnapshotDiff:
    """Align ``current`` against ``baseline`` and list the changes (see ``_align``)."""
    values: dict[tuple[int, int], tuple[Any, Any]] = {}  # (side, index) -> (input, output)

    def items(side: int, steps: Sequence[SnapshotStep]) -> list[Item]:
        out = []
        for index, step in enumerate(steps):
            if step.name in options.ignore_steps:
                continue
            pair = (
                _value(options, options.compare_inputs, step.name, step.input),
                _value(options, options.compare_outputs, step.name, step.output),
            )
            values[side, index] = pair
            out.append(Item(index, step.name, canonical(pair)))
        return out

    changes: list[SnapshotChange] = []
    rows: list[SnapshotAlignmentRow] = []
    for op in align(items(0, baseline), items(1, current)):
        where = {
            "step_name": op.name,
            "baseline_index": None if op.baseline is None else op.baseline.index,
            "current_index": None if op.current is None else op.current.index,
        }
        if op.kind != "match":
            changes.append(SnapshotChange(kind=op.kind, **where))
            rows.append(SnapshotAlignmentRow(status=op.kind, **where))
            continue
        # a match has both sides
        assert op.baseline is not None
        assert op.current is not None
        old, new = values[0, op.baseline.index], values[1, op.current.index]
        changed = {
            "input_changed": canonical(old[0]) != canonical(new[0]),
            "output_changed": canonical(old[1]) != canonical(new[1]),
        }
        if changed["input_changed"]:
            changes.append(
                SnapshotChange(kind="input_changed", diff=line_diff(old[0], new[0]), **where)
            )
        if changed["output_changed"]:
            changes.append(
                SnapshotChange(kind="output_changed", diff=line_diff(old[1], new[1]), **where)
            )
        status: RowStatus = "changed" if any(changed.values()) else "same"
        rows.append(SnapshotAlignmentRow(status=status, **where, **changed))
    return SnapshotDiff(
        changes=changes, rows=rows, baseline_steps=len(baseline), current_steps=len(current)
    )


_UNCOMPARED = None


def _value(options: SnapshotOptions, compared: bool, step_name: str, value: Any) -> Any:
    if not compared:
        return _UNCOMPARED
    return prepare(step_name, value, options.ignore_fields, options.normalize)
