"""Model providers: the ``Provider`` contract, its adapters, and ``resolve_provider``.

The adapters load on first use (see :mod:`scenarist._lazy`): importing this package
imports no SDK.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.providers._structured import StructuredOutputError
from scenarist.providers.base import ChatResponse, Message, Provider, ProviderError

if TYPE_CHECKING:
    from scenarist.providers.anthropic_provider import AnthropicProvider
    from scenarist.providers.callable_provider import CallableProvider
    from scenarist.providers.local_provider import LocalEmbeddingProvider
    from scenarist.providers.mixins import WithEmbeddingMixin, WithGeneratorMixin
    from scenarist.providers.openai_provider import OpenAIProvider
    from scenarist.providers.resolve import resolve_provider

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "AnthropicProvider": "scenarist.providers.anthropic_provider",
        "CallableProvider": "scenarist.providers.callable_provider",
        "LocalEmbeddingProvider": "scenarist.providers.local_provider",
        "OpenAIProvider": "scenarist.providers.openai_provider",
        "WithEmbeddingMixin": "scenarist.providers.mixins",
        "WithGeneratorMixin": "scenarist.providers.mixins",
        "resolve_provider": "scenarist.providers.resolve",
    },
)

__all__ = [
    "AnthropicProvider",
    "CallableProvider",
    "ChatResponse",
    "LocalEmbeddingProvider",
    "Message",
    "OpenAIProvider",
    "Provider",
    "ProviderError",
    "StructuredOutputError",
    "WithEmbeddingMixin",
    "WithGeneratorMixin",
    "resolve_provider",
]
