"""Veval's two step constructors under their own names, for code ported by its import line.

The compat table maps both Veval's ``Step`` and ``StepData`` to :class:`Span`, and their
positional orders conflict: ``Step(name, parent_step_id)`` starts a running step, while
``StepData(step_id, parent_step_id, name, ...)`` is a plain record. ``Span`` takes
``StepData``'s order; code that builds Veval's ``Step`` by position imports it from here
(``from scenarist.veval import Step``) and gets Veval's: a new step id, ``running``,
started now. Both are spans: everything that takes a ``Span`` takes them.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import model_validator

from scenarist.model.trace import Span

__all__ = ["Step", "StepData"]

StepData = Span
"""Veval's ``StepData`` is :class:`Span` (its field order, by position or by keyword)."""


class Step(Span):
    """Veval's ``Step(name, parent_step_id=None)``: a running step with a new id, started
    now; ``create_step``, ``complete``, ``fail`` and ``set_metadata`` as in Veval."""

    __positional__ = ("name", "parent_step_id")  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _started(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if not (data.get("span_id") or data.get("step_id")):
                data["span_id"] = str(uuid.uuid4())
            data.setdefault("status", "running")
            data.setdefault("started_at", datetime.now(UTC))
        return data
