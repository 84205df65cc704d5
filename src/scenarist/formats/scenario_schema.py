"""The JSON Schema of scenario files (YAML or JSON), generated from the pydantic models.

``src/scenarist/formats/schemas/scenario.schema.json`` is written by ``python -m
scenarist.formats.scenario_schema`` and a test checks it is current. A file holds either one
scenario (``name``, ``steps``...) or a suite (``name``, ``scenarios``). Checks and
interaction specs are unions discriminated by ``kind`` (``oneOf`` with a ``const``
``kind`` each, since JSON Schema has no discriminator keyword); every component forbids
unknown fields, as the models do, so an editor flags a typo as you type.

Only the built-in kinds that a file can express are included: ``fn`` and
``trace_custom`` checks and the ``with_spy`` spec hold Python callables, as do a
scenario's ``target`` and ``trace_type``, so they exist in code only. Kinds registered
by user code are not in the committed schema (the loader still accepts them).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticOmit, core_schema

from scenarist.formats.files import CODE_ONLY_KINDS

__all__ = ["CODE_ONLY_KINDS", "SCHEMA_PATH", "json_schema"]

SCHEMA_PATH = Path(__file__).parent / "schemas" / "scenario.schema.json"


class _FileSchema(GenerateJsonSchema):
    """Leaves out what a file cannot hold (callables, non-JSON defaults)."""

    def handle_invalid_for_json_schema(
        self, schema: core_schema.CoreSchema, error_info: str
    ) -> JsonSchemaValue:
        raise PydanticOmit

    def callable_schema(self, schema: core_schema.CallableSchema) -> JsonSchemaValue:
        raise PydanticOmit

    def emit_warning(self, kind: Any, detail: str) -> None:
        """Non-JSON defaults (``MISSING``) are simply left out: nothing to warn about."""


def _family_union(family: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """``{"oneOf": [...]}`` over the built-in, file-expressible kinds of ``family``."""
    options = []
    for kind in family.kinds():
        cls = family.kind_class(kind)
        if kind in CODE_ONLY_KINDS or not cls.__module__.startswith("scenarist."):
            continue
        schema = cls.model_json_schema(schema_generator=_FileSchema, ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        schema["properties"] = {"kind": {"const": kind}, **schema.get("properties", {})}
        schema["required"] = ["kind", *schema.get("required", [])]
        schema["additionalProperties"] = False
        name = f"{family.__name__}.{kind}"
        defs[name] = schema
        options.append({"$ref": f"#/$defs/{name}"})
    return {"oneOf": options}


def _import_builtin_kinds() -> None:
    """Register every built-in kind, including those whose modules load on first use."""
    import importlib
    import pkgutil

    import scenarist.checks
    import scenarist.judges

    for package in (scenarist.checks, scenarist.judges):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    # The trace checks live with the Veval half they serve.
    importlib.import_module("scenarist.veval.trace_assert")
    importlib.import_module("scenarist.veval.snapshot_check")


def json_schema() -> dict[str, Any]:
    """The schema of a scenario file: one scenario, a suite of them, or an item list."""
    _import_builtin_kinds()
    from scenarist.checks.base import Check
    from scenarist.engine.interactions import InteractionSpec
    from scenarist.engine.suite import Suite

    suite = Suite.model_json_schema(schema_generator=_FileSchema, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = suite.pop("$defs")
    defs["Suite"] = suite
    for name in ("Scenario", "Suite"):  # code-only fields: a callable, a Python class
        for field in ("target", "trace_type"):
            defs[name]["properties"].pop(field, None)
    for name in ("Scenario", "Suite"):
        defs[name]["properties"]["target"] = {
            "description": "The agent the scenarios run against, as 'module:function' "
            "(imported from the file's folder or the working directory).",
            "type": "string",
            "pattern": "^[^:]+:[^:]+$",
        }
    defs["Scenario"]["properties"]["trace_type"] = {
        "description": "The Trace subclass, as 'module.QualName' (null: the plain Trace).",
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
    }
    from scenarist.formats.item_list import ItemList

    items = ItemList.model_json_schema(schema_generator=_FileSchema, ref_template="#/$defs/{model}")
    defs.update(items.pop("$defs"))
    defs["ItemList"] = items
    defs["Check"] = _family_union(Check, defs)
    defs["InteractionSpec"] = _family_union(InteractionSpec, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "scenarist scenario file",
        "description": (
            "One scenario (name, steps...), a suite (name, scenarios) or an item list "
            "(scenario_name, agent, items), as YAML or JSON. Checks and interactions are "
            "chosen by their 'kind'."
        ),
        "anyOf": [
            {"$ref": "#/$defs/Scenario"},
            {"$ref": "#/$defs/Suite"},
            {"$ref": "#/$defs/ItemList"},
        ],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m scenarist.formats.scenario_schema: regenerate the file
    SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
