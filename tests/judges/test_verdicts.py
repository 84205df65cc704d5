"""Strict verdict parsing: anything but a well-formed verdict is ERROR, never PASS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scenarist import CheckStatus, Conformity, LLMCheckResult
from scenarist.judges import VERDICT_SCHEMA, parse_verdict
from scenarist.providers.base import ChatResponse

from .conftest import FakeProvider, make_trace, verdict

TRACE = make_trace(("hi", "Hello! How can I help?"))


async def judged(*replies: dict[str, Any] | str, **options: Any) -> tuple[Any, FakeProvider]:
    provider = FakeProvider(*replies)
    check = Conformity(rule="Be polite.", judge=provider, **options)
    return await check.run(TRACE), provider


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("Sure, it passes!", "the answer is not JSON: 'Sure, it passes!'"),
        ("[true]", "the answer is JSON but not an object: [true]"),
        ({"reason": "fine"}, "the verdict has no 'passed' field"),
        ({"passed": "yes", "reason": "fine"}, "'passed' must be true or false, got 'yes'"),
        ({"passed": True}, "the verdict has no 'reason' field"),
        ({"passed": True, "reason": "   "}, "'reason' is blank: the judge must say why"),
        ({"passed": True, "reason": 3}, "'reason' must be a string, got int"),
        (
            {"passed": True, "reason": "the answer is fine", "score": 1.5},
            "'score' 1.5 is outside [0, 1]",
        ),
        (
            {"passed": True, "reason": "the answer is fine", "score": -0.1},
            "'score' -0.1 is outside [0, 1]",
        ),
        (
            {"passed": True, "reason": "the answer is fine", "score": "high"},
            "'score' must be a number",
        ),
    ],
)
async def test_judge_malformed_verdict_is_error_with_the_problem(
    reply: dict[str, Any] | str, problem: str
) -> None:
    result, provider = await judged(reply, max_retries=0)
    assert result.status is CheckStatus.ERROR
    assert result.message.startswith(
        f"The judge gave no valid verdict after 1 attempt(s): attempt 1: {problem}"
    )
    assert result.details["answers"] == [reply if isinstance(reply, str) else json.dumps(reply)]
    assert len(provider.requests) == 1


@pytest.mark.anyio
async def test_judge_valid_verdicts_pass_and_fail_with_the_reason_as_message() -> None:
    passed, _ = await judged(verdict(True, "The greeting is courteous.", 0.9))
    assert passed.status is CheckStatus.PASS
    assert passed.message == "The greeting is courteous."
    failed, _ = await judged(verdict(False, "It calls the user an idiot."))
    assert failed.status is CheckStatus.FAIL
    assert failed.message == "It calls the user an idiot."
    assert failed.details["verdict"] == {
        "passed": False,
        "reason": "It calls the user an idiot.",
        "score": None,
    }
    # giskard-checks 1.0.6 writes the judge's reason in details["reason"]: mirrored there
    assert failed.details["reason"] == "It calls the user an idiot."


@pytest.mark.anyio
async def test_judge_requests_the_verdict_schema_at_temperature_zero() -> None:
    _, provider = await judged(verdict(True))
    request = provider.requests[0]
    assert request["json_schema"] is VERDICT_SCHEMA
    assert request["temperature"] == 0.0
    # passed and reason make a verdict; score is optional (also for schema-checking servers)
    assert set(VERDICT_SCHEMA["required"]) == {"passed", "reason"}
    assert "score" in VERDICT_SCHEMA["properties"]


@pytest.mark.anyio
async def test_judge_retries_a_malformed_answer_then_succeeds() -> None:
    result, provider = await judged(
        "not json", {"passed": True}, verdict(True, "The reply is polite.")
    )
    assert result.status is CheckStatus.PASS
    assert result.message == "The reply is polite."
    assert len(provider.requests) == 3
    retry = provider.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "not json"}
    assert "That answer cannot be used: the answer is not JSON" in retry[-1]["content"]
    assert result.details["judge"]["calls"] == 3
    assert {m.name: m.value for m in result.metrics}["judge_calls"] == 3


@pytest.mark.anyio
async def test_judge_gives_up_after_max_retries() -> None:
    result, provider = await judged("a", "b", "c", max_retries=2)
    assert result.status is CheckStatus.ERROR
    assert "after 3 attempt(s)" in result.message
    assert len(provider.requests) == 3


def test_parse_verdict_accepts_fenced_json_and_prefers_parsed() -> None:
    fenced = ChatResponse(text='```json\n{"passed": false, "reason": "the answer is wrong"}\n```')
    assert parse_verdict(fenced) == LLMCheckResult(passed=False, reason="the answer is wrong")
    parsed = ChatResponse(
        text="ignored", parsed={"passed": True, "reason": "the answer is right", "score": 1}
    )
    assert parse_verdict(parsed) == LLMCheckResult(
        passed=True, reason="the answer is right", score=1.0
    )


def test_parse_verdict_reports_a_refusal() -> None:
    refused = ChatResponse(text="", refusal="I can't help with that.")
    assert parse_verdict(refused) == 'the judge refused to answer: "I can\'t help with that."'


def test_llm_check_result_rejects_blank_reason_and_non_boolean_passed() -> None:
    with pytest.raises(ValueError, match="reason"):
        LLMCheckResult(passed=True, reason="  ")
    with pytest.raises(ValueError, match="passed"):
        LLMCheckResult(passed="yes", reason="ok")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_judge_usage_is_in_metrics_and_details_apart_from_the_agent() -> None:
    result, _ = await judged("bad", verdict(True, "the answer is fine", 0.8))
    metrics = {m.name: m.value for m in result.metrics}
    assert metrics == {
        "judge_score": 0.8,
        "judge_calls": 2,
        "judge_tokens_in": 200,
        "judge_tokens_out": 40,
        "judge_cost_usd": pytest.approx(0.002),
    }
    assert result.details["judge"] == {
        "name": "fake/judge",
        "model": "judge-1",
        "calls": 2,
        "tokens_in": 200,
        "tokens_out": 40,
        "cost_usd": pytest.approx(0.002),
    }


@pytest.mark.anyio
async def test_judge_unknown_cost_is_left_out_not_zero() -> None:
    provider = FakeProvider(verdict(True), cost_usd=None, tokens=None)
    result = await Conformity(rule="r", judge=provider).run(TRACE)
    names = [m.name for m in result.metrics]
    assert "judge_cost_usd" not in names and "judge_tokens_in" not in names
    assert result.details["judge"]["cost_usd"] is None
