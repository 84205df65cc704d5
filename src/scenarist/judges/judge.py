"""Judge objects: what turns a rendered rubric into a verdict.

A judge check (:class:`~scenarist.judges.base.BaseLLMCheck`) decides *what* to ask; a
judge decides *how* to ask it. :class:`BaseJudge` is that role (the giskard-checks compat
name); :class:`LLMChatJudge` plays it with any :class:`~scenarist.providers.Provider`: it
asks for the verdict schema through ``json_schema``, parses strictly, and on a malformed
answer shows the model its mistake and asks again, up to ``max_retries`` times.

:func:`resolve_judge` turns what a user configured (a judge, a provider, a
``"provider/model"`` string, or nothing: the default judge) into a judge. Strings resolve
through :func:`scenarist.providers.resolve.resolve_provider`, imported on first use, so a
missing SDK or API key surfaces as its ``ProviderError`` message, which says what to
install or set.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from scenarist.judges.verdict import VERDICT_SCHEMA, LLMCheckResult, parse_verdict
from scenarist.model_defaults import get_default_judge
from scenarist.providers.base import Message, Provider, ProviderError

__all__ = ["BaseJudge", "JudgeCall", "LLMChatJudge", "judge_name", "resolve_judge"]

NO_JUDGE = (
    "No judge model is configured. Pass judge='openai/gpt-4o-mini' (or a Provider object) "
    "to the check, call scenarist.set_default_judge('openai/gpt-4o-mini'), or set "
    "SCENARIST_DEFAULT_JUDGE (or SCENARIST_DEFAULT_MODEL)."
)


def _add(total: float | None, part: float | None) -> float | None:
    """Sum usage; an unknown part makes the total unknown (never silently too low)."""
    return None if total is None or part is None else total + part


@dataclass
class JudgeCall:
    """One verdict request, retries included: the verdict (or why there is none) and usage."""

    verdict: LLMCheckResult | None = None
    problem: str | None = None
    attempts: int = 0
    model: str | None = None
    tokens_in: int | None = 0
    tokens_out: int | None = 0
    cost_usd: float | None = 0.0
    answers: list[str] = field(default_factory=list)

    def record(self, model: str | None, tokens_in: Any, tokens_out: Any, cost: Any) -> None:
        """Count one model answer's usage."""
        self.attempts += 1
        self.model = model or self.model
        self.tokens_in = None if (t := _add(self.tokens_in, tokens_in)) is None else int(t)
        self.tokens_out = None if (t := _add(self.tokens_out, tokens_out)) is None else int(t)
        self.cost_usd = _add(self.cost_usd, cost)


class BaseJudge(ABC):
    """Something that answers a rubric prompt with a :class:`LLMCheckResult`."""

    @property
    @abstractmethod
    def name(self) -> str:
        """How reports and dumps name this judge, e.g. ``"openai/gpt-4o-mini"``."""

    @abstractmethod
    async def ask(
        self, messages: list[Message], *, temperature: float = 0.0, max_retries: int = 2
    ) -> JudgeCall:
        """One verdict for ``messages``; a malformed answer is retried, then reported."""

    async def judge(self, prompt: str, inputs: dict[str, Any] | None = None) -> LLMCheckResult:
        """The verdict for ``prompt`` (a Jinja template when ``inputs`` are given).

        Raises :class:`ProviderError` when no valid verdict comes back; judge checks
        never call this (they turn that case into an ERROR result).
        """
        from scenarist.judges._prompts import judge_messages, render

        text = render(prompt, inputs, source_name="prompt") if inputs is not None else prompt
        call = await self.ask(judge_messages(text))
        if call.verdict is None:
            raise ProviderError(f"{self.name} gave no valid verdict: {call.problem}")
        return call.verdict


class LLMChatJudge(BaseJudge):
    """A judge backed by a chat model (a Provider, or a ``"provider/model"`` string).

    ``generator=`` is accepted as an alias of ``provider`` (giskard-checks' keyword). A
    string is resolved on the first request, so building a check never needs the SDK.
    """

    def __init__(self, provider: Provider | str | None = None, *, generator: Any = None) -> None:
        chosen = provider if provider is not None else generator
        if chosen is None:
            raise TypeError("LLMChatJudge needs a provider: LLMChatJudge('openai/gpt-4o-mini')")
        self._spec: Provider | str = chosen
        self._provider: Provider | None = None if isinstance(chosen, str) else chosen

    @property
    def name(self) -> str:
        return judge_name(self._spec)

    @property
    def provider(self) -> Provider:
        """The provider, resolved from its ``"provider/model"`` string on first use."""
        if self._provider is None:
            self._provider = _resolve_provider(str(self._spec))
        return self._provider

    async def ask(
        self, messages: list[Message], *, temperature: float = 0.0, max_retries: int = 2
    ) -> JudgeCall:
        """Ask up to ``1 + max_retries`` times; each retry shows the model what was wrong."""
        call = JudgeCall()
        conversation = list(messages)
        for _ in range(1 + max_retries):
            response = await self.provider.chat(
                conversation, temperature=temperature, json_schema=VERDICT_SCHEMA
            )
            call.record(response.model, response.tokens_in, response.tokens_out, response.cost_usd)
            call.answers.append(response.text)
            outcome = parse_verdict(response)
            if isinstance(outcome, LLMCheckResult):
                call.verdict, call.problem = outcome, None
                return call
            call.problem = outcome
            conversation += [
                {"role": "assistant", "content": response.text},
                {
                    "role": "user",
                    "content": f"That answer cannot be used: {outcome}. Reply again with "
                    'only the JSON object {"passed": ..., "reason": ..., "score": ...}.',
                },
            ]
        return call

    def __repr__(self) -> str:
        return f"LLMChatJudge({self.name!r})"


def _resolve_provider(spec: str) -> Provider:
    try:
        from scenarist.providers.resolve import resolve_provider
    except ModuleNotFoundError as exc:  # pragma: no cover - the adapters ship with the core
        raise ProviderError(
            f"cannot resolve {spec!r}: scenarist.providers.resolve is unavailable ({exc})"
        ) from exc
    provider: Provider = resolve_provider(spec)
    return provider


def judge_name(judge: Any) -> str:
    """The ``"provider/model"``-style name of a judge, provider or spec string."""
    if isinstance(judge, str):
        return judge
    name = getattr(judge, "name", None)
    return name if isinstance(name, str) and name else type(judge).__name__


def resolve_judge(spec: Any = None) -> BaseJudge:
    """The judge for ``spec``; ``None`` means the default judge (then the default generator).

    Raises :class:`ProviderError` when nothing is configured or the provider cannot be
    built (missing SDK or key), with a message that says what to do.
    """
    if spec is None:
        spec = get_default_judge()
        if spec is None:
            raise ProviderError(NO_JUDGE)
    if isinstance(spec, BaseJudge):
        return spec
    if isinstance(spec, str) or callable(getattr(spec, "chat", None)):
        judge = LLMChatJudge(spec)
        _ = judge.provider  # resolve now, so a missing SDK or key is reported up front
        return judge
    raise ProviderError(
        f"cannot use {spec!r} as a judge: expected a 'provider/model' string, a Provider "
        "(an object with an async chat(...)) or a BaseJudge"
    )
