"""Port a giskard-checks program to scenarist the way the compat contract promises: the
import lines change, nothing else.

Each import of ``giskard.checks`` (``from giskard.checks import ...``, ``import
giskard.checks as gc``, ``from giskard.checks.builtin import ...``) is marked ``# IMPORT``
on one of its lines (a formatter may move the comment to the closing parenthesis); the
port puts ``scenarist`` in place of ``giskard.checks`` on the line that names the module.
No other line may mention giskard.
"""

from __future__ import annotations

import ast

__all__ = ["port"]


def _names_giskard(node: ast.stmt) -> bool:
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").startswith("giskard.checks")
    if isinstance(node, ast.Import):
        return any(a.name.startswith("giskard.checks") for a in node.names)
    return False


def _giskard_imports(tree: ast.Module) -> list[ast.stmt]:
    return [node for node in tree.body if _names_giskard(node)]


def port(source: str) -> str:
    """The scenarist version of the giskard-checks program ``source``."""
    lines = source.splitlines()
    imports = _giskard_imports(ast.parse(source))
    if not imports:
        raise ValueError("a giskard-checks program imports giskard.checks")
    changed = set()
    for node in imports:
        assert node.end_lineno is not None
        span = range(node.lineno - 1, node.end_lineno)
        if not any(lines[i].rstrip().endswith("# IMPORT") for i in span):
            raise ValueError(f"mark the giskard.checks import on line {node.lineno} `# IMPORT`")
        first = node.lineno - 1
        lines[first] = lines[first].replace("giskard.checks", "scenarist")
        changed.update(span)
    stray = [i + 1 for i, line in enumerate(lines) if "giskard" in line and i not in changed]
    if stray:
        raise ValueError(f"giskard named outside its `# IMPORT` statements: lines {stray}")
    return "\n".join(lines) + "\n"
