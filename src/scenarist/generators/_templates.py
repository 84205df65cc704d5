"""Prompt rendering: our package templates and users' inline or file templates (Jinja2).

Jinja2 is imported on first render, so ``import scenarist`` stays light. Undefined
variables are errors (``StrictUndefined``): a typo in a prompt must not silently render as
an empty string and send the model a prompt with a hole in it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from scenarist.model.trace import Trace

__all__ = ["render_file", "render_package", "render_string", "transcript"]

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
    )


def render_package(name: str, **values: Any) -> str:
    """Render ``templates/<name>`` shipped with scenarist."""
    return str(_environment().get_template(name).render(**values)).strip()


def render_string(source: str, **values: Any) -> str:
    """Render an inline template written by a user."""
    return str(_environment().from_string(source).render(**values)).strip()


def render_file(path: str | Path, **values: Any) -> str:
    """Render a template file written by a user (read as UTF-8)."""
    return render_string(Path(path).read_text(encoding="utf-8"), **values)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def transcript(trace: Trace[Any, Any]) -> str:
    """The conversation so far, one ``User:`` / ``Assistant:`` line pair per interaction."""
    lines: list[str] = []
    for interaction in trace.interactions:
        lines.append(f"User: {_show(interaction.inputs)}")
        lines.append(f"Assistant: {_show(interaction.outputs)}")
    return "\n".join(lines)
