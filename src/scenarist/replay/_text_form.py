"""Step values as readable text, and the compact diff of two such texts (Veval's forms).

A snapshot change shows the values it compares as plain text, the way Veval does: a string
as itself, a mapping as sorted ``key: value`` lines, a list as ``- item`` lines, nested
values indented by two spaces, a multi-line string inside a structure as a ``|`` block.
With ``SnapshotOptions(value_format="text")`` (the default) two values are equal when
their texts are, so the string ``"1"`` and the number ``1`` compare equal, as in Veval;
``value_format="json"`` keeps JSON types apart (see ``snapshot_diff``).

The diff drops the lines both texts share at the start and at the end, keeps one of each
as context, and shows the rest as ``- old`` then ``+ new`` lines, at most
:data:`DETAIL_LINES` of them, then a ``… N more line(s)`` line.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DETAIL_LINES", "cap_lines", "text_diff", "text_form"]

DETAIL_LINES = 12
"""How many diff lines a change's ``detail`` keeps (Veval's cut)."""


def text_form(value: Any) -> str:
    """``value`` (JSON data) as text: a top-level string as it is, the rest as lines."""
    if isinstance(value, str):
        return value
    return "\n".join(_block(value, 0))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return str(value)


def _block(value: Any, indent: int) -> list[str]:
    """The lines of a value that stands on its own lines, at ``indent`` spaces."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines: list[str] = []
        for key in sorted(value, key=str):
            lines += _entry(f"{pad}{key}:", value[key], indent)
        return lines
    if isinstance(value, list | tuple) and value:
        lines = []
        for item in value:
            lines += _entry(f"{pad}-", item, indent)
        return lines
    return [pad + _inline(value)]


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _scalar(value)


def _entry(head: str, value: Any, indent: int) -> list[str]:
    """A ``key:`` or ``-`` line, its value after it or, when nested, on the lines below."""
    if isinstance(value, dict | list | tuple) and value:
        return [head, *_block(value, indent + 2)]
    if isinstance(value, str) and "\n" in value:
        pad = " " * (indent + 2)
        return [f"{head} |", *(pad + line for line in value.split("\n"))]
    return [f"{head} {_inline(value)}"]


def cap_lines(lines: list[str], limit: int | None = DETAIL_LINES) -> list[str]:
    """``lines`` cut after ``limit``, with a line saying how many more there were."""
    if limit is None or len(lines) <= limit:
        return lines
    return [*lines[:limit], f"  … {len(lines) - limit} more line(s)"]


def text_diff(before: str, after: str) -> str:
    """The compact diff of two texts (see the module docstring)."""
    old, new = before.split("\n"), after.split("\n")
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    lines = [f"  {old[head - 1]}"] if head else []
    lines += [f"- {line}" for line in old[head : len(old) - tail]]
    lines += [f"+ {line}" for line in new[head : len(new) - tail]]
    if tail:
        lines.append(f"  {old[len(old) - tail]}")
    return "\n".join(cap_lines(lines))
