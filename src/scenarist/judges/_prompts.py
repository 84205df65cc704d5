"""Rubric prompts: our Jinja2 templates, rendered strictly.

Templates live next to this module in ``templates/*.j2`` (package data). Rendering uses
``StrictUndefined``, so a template that names a variable the check does not provide fails
with :class:`PromptError` (→ ERROR) instead of silently asking the judge about an empty
string. ``jinja2`` is imported here, on first render, never by ``import scenarist``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarist.errors import PromptError
from scenarist.providers.base import Message

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["TEMPLATES", "PromptError", "as_text", "builtin", "judge_messages", "render"]

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        autoescape=False,  # prompts are plain text, not HTML
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text"] = as_text
    return env


def as_text(value: Any) -> str:
    """A value as prompt text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def builtin(name: str) -> str:
    """The source of the built-in template ``templates/<name>.j2``."""
    return (TEMPLATES / f"{name}.j2").read_text(encoding="utf-8")


def render(source: str, variables: dict[str, Any] | None, *, source_name: str) -> str:
    """Render template ``source`` with ``variables``; :class:`PromptError` says what failed."""
    from jinja2 import TemplateError, UndefinedError

    try:
        template = _environment().from_string(source)
        return template.render(variables or {}).strip()
    except UndefinedError as exc:
        raise PromptError(
            f"The prompt template ({source_name}) uses an undefined variable: {exc.message}. "
            f"Available variables: {', '.join(sorted(variables or {})) or 'none'}."
        ) from exc
    except TemplateError as exc:
        raise PromptError(f"The prompt template ({source_name}) is invalid: {exc}") from exc


def judge_messages(prompt: str) -> list[Message]:
    """The chat messages for one verdict: our evaluator instructions, then the rubric."""
    return [
        {"role": "system", "content": render(builtin("system"), {}, source_name="system.j2")},
        {"role": "user", "content": prompt},
    ]
