"""Verdicts you can trust, through the OpenAI adapter against the fake server (real HTTP).

A passing verdict's reason must say why (a placeholder, a bare echo of the verdict, a copy
of the prompt's example or of the rubric are not a verdict, and the raw answer is kept; a
short reason is, see ``test_short_verdicts.py``); ``score`` is optional; the
judge's ``max_retries`` is the only retry policy, counted at the server, with every
attempt's answer and tokens in the result.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scenarist import CheckStatus, Conformity, Groundedness
from scenarist.judges._prompts import builtin
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
SYSTEM_EXAMPLE_REASON = (
    "The reply promises a 60-day refund window while the policy text grants 30 days."
)


def judge_at(server: FakeLLMServer) -> OpenAIProvider:
    return OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, api_key="sk-test")


def answer(passed: bool, reason: str, **extra: Any) -> Reply:
    return Reply(json.dumps({"passed": passed, "reason": reason, **extra}), tokens_out=9)


async def judged(*replies: Reply, max_retries: int = 0) -> tuple[CheckResult, FakeLLMServer]:
    with FakeLLMServer(ScriptedLLM(replies)) as server:
        check = Groundedness(judge=judge_at(server), max_retries=max_retries)
        result = await check.run(TRACE)
    return result, server


def test_the_system_prompt_example_is_not_a_placeholder() -> None:
    system = builtin("system")
    assert '"..."' not in system and "<reason>" not in system
    assert SYSTEM_EXAMPLE_REASON in system  # the example the copy rule must catch


@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        pytest.param("...", "'reason' '...' is a placeholder", id="dots"),
        pytest.param("…", "'reason' '…' is a placeholder", id="ellipsis"),
        pytest.param("<reason>", "'reason' '<reason>' is a placeholder", id="angle"),
        pytest.param("string", "'reason' 'string' is a placeholder", id="type-name"),
        pytest.param("N/A", "'reason' 'N/A' is a placeholder", id="n/a"),
        pytest.param("Passed.", "'reason' 'Passed.' is a placeholder", id="verdict-echo"),
        pytest.param(SYSTEM_EXAMPLE_REASON, "copies the instructions", id="system-example"),
        pytest.param(
            "Every factual claim in the answer is supported by the context.",
            "copies the instructions",
            id="rubric-copy",
        ),
    ],
)
async def test_a_reason_that_says_nothing_is_an_error_with_the_raw_answer(
    reason: str, problem: str
) -> None:
    raw = answer(True, reason, score=0.5)
    result, server = await judged(raw)
    assert result.status is CheckStatus.ERROR
    assert problem in (result.message or "")
    assert result.details["answers"] == [raw.text]
    assert result.details["attempts"][0]["answer"] == raw.text
    assert problem in result.details["attempts"][0]["problem"]
    assert len(server.requests) == 1


async def test_a_reason_quoting_the_material_is_a_verdict() -> None:
    """Quoting the answer or the context is evidence, not a copy of the instructions."""
    result, _ = await judged(answer(True, "Returns are accepted within 30 days of delivery."))
    assert result.status is CheckStatus.PASS
    assert result.message == "Returns are accepted within 30 days of delivery."


@pytest.mark.parametrize("max_retries", [0, 3])
async def test_max_retries_is_the_one_retry_policy_counted_at_the_server(
    max_retries: int,
) -> None:
    """Malformed JSON every time: exactly ``1 + max_retries`` requests, each answer kept."""
    replies = [Reply(f"not json {n}", tokens_in=50 + n, tokens_out=4) for n in range(5)]
    result, server = await judged(*replies, max_retries=max_retries)
    assert len(server.requests) == 1 + max_retries
    assert result.status is CheckStatus.ERROR
    assert f"after {1 + max_retries} attempt(s)" in (result.message or "")
    attempts = result.details["attempts"]
    assert [a["answer"] for a in attempts] == [f"not json {n}" for n in range(1 + max_retries)]
    assert [a["tokens_in"] for a in attempts] == [50 + n for n in range(1 + max_retries)]
    assert all(a["tokens_out"] == 4 and "is not JSON" in a["problem"] for a in attempts)
    metrics = {m.name: m.value for m in result.metrics}
    assert metrics["judge_calls"] == 1 + max_retries
    assert metrics["judge_tokens_in"] == sum(50 + n for n in range(1 + max_retries))
    assert result.details["judge"]["calls"] == 1 + max_retries


async def test_a_retry_shows_the_model_its_mistake_and_then_passes() -> None:
    result, server = await judged(
        answer(True, "..."), answer(True, "The 30 days in the answer match the policy."),
        max_retries=1,
    )  # fmt: skip
    assert result.status is CheckStatus.PASS
    assert len(server.requests) == 2
    retry = server.requests[1].body["messages"]
    assert "is a placeholder, not a reason" in retry[-1]["content"]
    assert '"..."' not in retry[-1]["content"]  # the correction offers nothing to copy
    assert [a.get("problem") for a in result.details["attempts"]] == [
        "'reason' '...' is a placeholder, not a reason",
        None,
    ]


async def test_a_verdict_without_score_is_a_verdict() -> None:
    """A server that enforces no schema, a model that leaves ``score`` out: still a verdict."""
    with FakeLLMServer(ScriptedLLM([answer(False, "The reply is curt and dismissive.")])) as srv:
        result = await Conformity(rule="Be warm.", judge=judge_at(srv)).run(TRACE)
        schema = srv.requests[0].body["response_format"]["json_schema"]["schema"]
    assert result.status is CheckStatus.FAIL
    assert result.message == "The reply is curt and dismissive."
    assert result.details["verdict"]["score"] is None
    assert schema["required"] == ["passed", "reason"]
    assert "judge_score" not in {m.name for m in result.metrics}


async def test_a_verdict_without_score_in_json_mode() -> None:
    """The same in JSON mode (``json_object``): the schema the adapter validates against
    does not require ``score`` either."""
    with FakeLLMServer(ScriptedLLM([answer(True, "The reply greets the user warmly.")])) as srv:
        judge = OpenAIProvider(
            "m", base_url=srv.openai_url, api_key="k", structured_mode="json_object"
        )
        result = await Conformity(rule="Be warm.", judge=judge).run(TRACE)
        assert srv.requests[0].body["response_format"]["type"] == "json_object"
    assert result.status is CheckStatus.PASS
