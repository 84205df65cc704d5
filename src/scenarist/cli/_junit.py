"""Where a scenario of ``scenarist run`` was defined, for the JUnit file's ``file`` and
``line`` attributes (CI servers link a failing case to its source with them).

The file is the scenario's source file relative to the working directory (CI tools resolve
it from the checkout); an absolute path when it lies outside. The line is found cheaply
and only in Python files: the first ``Scenario("name", ...)`` (or ``Scenario(name=...)``)
call of the file whose name is that literal string, found by parsing the file once; a
name built at run time (an f-string, a loop) has no line, and the attribute is left out.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarist.report.junit import Location

__all__ = ["location", "locations"]


def location(path: Path, scenario_name: str | None = None) -> Location:
    """``(file, line)`` of the scenario ``scenario_name`` defined in ``path``."""
    line = _lines(str(path)).get(scenario_name) if scenario_name is not None else None
    return _relative(path), line


def locations(path: Path, scenario_names: Iterable[str]) -> list[Location]:
    """:func:`location` of each of ``scenario_names``, all defined in ``path``: the file
    resolved once (``Path.resolve`` twice a scenario was ~25 µs, a quarter of a second for
    10,000 of them) and its names parsed once."""
    file = _relative(path)
    lines = _lines(str(path))
    return [(file, lines.get(name)) for name in scenario_names]


def _relative(path: Path) -> str:
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:  # outside the working directory
        return os.fspath(absolute)


@lru_cache(maxsize=256)
def _lines(path: str) -> dict[str, int]:
    """Each literal scenario name of a Python file and the line of its first
    ``Scenario(...)`` call; empty for other files, or one that cannot be parsed."""
    if not path.endswith(".py"):
        return {}
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _called(node.func) != "Scenario":
            continue
        name = node.args[0] if node.args else None
        for keyword in node.keywords:
            if keyword.arg == "name":
                name = keyword.value
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            line = found.get(name.value)
            if line is None or node.lineno < line:
                found[name.value] = node.lineno
    return found


def _called(func: ast.expr) -> str | None:
    """``Scenario`` for ``Scenario(...)`` and ``checks.Scenario(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
