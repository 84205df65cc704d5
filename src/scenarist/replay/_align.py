"""Aligning two step sequences, and the value rendering snapshot diffs are made of.

Two aligners. :func:`align_names` is Veval's (the default): a longest common subsequence
over step names alone, walked from the start; where two alignments are equally long, the
current run's step is taken as added first. :func:`pair_by_name` then pairs each added
step with the first unpaired removed one of the same name: a move, whatever its content.

:func:`align` (``SnapshotOptions(alignment="content")``, scenarist's own) sees each step
as a name plus a *content key*: what the options compare (input, output, both or
neither), after ``ignore_fields`` and ``normalize``. Alignment is a longest common
subsequence over names in which, among alignments with the most matched names, the one
with the most identical contents wins: with a repeated step (two ``search`` calls, one
gone), the call whose input still matches stays matched and the other is reported
removed, rather than whichever came first. Steps left over on both sides with the same
name and content are then paired as moves. A common prefix and suffix are matched before
the quadratic pass, so the usual case (a long trace with one local change) costs little.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scenarist._jsonable import to_json_value

__all__ = [
    "Item",
    "Op",
    "align",
    "align_names",
    "canonical",
    "line_diff",
    "pair_by_name",
    "prepare",
    "strip_fields",
]

OpKind = Literal["match", "removed", "added", "moved"]


@dataclass(frozen=True, slots=True)
class Item:
    """A step as the aligner sees it: its position in the full list, name and content."""

    index: int
    name: str
    key: str


@dataclass(frozen=True, slots=True)
class Op:
    """One row of the alignment, in display order (``None``: absent on that side)."""

    kind: OpKind
    baseline: Item | None
    current: Item | None

    @property
    def name(self) -> str:
        """The step's name (both sides share it when both are present)."""
        item = self.baseline or self.current
        assert item is not None  # every op has at least one side
        return item.name


def _same(a: Item, b: Item) -> bool:
    return a.name == b.name and a.key == b.key


def align(baseline: Sequence[Item], current: Sequence[Item]) -> list[Op]:
    """The alignment of ``current`` against ``baseline`` (see the module docstring)."""
    n, m = len(baseline), len(current)
    head = 0
    while head < min(n, m) and _same(baseline[head], current[head]):
        head += 1
    tail = 0
    while tail < min(n, m) - head and _same(baseline[n - 1 - tail], current[m - 1 - tail]):
        tail += 1
    ops = [Op("match", baseline[i], current[i]) for i in range(head)]
    ops += _align_middle(baseline[head : n - tail], current[head : m - tail])
    ops += [Op("match", baseline[n - tail + i], current[m - tail + i]) for i in range(tail)]
    return _pair_moves(ops)


def _align_middle(a: Sequence[Item], b: Sequence[Item]) -> list[Op]:
    n, m = len(a), len(b)
    # A matched name is worth more than all identical contents together can add, so the
    # score ranks by matched names first, then by identical contents.
    weight = min(n, m) + 1
    score = [[0] * (m + 1) for _ in range(n + 1)]  # score[i][j]: best for a[i:], b[j:]
    for i in range(n - 1, -1, -1):
        row, below = score[i], score[i + 1]
        for j in range(m - 1, -1, -1):
            best = max(below[j], row[j + 1])
            if a[i].name == b[j].name:
                best = max(best, below[j + 1] + weight + (a[i].key == b[j].key))
            row[j] = best
    ops: list[Op] = []
    i = j = 0
    while i < n and j < m:
        gain = weight + (a[i].key == b[j].key)
        if a[i].name == b[j].name and score[i][j] == score[i + 1][j + 1] + gain:
            ops.append(Op("match", a[i], b[j]))
            i, j = i + 1, j + 1
        elif score[i + 1][j] >= score[i][j + 1]:  # on a tie, removals show first
            ops.append(Op("removed", a[i], None))
            i += 1
        else:
            ops.append(Op("added", None, b[j]))
            j += 1
    ops += [Op("removed", item, None) for item in a[i:]]
    ops += [Op("added", None, item) for item in b[j:]]
    return ops


def align_names(baseline: Sequence[Item], current: Sequence[Item]) -> list[Op]:
    """Veval's alignment: matches, additions and removals, on names alone (see above)."""
    n, m = len(baseline), len(current)
    head = 0
    while head < min(n, m) and baseline[head].name == current[head].name:
        head += 1
    a, b = baseline[head:], current[head:]
    rows, cols = len(a), len(b)
    longest = [[0] * (cols + 1) for _ in range(rows + 1)]  # longest[i][j]: for a[i:], b[j:]
    for i in range(rows - 1, -1, -1):
        row, below = longest[i], longest[i + 1]
        for j in range(cols - 1, -1, -1):
            if a[i].name == b[j].name:
                row[j] = below[j + 1] + 1
            else:
                row[j] = max(below[j], row[j + 1])
    ops = [Op("match", baseline[k], current[k]) for k in range(head)]
    i = j = 0
    while i < rows and j < cols:
        if a[i].name == b[j].name:
            ops.append(Op("match", a[i], b[j]))
            i, j = i + 1, j + 1
        elif longest[i][j + 1] >= longest[i + 1][j]:  # on a tie, the addition shows first
            ops.append(Op("added", None, b[j]))
            j += 1
        else:
            ops.append(Op("removed", a[i], None))
            i += 1
    ops += [Op("added", None, item) for item in b[j:]]
    ops += [Op("removed", item, None) for item in a[i:]]
    return ops


def pair_by_name(ops: Sequence[Op]) -> dict[int, int]:
    """Moves: each added row's position mapped to the removed row it pairs with."""
    removed: dict[str, list[int]] = {}
    for k, op in enumerate(ops):
        if op.kind == "removed":
            removed.setdefault(op.name, []).append(k)
    moves: dict[int, int] = {}
    for k, op in enumerate(ops):
        if op.kind == "added" and removed.get(op.name):
            moves[k] = removed[op.name].pop(0)
    return moves


def _pair_moves(ops: list[Op]) -> list[Op]:
    """Turn a removal and an addition of the same step into one move, shown where it is now."""
    added = [k for k, op in enumerate(ops) if op.kind == "added"]
    dropped: set[int] = set()
    for k, op in enumerate(ops):
        if op.kind != "removed" or op.baseline is None:
            continue
        for slot, a in enumerate(added):
            target = ops[a].current
            if target is not None and _same(op.baseline, target):
                ops[a] = Op("moved", op.baseline, target)
                dropped.add(k)
                del added[slot]
                break
    return [op for k, op in enumerate(ops) if k not in dropped]


# -- values ---------------------------------------------------------------------------


def strip_fields(value: Any, fields: Iterable[str]) -> Any:
    """``value`` without the ignored fields.

    A plain name (``"timestamp"``) drops that key from every mapping at any depth; a
    dotted path (``"request.id"``) drops that one key under the value's root.
    """
    names = {f for f in fields if "." not in f}
    paths = [f.split(".") for f in fields if "." in f]
    if names:
        value = _drop_names(value, names)
    for path in paths:
        value = _drop_path(value, path)
    return value


def _drop_names(value: Any, names: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _drop_names(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [_drop_names(v, names) for v in value]
    return value


def _drop_path(value: Any, path: list[str]) -> Any:
    if not isinstance(value, dict) or path[0] not in value:
        return value
    if len(path) == 1:
        return {k: v for k, v in value.items() if k != path[0]}
    return {**value, path[0]: _drop_path(value[path[0]], path[1:])}


def prepare(
    step_name: str,
    value: Any,
    ignore_fields: Sequence[str],
    normalize: Callable[[str, Any], Any] | None,
) -> Any:
    """A step value as compared: JSON data, ignored fields dropped, then normalised."""
    value = strip_fields(to_json_value(value), ignore_fields)
    if normalize is not None:
        value = to_json_value(normalize(step_name, value))
    return value


def canonical(value: Any) -> str:
    """One line of JSON with sorted keys: equal values give equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines() or [""]
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2).splitlines()


def line_diff(before: Any, after: Any) -> str:
    """A compact unified diff of two values: ``- old`` / ``+ new`` lines, one line of context.

    Strings diff as their own lines (a prompt diffs line by line); other values as
    indented JSON. When both render alike but differ in type (``"1"`` and ``1``), both
    are shown as JSON.
    """
    old, new = _lines(before), _lines(after)
    if old == new:
        old, new = [canonical(before)], [canonical(after)]
    out = []
    for k, line in enumerate(difflib.unified_diff(old, new, lineterm="", n=1)):
        if k < 2 or line.startswith("@@"):  # the file headers, the hunk headers
            continue
        out.append(f"{line[0] if line[0] in '+-' else ' '} {line[1:]}".rstrip())
    return "\n".join(out)
