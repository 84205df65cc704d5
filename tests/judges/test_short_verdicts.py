"""Short verdicts are verdicts: strictness stops a false PASS, not a brief answer.

Through the OpenAI adapter against the fake server (real HTTP, counted requests): a FAIL
is never refused for its reason (short, placeholder, copied, blank or missing); a PASS is
refused only for a blank, placeholder or copied reason, never for brevity; a refused PASS
never becomes PASS, retries are counted and paid as before, and when every attempt is
refused the ERROR names each attempt's problem.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scenarist import CheckStatus, Groundedness
from scenarist.judges.verdict import NO_REASON
from scenarist.model.results import CheckResult
from scenarist.model.trace import Interaction, Trace
from scenarist.providers import OpenAIProvider
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio

TRACE: Trace[Any, Any] = Trace().with_interaction(
    Interaction(
        inputs="How long do I have to return shoes?",
        outputs="You have 30 days from delivery.",
        metadata={"context": "Returns are accepted within 30 days of delivery."},
    )
)
RUBRIC_SENTENCE = "Every factual claim in the answer is supported by the context."


def answer(data: dict[str, Any], tokens_in: int = 100) -> Reply:
    return Reply(json.dumps(data), tokens_in=tokens_in, tokens_out=9)


async def judged(
    *replies: Reply, max_retries: int = 0, threshold: float | None = None
) -> tuple[CheckResult, FakeLLMServer]:
    with FakeLLMServer(ScriptedLLM(replies)) as server:
        judge = OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, api_key="sk-test")
        check = Groundedness(judge=judge, max_retries=max_retries, threshold=threshold)
        result = await check.run(TRACE)
    return result, server


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param({"passed": False, "reason": "Not French."}, "Not French.", id="two-words"),
        pytest.param({"passed": False, "reason": "Wrong."}, "Wrong.", id="one-word"),
        pytest.param({"passed": False, "reason": "..."}, "...", id="placeholder"),
        pytest.param(
            {"passed": False, "reason": RUBRIC_SENTENCE}, RUBRIC_SENTENCE, id="rubric-copy"
        ),
        pytest.param({"passed": False, "reason": "  "}, NO_REASON, id="blank"),
        pytest.param({"passed": False}, NO_REASON, id="missing"),
        pytest.param({"passed": False, "reason": None}, NO_REASON, id="null"),
    ],
)
async def test_short_verdicts_fail_is_never_refused_for_its_reason(
    reply: dict[str, Any], message: str
) -> None:
    result, server = await judged(answer(reply), max_retries=2)
    assert result.status is CheckStatus.FAIL, result.message
    assert result.message == message
    assert len(server.requests) == 1  # accepted at once: no paid retry
    assert result.details["verdict"]["passed"] is False
    assert "problem" not in result.details["attempts"][0]


@pytest.mark.parametrize("reason", ["One sentence.", "Matches.", "30 days, as stated."])
async def test_short_verdicts_pass_is_not_refused_for_brevity(reason: str) -> None:
    result, server = await judged(answer({"passed": True, "reason": reason}), max_retries=2)
    assert result.status is CheckStatus.PASS, result.message
    assert result.message == reason
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        pytest.param("", "'reason' is blank", id="blank"),
        pytest.param("...", "'reason' '...' is a placeholder", id="dots"),
        pytest.param("Yes.", "'reason' 'Yes.' is a placeholder", id="verdict-echo"),
        pytest.param(RUBRIC_SENTENCE, "copies the instructions", id="rubric-copy"),
        pytest.param("Rubric: GROUNDEDNESS.", "copies the instructions", id="short-copy"),
    ],
)
async def test_short_verdicts_refused_pass_never_passes_and_retries_are_paid(
    reason: str, problem: str
) -> None:
    replies = [answer({"passed": True, "reason": reason}, tokens_in=100 + n) for n in range(3)]
    result, server = await judged(*replies, max_retries=1)
    assert result.status is CheckStatus.ERROR
    assert len(server.requests) == 2  # 1 + max_retries, each one paid
    metrics = {m.name: m.value for m in result.metrics}
    assert metrics["judge_calls"] == 2
    assert metrics["judge_tokens_in"] == 100 + 101
    assert [problem in a["problem"] for a in result.details["attempts"]] == [True, True]
    assert "verdict" not in result.details


async def test_short_verdicts_a_pass_by_score_is_held_to_the_pass_rule() -> None:
    """With ``threshold`` the score decides: ``passed: false`` with a passing score is a
    PASS, so its reason must be one."""
    replies = [answer({"passed": False, "reason": "...", "score": 0.9}) for _ in range(2)]
    result, server = await judged(*replies, max_retries=1, threshold=0.5)
    assert result.status is CheckStatus.ERROR
    assert len(server.requests) == 2
    failing, _ = await judged(
        answer({"passed": True, "reason": "...", "score": 0.2}), threshold=0.5
    )
    assert failing.status is CheckStatus.FAIL  # a FAIL by score: the reason is not refused


async def test_short_verdicts_error_names_every_attempts_problem() -> None:
    replies = [
        Reply("ok", tokens_out=1),
        answer({"passed": True, "reason": "..."}),
        answer({"passed": True, "reason": RUBRIC_SENTENCE}),
    ]
    result, server = await judged(*replies, max_retries=2)
    assert result.status is CheckStatus.ERROR
    assert len(server.requests) == 3
    assert result.message == (
        "The judge gave no valid verdict after 3 attempt(s): "
        "attempt 1: the answer is not JSON: 'ok'; "
        "attempt 2: 'reason' '...' is a placeholder, not a reason; "
        f"attempt 3: 'reason' {RUBRIC_SENTENCE!r} copies the instructions; it must cite "
        "the evidence in the material."
    )


async def test_short_verdicts_a_refused_pass_then_a_short_fail_is_the_fail() -> None:
    result, server = await judged(
        answer({"passed": True, "reason": "..."}),
        answer({"passed": False, "reason": "No."}),
        max_retries=2,
    )
    assert result.status is CheckStatus.FAIL
    assert result.message == "No."
    assert len(server.requests) == 2
    assert result.details["judge"]["calls"] == 2
