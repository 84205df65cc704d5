"""``WithGeneratorMixin`` and ``WithEmbeddingMixin``: a model field that names a provider.

Generators and checks that need a model take it as a field: a Provider object, a
``"provider/model"`` string, or ``None`` for the configured default (resolved when used,
not when built, so a scenario can be written before the defaults are set). In a JSON dump
a provider object is written as its ``name``, which resolves back to the same model for
the built-in adapters (a :class:`~scenarist.providers.CallableProvider` exists only in
code, so its name does not resolve again).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    field_serializer,
    field_validator,
)

from scenarist.providers.base import Provider
from scenarist.providers.named_model import adopt, provider_and_model
from scenarist.providers.resolve import Purpose, resolve_provider

__all__ = ["WithEmbeddingMixin", "WithGeneratorMixin", "check_model_spec"]


def check_model_spec(value: Any, what: str) -> Any:
    """Validate a model field: ``None``, a ``"provider/model"`` string (a bare name is
    OpenAI's), a Provider, or a giskard-agents ``Generator`` / ``EmbeddingModel`` (taken
    as ours of the same name, :func:`~scenarist.providers.named_model.adopt`)."""
    value = adopt(value)
    if value is None or isinstance(value, Provider):
        return value
    if isinstance(value, str):
        try:
            provider_and_model(value)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
        return value.strip()
    raise ValueError(
        f"{what} must be a 'provider/model' string, a Provider object (async chat() and "
        f"embed()) or a giskard-agents Generator / EmbeddingModel, got {type(value).__name__}"
    )


def dump_model_spec(value: Any, info: SerializationInfo) -> Any:
    """A model field in a JSON dump: strings as they are, provider objects as their name
    (a Python dump keeps the object, so ``copy_with`` and friends keep the same provider)."""
    if value is None or isinstance(value, str) or not info.mode_is_json():
        return value
    return getattr(value, "name", None) or repr(value)


class WithGeneratorMixin(BaseModel):
    """A ``generator`` field: the chat model (else ``get_default_generator()``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    generator: Any = Field(default=None, description="Provider, 'provider/model' or None")

    _generator_purpose: Purpose = "generator"

    @field_validator("generator")
    @classmethod
    def _check_generator(cls, value: Any) -> Any:
        return check_model_spec(value, "generator")

    @field_serializer("generator")
    def _dump_generator(self, value: Any, info: SerializationInfo) -> Any:
        return dump_model_spec(value, info)

    def resolve_generator(self) -> Provider:
        """The provider to call (``ProviderError`` saying how to configure one if none)."""
        return resolve_provider(self.generator, purpose=self._generator_purpose)


class WithEmbeddingMixin(BaseModel):
    """An ``embedding_model`` field (else ``get_default_embedding_model()``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    embedding_model: Any = Field(default=None, description="Provider, 'provider/model' or None")

    @field_validator("embedding_model")
    @classmethod
    def _check_embedding_model(cls, value: Any) -> Any:
        return check_model_spec(value, "embedding_model")

    @field_serializer("embedding_model")
    def _dump_embedding_model(self, value: Any, info: SerializationInfo) -> Any:
        return dump_model_spec(value, info)

    def resolve_embedding_model(self) -> Provider:
        """The embedding provider (``ProviderError`` saying how to configure one if none)."""
        return resolve_provider(self.embedding_model, purpose="embedding")

    async def get_embeddings(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, from the resolved embedding model."""
        return await self.resolve_embedding_model().embed(texts)
