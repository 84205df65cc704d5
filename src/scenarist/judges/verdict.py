"""The judge's structured verdict, ``{passed, reason, score?}``, and its strict parser.

A judge is an LLM, so its answer is untrusted text. :func:`parse_verdict` accepts only a
JSON object whose ``passed`` is a real boolean, whose ``reason`` says why in words of its
own, and whose ``score``, when present, is a number in ``[0, 1]`` (``passed`` and
``reason`` make a verdict; ``score`` is optional). Anything else is a *problem* (a
sentence saying what was wrong), which the judge may be asked to fix and which, once the
retries are spent, makes the check ERROR. A malformed answer never becomes a PASS.

A reason is not a reason when it is blank, a placeholder (``"..."``, ``"<reason>"``,
``"string"``, ``"N/A"``: what small models copy from a prompt's example), shorter than
:data:`MIN_REASON_WORDS` words, or a copy of the instructions (the system prompt with its
worked example, the rubric's own words outside the ``<material>`` tags): a verdict that
cites nothing has shown nothing.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from scenarist.providers.base import ChatResponse

__all__ = [
    "MIN_REASON_WORDS",
    "VERDICT_SCHEMA",
    "LLMCheckResult",
    "instructions_of",
    "parse_verdict",
    "reason_problem",
]

MIN_REASON_WORDS = 3
"""The fewest words a reason may have ("Refund window matches." is three)."""

VERDICT_SCHEMA: dict[str, Any] = {
    "title": "verdict",
    "type": "object",
    "properties": {
        "passed": {
            "type": "boolean",
            "description": "true when the output meets the criteria, else false",
        },
        "reason": {
            "type": "string",
            "description": "one or two sentences citing the evidence for the verdict",
        },
        "score": {
            "type": ["number", "null"],
            "minimum": 0,
            "maximum": 1,
            "description": "optional: how fully the output meets the criteria, from 0 to 1",
        },
    },
    "required": ["passed", "reason"],
    "additionalProperties": False,
}
"""The JSON schema sent as ``json_schema`` (``strict: false``, so an optional property is
accepted). ``score`` is optional: a server without schema enforcement, or a model that
leaves it out, still gives a verdict; the adapters validate against this schema, so
requiring it there would turn such answers into errors."""


class LLMCheckResult(BaseModel):
    """A judge's verdict: did the output pass, why, and (optionally) how well.

    The compat name comes from giskard-checks, where it is the model a judge's answer is
    parsed into; it is that here too (the check's own outcome stays a ``CheckResult``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: StrictBool
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    score: float | None = Field(default=None, ge=0.0, le=1.0)


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _strip_fences(text: str) -> str:
    """The text without a surrounding Markdown code fence (```json ... ```)."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) > 6:
        body = stripped[3:-3]
        first_line, _, rest = body.partition("\n")
        return (rest if first_line.strip().isalpha() or not first_line.strip() else body).strip()
    return stripped


def _decode(response: ChatResponse) -> Any:
    """The answer as JSON data; raises ``ValueError`` with the problem."""
    if isinstance(response.parsed, dict):
        return response.parsed
    try:
        return json.loads(_strip_fences(response.text))
    except json.JSONDecodeError:
        raise ValueError(f"the answer is not JSON: {_shorten(response.text)!r}") from None


_PLACEHOLDERS = frozenset(
    {
        "", "reason", "the reason", "your reason", "explanation", "your explanation",
        "string", "str", "text", "n/a", "n a", "na", "none", "null", "todo", "tbd", "placeholder",
        "one or two sentences", "...",
    }
)  # fmt: skip
_BRACKETED = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}")
_TAGGED = re.compile(r"<([A-Za-z_][\w-]*)>.*?</\1>", re.S)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.U)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def instructions_of(messages: list[dict[str, str]]) -> str:
    """What a reason must not copy: every message's text outside ``<tag>...</tag>``
    material (the system prompt and its example, the rubric), not the material itself
    (a reason may quote the answer it judges)."""
    return "\n".join(_TAGGED.sub(" ", m.get("content", "")) for m in messages)


def reason_problem(reason: str, instructions: str = "") -> str | None:
    """Why ``reason`` is no reason (blank, placeholder, too short, copied), else ``None``."""
    stripped = reason.strip()
    if not stripped:
        return "'reason' is blank: the judge must say why"
    words = _words(stripped)
    bare = " ".join(words)
    if not words or bare in _PLACEHOLDERS or _BRACKETED.fullmatch(stripped):
        return f"'reason' {_shorten(stripped)!r} is a placeholder, not a reason"
    if len(words) < MIN_REASON_WORDS:
        return (
            f"'reason' {_shorten(stripped)!r} is too short: say why in at least "
            f"{MIN_REASON_WORDS} words, citing the evidence"
        )
    if instructions and f" {bare} " in f" {' '.join(_words(instructions))} ":
        return (
            f"'reason' {_shorten(stripped)!r} copies the instructions; it must cite the "
            "evidence in the material"
        )
    return None


def parse_verdict(response: ChatResponse, instructions: str = "") -> LLMCheckResult | str:
    """The verdict in ``response``, or a sentence saying why there is none.

    ``instructions`` is the text a reason must not copy (:func:`instructions_of` of the
    messages sent)."""
    if response.refusal:
        return f"the judge refused to answer: {_shorten(response.refusal)!r}"
    try:
        data = _decode(response)
    except ValueError as exc:
        return str(exc)
    if not isinstance(data, dict):
        return f"the answer is JSON but not an object: {_shorten(json.dumps(data))}"
    if "passed" not in data:
        return "the verdict has no 'passed' field"
    passed = data["passed"]
    if not isinstance(passed, bool):
        return f"'passed' must be true or false, got {passed!r}"
    reason = data.get("reason")
    if reason is None:
        return "the verdict has no 'reason' field"
    if not isinstance(reason, str):
        return f"'reason' must be a string, got {type(reason).__name__}"
    problem = reason_problem(reason, instructions)
    if problem is not None:
        return problem
    score = data.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            return f"'score' must be a number in [0, 1] or null, got {score!r}"
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            return f"'score' {score!r} is outside [0, 1]"
        score = float(score)
    return LLMCheckResult(passed=passed, reason=reason, score=score)
