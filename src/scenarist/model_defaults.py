"""Process-wide defaults: the generator, the judge and the embedding model.

Values come from explicit ``set_default_*`` calls, else from ``SCENARIST_*`` environment
variables (read once, cached; no ``.env`` file is ever read implicitly), else nothing.

=============================  =========================================================
``SCENARIST_DEFAULT_MODEL``    default generator, as ``"provider/model"``
``SCENARIST_DEFAULT_JUDGE``    default judge (falls back to the default generator)
``SCENARIST_EMBEDDING_MODEL``  default embedding model
=============================  =========================================================

A default is either a ``"provider/model"`` string or an object of the judge/generator
layer; turning a string into a provider client is that layer's job, done lazily, so
importing scenarist never imports an LLM SDK.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

__all__ = [
    "get_default_embedding_model",
    "get_default_generator",
    "get_default_judge",
    "reset_settings",
    "set_default_embedding_model",
    "set_default_generator",
    "set_default_judge",
]

_explicit: dict[str, Any] = {}


@cache
def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _check(value: Any, what: str) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        if "/" not in value.strip("/"):
            raise ValueError(
                f"{what} {value!r} must be written 'provider/model', e.g. 'openai/gpt-4o-mini'"
            )
        return value.strip()
    return value


def set_default_generator(generator: Any) -> None:
    """Set the default generator (``"provider/model"`` or a generator object; ``None`` clears)."""
    _explicit["generator"] = _check(generator, "generator")


def get_default_generator() -> Any:
    """The default generator, or ``None`` when none is configured."""
    if "generator" in _explicit:
        return _explicit["generator"]
    return _env("SCENARIST_DEFAULT_MODEL")


def set_default_judge(judge: Any) -> None:
    """Set the default judge (``"provider/model"`` or a judge object; ``None`` clears)."""
    _explicit["judge"] = _check(judge, "judge")


def get_default_judge() -> Any:
    """The default judge; else ``SCENARIST_DEFAULT_JUDGE``; else the default generator."""
    if _explicit.get("judge") is not None:
        return _explicit["judge"]
    return _env("SCENARIST_DEFAULT_JUDGE") or get_default_generator()


def set_default_embedding_model(model: Any) -> None:
    """Set the default embedding model (``"provider/model"`` or an object; ``None`` clears)."""
    _explicit["embedding_model"] = _check(model, "embedding model")


def get_default_embedding_model() -> Any:
    """The default embedding model, or ``None`` when none is configured."""
    if "embedding_model" in _explicit:
        return _explicit["embedding_model"]
    return _env("SCENARIST_EMBEDDING_MODEL")


def reset_settings() -> None:
    """Forget explicit defaults and re-read the environment on next use (for tests)."""
    _explicit.clear()
    _env.cache_clear()
