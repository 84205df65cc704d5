"""Offline fakes for the judge tests: a scripted chat provider and trace helpers."""

from __future__ import annotations

import json
from typing import Any

from scenarist.model.trace import Interaction, Trace
from scenarist.providers.base import ChatResponse, Message, ProviderError


class FakeProvider:
    """A Provider that answers from a script: dicts become JSON, strings are sent as is,
    exceptions are raised. It records every request."""

    def __init__(
        self,
        *replies: dict[str, Any] | str | Exception,
        name: str = "fake/judge",
        tokens: tuple[int, int] | None = (100, 20),
        cost_usd: float | None = 0.001,
    ) -> None:
        self.replies = list(replies)
        self._name = name
        self.tokens = tokens
        self.cost_usd = cost_usd
        self.requests: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return self._name

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> ChatResponse:
        self.requests.append(
            {"messages": list(messages), "temperature": temperature, "json_schema": json_schema}
        )
        if not self.replies:
            raise AssertionError("FakeProvider ran out of scripted replies")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        tokens_in, tokens_out = self.tokens or (None, None)
        return ChatResponse(
            text=text,
            model="judge-1",
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self.cost_usd,
        )

    async def embed(self, texts: list[str]) -> list[list[float]]:
        raise ProviderError("FakeProvider does not embed")

    @property
    def prompt(self) -> str:
        """The rubric (user message) of the first request."""
        return self.requests[0]["messages"][-1]["content"]


def verdict(
    passed: bool, reason: str = "the material shows it", score: float | None = None
) -> dict[str, Any]:
    return {"passed": passed, "reason": reason, "score": score}


def make_trace(*turns: tuple[Any, Any], metadata: dict[str, Any] | None = None) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace()
    for inputs, outputs in turns:
        trace = trace.with_interaction(
            Interaction(inputs=inputs, outputs=outputs, metadata=metadata or {})
        )
    return trace
