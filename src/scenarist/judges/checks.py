"""The built-in judge checks, each a rubric plus the inputs it reads from the trace.

Literal values win over keys when given (``answer=`` over ``target_key``, giskard's
rule); a key that does not resolve is ERROR. The rubrics are our own templates in
``templates/``; ``LLMJudge`` takes yours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from scenarist.checks._values import DEFAULT_TARGET_KEY, KeyPath, exactly_one, optional
from scenarist.checks.base import Check
from scenarist.judges._prompts import PromptError, as_text
from scenarist.judges.base import BaseLLMCheck, JudgeInputError
from scenarist.model.paths import NoMatch, resolve
from scenarist.model.trace import Trace

__all__ = [
    "TOXICITY_CATEGORIES",
    "AnswerRelevance",
    "Conformity",
    "Contradiction",
    "Groundedness",
    "LLMJudge",
    "ToxicityCategory",
]


def _read(trace: Trace[Any, Any], literal: Any, key: str, what: str) -> Any:
    """``literal`` when given, else the value at ``key`` (a miss is a JudgeInputError)."""
    if literal is not None:
        return literal
    value = resolve(trace, key)
    if isinstance(value, NoMatch):
        raise JudgeInputError(f"No value found for {what} key '{key}'.")
    return value


def _context_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "\n".join(as_text(item) for item in value)
    return as_text(value)


def _turns(trace: Trace[Any, Any]) -> list[dict[str, Any]]:
    return [{"inputs": i.inputs, "outputs": i.outputs} for i in trace.interactions]


@Check.register("llm_judge")
class LLMJudge(BaseLLMCheck):
    """Your own rubric: exactly one of ``prompt`` (inline Jinja2) or ``prompt_path``.

    The template sees ``trace`` (``{{ trace.last.outputs }}``,
    ``{% for i in trace.interactions %}``...). Output-format instructions are added by
    scenarist; the rubric only has to say what passes.
    """

    # Both keys in dumps, the one not given as null (giskard-checks writes both).
    prompt: str | None = None
    prompt_path: str | None = None

    @model_validator(mode="after")
    def _one_prompt(self) -> Self:
        exactly_one("prompt", self.prompt is not None, "prompt_path", self.prompt_path)
        return self

    def get_prompt(self) -> str:
        if self.prompt is not None:
            return self.prompt
        path = Path(str(self.prompt_path))
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptError(f"cannot read prompt_path {str(path)!r}: {exc.strerror}") from exc

    def prompt_source_name(self) -> str:
        return "inline prompt" if self.prompt is not None else f"prompt_path {self.prompt_path!r}"


class _AnswerAndContext(BaseLLMCheck):
    answer: str | None = optional()
    target_key: KeyPath = DEFAULT_TARGET_KEY
    context: str | list[str] | None = optional()
    context_key: KeyPath = "trace.last.metadata.context"

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        answer = _read(trace, self.answer, self.target_key, "answer")
        context = _read(trace, self.context, self.context_key, "context")
        return {"answer": as_text(answer), "context": _context_text(context)}


@Check.register("groundedness")
class Groundedness(_AnswerAndContext):
    """Every factual claim in the answer is supported by the context."""

    template = "groundedness"


@Check.register("contradiction")
class Contradiction(_AnswerAndContext):
    """The answer does not clearly contradict the context (unmentioned claims are fine)."""

    template = "contradiction"


@Check.register("conformity")
class Conformity(BaseLLMCheck):
    """Every output of the conversation follows ``rule``."""

    template = "conformity"
    rule: str = Field(min_length=1)

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        if not trace.interactions:
            raise JudgeInputError("The trace has no interactions to check against the rule.")
        return {"rule": self.rule, "trace": trace}  # giskard-checks' inputs: its rubric
        # renders the conversation from the trace


@Check.register("answer_relevance")
class AnswerRelevance(BaseLLMCheck):
    """The answer addresses the question (with earlier turns as context by default)."""

    template = "answer_relevance"
    question: str | None = optional()
    question_key: KeyPath = "trace.last.inputs"
    answer: str | None = optional()
    target_key: KeyPath = DEFAULT_TARGET_KEY
    context: str | None = optional()
    include_history: bool = True

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        question = _read(trace, self.question, self.question_key, "question")
        answer = _read(trace, self.answer, self.target_key, "answer")
        history = _turns(trace)[:-1] if self.include_history else []
        return {
            "question": as_text(question),
            "answer": as_text(answer),
            "context": self.context or "",
            "history": history,
        }


ToxicityCategory = Literal[
    "hate_speech", "harassment", "threats", "self_harm", "sexual_content", "violence"
]
TOXICITY_CATEGORIES: tuple[ToxicityCategory, ...] = (
    "hate_speech",
    "harassment",
    "threats",
    "self_harm",
    "sexual_content",
    "violence",
)


@Check.register("toxicity")
class Toxicity(BaseLLMCheck):
    """The output contains none of the listed kinds of harmful content."""

    template = "toxicity"
    output: str | None = optional()
    target_key: KeyPath = DEFAULT_TARGET_KEY
    categories: list[ToxicityCategory] = Field(
        default_factory=lambda: list(TOXICITY_CATEGORIES), min_length=1
    )

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        output = _read(trace, self.output, self.target_key, "output")
        return {
            "output": as_text(output),
            "categories": list(self.categories),
        }
