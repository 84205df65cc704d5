"""The judge's structured verdict, ``{passed, reason, score?}``, and its strict parser.

A judge is an LLM, so its answer is untrusted text. :func:`parse_verdict` accepts only a
JSON object whose ``passed`` is a real boolean, whose ``reason`` is a non-blank string and
whose ``score``, when present, is a number in ``[0, 1]``. Anything else is a *problem*
(a sentence saying what was wrong), which the judge may be asked to fix and which, once
the retries are spent, makes the check ERROR. A malformed answer never becomes a PASS.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from scenarist.providers.base import ChatResponse

__all__ = ["VERDICT_SCHEMA", "LLMCheckResult", "parse_verdict"]

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
            "description": "how fully the output meets the criteria, from 0 to 1",
        },
    },
    "required": ["passed", "reason", "score"],
    "additionalProperties": False,
}
"""The JSON schema sent as ``json_schema``. Every property is required and ``score`` is
nullable, the shape strict structured-output modes accept; the parser still treats a
missing ``score`` as "no score"."""


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


def parse_verdict(response: ChatResponse) -> LLMCheckResult | str:
    """The verdict in ``response``, or a sentence saying why there is none."""
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
    if not reason.strip():
        return "'reason' is blank: the judge must say why"
    score = data.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            return f"'score' must be a number in [0, 1] or null, got {score!r}"
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            return f"'score' {score!r} is outside [0, 1]"
        score = float(score)
    return LLMCheckResult(passed=passed, reason=reason, score=score)
