"""Port a giskard-checks program to scenarist the way the compat contract promises: the
import lines change, nothing else.

Each line marked ``# IMPORT`` names ``giskard.checks`` (``from giskard.checks import ...``,
``import giskard.checks as gc``, ``from giskard.checks.builtin import ...``); the port
puts ``scenarist`` in its place. No other line may mention giskard.
"""

from __future__ import annotations

__all__ = ["port"]


def port(source: str) -> str:
    """The scenarist version of the giskard-checks program ``source``."""
    lines = source.splitlines()
    marked = [i for i, line in enumerate(lines) if line.rstrip().endswith("# IMPORT")]
    if not marked:
        raise ValueError("mark the giskard.checks import line(s) with `# IMPORT`")
    for i in marked:
        if "giskard.checks" not in lines[i]:
            raise ValueError(f"line {i + 1} is marked `# IMPORT` but names no giskard.checks")
        lines[i] = lines[i].replace("giskard.checks", "scenarist")
    stray = [i + 1 for i, line in enumerate(lines) if "giskard" in line and i not in marked]
    if stray:
        raise ValueError(f"giskard named outside the `# IMPORT` lines: lines {stray}")
    return "\n".join(lines) + "\n"
