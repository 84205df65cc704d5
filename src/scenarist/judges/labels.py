"""Labelled sets: traces a person has judged, read from a file.

One format for ``scenarist judges calibrate LABELS`` and for a judge check's calibration
gate (``labelled_set=``). A file is JSON Lines (``.jsonl``, one case a line), or JSON /
YAML holding a list of cases or an object with ``cases`` (and, for the ``calibrate``
command only, the ``check`` to calibrate; the gate calibrates the check that names the
file and ignores it). Its JSON Schema is
``src/scenarist/formats/schemas/labelled-set.schema.json``::

    {"name": "refund in window", "inputs": "Refund?", "outputs": "Yes, within 30 days.",
     "metadata": {"context": "Refunds within 30 days."}, "expected": true}
    {"name": "two turns", "trace": [{"inputs": "Hi", "outputs": "Hello"},
     {"inputs": "Refund?", "outputs": "Never."}], "expected": false}

``expected`` is the person's verdict: should the check pass? Every error names the file
and the case.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarist.errors import UserError
from scenarist.judges.calibrate import LabelledCase
from scenarist.model.trace import Interaction, Trace

__all__ = ["LabelledSet", "load_labelled_set"]


@dataclass(frozen=True)
class LabelledSet:
    """The cases of a labelled set file, its ``check`` (if any) and its content digest."""

    path: Path
    cases: list[LabelledCase]
    check: dict[str, Any] | None
    sha256: str


def _interaction(data: Any, where: str) -> Interaction[Any, Any]:
    if not isinstance(data, dict) or "outputs" not in data:
        raise UserError(f"{where} needs 'inputs' and 'outputs' (and optional 'metadata')")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise UserError(f"{where}.metadata must be an object, got {metadata!r}")
    return Interaction(inputs=data.get("inputs"), outputs=data["outputs"], metadata=metadata)


def _case(data: Any, where: str) -> LabelledCase:
    if not isinstance(data, dict):
        raise UserError(f"{where} must be an object with 'expected' and the case")
    expected = data.get("expected")
    if not isinstance(expected, bool):
        raise UserError(
            f"{where}.expected must be true or false (the person's verdict), got {expected!r}"
        )
    turns = data.get("trace", [data])
    if not isinstance(turns, list) or not turns:
        raise UserError(f"{where}.trace must be a non-empty list of interactions")
    trace: Trace[Any, Any] = Trace()
    for number, turn in enumerate(turns):
        label = f"{where}.trace[{number}]" if "trace" in data else where
        trace = trace.with_interaction(_interaction(turn, label))
    name = data.get("name")
    return LabelledCase(trace=trace, expected=expected, name=str(name) if name else None)


def _json_lines(path: Path, text: str) -> list[tuple[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((f"{path}:{number}", json.loads(line)))
            except ValueError as exc:
                raise UserError(f"{path}:{number}: not JSON ({exc})") from None
    return rows


def load_labelled_set(path: Path | str) -> LabelledSet:
    """The labelled set in ``path`` (a ``UserError`` names the file and case on a mistake)."""
    from scenarist.formats.files import read_data

    path = Path(path)
    if not path.is_file():
        raise UserError(
            f"{path}: no such labelled set; give the path of a JSON Lines, JSON or YAML file "
            "of labelled cases (relative paths are read from the working directory)"
        )
    raw = path.read_bytes()
    check: Any = None
    if path.suffix.lower() == ".jsonl":
        rows = _json_lines(path, raw.decode("utf-8-sig"))
    else:
        data = read_data(path)
        if isinstance(data, dict):
            check = data.get("check")
            data = data.get("cases")
        if not isinstance(data, list):
            raise UserError(f"{path}: expected a list of cases, or an object with 'cases'")
        rows = [(f"{path}: cases[{index}]", item) for index, item in enumerate(data)]
    if check is not None and (not isinstance(check, dict) or "kind" not in check):
        raise UserError(f"{path}: 'check' must be a judge check, e.g. {{kind: groundedness}}")
    cases = [_case(item, where) for where, item in rows]
    if not cases:
        raise UserError(f"{path}: no labelled cases")
    return LabelledSet(path, cases, check, hashlib.sha256(raw).hexdigest())
