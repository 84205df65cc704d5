"""Input generators: objects that produce a step's inputs, one turn at a time.

An input generator is a pydantic model registered by ``kind`` (so a scenario that uses
one still dumps to JSON as ``{"kind": "user_simulator", ...}`` and loads back), and an
async generator when called: ``gen(trace, input_type=None)`` yields an input, receives
the trace updated with the agent's answer, and yields the next one, until it stops. That
is the protocol :class:`~scenarist.engine.interactions.Interact` already speaks for generator
functions, so ``.interact(inputs=UserSimulator(...))`` needs nothing special.

:class:`BaseLLMGenerator` is the loop shared by the LLM-driven generators: each turn it
asks its model for ``{"goal_reached": bool, "message": str}`` and stops on a reached
goal, an empty message or ``max_steps`` turns. Each turn's answer is an
:class:`LLMGeneratorOutput` (giskard-checks' name); a scenario records it in the metadata
of the interaction it produced, under ``"simulator_output"``. An answer that cannot be used after
``max_retries`` more attempts raises :class:`~scenarist.errors.InputGenerationException`
(``max_retries`` is the only retry: the adapter is asked for one attempt each time).
Stopping before ``min_turns`` messages raises it too; at the default 0 (giskard-checks'
behaviour), a model that declares the goal reached before saying anything, or
``max_steps=0``, ends the conversation with no turn: the step adds no interaction and the
scenario's pass is flagged ``vacuous`` (``min_turns=1`` makes it the step's ERROR).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Generic, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    model_validator,
)

from scenarist.errors import InputGenerationException
from scenarist.model._registry import KindRegistered
from scenarist.model.trace import Trace
from scenarist.providers._structured import StructuredOutputError, parse_structured
from scenarist.providers.base import Message, Provider, ProviderError, single_attempt
from scenarist.providers.mixins import WithGeneratorMixin

__all__ = ["TURN_SCHEMA", "BaseLLMGenerator", "InputGenerator", "LLMGeneratorOutput", "Turn"]

T = TypeVar("T")

TURN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal_reached": {"type": "boolean"},
        "message": {"type": "string"},
    },
    "required": ["goal_reached", "message"],
    "additionalProperties": False,
}


class Turn(BaseModel):
    """One answer of the model playing the user."""

    model_config = ConfigDict(extra="forbid")

    goal_reached: StrictBool
    message: StrictStr


class LLMGeneratorOutput(BaseModel, Generic[T]):
    """One turn of an LLM input generator, as giskard-checks names it: whether the goal is
    reached, the message sent (``None`` when it is), and ``schema_issue``, why no message
    could be written (never with a message).

    A scenario puts each turn's output in its interaction's metadata, under
    ``"simulator_output"``: ``result.final_trace.last.metadata["simulator_output"]``.
    """

    goal_reached: bool = Field(description="Whether the goal is reached: no more messages.")
    schema_issue: str | None = Field(
        default=None, description="Why no message could be written (instead of a message)."
    )
    message: T | None = Field(default=None, description="The message; None once the goal is.")

    @model_validator(mode="after")
    def _message_or_schema_issue(self) -> Self:
        if self.message is not None and self.schema_issue is not None:
            raise ValueError("'message' and 'schema_issue' cannot both be set")
        return self


class InputGenerator(KindRegistered):
    """Base of input generators: subclass, implement ``__call__`` as an async generator."""

    _family = "input generator"

    async def __call__(
        self, trace: Trace[Any, Any], input_type: type[Any] | None = None
    ) -> AsyncGenerator[Any, Trace[Any, Any]]:
        """Yield inputs; each ``asend`` brings the trace with the agent's latest answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")
        yield  # pragma: no cover - makes this an async generator function


async def ask(
    generator: InputGenerator,
    provider: Provider,
    messages: list[Message],
    schema: dict[str, Any],
    *,
    attempts: int,
    temperature: float,
) -> Any:
    """Ask for a structured answer, up to ``attempts`` times; the decoded JSON value.

    Unusable answers (malformed JSON, a refusal) are asked again; a provider that cannot
    be reached or configured fails at once: asking again would not help.
    """
    label = generator.kind or type(generator).__name__
    problems: list[str] = []
    options = single_attempt(provider)
    for _ in range(attempts):
        try:
            response = await provider.chat(
                messages, temperature=temperature, json_schema=schema, **options
            )
        except StructuredOutputError as exc:
            problems.append(str(exc))
            continue
        except ProviderError as exc:
            raise InputGenerationException(f"{label}: {exc}") from exc
        if response.refusal is not None:
            problems.append(f"the model refused: {response.refusal}")
            continue
        if response.parsed is not None:
            return response.parsed
        try:
            return parse_structured(response.text, schema)
        except StructuredOutputError as exc:
            problems.append(str(exc))
    raise InputGenerationException(
        f"{label} could not produce an input in {attempts} attempt(s) with {provider.name}: "
        f"{problems[-1] if problems else 'no answer'}"
    )


class BaseLLMGenerator(InputGenerator, WithGeneratorMixin):
    """The simulated-user loop; subclasses say what to ask in :meth:`messages`."""

    max_steps: int = Field(default=3, ge=0)
    max_retries: int = Field(default=2, ge=0)
    temperature: float = Field(default=0.0, ge=0.0)
    # beyond giskard-checks; left out of dumps at its default, so giskard loads our files
    min_turns: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)
    """The fewest messages before the goal may be reached (or the message be empty), else
    the step ERRORs. Default 0, as giskard-checks: a goal reached before the first message
    ends the conversation with no turn (the scenario's pass is flagged ``vacuous``)."""

    @model_validator(mode="after")
    def _min_turns_within_max_steps(self) -> Self:
        if self.min_turns > self.max_steps:
            raise ValueError(
                f"min_turns={self.min_turns} is more than max_steps={self.max_steps}: the "
                "simulated user can never send that many messages; lower min_turns or raise "
                "max_steps"
            )
        return self

    def messages(self, trace: Trace[Any, Any], turn: int) -> list[Message]:
        """The chat messages for turn ``turn`` (0-based) of this step."""
        raise NotImplementedError(f"{type(self).__name__} must implement messages()")

    def template_values(self, trace: Trace[Any, Any], turn: int) -> dict[str, Any]:
        """What every prompt template sees: the trace, the transcript and the turn."""
        from scenarist.generators._templates import transcript

        return {
            "trace": trace,
            "interactions": list(trace.interactions),
            "transcript": transcript(trace),
            "turn": turn,
            "max_steps": self.max_steps,
        }

    async def next_turn(self, trace: Trace[Any, Any], turn: int) -> Turn:
        """Ask the model for the next turn (``InputGenerationException`` if it cannot)."""
        try:
            provider = self.resolve_generator()
        except ProviderError as exc:
            raise InputGenerationException(f"{self.kind}: {exc}") from exc
        answer = await ask(
            self,
            provider,
            self.messages(trace, turn),
            TURN_SCHEMA,
            attempts=1 + self.max_retries,
            temperature=self.temperature,
        )
        try:
            return Turn.model_validate(answer)
        except ValidationError as exc:
            raise InputGenerationException(
                f"{self.kind}: the answer is not {{goal_reached, message}}: {exc}"
            ) from None

    async def simulated_turns(
        self, trace: Trace[Any, Any], input_type: type[Any] | None = None
    ) -> AsyncGenerator[LLMGeneratorOutput[str], Trace[Any, Any]]:
        """Each turn's whole answer (what :meth:`__call__` yields the message of); each
        ``asend`` brings the trace with the agent's latest answer."""
        for turn in range(self.max_steps):
            answer = await self.next_turn(trace, turn)
            if answer.goal_reached or not answer.message.strip():
                if turn < self.min_turns:
                    why = "goal_reached=true" if answer.goal_reached else "an empty message"
                    raise InputGenerationException(
                        f"{self.kind} stopped after {turn} turn(s) ({why}), before "
                        f"min_turns={self.min_turns}: the simulated conversation is too short "
                        "to test anything; check the persona and the model, or lower min_turns"
                    )
                return
            trace = yield LLMGeneratorOutput[str](goal_reached=False, message=answer.message)

    async def __call__(
        self, trace: Trace[Any, Any], input_type: type[Any] | None = None
    ) -> AsyncGenerator[Any, Trace[Any, Any]]:
        turns = self.simulated_turns(trace, input_type)
        try:
            output = await turns.__anext__()
            while True:
                trace = yield output.message
                output = await turns.asend(trace)
        except StopAsyncIteration:
            return
        finally:
            await turns.aclose()

    # A scenario calls simulated_turns() directly (to record each turn's output) when a
    # generator's __call__ is this one; a subclass with its own __call__ is called as is.
    __call__.simulated_turns = True  # type: ignore[attr-defined]
