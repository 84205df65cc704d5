"""Judge objects: what turns a rendered rubric into a verdict.

A judge check (:class:`~scenarist.judges.base.BaseLLMCheck`) decides *what* to ask; a
judge decides *how* to ask it. :class:`BaseJudge` is that role (the giskard-checks compat
name); :class:`LLMChatJudge` plays it with any :class:`~scenarist.providers.Provider`: it
asks for the verdict schema through ``json_schema``, parses strictly, and on a malformed
answer shows the model its mistake and asks again, up to ``max_retries`` times.

Judges are kind-registered pydantic models (``@BaseJudge.register("my_judge")``, as in
giskard-checks), so a check carrying one dumps it as ``{"kind": ..., fields}`` and loads
it back; a user judge may implement giskard's ``judge(prompt, inputs)`` or our ``ask``.

:func:`resolve_judge` turns what a user configured (a judge, a provider, a
``"provider/model"`` string, or nothing: the default judge) into a judge. Strings resolve
through :func:`scenarist.providers.resolve.resolve_provider`, imported on first use, so a
missing SDK or API key surfaces as its ``ProviderError`` message, which says what to
install or set.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BeforeValidator, PrivateAttr, field_serializer

from scenarist.errors import StructuredOutputError
from scenarist.judges.verdict import (
    VERDICT_SCHEMA,
    LLMCheckResult,
    instructions_of,
    parse_verdict,
)
from scenarist.model._registry import KindRegistered
from scenarist.providers.base import ChatResponse, Message, Provider, ProviderError, single_attempt
from scenarist.providers.defaults import configured
from scenarist.providers.named_model import NamedModel, adopt

__all__ = [
    "BaseJudge",
    "JudgeCall",
    "LLMChatJudge",
    "get_default_judge",
    "judge_name",
    "resolve_judge",
]


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
    log: list[dict[str, Any]] = field(default_factory=list)
    """Every attempt: its raw answer, usage and why it was not a verdict (if it was not)."""

    @property
    def problems(self) -> list[str]:
        """Why each refused attempt was not a verdict, ``"attempt N: ..."``, in order (the
        :attr:`problem` alone for a judge that logs no attempts)."""
        listed = [
            f"attempt {number}: {entry['problem']}"
            for number, entry in enumerate(self.log, start=1)
            if entry.get("problem")
        ]
        return listed or ([self.problem] if self.problem else [])

    def record(self, model: str | None, tokens_in: Any, tokens_out: Any, cost: Any) -> None:
        """Count one model answer's usage."""
        self.log.append(
            {"model": model, "tokens_in": tokens_in, "tokens_out": tokens_out, "cost_usd": cost}
        )
        self.attempts += 1
        self.model = model or self.model
        self.tokens_in = None if (t := _add(self.tokens_in, tokens_in)) is None else int(t)
        self.tokens_out = None if (t := _add(self.tokens_out, tokens_out)) is None else int(t)
        self.cost_usd = _add(self.cost_usd, cost)


class BaseJudge(KindRegistered):
    """Something that answers a rubric with a :class:`LLMCheckResult`: a pydantic model,
    registered by kind like checks, so a check carrying a judge dumps and loads.

    Implement either protocol:

    - giskard-checks': ``async def judge(self, prompt, inputs, *, output_type=...)``,
      given the rubric's Jinja2 *source* and its variables (``trace`` included), returning
      an :class:`LLMCheckResult` (a sync ``judge`` is accepted too);
    - ours: ``async def ask(self, messages, *, temperature, max_retries) -> JudgeCall``,
      given the rendered chat messages, returning the verdict with its usage.

    Register it to dump and load it (``@BaseJudge.register("my_judge")``; its fields
    forbid unknown keys, as checks' do); ``BaseJudge.model_validate({"kind": ...})``
    rebuilds it, and ``BaseJudge.kinds()`` lists the kinds.
    """

    _family = "judge"

    @property
    def name(self) -> str:
        """How reports and dumps name this judge, e.g. ``"openai/gpt-4o-mini"``."""
        return self.kind or type(self).__name__

    def _implements(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(BaseJudge, method)

    async def ask(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_retries: int = 2,
        threshold: float | None = None,
    ) -> JudgeCall:
        """One verdict for ``messages``; a malformed answer is retried, then reported.

        ``threshold`` is the check's (the score decides the verdict): an implementation
        may leave it out of its signature, it is then not passed. The default serves
        judges that implement only :meth:`judge`: it hands them the rendered rubric as the
        prompt, with no variables.
        """
        if not self._implements("judge"):
            raise NotImplementedError(
                f"{type(self).__name__} must implement judge(prompt, inputs) or "
                "ask(messages, temperature=..., max_retries=...)"
            )
        return await self._judge_call(messages[-1]["content"], {})

    async def judge(
        self, prompt: str, inputs: dict[str, Any] | None = None, *, output_type: Any = None
    ) -> LLMCheckResult:
        """The verdict for ``prompt`` (a Jinja template when ``inputs`` are given).

        Raises :class:`ProviderError` when no valid verdict comes back; judge checks
        never call this on judges that implement :meth:`ask` (they turn that case into an
        ERROR result).
        """
        if not self._implements("ask"):
            raise NotImplementedError(
                f"{type(self).__name__} must implement judge(prompt, inputs) or "
                "ask(messages, temperature=..., max_retries=...)"
            )
        from scenarist.judges._prompts import judge_messages, render

        text = render(prompt, inputs, source_name="prompt") if inputs is not None else prompt
        call = await self.ask(judge_messages(text))
        if call.verdict is None:
            raise ProviderError(f"{self.name} gave no valid verdict: {call.problem}")
        return call.verdict

    async def verdict_call(
        self,
        template: str,
        inputs: dict[str, Any],
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_retries: int = 2,
        threshold: float | None = None,
    ) -> JudgeCall:
        """What a judge check asks: :meth:`ask` with the rendered ``messages`` when this
        judge implements it (with ``threshold`` when its ``ask`` takes one), else
        giskard's :meth:`judge` with the ``template`` source and its ``inputs``."""
        if self._implements("ask") or not self._implements("judge"):
            options: dict[str, Any] = {"temperature": temperature, "max_retries": max_retries}
            if threshold is not None and _takes_threshold(type(self).ask):
                options["threshold"] = threshold
            return await self.ask(messages, **options)
        return await self._judge_call(template, inputs)

    async def _judge_call(self, prompt: str, inputs: dict[str, Any]) -> JudgeCall:
        """Call a giskard-style :meth:`judge`; a verdict of another type is reported."""
        outcome: Any = self.judge(prompt, inputs, output_type=LLMCheckResult)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        # Usage is unknown: the judge made its own calls, if any.
        call = JudgeCall(attempts=1, tokens_in=None, tokens_out=None, cost_usd=None)
        if isinstance(outcome, LLMCheckResult):
            call.verdict = outcome
        else:
            call.problem = (
                f"{type(self).__name__}.judge returned {type(outcome).__name__}, expected an "
                "LLMCheckResult(passed=..., reason=...)"
            )
        return call


def _takes_threshold(method: Any) -> bool:
    """Whether a judge's ``ask`` accepts ``threshold=`` (user judges written before it
    existed do not)."""
    parameters = inspect.signature(method).parameters.values()
    return any(p.name == "threshold" or p.kind is p.VAR_KEYWORD for p in parameters)


def _check_generator(value: Any) -> Any:
    """A chat judge's model: ``None``, ``"provider/model"``, a Provider, or a generator
    dump (giskard's ``{"kind": ..., "model": ...}``, read by its model)."""
    from scenarist.providers.named_model import Generator

    if isinstance(value, dict) and isinstance(value.get("model"), str):
        return Generator(model=value["model"])
    value = adopt(value)  # a giskard-agents Generator: ours, by its name
    if value is None or callable(getattr(value, "chat", None)):
        return value
    if isinstance(value, str) and "/" in value.strip("/"):
        return value.strip()
    raise ValueError(
        f"generator must be a 'provider/model' string (e.g. 'openai/gpt-4o-mini') or a "
        f"Provider, got {value!r}"
    )


@BaseJudge.register("llm")
class LLMChatJudge(BaseJudge):
    """A judge backed by a chat model: a Provider, a ``"provider/model"`` string, or
    ``None`` for the default generator (looked up at each call, as giskard-checks does).

    The model is the first positional argument or ``generator=`` (giskard-checks'
    keyword). A string is resolved on the first request, so building a check never
    needs the SDK.
    """

    generator: Annotated[Any, BeforeValidator(_check_generator)] = None

    _provider: Provider | None = PrivateAttr(default=None)

    def __init__(self, provider: Provider | str | None = None, /, **data: Any) -> None:
        if provider is not None:
            if data.get("generator") is not None:
                raise TypeError("give LLMChatJudge a model once: positionally or generator=")
            data["generator"] = provider
        super().__init__(**data)

    @field_serializer("generator", when_used="json")
    def _generator_as_name(self, value: Any) -> str | None:
        return None if value is None else judge_name(value)

    @property
    def name(self) -> str:
        if self.generator is None:
            from scenarist.providers.defaults import get_default_generator

            return judge_name(get_default_generator())
        return judge_name(self.generator)

    @property
    def provider(self) -> Provider:
        """The provider, resolved from its ``"provider/model"`` on first use (the default
        generator's at every use: it may change), so a missing SDK or key shows up front."""
        if self.generator is None:
            return _default_generator_provider()
        if self._provider is None:
            spec = self.generator
            if isinstance(spec, NamedModel):
                spec = spec.model
            self._provider = _resolve_provider(spec) if isinstance(spec, str) else spec
        return self._provider

    async def ask(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_retries: int = 2,
        threshold: float | None = None,
    ) -> JudgeCall:
        """Ask up to ``1 + max_retries`` times; each retry shows the model what was wrong.

        A verdict that would fail (by ``passed``, or by its score under ``threshold``) is
        never refused for its reason (:func:`~scenarist.judges.verdict.parse_verdict`).

        This is the only retry of a malformed answer: the adapter is asked for one attempt
        (:func:`~scenarist.providers.base.single_attempt`), so ``max_retries=0`` is one
        request, and every answer (raw text, tokens) is in :attr:`JudgeCall.log`.
        """
        call = JudgeCall()
        conversation = list(messages)
        provider = self.provider
        options = single_attempt(provider)
        instructions = instructions_of(messages)
        while call.attempts < 1 + max_retries:
            for response in await _answers(provider, conversation, temperature, options):
                call.record(
                    response.model, response.tokens_in, response.tokens_out, response.cost_usd
                )
                call.answers.append(response.text)
                call.log[-1]["answer"] = response.text
                outcome = parse_verdict(response, instructions, threshold=threshold)
                if isinstance(outcome, LLMCheckResult):
                    call.verdict, call.problem = outcome, None
                    return call
                call.problem = call.log[-1]["problem"] = outcome
            conversation += [
                {"role": "assistant", "content": call.answers[-1]},
                {
                    "role": "user",
                    "content": f"That answer cannot be used: {call.problem}. Reply again with "
                    'only the JSON object: "passed" true or false, "reason" in your own '
                    'words citing the material, and optionally "score" from 0 to 1.',
                },
            ]
        return call

    def __repr__(self) -> str:
        return f"LLMChatJudge({self.name!r})" if self.generator is not None else "LLMChatJudge()"


async def _answers(
    provider: Provider, messages: list[Message], temperature: float, options: dict[str, Any]
) -> list[ChatResponse]:
    """The answers one request produced: the response, or the refused ones an adapter
    kept on its :class:`StructuredOutputError` (the judge parses them by its own rules)."""
    try:
        return [
            await provider.chat(
                messages, temperature=temperature, json_schema=VERDICT_SCHEMA, **options
            )
        ]
    except StructuredOutputError as exc:
        answers = [r for r in exc.responses if isinstance(r, ChatResponse)]
        if not answers:
            raise
        return answers


def _default_generator_provider() -> Provider:
    """The default generator's adapter; when it is the built-in default and cannot be
    used (no key), the error says how to configure a judge."""
    from scenarist.providers.defaults import BUILTIN_GENERATOR, configured

    try:
        return _resolve_provider(None)
    except ProviderError as exc:
        if configured("generator") is not None:
            raise
        cause = exc.__cause__ or exc
        raise ProviderError(
            f"No judge model is configured, so the built-in default {BUILTIN_GENERATOR!r} is "
            f"used, and {cause}. Pass judge='openai/gpt-4o-mini' (or a Provider) to the "
            "check, call scenarist.set_default_judge(...), or set SCENARIST_DEFAULT_JUDGE "
            "(or the default generator: set_default_generator(...), SCENARIST_DEFAULT_MODEL)."
        ) from exc


def _resolve_provider(spec: str | None) -> Provider:
    """The adapter for ``"provider/model"`` (``None``: the default generator's)."""
    from scenarist.providers.resolve import resolve_provider

    provider: Provider = resolve_provider(spec, purpose="generator")
    return provider


def judge_name(judge: Any) -> str:
    """The ``"provider/model"``-style name of a judge, provider or spec string."""
    if isinstance(judge, str):
        return judge
    name = getattr(judge, "name", None)
    return name if isinstance(name, str) and name else type(judge).__name__


def resolve_judge(spec: Any = None) -> BaseJudge:
    """The judge for ``spec``; ``None`` means the default judge (then the default generator).

    Raises :class:`ProviderError` when the provider cannot be built (missing SDK or key),
    with a message that says what to do.
    """
    if spec is None:
        spec = get_default_judge()
    if isinstance(spec, LLMChatJudge):
        _ = spec.provider  # resolve now, so a missing SDK or key is reported up front
    if isinstance(spec, BaseJudge):
        return spec
    spec = adopt(spec)  # a giskard-agents Generator: ours, by its name
    if isinstance(spec, str) or callable(getattr(spec, "chat", None)):
        judge = LLMChatJudge(spec)
        _ = judge.provider  # resolve now, so a missing SDK or key is reported up front
        return judge
    raise ProviderError(
        f"cannot use {spec!r} as a judge: expected a 'provider/model' string, a Provider "
        "(an object with an async chat(...)) or a BaseJudge"
    )


def get_default_judge() -> BaseJudge:
    """The default judge: the ``BaseJudge`` set, else an ``LLMChatJudge`` on the configured
    judge model, else one that follows the default generator (``generator=None``)."""
    from scenarist.providers.named_model import Generator

    spec = configured("judge")
    if spec is None:
        return LLMChatJudge()
    if isinstance(spec, BaseJudge):
        return spec
    return LLMChatJudge(generator=Generator(model=spec) if isinstance(spec, str) else spec)
