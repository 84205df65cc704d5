"""The judge's structured verdict, ``{passed, reason, score?}``, and its strict parser.

A judge is an LLM, so its answer is untrusted text. :func:`parse_verdict` accepts only a
JSON object whose ``passed`` is a real boolean and whose ``score``, when present, is a
number in ``[0, 1]``. Anything else is a *problem* (a sentence saying what was wrong),
which the judge may be asked to fix and which, once the retries are spent, makes the
check ERROR. A malformed answer never becomes a PASS.

Strictness about the ``reason`` exists to stop a false PASS, so it applies to verdicts
that would pass (``passed: true``, or with a ``threshold`` a score reaching it):

- a verdict that would **fail** is never refused for its reason: short, placeholder,
  copied, blank or missing, the FAIL stands (a blank or missing reason becomes
  :data:`NO_REASON`, so the check's message still says what happened);
- a verdict that would **pass** is refused when its reason is blank, a placeholder
  (``"..."``, ``"<reason>"``, ``"string"``, ``"N/A"``, or a bare echo of the verdict such
  as ``"Yes."``: what small models copy from a prompt's example) or a copy of the
  instructions (a whole sentence of them, or a run of :data:`COPY_MIN_WORDS` words or
  more: the system prompt with its worked example, the rubric's own words outside the
  ``<material>`` tags). Brevity is not a problem: ``"One sentence."`` is a reason.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from scenarist.providers.base import ChatResponse

__all__ = [
    "COPY_MIN_WORDS",
    "NO_REASON",
    "VERDICT_SCHEMA",
    "LLMCheckResult",
    "instructions_of",
    "parse_verdict",
    "reason_problem",
]

NO_REASON = "The judge failed this check without giving a reason."
"""The reason of a failing verdict whose reason was blank or missing (it is not refused)."""
COPY_MIN_WORDS = 4
"""A reason of this many words or more found as a run in the instructions is a copy; a
shorter one only when it is a whole sentence of them ("In French." is not a copy of
"Is the answer in French?")."""

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
        # a bare echo of the verdict says nothing about the material
        "yes", "no", "ok", "okay", "true", "false", "pass", "passed", "passes", "fail",
        "failed", "fails", "correct", "incorrect", "good", "fine", "valid", "meets the rubric",
        "meets the criteria", "the output meets the criteria",
    }
)  # fmt: skip
_BRACKETED = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}")
_TAGGED = re.compile(r"<([A-Za-z_][\w-]*)>.*?</\1>", re.S)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.U)
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n\s*\n|\n\s*[-*•]\s")
"""Where a sentence of the instructions ends: its punctuation, a blank line, a bullet (a
line wrapped inside a sentence does not end it)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def instructions_of(messages: list[dict[str, str]]) -> str:
    """What a reason must not copy: every message's text outside ``<tag>...</tag>``
    material (the system prompt and its example, the rubric), not the material itself
    (a reason may quote the answer it judges)."""
    return "\n".join(_TAGGED.sub(" ", m.get("content", "")) for m in messages)


def _sentences(text: str) -> set[str]:
    """The bare words of each sentence or bullet of ``text``."""
    return {" ".join(w) for part in _SENTENCE_END.split(text) if (w := _words(part))}


def reason_problem(reason: str, instructions: str = "") -> str | None:
    """Why ``reason`` is no reason for a PASS (blank, placeholder, copied), else ``None``."""
    stripped = reason.strip()
    if not stripped:
        return "'reason' is blank: the judge must say why"
    words = _words(stripped)
    bare = " ".join(words)
    if not words or bare in _PLACEHOLDERS or _BRACKETED.fullmatch(stripped):
        return f"'reason' {_shorten(stripped)!r} is a placeholder, not a reason"
    if instructions and (
        (len(words) >= COPY_MIN_WORDS and f" {bare} " in f" {' '.join(_words(instructions))} ")
        or bare in _sentences(instructions)
    ):
        return (
            f"'reason' {_shorten(stripped)!r} copies the instructions; it must cite the "
            "evidence in the material"
        )
    return None


def _failing_reason(reason: Any) -> str:
    """A failing verdict's reason as given (never refused); blank or missing: NO_REASON."""
    if reason is None:
        return NO_REASON
    text = reason if isinstance(reason, str) else json.dumps(reason, default=str)
    return text.strip() or NO_REASON


def parse_verdict(
    response: ChatResponse, instructions: str = "", *, threshold: float | None = None
) -> LLMCheckResult | str:
    """The verdict in ``response``, or a sentence saying why there is none.

    ``instructions`` is the text a reason must not copy (:func:`instructions_of` of the
    messages sent). ``threshold`` is the check's: with one, the score decides whether the
    verdict would pass, and so whether its reason is held to the PASS rule.
    """
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
    score = data.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            return f"'score' must be a number in [0, 1] or null, got {score!r}"
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            return f"'score' {score!r} is outside [0, 1]"
        score = float(score)
    would_pass = passed if threshold is None else score is not None and score >= threshold
    reason = data.get("reason")
    if not would_pass:
        return LLMCheckResult(passed=passed, reason=_failing_reason(reason), score=score)
    if reason is None:
        return "the verdict has no 'reason' field"
    if not isinstance(reason, str):
        return f"'reason' must be a string, got {type(reason).__name__}"
    problem = reason_problem(reason, instructions)
    if problem is not None:
        return problem
    return LLMCheckResult(passed=passed, reason=reason, score=score)
