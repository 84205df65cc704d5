"""LLM-as-judge checks: rubric prompts, judge models, strict verdicts, calibration.

Importing this package registers the judge kinds (``llm_judge``, ``groundedness``,
``contradiction``, ``conformity``, ``answer_relevance``, ``toxicity``, ``trace_judge``);
``import scenarist`` declares them lazily, so it never loads this package or ``jinja2``.
"""

from scenarist.judges.base import BaseLLMCheck, JudgeInputError, WithJudgeMixin
from scenarist.judges.calibrate import (
    CalibrationResult,
    Disagreement,
    LabelledCase,
    calibrate,
    calibrate_sync,
)
from scenarist.judges.checks import (
    AnswerRelevance,
    Conformity,
    Contradiction,
    Groundedness,
    LLMJudge,
    Toxicity,
)
from scenarist.judges.judge import BaseJudge, JudgeCall, LLMChatJudge, resolve_judge
from scenarist.judges.trace_judge import TraceJudge
from scenarist.judges.verdict import VERDICT_SCHEMA, LLMCheckResult, parse_verdict

__all__ = [
    "VERDICT_SCHEMA",
    "AnswerRelevance",
    "BaseJudge",
    "BaseLLMCheck",
    "CalibrationResult",
    "Conformity",
    "Contradiction",
    "Disagreement",
    "Groundedness",
    "JudgeCall",
    "JudgeInputError",
    "LLMChatJudge",
    "LLMCheckResult",
    "LLMJudge",
    "LabelledCase",
    "Toxicity",
    "TraceJudge",
    "WithJudgeMixin",
    "calibrate",
    "calibrate_sync",
    "parse_verdict",
    "resolve_judge",
]
