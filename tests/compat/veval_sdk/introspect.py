"""Run under the veval-sdk side venv: print Veval's public surface as JSON.

For every name in ``veval.__all__``: whether it is a class or a function, the parameters
of its constructor or signature (name, kind, has a default), dataclass fields, public
methods with their parameters, properties, and the public attributes of a sample
instance (for classes whose attributes are set in ``__init__``). Only introspection: no
code of the SDK is copied into scenarist.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
from typing import Any

import veval


def params(fn: Any) -> list[list[Any]] | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [
        [p.name, p.kind.name, p.default is not inspect.Parameter.empty]
        for p in signature.parameters.values()
        if p.name != "self"
    ]


def samples() -> dict[str, Any]:
    """Instances whose ``__init__``-set attributes are part of the surface."""
    options = veval.VevalOptions(api_key="vk_test")
    step = veval.Step("classify")
    return {
        "VevalOptions": options,
        "Step": step,
        "StepHandle": veval.StepHandle(step),
        "VevalExecutionContext": veval.VevalExecutionContext("tr_1"),
        "VevalSdk": veval.VevalSdk(options),
        "VevalTestSdk": veval.VevalTestSdk(options),
        "VevalRequestError": veval.VevalRequestError("boom", 401),
        "VevalSendError": veval.VevalSendError("boom", 401),
        "ReplayFidelity": veval.ReplayFidelity([]),
    }


def describe(name: str, obj: Any, sample: Any) -> dict[str, Any]:
    if not inspect.isclass(obj):
        return {"kind": "function", "params": params(obj)}
    entry: dict[str, Any] = {"kind": "class", "init": params(obj)}
    if dataclasses.is_dataclass(obj):
        entry["fields"] = [f.name for f in dataclasses.fields(obj)]
    methods: dict[str, Any] = {}
    properties: list[str] = []
    for member, _ in inspect.getmembers(obj):
        if member.startswith("_") or (issubclass(obj, BaseException) and member in dir(Exception)):
            continue
        static = inspect.getattr_static(obj, member)
        if isinstance(static, property):
            properties.append(member)
        elif isinstance(static, (staticmethod, classmethod)) or inspect.isfunction(static):
            methods[member] = {
                "params": params(getattr(obj, member)),
                "static": isinstance(static, (staticmethod, classmethod)),
            }
    entry["methods"] = methods
    entry["properties"] = sorted(properties)
    if sample is not None:
        entry["attributes"] = sorted(a for a in vars(sample) if not a.startswith("_"))
    return entry


def main() -> None:
    made = samples()
    surface = {
        "version": getattr(veval, "__version__", None),
        "names": {n: describe(n, getattr(veval, n), made.get(n)) for n in veval.__all__},
    }
    json.dump(surface, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
