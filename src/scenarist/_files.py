"""Loading scenarios and suites from JSON or YAML files, with errors that name the file.

A file that does not validate raises one :class:`~scenarist.errors.UserError` listing
every problem as ``<file>: <path inside it>: <what is wrong>; <the fix>``, e.g.
``suite.yaml: scenarios[0].steps[1].checks[0].keywrd: unknown field of a
string_matching check; did you mean 'keyword'?``. The JSON Schema that editors can use
to catch these while typing is ``src/scenarist/schemas/scenario.schema.json``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scenarist.errors import UserError

__all__ = [
    "describe_validation_error",
    "format_location",
    "load_model",
    "read_data",
    "resolve_target",
]

M = TypeVar("M", bound=BaseModel)
_SCHEMA_HINT = "the JSON Schema scenarist/schemas/scenario.schema.json lists every field"


def read_data(path: Path) -> Any:
    """The parsed content of a JSON or YAML file; ``UserError`` naming it if unreadable."""
    if not path.is_file():
        raise UserError(f"{path}: no such file; check the path")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the file: {exc}") from exc
    if path.suffix.lower() in {".yaml", ".yml"}:
        try:
            import yaml
        except ImportError:
            raise UserError(
                f"{path}: reading YAML needs PyYAML; run pip install pyyaml, or write JSON"
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON: {exc}") from exc


def load_model(model: type[M], path: str | Path) -> M:
    """Validate the file at ``path`` as ``model``; ``UserError`` names the file and field.

    ``target: module:function`` (on a scenario or a suite) names the agent the file's
    scenarios run against, imported from the file's folder or the working directory."""
    path = Path(path)
    data = read_data(path)
    target = None
    if isinstance(data, dict) and isinstance(data.get("target"), str):
        data = dict(data)
        target = resolve_target(data.pop("target"), path.parent, source=f"{path}: target")
    try:
        loaded = model.model_validate(data)
    except ValidationError as exc:
        raise UserError(
            f"{path}: invalid {model.__name__}: {describe_validation_error(exc, data)}"
        ) from exc
    if target is not None:
        loaded.target = target  # type: ignore[attr-defined]
    return loaded


def resolve_target(reference: str, folder: Path | None = None, *, source: str = "target") -> Any:
    """The callable named ``module:function`` (or ``path/to/file.py:function``), imported
    with ``folder`` and the working directory on the import path."""
    import importlib
    import importlib.util
    import sys

    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise UserError(
            f"{source} {reference!r}: write it as module:function, e.g. my_app.agent:run"
        )
    roots = [str(p) for p in (folder, Path.cwd()) if p is not None]
    sys.path[:0] = roots
    try:
        if module_name.endswith(".py"):
            file = Path(module_name)
            if not file.is_absolute() and folder is not None and (folder / file).is_file():
                file = folder / file
            spec = importlib.util.spec_from_file_location(f"_scenarist_target_{file.stem}", file)
            if spec is None or spec.loader is None or not file.is_file():
                raise UserError(f"{source} {reference!r}: no such file {str(file)!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"{source} {reference!r}: cannot import {module_name!r}: {exc}") from exc
    finally:
        for root in roots:
            sys.path.remove(root)
    found = getattr(module, attribute, None)
    if not callable(found):
        raise UserError(
            f"{source} {reference!r}: {module_name!r} has no function {attribute!r}; check the name"
        )
    return found


def format_location(loc: Sequence[int | str]) -> str:
    """``("steps", 0, "checks", 1)`` → ``steps[0].checks[1]`` (``(top level)`` if empty)."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def describe_validation_error(exc: ValidationError, data: Any) -> str:
    """Every problem of ``exc`` as ``location: problem; fix``, joined by ``"; "``."""
    return "; ".join(_describe(err, data) for err in exc.errors())


def _describe(err: Any, data: Any) -> str:
    loc: tuple[int | str, ...] = tuple(err["loc"])
    where = format_location(loc)
    kind = err["type"]
    if kind == "extra_forbidden" and loc:
        owner = _at(data, loc[:-1])
        return f"{where}: unknown field {loc[-1]!r}{_field_hint(owner, str(loc[-1]))}"
    if kind == "missing":
        return f"{where}: required field missing; add it"
    message = str(err["msg"]).removeprefix("Value error, ")
    if "unknown " in message and " kind " in message:
        given = _at(data, loc)
        wanted = given.get("kind") if isinstance(given, dict) else None
        known = message.partition("registered kinds: ")[2].split(", ")
        close = difflib.get_close_matches(str(wanted), known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else _SCHEMA_HINT
        return f"{where}: unknown kind {wanted!r}; {hint}"
    return f"{where}: {message}"


def _at(data: Any, loc: Sequence[int | str]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _field_hint(owner: Any, field: str) -> str:
    """`` of a <kind> check; did you mean 'x'?`` from the registered class's fields."""
    if not isinstance(owner, dict) or not isinstance(owner.get("kind"), str):
        return f"; remove it or fix its spelling ({_SCHEMA_HINT})"
    kind = owner["kind"]
    fields: list[str] = []
    family_name = "component"
    from scenarist.checks.base import Check
    from scenarist.interactions import InteractionSpec

    for family in (Check, InteractionSpec):
        try:
            fields = list(family.kind_class(kind).model_fields)
        except ValueError:
            continue
        family_name = family._family
        break
    close = difflib.get_close_matches(field, fields, n=1)
    fix = f"did you mean {close[0]!r}?" if close else f"its fields are {', '.join(fields)}"
    return f" in a {kind} {family_name}; {fix}"
