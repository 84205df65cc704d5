"""Veval's public surface, introspected from the installed veval-sdk 1.4.0, exists here.

Every public name of ``veval`` (under the compat table's renames), every constructor and
method parameter (by name, and at the same position when Veval's is positional), every
dataclass field, property and instance attribute must exist on the scenarist
counterpart. The only exceptions are :data:`ALLOWED`, each with its reason.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from tests.compat.veval_sdk.porting import FROM_VEVAL_PACKAGE

import scenarist
import scenarist.testing
import scenarist.veval

# Veval name -> scenarist name (``10-compat.md``'s table; the rest keep their names).
RENAMES = {
    "VevalExecutionContext": "RunContext",
    "Step": "Span",
    "StepData": "Span",
    "TraceData": "TraceRecord",
    "VevalSdk": "Client",
    "VevalTestSdk": "TestClient",
    "VevalRequestError": "RequestError",
    "VevalSendError": "SendError",
}

# "Name" or "Name.member" (or "Name.__init__") -> why scenarist differs on purpose.
ALLOWED = {
    "VevalSdk.__init__": "the compat table: VevalSdk(VevalOptions(api_key=...)) becomes "
    "Client(api_key=..., base_url=...) (or Client(ClientOptions(...)))",
}


def ours(veval_name: str) -> Any:
    if veval_name in FROM_VEVAL_PACKAGE:  # Step(name, ...) and StepData(step_id, ...)
        return getattr(scenarist.veval, veval_name)
    name = RENAMES.get(veval_name, veval_name)
    for module in (scenarist, scenarist.testing):
        if hasattr(module, name):
            return getattr(module, name)
    raise AssertionError(f"scenarist has no {name!r} (Veval's {veval_name!r})")


def sample(veval_name: str) -> Any:
    """An instance of our counterpart, for attributes set when it is built."""
    from scenarist.model.trace import Span

    return {
        "VevalExecutionContext": lambda: scenarist.RunContext("tr_1"),
        "Step": lambda: scenarist.veval.Step("classify"),
        "VevalSdk": lambda: scenarist.testing.TestClient(),
        "VevalTestSdk": lambda: scenarist.testing.TestClient(),
        "VevalRequestError": lambda: scenarist.RequestError("boom", 401),
        "VevalSendError": lambda: scenarist.SendError("boom", 401),
        "VevalOptions": lambda: scenarist.VevalOptions(api_key="vk_test"),
        "StepData": lambda: Span(),
        "TraceData": lambda: scenarist.TraceRecord(),
    }.get(veval_name, lambda: None)()


def parameter_gaps(where: str, veval_params: list[list[Any]], fn: Any) -> list[str]:
    """Veval's parameters missing from ``fn``, or not at the same position."""
    signature = inspect.signature(fn)
    params = [p for p in signature.parameters.values() if p.name != "self"]
    names = [p.name for p in params]
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params)
    gaps = []
    for index, (name, kind, has_default) in enumerate(veval_params):
        if name not in names and not takes_kwargs:
            gaps.append(f"{where}: no parameter {name!r}")
        elif kind == "POSITIONAL_OR_KEYWORD" and (
            index >= len(params)
            or params[index].name != name
            or params[index].kind not in (params[index].POSITIONAL_OR_KEYWORD,)
        ):
            gaps.append(f"{where}: {name!r} is not positional parameter {index + 1}")
        elif has_default and name in names and signature.parameters[name].default is inspect._empty:
            gaps.append(f"{where}: {name!r} is optional in Veval, required here")
    return gaps


def readable(cls: Any, instance: Any, name: str) -> bool:
    if name in getattr(cls, "model_fields", {}):
        return True
    return hasattr(cls, name) or (instance is not None and hasattr(instance, name))


def surface_gaps(veval_name: str, entry: dict[str, Any]) -> list[str]:
    if veval_name in ALLOWED:
        return []
    try:
        target = ours(veval_name)
    except AssertionError as missing:
        return [str(missing)]
    label = f"{veval_name} ({RENAMES.get(veval_name, veval_name)})"
    if entry["kind"] == "function":
        return parameter_gaps(label, entry["params"], target)
    gaps: list[str] = []
    if f"{veval_name}.__init__" not in ALLOWED and entry["init"] is not None:
        gaps += parameter_gaps(f"{label}.__init__", entry["init"], target)
    try:
        instance = sample(veval_name)
    except Exception as error:
        gaps.append(f"{label}: built as Veval builds it: {type(error).__name__}: {error}")
        instance = None
    wanted = entry.get("fields", []) + entry["properties"] + entry.get("attributes", [])
    for member in dict.fromkeys(wanted):
        if f"{veval_name}.{member}" not in ALLOWED and not readable(target, instance, member):
            gaps.append(f"{label}: no field or property {member!r}")
    for member, method in entry["methods"].items():
        if f"{veval_name}.{member}" in ALLOWED:
            continue
        fn = getattr(target, member, None)
        if fn is None:
            if not readable(target, instance, member):
                gaps.append(f"{label}: no method {member!r}")
            continue
        if method["params"] is not None:
            gaps += parameter_gaps(f"{label}.{member}", method["params"], fn)
    return gaps


def test_veval_surface_every_public_name_parameter_and_field_exists(
    veval_surface: dict[str, Any],
) -> None:
    gaps = [
        gap
        for veval_name, entry in sorted(veval_surface["names"].items())
        for gap in surface_gaps(veval_name, entry)
    ]
    assert gaps == [], "\n".join(gaps)


def test_veval_surface_allow_list_names_only_what_veval_has(
    veval_surface: dict[str, Any],
) -> None:
    """A stale exception would hide a future gap: every entry names a real Veval member."""
    names = veval_surface["names"]
    for key in ALLOWED:
        name, _, member = key.partition(".")
        assert name in names, key
        if member and member != "__init__":
            entry = names[name]
            assert member in entry["methods"] or member in entry["properties"], key


@pytest.mark.parametrize("veval_name", sorted(RENAMES))
def test_veval_surface_renamed_names_are_public(veval_name: str) -> None:
    assert ours(veval_name) is not None
