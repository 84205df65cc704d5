"""What changed between a snapshot and a later run: options, changes, alignment, summary.

:func:`diff_steps` is the one comparison; :func:`~scenarist.replay.snapshots.compare_snapshots`
and ``TraceAssert.matches_snapshot`` call it. The alignment itself lives in
:mod:`scenarist.replay._align`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_serializer,
    model_validator,
)

from scenarist.checks.fn import omits_callables
from scenarist.errors import SerializationError
from scenarist.model._positional import Positional
from scenarist.replay._align import (
    Item,
    Op,
    align,
    align_names,
    canonical,
    line_diff,
    pair_by_name,
    prepare,
)
from scenarist.replay._text_form import cap_lines, text_diff, text_form

__all__ = [
    "SnapshotAlignmentRow",
    "SnapshotChange",
    "SnapshotDiff",
    "SnapshotOptions",
    "SnapshotStep",
]


class SnapshotStep(Positional):
    """One step of a snapshot: what a span was, without its timing and cost.

    ``input`` and ``output`` are stored as JSON data (see :mod:`scenarist._jsonable`), so a
    snapshot survives a round trip through a file or the store unchanged. ``depth`` is 0
    for a top-level step; ``parent_index`` is the position of the enclosing step.
    ``kind`` also accepts, and is readable as, Veval's field name ``type``. A step built
    without one has none (``None``, Veval's default); a snapshot taken from a run keeps
    each span's kind. The kind is kept and shown, never compared.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)
    __positional__ = ("name", "type", "input", "output")

    name: str = ""
    kind: str | None = Field(default=None, validation_alias=AliasChoices("kind", "type"))
    input: Any = None
    output: Any = None
    status: str = "success"
    depth: int = 0
    parent_index: int | None = None

    @property
    def type(self) -> str | None:
        """Veval's name for :attr:`kind`."""
        return self.kind


ChangeKind = Literal["Added", "Removed", "Moved", "InputChanged", "OutputChanged"]
RowStatus = Literal["same", "changed", "added", "removed", "moved"]

Normalizer = Callable[[str, Any], Any]
"""``normalize(step_name, value) -> value``: rewrite a value before it is compared."""


# The kinds scenarist wrote before it used Veval's: read (from stored data) as Veval's.
_OLD_CHANGE_KINDS = {
    "added": "Added",
    "removed": "Removed",
    "moved": "Moved",
    "input_changed": "InputChanged",
    "output_changed": "OutputChanged",
}


class SnapshotOptions(Positional):
    """What counts as drift.

    ``compare_inputs`` / ``compare_outputs`` choose the step values compared (outputs are
    off by default: they are what LLMs vary most). ``ignore_steps`` leaves steps with those
    names out entirely (the others are numbered as if they were not there, as in Veval).
    ``ignore_fields`` drops keys from compared values: a plain name at any depth, a dotted
    path (``"request.id"``) from the value's root. ``normalize(step_name, value)`` rewrites
    each compared value (after ``ignore_fields``), for ids or dates that change on every
    run; being a Python function it cannot be written to JSON, so a check that uses it
    cannot be saved in a suite file (dumping raises ``SerializationError``).

    Two options keep scenarist's own ways, beyond Veval's (see ``docs/design/snapshots.md``):

    - ``value_format``: ``"text"`` (Veval's, the default) shows and compares each value as
      readable text (``key: value`` lines), so the string ``"1"`` equals the number ``1``;
      ``"json"`` compares canonical JSON, types kept apart, and shows that JSON.
    - ``alignment``: ``"names"`` (Veval's, the default) aligns on step names alone and
      reports a step found elsewhere as ``Moved`` whatever its content; ``"content"``
      prefers, among equally long alignments, the one that matches identical values (with
      a repeated step, the call whose input changed is the one reported), and moves only a
      step whose compared values are unchanged (a single ``moved`` row).
    """

    model_config = ConfigDict(defer_build=True, frozen=True)
    __positional__ = (
        "compare_inputs",
        "compare_outputs",
        "ignore_steps",
        "ignore_fields",
        "normalize",
        "value_format",
        "alignment",
    )

    compare_inputs: bool = True
    compare_outputs: bool = False
    ignore_steps: list[str] = Field(default_factory=list)
    ignore_fields: list[str] = Field(default_factory=list)
    normalize: Annotated[
        Normalizer | None,
        WithJsonSchema({"description": "A Python callable; it cannot be written to JSON."}),
    ] = Field(default=None, exclude=True)
    value_format: Literal["text", "json"] = "text"
    alignment: Literal["names", "content"] = "names"

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


class SnapshotChange(Positional):
    """One difference, of Veval's kinds: a step ``"Added"``, ``"Removed"`` or ``"Moved"``,
    or its ``"InputChanged"`` / ``"OutputChanged"`` (with ``detail``, a compact line diff).

    Indices (``expected_index`` / ``actual_index``, also readable as ``baseline_index`` /
    ``current_index``) are positions in the baseline's and the current run's step lists
    (pre-order, from 0, ignored steps left out); ``None`` on the side where the step is
    absent. ``occurrence`` says which call of that step name it is (from 1); ``expected`` /
    ``actual`` are the compared values as text, for input and output changes. The kinds
    scenarist wrote before (``"added"``, ``"input_changed"``...) are read as Veval's, so
    stored changes still load.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)
    __positional__ = (
        "kind",
        "step_name",
        "occurrence",
        "expected_index",
        "actual_index",
        "expected",
        "actual",
        "detail",
    )

    kind: ChangeKind
    step_name: str
    occurrence: int = 1
    baseline_index: int | None = Field(
        default=None, validation_alias=AliasChoices("baseline_index", "expected_index")
    )
    current_index: int | None = Field(
        default=None, validation_alias=AliasChoices("current_index", "actual_index")
    )
    expected: str | None = None
    actual: str | None = None
    diff: str | None = Field(default=None, validation_alias=AliasChoices("diff", "detail"))

    @field_validator("kind", mode="before")
    @classmethod
    def _old_kind(cls, value: Any) -> Any:
        return _OLD_CHANGE_KINDS.get(value, value) if isinstance(value, str) else value

    @property
    def expected_index(self) -> int | None:
        return self.baseline_index

    @property
    def actual_index(self) -> int | None:
        return self.current_index

    @property
    def detail(self) -> str | None:
        """Veval's name for :attr:`diff`."""
        return self.diff

    @property
    def label(self) -> str:
        """The step's name, with the call number when it is not the first call."""
        quoted = f"'{self.step_name}'"
        return f"{quoted} (call #{self.occurrence})" if self.occurrence > 1 else quoted

    def describe(self) -> str:
        """The change on one line, in Veval's words (without its diff)."""
        label, before, after = self.label, self.baseline_index, self.current_index
        if self.kind == "Added":
            return f"+ added {label} at position {after}"
        if self.kind == "Removed":
            return f"- removed {label} (was at position {before})"
        if self.kind == "Moved":
            return f"~ moved {label} from position {before} to {after}"
        field = "input" if self.kind == "InputChanged" else "output"
        return f"~ {field} changed for {label}"


class SnapshotAlignmentRow(Positional):
    """One row of the side-by-side view: a baseline step, a current step, or both.

    ``status`` is ``same``, ``changed``, ``added``, ``removed`` or ``moved``; Veval's
    ``kind`` (``match`` / ``added`` / ``removed``) is readable, and accepted on input.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)
    __positional__ = (
        "kind",
        "step_name",
        "expected_index",
        "actual_index",
        "input_changed",
        "output_changed",
    )

    status: RowStatus = Field(validation_alias=AliasChoices("status", "kind"))
    step_name: str
    baseline_index: int | None = Field(
        default=None, validation_alias=AliasChoices("baseline_index", "expected_index")
    )
    current_index: int | None = Field(
        default=None, validation_alias=AliasChoices("current_index", "actual_index")
    )
    input_changed: bool = False
    output_changed: bool = False

    @model_validator(mode="before")
    @classmethod
    def _veval_match(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "match" and "status" not in data:
            changed = data.get("input_changed") or data.get("output_changed")
            return {**data, "kind": "changed" if changed else "same"}
        return data

    @property
    def kind(self) -> str:
        """Veval's view of the row: ``match`` (both sides), ``added`` or ``removed``."""
        return self.status if self.status in ("added", "removed") else "match"

    @property
    def expected_index(self) -> int | None:
        return self.baseline_index

    @property
    def actual_index(self) -> int | None:
        return self.current_index


class SnapshotDiff(Positional):
    """The result of a comparison: the changes, the alignment rows, and the steps.

    ``baseline_steps`` / ``current_steps`` count the steps; ``expected_steps`` /
    ``actual_steps`` are the steps themselves (Veval's fields), ``alignment`` is Veval's
    name for ``rows``. ``added_steps``, ``removed_steps`` and ``order_changes`` name the
    steps added, removed and moved. ``compared_content`` is ``False`` when the baseline
    had step names only, so only the sequence could be compared.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)
    __positional__ = (
        "changes",
        "alignment",
        "expected_steps",
        "actual_steps",
        "compared_content",
        "added_steps",
        "removed_steps",
        "order_changes",
    )

    changes: list[SnapshotChange] = Field(default_factory=list)
    rows: list[SnapshotAlignmentRow] = Field(
        default_factory=list, validation_alias=AliasChoices("rows", "alignment")
    )
    expected_steps: list[Any] = Field(default_factory=list, repr=False)
    actual_steps: list[Any] = Field(default_factory=list, repr=False)
    compared_content: bool = True
    added_steps: list[str] = Field(default_factory=list)
    removed_steps: list[str] = Field(default_factory=list)
    order_changes: list[str] = Field(default_factory=list)
    baseline_steps: int = 0
    current_steps: int = 0

    @model_validator(mode="before")
    @classmethod
    def _counts_from_steps(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("baseline_steps", len(data.get("expected_steps") or ()))
            data.setdefault("current_steps", len(data.get("actual_steps") or ()))
        return data

    @property
    def alignment(self) -> list[SnapshotAlignmentRow]:
        """Veval's name for :attr:`rows`."""
        return self.rows

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def summary(
        self,
        snapshot_name: str | None = None,
        *,
        max_diff_lines: int | None = None,
        name: str | None = None,
    ) -> str:
        """A readable account, in Veval's words: a headline, one line per change and its
        diff lines, and a note when the baseline was a legacy (names-only) snapshot.

        ``snapshot_name`` (or the older ``name=``) titles it. Each diff already stops after
        12 lines (Veval's cut); ``max_diff_lines`` cuts it shorter.
        """
        name = snapshot_name if snapshot_name is not None else name
        title = f"Snapshot '{name}'" if name else "Snapshot"
        if not self.changes:
            return f"{title}: no changes."
        lines = [f"{title}: {len(self.changes)} change(s)"]
        for change in self.changes:
            lines.append(f"  {change.describe()}")
            diff = change.diff.split("\n") if change.diff else []
            lines += [f"      {line}" for line in cap_lines(diff, max_diff_lines)]
        if not self.compared_content:
            lines.append(
                "  (legacy snapshot: step inputs were not recorded, so only the sequence "
                "was compared)"
            )
        return "\n".join(lines)


def diff_steps(
    baseline: Sequence[SnapshotStep],
    current: Sequence[SnapshotStep],
    options: SnapshotOptions,
    *,
    compared_content: bool = True,
) -> SnapshotDiff:
    """Align ``current`` against ``baseline`` and list the changes.

    Steps named in ``options.ignore_steps`` are left out first; indices count the rest.
    """
    kept = (
        [step for step in baseline if step.name not in options.ignore_steps],
        [step for step in current if step.name not in options.ignore_steps],
    )
    shown = (
        [_compared(options, step) for step in kept[0]],
        [_compared(options, step) for step in kept[1]],
    )

    def items(side: int) -> list[Item]:
        return [
            Item(index, step.name, json.dumps(shown[side][index]))
            for index, step in enumerate(kept[side])
        ]

    occurrences = (_occurrences(kept[0]), _occurrences(kept[1]))
    if options.alignment == "content":
        ops = align(items(0), items(1))
        moves: dict[int, int] = {}
    else:
        ops = align_names(items(0), items(1))
        moves = pair_by_name(ops)
    paired = set(moves.values())
    changes: list[SnapshotChange] = []
    rows: list[SnapshotAlignmentRow] = []
    for position, op in enumerate(ops):
        where = {
            "step_name": op.name,
            "baseline_index": None if op.baseline is None else op.baseline.index,
            "current_index": None if op.current is None else op.current.index,
            "occurrence": _occurrence(op, occurrences),
        }
        row = {k: v for k, v in where.items() if k != "occurrence"}
        if op.kind != "match":
            rows.append(SnapshotAlignmentRow(status=op.kind, **row))
            if position in moves:  # an addition paired with a removal: one move
                removed = ops[moves[position]].baseline
                assert removed is not None
                changes.append(
                    SnapshotChange(kind="Moved", **{**where, "baseline_index": removed.index})
                )
            elif position not in paired:
                changes.append(SnapshotChange(kind=_KINDS[op.kind], **where))
            continue
        # a match has both sides
        assert op.baseline is not None
        assert op.current is not None
        old, new = shown[0][op.baseline.index], shown[1][op.current.index]
        changed = {"input_changed": old[0] != new[0], "output_changed": old[1] != new[1]}
        for side, kind in _CONTENT_KINDS:
            if old[side] != new[side]:
                changes.append(_content_change(options, kind, old[side], new[side], where))
        status: RowStatus = "changed" if any(changed.values()) else "same"
        rows.append(SnapshotAlignmentRow(status=status, **row, **changed))

    def named(kind: str) -> list[str]:
        return [c.step_name for c in changes if c.kind == kind]

    return SnapshotDiff(
        changes=changes,
        rows=rows,
        expected_steps=kept[0],
        actual_steps=kept[1],
        compared_content=compared_content,
        added_steps=named("Added"),
        removed_steps=named("Removed"),
        order_changes=named("Moved"),
        baseline_steps=len(kept[0]),
        current_steps=len(kept[1]),
    )


_KINDS: dict[str, ChangeKind] = {"added": "Added", "removed": "Removed", "moved": "Moved"}
_CONTENT_KINDS: tuple[tuple[int, ChangeKind], ...] = ((0, "InputChanged"), (1, "OutputChanged"))


def _content_change(
    options: SnapshotOptions,
    kind: ChangeKind,
    before: Any,
    after: Any,
    where: dict[str, Any],
) -> SnapshotChange:
    """An ``InputChanged`` / ``OutputChanged`` change, its values and diff shown as the
    options say (``before`` / ``after`` are compared forms, see :func:`_compared`)."""
    if options.value_format == "json":
        old, new = json.loads(before), json.loads(after)
        return SnapshotChange(
            kind=kind, diff=line_diff(old, new), expected=before, actual=after, **where
        )
    return SnapshotChange(
        kind=kind, diff=text_diff(before, after), expected=before, actual=after, **where
    )


def _occurrence(op: Op, occurrences: tuple[list[int], list[int]]) -> int:
    """Which call of its name the row's step is: on the current side, else the baseline's."""
    if op.current is not None:
        return occurrences[1][op.current.index]
    return occurrences[0][op.baseline.index] if op.baseline is not None else 1


def _occurrences(steps: Sequence[SnapshotStep]) -> list[int]:
    """For each step, which call of its name it is (from 1)."""
    seen: dict[str, int] = {}
    out = []
    for step in steps:
        seen[step.name] = seen.get(step.name, 0) + 1
        out.append(seen[step.name])
    return out


def _compared(options: SnapshotOptions, step: SnapshotStep) -> tuple[str | None, str | None]:
    """A step's input and output as compared (``None`` when not compared): text, or
    canonical JSON with ``value_format="json"``."""
    form = canonical if options.value_format == "json" else text_form

    def value(compared: bool, raw: Any) -> str | None:
        if not compared:
            return None
        return form(prepare(step.name, raw, options.ignore_fields, options.normalize))

    return value(options.compare_inputs, step.input), value(options.compare_outputs, step.output)
