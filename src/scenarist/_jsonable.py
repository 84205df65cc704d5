"""Turning values from agents into JSON that can be stored, shown and replayed.

Span inputs and outputs are whatever the agent passed: strings, dicts, pydantic models,
dataclasses, datetimes, bytes. Stored traces hold JSON. The mapping is lossless for JSON
values and explicit for everything else, never a silent ``repr``:

================================  ==============================================
JSON values (str, int, float...)  unchanged (non-finite floats become strings)
dict / list / tuple               recursively (tuple becomes a list, keys become str)
set / frozenset                   a sorted list when sortable, else a list
pydantic model, dataclass         their JSON dump (``model_dump(mode="json")``)
datetime / date / time            ISO 8601 string
Decimal, UUID, Path, Enum         ``str`` / the enum's value
bytes                             ``{"__bytes__": "<base64>"}``
anything else                     ``{"__repr__": repr(value), "__type__": "module.Name"}``
================================  ==============================================
"""

from __future__ import annotations

import base64
import dataclasses
import math
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any
from uuid import UUID

from pydantic import BaseModel

__all__ = ["to_json_value"]

_ATOMS = (str, int, bool, type(None))


def to_json_value(value: Any) -> Any:
    """``value`` as JSON-compatible data (see the module docstring for the mapping)."""
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [to_json_value(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json_value(dataclasses.asdict(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Enum):
        return to_json_value(value.value)
    if isinstance(value, Decimal | UUID | PurePath):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return {"__bytes__": base64.b64encode(bytes(value)).decode("ascii")}
    kind = type(value)
    return {"__repr__": repr(value), "__type__": f"{kind.__module__}.{kind.__qualname__}"}
