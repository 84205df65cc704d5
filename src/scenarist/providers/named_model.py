"""``Generator`` and ``EmbeddingModel``: a model named ``"provider/model"``, as an object.

What ``get_default_generator()`` and ``get_default_embedding_model()`` return (giskard-
checks returns generator and embedding-model objects with a ``model`` attribute, never
``None``). Each is a :class:`~scenarist.providers.Provider` itself: ``chat`` and
``embed`` go to the adapter its name resolves to, on first use, so one can be passed
anywhere a model is taken (``generator=``, ``judge=``, ``set_default_*``). Small and
frozen; importing this module imports no SDK.

A name without a ``/`` is an OpenAI model (giskard's rule: ``Generator(model="gpt-4o")``
is ``openai/gpt-4o``). giskard-agents' own ``Generator`` and ``EmbeddingModel`` objects,
which giskard's documentation configures models with, are taken wherever a model is:
:func:`adopt` turns one into ours of the same name, recognising it by shape (a ``model``
name with ``complete()`` or ``embed()``), without importing giskard.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator, model_serializer

from scenarist.providers.base import ChatResponse, Message, Provider

__all__ = ["EmbeddingModel", "Generator", "NamedModel", "adopt", "provider_and_model"]


def provider_and_model(name: str) -> tuple[str, str]:
    """``("openai", "gpt-4o")`` for ``"openai/gpt-4o"``; a bare name is OpenAI's, as in
    giskard (``"gpt-4o"``); ``ValueError`` naming the form for an empty part."""
    prefix, slash, model = name.strip().partition("/")
    if not slash and prefix:
        return "openai", prefix
    if not prefix or not model:
        raise ValueError(
            f"model {name!r} must be written 'provider/model' (e.g. 'openai/gpt-4o-mini') "
            "or as an OpenAI model's bare name"
        )
    return prefix, model


class NamedModel(BaseModel):
    """A model by its ``"provider/model"`` name (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str] = ""
    model: str

    @field_validator("model")
    @classmethod
    def _provider_and_model(cls, value: str) -> str:
        provider_and_model(value)
        return value.strip()

    @model_serializer(mode="plain")
    def _with_kind(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model}

    @property
    def name(self) -> str:
        """The ``"provider/model"`` name (the Provider protocol's)."""
        return self.model

    def resolve(self) -> Provider:
        """The adapter this name resolves to (``ProviderError`` naming the fix if none)."""
        from scenarist.providers.resolve import resolve_provider

        provider: Provider = resolve_provider(self.model)
        return provider

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        json_retries: int | None = None,
    ) -> ChatResponse:
        """The resolved adapter's answer (``json_retries`` passed on when it takes one)."""
        from scenarist.providers.base import single_attempt

        provider = self.resolve()
        options = {} if json_retries is None else single_attempt(provider, json_retries)
        return await provider.chat(
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            json_schema=json_schema,
            **options,
        )

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """The resolved adapter's embeddings."""
        return await self.resolve().embed(texts)


class Generator(NamedModel):
    """A chat model for generation and judging (``get_default_generator()``)."""

    kind = "generator"


class EmbeddingModel(NamedModel):
    """An embedding model (``get_default_embedding_model()``)."""

    kind = "embedding_model"


def adopt(value: Any) -> Any:
    """``value`` itself, or for a giskard-agents generator or embedding model our
    :class:`Generator` / :class:`EmbeddingModel` of its ``model`` name.

    Recognised by shape, never by import: not a Provider, a non-empty ``model`` string,
    and an async ``complete()`` (a generator) or ``embed()`` (an embedding model). Only the
    name is kept: its generation parameters, retry policy and middlewares are giskard's
    client's and do not apply to ours.
    """
    if value is None or isinstance(value, (str, NamedModel, Provider)):
        return value
    model = getattr(value, "model", None)
    if not isinstance(model, str) or not model.strip():
        return value
    if callable(getattr(value, "complete", None)):
        return Generator(model=model)
    if callable(getattr(value, "embed", None)):
        return EmbeddingModel(model=model)
    return value
