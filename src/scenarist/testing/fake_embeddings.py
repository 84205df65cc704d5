"""``BagOfWordsEmbedder``: a deterministic, offline embedding provider for tests.

Each lower-cased word is hashed (SHA-256, stable across processes) into one of ``dim``
buckets; a text's vector counts its words per bucket. Texts that share words are
similar, texts that share none score 0, identical texts score 1: enough to test
similarity thresholds without a model. It cannot chat.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from scenarist.providers.base import ChatResponse, Message, ProviderError

__all__ = ["BagOfWordsEmbedder"]


class BagOfWordsEmbedder:
    """A Provider whose ``embed`` counts hashed words (``name``: ``fake/bag-of-words``)."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "fake/bag-of-words"

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> ChatResponse:
        raise ProviderError(f"{self.name} is an embedding model; it cannot chat")

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
            counts[bucket % self.dim] += 1.0
        return counts
