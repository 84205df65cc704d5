"""The provider layer's contract: what judges, generators and embeddings ask of a model.

A :class:`Provider` answers chat requests (optionally constrained to a JSON schema) and
embeds texts. Adapters wrap the official SDKs (``openai`` for any OpenAI-compatible
server, ``anthropic``) or a plain Python callable; ``"provider/model"`` strings resolve to
adapters (see :func:`scenarist.providers.resolve_provider`). Adapters call through the
SDKs' HTTP clients, so the LLM-call capture and cassettes see judge and simulator calls
exactly like an agent's.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from scenarist.errors import ProviderError

__all__ = ["ChatResponse", "Message", "Provider", "ProviderError", "single_attempt"]

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""


class ChatResponse(BaseModel):
    """A model's answer, with what it cost."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    parsed: Any = None
    """The answer decoded as JSON when a ``json_schema`` was requested (else ``None``)."""
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    refusal: str | None = None
    raw: Any = Field(default=None, repr=False, exclude=True)


@runtime_checkable
class Provider(Protocol):
    """A chat (and optionally embedding) model behind one small, typed interface."""

    @property
    def name(self) -> str:
        """``"provider/model"``, e.g. ``"openai/gpt-4o-mini"``."""
        ...

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> ChatResponse:
        """Answer ``messages``; with ``json_schema``, the answer must be JSON matching it."""
        ...

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One embedding vector per text (adapters without embeddings raise ProviderError)."""
        ...


def single_attempt(provider: Any, retries: int = 0) -> dict[str, Any]:
    """The ``chat`` keyword that sets the adapter's own retries on malformed structured
    answers (``{"json_retries": retries}``), or ``{}`` when its ``chat`` takes none.

    Judges and simulators have a retry policy of their own (``max_retries``, with the
    model shown its mistake); with this, theirs is the only one, so ``max_retries=0``
    means one request. Providers written before the keyword existed still work.
    """
    chat = getattr(provider, "chat", None)
    try:
        parameters = inspect.signature(chat).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return {}
    # a named parameter only: a ``**kwargs`` wrapper may forward to a chat that takes none
    if any(p.name == "json_retries" and p.kind is not p.VAR_KEYWORD for p in parameters):
        return {"json_retries": retries}
    return {}
