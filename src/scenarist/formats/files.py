"""Loading scenarios and suites from JSON or YAML files, with errors that name the file.

A file that does not validate raises one :class:`~scenarist.errors.UserError` listing
every problem as ``<file>: <path inside it>: <what is wrong>; <the fix>``, e.g.
``suite.yaml: scenarios[0].steps[1].checks[0].keywrd: unknown field of a
string_matching check; did you mean 'keyword'?``. The JSON Schema that editors can use
to catch these while typing is ``src/scenarist/formats/schemas/scenario.schema.json``.
"""

from __future__ import annotations

import difflib
import json
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scenarist.errors import UserError
from scenarist.model._registry import registered_families

__all__ = [
    "describe_validation_error",
    "format_location",
    "load_model",
    "read_data",
    "resolve_target",
]

CODE_ONLY_KINDS = frozenset({"fn", "trace_custom", "with_spy"})
"""Kinds that hold Python code: built in Python, never read from a file."""

M = TypeVar("M", bound=BaseModel)
_SCHEMA_HINT = "the JSON Schema scenarist/formats/schemas/scenario.schema.json lists every field"


def read_data(path: Path) -> Any:
    """The parsed content of a JSON or YAML file (``None`` if empty); ``UserError``
    naming it if unreadable.

    UTF-8 with or without a byte-order mark (editors on Windows add one). A key given
    twice in one mapping is an error, not a silent overwrite (a second ``checks:`` would
    drop the first list of checks). Nesting deeper than the JSON limit, and YAML aliases
    that expand past :data:`MAX_EXPANDED_VALUES` values or past :func:`expansion_limit`
    bytes, or refer to themselves, are refused before validation walks them.
    """
    if not path.is_file():
        what = "a folder, not a file" if path.is_dir() else "no such file"
        raise UserError(f"{path}: {what}; check the path")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UserError(
            f"{path}: line {line}: not UTF-8 (byte {raw[exc.start]:#04x}); save the file as UTF-8"
        ) from None
    if not text.strip():
        return None  # empty: the caller says what the file should hold
    if path.suffix.lower() in {".yaml", ".yml"}:
        data = _read_yaml(path, text, len(raw))
    else:
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except _DuplicateKey as exc:
            raise UserError(f"{path}: {exc}") from None
        except RecursionError:
            raise UserError(f"{path}: {_TOO_DEEP}") from None
        except ValueError as exc:
            raise UserError(f"{path}: not valid JSON: {exc}") from exc
    from scenarist._json_limits import JsonLimitError, check_json

    try:
        check_json(data, strict_values=False)
    except JsonLimitError as exc:
        raise UserError(f"{path}: {exc}; {_FLATTEN}") from None
    return data


MAX_EXPANDED_VALUES = 1_000_000
"""Values a YAML file may hold once its aliases are expanded (a few aliases nested in
each other can stand for billions, which validation would walk one by one)."""

MAX_EXPANDED_BYTES = 16 * 1024 * 1024
"""Bytes a YAML file may stand for once its aliases are expanded (see
:func:`expansion_limit`): a long text repeated by aliases is few values but many bytes,
which every scenario's trace, the run log and the store would copy."""

EXPANSION_FACTOR = 4
"""A file larger than a quarter of :data:`MAX_EXPANDED_BYTES` may expand to this many
times its own size (a file without aliases stands for about its own size)."""


def expansion_limit(file_bytes: int) -> int:
    """The expanded size, in bytes of JSON text, allowed for a YAML file of ``file_bytes``."""
    return max(MAX_EXPANDED_BYTES, EXPANSION_FACTOR * file_bytes)


_EXPECTED = "write a scenario (a mapping with name and steps) or a suite (name and scenarios)"
_FLATTEN = "flatten the value, or build it in Python"
_TOO_DEEP = f"nested too deeply to read (the limit is 128 levels); {_FLATTEN}"


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(f"key {key!r} appears twice in one object; keep one")
        data[key] = value
    return data


def _read_yaml(path: Path, text: str, file_bytes: int) -> Any:
    try:
        import yaml
    except ImportError:
        raise UserError(
            f"{path}: reading YAML needs PyYAML; run pip install pyyaml, or write JSON"
        ) from None

    class StrictLoader(yaml.SafeLoader):
        """``SafeLoader`` that refuses a key given twice in one mapping."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: overridable
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: SafeLoader says so
                    break
                if first is not key_node:
                    line, was = key_node.start_mark.line + 1, first.start_mark.line + 1
                    raise UserError(
                        f"{path}: line {line}: key {key!r} appears twice in one mapping "
                        f"(first on line {was}); keep one (a repeated key would silently "
                        "replace the first)"
                    )
            return super().construct_mapping(node, deep=deep)

    try:
        data = yaml.load(text, Loader=StrictLoader)  # a SafeLoader
    except RecursionError:
        raise UserError(f"{path}: {_TOO_DEEP}") from None
    except yaml.YAMLError as exc:
        hint = "; indent with spaces, YAML does not allow tabs" if "'\\t'" in str(exc) else ""
        message = " ".join(str(exc).replace('"<unicode string>", ', "").split())
        raise UserError(f"{path}: not valid YAML: {message}{hint}") from exc
    _check_expansion(path, data, expansion_limit(file_bytes))
    return data


def _check_expansion(path: Path, data: Any, max_bytes: int) -> None:
    """Refuse YAML whose aliases expand past :data:`MAX_EXPANDED_VALUES` values or
    ``max_bytes`` bytes, or that refers to itself.

    Aliases make the loaded value a graph that shares nodes; this walks the graph once
    (each distinct container counted once, iteratively: safe at any depth) and adds up,
    for each container, what it stands for expanded: its values and the bytes it would
    take as JSON text (:func:`_scalar_bytes`), so an alias counts the whole size of the
    node it names.
    """
    if not isinstance(data, dict | list):
        return
    sizes: dict[int, int] = {}
    weights: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, done = stack.pop()
        children = [
            c
            for c in (node.values() if isinstance(node, dict) else node)
            if isinstance(c, dict | list)
        ]
        if done:
            open_.discard(id(node))
            size = 1 + len(node) + sum(sizes[id(c)] for c in children)
            if size > MAX_EXPANDED_VALUES:
                raise UserError(
                    f"{path}: its aliases expand to more than {MAX_EXPANDED_VALUES:,} values; "
                    "use fewer nested aliases"
                )
            weight = _node_bytes(node, weights)
            if weight > max_bytes:
                raise UserError(
                    f"{path}: its aliases expand to more than {max_bytes // 1_000_000:,} MB "
                    f"({max_bytes:,} bytes of JSON, the limit: the larger of "
                    f"{MAX_EXPANDED_BYTES // 1_000_000} MB and {EXPANSION_FACTOR} times the "
                    "file's size); an alias repeats the whole value it names, so use fewer "
                    "or smaller aliases, or build the repeated values in Python"
                )
            sizes[id(node)] = size
            weights[id(node)] = weight
            continue
        if id(node) in sizes:
            continue
        if id(node) in open_:
            raise UserError(f"{path}: an alias refers to itself; a scenario must be finite")
        open_.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)


def _node_bytes(node: dict[Any, Any] | list[Any], weights: dict[int, int]) -> int:
    """About the bytes ``node`` takes as JSON text, its containers' already in ``weights``."""
    if isinstance(node, dict):
        total = 2 + 2 * len(node)  # braces, and a colon and a comma per entry
        for key, value in node.items():
            total += _scalar_bytes(key) + _value_bytes(value, weights)
        return total
    return 2 + len(node) + sum(_value_bytes(value, weights) for value in node)


def _value_bytes(value: Any, weights: dict[int, int]) -> int:
    if isinstance(value, dict | list):
        return weights[id(value)]
    return _scalar_bytes(value)


def _scalar_bytes(value: Any) -> int:
    """About the bytes a YAML scalar takes as JSON text (its characters for a text)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 2  # a decimal digit per 3.3 bits
    if isinstance(value, bytes):  # !!binary, written as base64
        return len(value) * 4 // 3 + 4
    return 32  # a float, a date, a timestamp


def load_model(model: type[M], path: str | Path) -> M:
    """Validate the file at ``path`` as ``model``; ``UserError`` names the file and field.

    ``target: module:function`` (on a scenario, a suite, or a suite's scenario) names the
    agent the file's scenarios run against, imported from the file's folder or the working
    directory."""
    path = Path(path)
    data = read_data(path)
    if data is None:
        raise UserError(f"{path}: the file is empty; {_EXPECTED}")
    if not isinstance(data, dict):
        raise UserError(f"{path}: (top level): found a {type(data).__name__}; {_EXPECTED}")
    # `x-` keys are the file's own (docker-compose's convention): a place for YAML anchors
    data = {k: v for k, v in data.items() if not str(k).startswith("x-")}
    unknown = [key for key in data if key not in model.model_fields]
    if unknown:  # Scenario.model_validate ignores them (giskard's files); files typed by hand
        problems = [
            f"{format_location((str(key),))}: unknown field {str(key)!r}"
            f"{_did_you_mean(str(key), list(model.model_fields))}"
            for key in unknown
        ]
        raise UserError(f"{path}: invalid {model.__name__}: {'; '.join(problems)}")
    target = None
    if isinstance(data.get("target"), str):
        target = resolve_target(data.pop("target"), path.parent, source=f"{path}: target")
    own_targets: dict[int, Any] = {}  # a suite file's scenarios may name their own
    if isinstance(data.get("scenarios"), list):
        data["scenarios"] = list(data["scenarios"])
        for index, entry in enumerate(data["scenarios"]):
            if isinstance(entry, dict) and isinstance(entry.get("target"), str):
                entry = data["scenarios"][index] = dict(entry)
                own_targets[index] = resolve_target(
                    entry.pop("target"), path.parent, source=f"{path}: scenarios[{index}].target"
                )
    try:
        loaded = model.model_validate(data)
    except ValidationError as exc:
        raise UserError(
            f"{path}: invalid {model.__name__}: {describe_validation_error(exc, data, model)}"
        ) from exc
    if target is not None:
        loaded.target = target  # type: ignore[attr-defined]
    for index, own in own_targets.items():
        loaded.scenarios[index].target = own  # type: ignore[attr-defined]
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


def describe_validation_error(
    exc: ValidationError, data: Any, model: type[BaseModel] | None = None
) -> str:
    """Every problem of ``exc`` as ``location: problem; fix``, joined by ``"; "``;
    ``model`` (the one validated) lets an unknown field get a "did you mean"."""
    return "; ".join(dict.fromkeys(_describe(err, data, model) for err in exc.errors()))


def _describe(err: Any, data: Any, model: type[BaseModel] | None) -> str:
    loc: tuple[int | str, ...] = tuple(err["loc"])
    where = format_location(loc)
    code_only = _code_only_component(data, loc)
    if code_only is not None:
        at, kind = code_only
        return (
            f"{format_location(at)}: a {kind} holds Python code, which a file cannot; build "
            "this scenario in Python, or use a kind a file can express"
        )
    kind = err["type"]
    if kind == "extra_forbidden" and loc:
        owner = _at(data, loc[:-1])
        fields = _fields_at(model, loc[:-1])
        if fields is not None and not (isinstance(owner, dict) and "kind" in owner):
            return f"{where}: unknown field {loc[-1]!r}{_did_you_mean(str(loc[-1]), fields)}"
        return f"{where}: unknown field {loc[-1]!r}{_field_hint(owner, str(loc[-1]))}"
    if kind == "missing":
        return f"{where}: required field missing; add it"
    message = str(err["msg"]).removeprefix("Value error, ")
    given = err.get("input")
    if kind == "string_type" and (given is None or isinstance(given, bool | int | float)):
        shown = "nothing" if given is None else repr(given)
        return (
            f"{where}: {message}, got {shown}; quote it (YAML reads yes, no, on, off as "
            "booleans, null and ~ as nothing, 1.10 as a number)"
        )
    if "unknown " in message and " kind " in message:
        given = _at(data, loc)
        wanted = given.get("kind") if isinstance(given, dict) else None
        known = message.partition("registered kinds: ")[2].split(", ")
        close = difflib.get_close_matches(str(wanted), known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else _SCHEMA_HINT
        return f"{where}: unknown kind {wanted!r}; {hint}"
    return f"{where}: {message}"


def _fields_at(model: type[BaseModel] | None, loc: Sequence[int | str]) -> list[str] | None:
    """The fields of the model found at ``loc`` inside ``model`` (``steps[0]`` of a
    ``Scenario`` is a ``Step``), or ``None`` where the path leaves plain models."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if len(args) == 1 else None
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            current = None if field is None else field.annotation
        else:
            return None
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return None


def _did_you_mean(field: str, fields: list[str]) -> str:
    close = difflib.get_close_matches(field, fields, n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; its fields are {', '.join(fields)}"


def _code_only_component(
    data: Any, loc: tuple[int | str, ...]
) -> tuple[tuple[int | str, ...], str] | None:
    """Where ``loc`` is inside a component of a kind that holds Python code (``fn``,
    ``trace_custom``, ``with_spy``): its location and kind."""
    for depth in range(len(loc), -1, -1):
        owner = _at(data, loc[:depth])
        if isinstance(owner, dict) and owner.get("kind") in CODE_ONLY_KINDS:
            return loc[:depth], str(owner["kind"])
    return None


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
    for family in registered_families("check", "interaction spec"):
        try:
            fields = list(family.kind_class(kind).model_fields)
        except ValueError:
            continue
        family_name = family._family
        break
    article = "an" if kind[:1] in "aeiou" else "a"
    return f" in {article} {kind} {family_name}{_did_you_mean(field, fields)}"
