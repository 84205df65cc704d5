"""Process-wide defaults: the generator, the judge and the embedding model.

Values come from explicit ``set_default_*`` calls, else from environment variables (read
once, cached; no ``.env`` file is ever read implicitly), else the built-in defaults,
giskard-checks' own (``openai/gpt-4o-mini``, ``text-embedding-3-small``, a bare name
being an OpenAI model's as in giskard):

=============================  ==========================================================
``SCENARIST_DEFAULT_MODEL``    default generator, as ``"provider/model"``
                               (giskard-checks' ``GISKARD_CHECKS_DEFAULT_MODEL`` is read
                               when it is unset)
``SCENARIST_DEFAULT_JUDGE``    default judge (else the default generator);
                               ``GISKARD_CHECKS_DEFAULT_JUDGE`` likewise
``SCENARIST_EMBEDDING_MODEL``  default embedding model;
                               ``GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL`` likewise
=============================  ==========================================================

The getters return objects, as giskard-checks' do, never ``None``: a
:class:`~scenarist.providers.named_model.Generator` /
:class:`~scenarist.providers.named_model.EmbeddingModel` (``.model``, usable as a
Provider) for a configured string, the configured object as is, and for the judge a
:class:`~scenarist.judges.LLMChatJudge` (``kind`` ``"llm"``) whose ``generator`` is the
configured judge model, or ``None`` when it follows the default generator. Turning a
name into a provider client is the provider layer's job, done lazily, so importing
scenarist never imports an LLM SDK.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any, Literal

__all__ = [
    "BUILTIN_EMBEDDING_MODEL",
    "BUILTIN_GENERATOR",
    "configured",
    "get_default_embedding_model",
    "get_default_generator",
    "reset_settings",
    "set_default_embedding_model",
    "set_default_generator",
    "set_default_judge",
]

Role = Literal["generator", "judge", "embedding_model"]

BUILTIN_GENERATOR = "openai/gpt-4o-mini"
BUILTIN_EMBEDDING_MODEL = "text-embedding-3-small"  # giskard-checks' name: OpenAI's

_ENV: dict[Role, tuple[str, str]] = {
    "generator": ("SCENARIST_DEFAULT_MODEL", "GISKARD_CHECKS_DEFAULT_MODEL"),
    "judge": ("SCENARIST_DEFAULT_JUDGE", "GISKARD_CHECKS_DEFAULT_JUDGE"),
    "embedding_model": ("SCENARIST_EMBEDDING_MODEL", "GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL"),
}

_explicit: dict[str, Any] = {}


@cache
def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _check(value: Any, what: str) -> Any:
    from scenarist.providers.named_model import adopt, provider_and_model

    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        if what == "judge":
            value = value.removeprefix("llm/")  # giskard's "llm/<provider>/<model>" form
        try:
            provider_and_model(value)  # a bare name is an OpenAI model's, as in giskard
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
        return value
    return adopt(value)  # a giskard-agents Generator / EmbeddingModel: ours, same name


def configured(role: Role) -> Any:
    """What was configured for ``role`` (an explicit value, else the environment's, as a
    ``"provider/model"`` string or an object), or ``None``: no built-in default here."""
    explicit = _explicit.get(role)
    if explicit is not None:
        return explicit
    for name in _ENV[role]:
        value = _env(name)
        if value is not None:
            return _check(value, "judge" if role == "judge" else name)
    return None


def set_default_generator(generator: Any) -> None:
    """Set the default generator (``"provider/model"`` or a generator object; ``None``
    restores the environment's or the built-in default)."""
    _explicit["generator"] = _check(generator, "generator")


def get_default_generator() -> Any:
    """The default generator: the object set, else a ``Generator`` for the configured (or
    built-in ``openai/gpt-4o-mini``) name."""
    from scenarist.providers.named_model import Generator

    spec = configured("generator")
    if spec is None:
        spec = BUILTIN_GENERATOR
    return Generator(model=spec) if isinstance(spec, str) else spec


def set_default_judge(judge: Any) -> None:
    """Set the default judge (``"provider/model"``, a Provider or a ``BaseJudge``; ``None``
    restores the environment's, else the default generator)."""
    _explicit["judge"] = _check(judge, "judge")


def set_default_embedding_model(model: Any) -> None:
    """Set the default embedding model (``"provider/model"`` or an object; ``None``
    restores the environment's or the built-in default)."""
    _explicit["embedding_model"] = _check(model, "embedding model")


def get_default_embedding_model() -> Any:
    """The default embedding model: the object set, else an ``EmbeddingModel`` for the
    configured (or built-in ``text-embedding-3-small``, OpenAI's) name."""
    from scenarist.providers.named_model import EmbeddingModel

    spec = configured("embedding_model")
    if spec is None:
        spec = BUILTIN_EMBEDDING_MODEL
    return EmbeddingModel(model=spec) if isinstance(spec, str) else spec


def reset_settings() -> None:
    """Forget explicit defaults and re-read the environment on next use (for tests)."""
    _explicit.clear()
    _env.cache_clear()
