"""Item list files: a Veval-style scenario's items, in YAML or JSON, that ``scenarist run``
runs as ``run_scenario(scenario_name, agent, assertions, items)`` would.

.. code-block:: yaml

    scenario_name: refunds
    agent: my_app.agent:handle          # module:function (or file.py:function)
    assertions:                         # every item's, by kind as in scenario files
      - kind: string_matching
        keyword: refund
    max_concurrency: 4                  # optional: items run at once
    items:
      - trace_id: tr_0123...            # a recorded trace, replayed (never live)
        name: the refund that went wrong
      - input: "Where is my parcel?"   # a synthetic item: the agent runs live
        assertions:
          - kind: equals
            expected_value: ...

Discovery tells it from a scenario file by its keys (``items``, where a scenario has
``steps`` and a suite ``scenarios``); in a folder, by its name (``*.items.yaml``). The
checks are the scenario files' (the same ``kind`` registry and JSON Schema), so a typo
fails with the file, the field and "did you mean".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scenarist.checks.base import AnyCheck
from scenarist.formats.files import load_model, resolve_target

__all__ = ["ItemEntry", "ItemList", "is_item_list", "load_item_list"]


class ItemEntry(BaseModel):
    """One item: a recorded trace to replay (``trace_id``) or an ``input`` to run live."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    trace_id: str | None = Field(default=None, min_length=1)
    input: Any = None
    assertions: list[AnyCheck] = Field(default_factory=list)
    expected_output: Any = None
    tags: list[str] = Field(default_factory=list)
    live_model_steps: bool = False

    @model_validator(mode="after")
    def _trace_or_input(self) -> ItemEntry:
        if self.trace_id is None and self.input is None:
            raise ValueError("an item needs trace_id (a recorded trace) or input (a live run)")
        return self


class ItemList(BaseModel):
    """A scenario's items and assertions, and the agent (``module:function``) they run on."""

    model_config = ConfigDict(extra="forbid")

    scenario_name: str = Field(min_length=1)
    agent: str = Field(min_length=1)
    assertions: list[AnyCheck] = Field(default_factory=list)
    items: list[ItemEntry] = Field(min_length=1)
    max_concurrency: int = Field(default=1, ge=1, le=256)

    def scenario_items(self) -> list[Any]:
        """The entries as :class:`~scenarist.model.items.ScenarioItem` objects."""
        from scenarist.model.items import ScenarioItem

        return [
            ScenarioItem(
                name=entry.name,
                trace_id=entry.trace_id,
                input=entry.input,
                assertions=list(entry.assertions),
                expected_output=entry.expected_output,
                tags=entry.tags,
                live_model_steps=entry.live_model_steps,
            )
            for entry in self.items
        ]


def load_item_list(path: Path) -> tuple[ItemList, Any]:
    """The item list at ``path`` and its agent (imported); ``UserError`` names the file
    and the field."""
    loaded = load_model(ItemList, path)
    agent = resolve_target(loaded.agent, path.parent, source=f"{path}: agent")
    return loaded, agent


def is_item_list(data: Any) -> bool:
    """Whether a loaded data file is an item list (a mapping with ``items`` and no
    ``steps`` or ``scenarios``) rather than a scenario or a suite."""
    return isinstance(data, dict) and "items" in data and not {"steps", "scenarios"} & set(data)
