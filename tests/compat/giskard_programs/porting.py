"""Port a giskard-checks program to scenarist the way the compat contract promises: the
import lines change, nothing else.

Each import of ``giskard.checks`` (``from giskard.checks import ...``, ``import
giskard.checks as gc``, ``from giskard.checks.builtin import ...``) is marked ``# IMPORT``
on one of its lines (a formatter may move the comment to the closing parenthesis); the
port puts ``scenarist`` in place of ``giskard.checks`` on the line that names the module.
An import of giskard-agents' model objects (``from giskard.agents.generators import
Generator``, ``from giskard.agents import EmbeddingModel``), which giskard's documentation
configures models with, becomes ``from scenarist import ...``: scenarist offers the same
constructors. No other line may mention giskard.
"""

from __future__ import annotations

import ast
import re

__all__ = ["port"]

#: giskard-agents' names a ported program takes from ``scenarist`` instead.
AGENTS_NAMES = frozenset({"Generator", "EmbeddingModel"})
_AGENTS_MODULE = re.compile(r"giskard\.agents(\.\w+)*")


def _names_agents(node: ast.stmt) -> bool:
    """``from giskard.agents[.generators|.embeddings] import Generator, EmbeddingModel``."""
    return (
        isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[:2] == ["giskard", "agents"]
        and {alias.name for alias in node.names} <= AGENTS_NAMES
    )


def _names_giskard(node: ast.stmt) -> bool:
    if _names_agents(node):
        return True
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
    if not any(not _names_agents(node) for node in imports):
        raise ValueError("a giskard-checks program imports giskard.checks")
    changed = set()
    for node in imports:
        assert node.end_lineno is not None
        span = range(node.lineno - 1, node.end_lineno)
        if not any(lines[i].rstrip().endswith("# IMPORT") for i in span):
            raise ValueError(f"mark the giskard.checks import on line {node.lineno} `# IMPORT`")
        first = node.lineno - 1
        if _names_agents(node):
            lines[first] = _AGENTS_MODULE.sub("scenarist", lines[first], count=1)
        else:
            lines[first] = lines[first].replace("giskard.checks", "scenarist")
        changed.update(span)
    stray = [i + 1 for i, line in enumerate(lines) if "giskard" in line and i not in changed]
    if stray:
        raise ValueError(f"giskard named outside its `# IMPORT` statements: lines {stray}")
    return "\n".join(lines) + "\n"
