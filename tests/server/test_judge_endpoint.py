"""``/v1/judge``: the server's judge model, reached through a real OpenAI-format server
(``FakeLLMServer``); 503 with a clear error when no judge is configured."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest
from tests.server.test_api import VEVAL_TRACE

from scenarist.providers.defaults import reset_settings
from scenarist.testing.fake_providers import FakeLLMServer

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("SCENARIST_DEFAULT_JUDGE", "SCENARIST_DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    reset_settings()
    yield
    reset_settings()


async def test_judge_without_a_configured_model_is_503(app_client: httpx2.AsyncClient) -> None:
    answer = await app_client.post("/v1/judge", json={"criteria": "polite", "trace_id": "x"})
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["code"] == "judge_not_configured"
    assert "SCENARIST_DEFAULT_JUDGE" in error["message"]


async def test_judge_with_a_provider_judges_posted_and_stored_traces(
    app_client: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdicts = [
        json.dumps({"passed": True, "reason": "It answers the refund question.", "score": 0.9}),
        json.dumps({"passed": False, "reason": "It offers no apology.", "score": 0.2}),
    ]
    with FakeLLMServer(verdicts) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
        monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/gpt-4o-mini")
        reset_settings()
        posted = await app_client.post(
            "/v1/judge", json={"criteria": "Answers the question", "trace": VEVAL_TRACE}
        )
        assert posted.status_code == 200, posted.text
        assert posted.json() == {
            "passed": True,
            "score": 0.9,
            "reasoning": (
                "Judge: Answers the question (score 0.90) — It answers the refund question."
            ),
            "status": "pass",
            "judge": "openai/gpt-4o-mini",
        }
        prompt = json.dumps(llm.requests[0].body)
        assert "where is my refund?" in prompt and "Answers the question" in prompt

        await app_client.post("/v1/traces", json=VEVAL_TRACE)
        stored = await app_client.post(
            "/v1/judge",
            json={"criteria": "Apologises", "trace_id": VEVAL_TRACE["trace_id"], "threshold": 0.5},
        )
        assert stored.json()["passed"] is False
        assert stored.json()["reasoning"].startswith("Judge: Apologises (score 0.20)")
        assert len(llm.requests) == 2

    unknown = await app_client.post("/v1/judge", json={"criteria": "x", "trace_id": "nope"})
    assert unknown.status_code == 404
    both = await app_client.post(
        "/v1/judge", json={"criteria": "x", "trace_id": "a", "trace": VEVAL_TRACE}
    )
    assert both.status_code == 422 and "exactly one" in both.json()["error"]["message"]


async def test_judge_takes_the_input_and_output_the_veval_sdk_sends(
    app_client: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """veval-sdk's ``judge_async`` posts its run's last step as ``input`` and ``output``,
    with ``model``, ``threshold``, ``reference_output`` and ``samples`` (``None`` unless
    given): judged as a one-turn run, with the server's own model."""
    verdict = json.dumps({"passed": True, "reason": "It says when.", "score": 0.8})
    with FakeLLMServer([verdict]) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
        monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/gpt-4o-mini")
        reset_settings()
        body = {
            "criteria": "Says when the refund arrives",
            "input": {"question": "where is my refund?"},
            "output": "It arrives on Friday",
            "model": "some-client-model",
            "threshold": None,
            "reference_output": None,
            "samples": None,
        }
        answer = await app_client.post("/v1/judge", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["passed"] is True and answer.json()["judge"] == "openai/gpt-4o-mini"
        prompt = json.dumps(llm.requests[0].body)
        assert "where is my refund?" in prompt and "It arrives on Friday" in prompt
        assert "some-client-model" not in json.dumps(llm.requests[0].body.get("model"))

    nothing = await app_client.post("/v1/judge", json={"criteria": "x"})
    assert nothing.status_code == 422
    assert "'input' with 'output'" in nothing.json()["error"]["message"]
    mixed = await app_client.post(
        "/v1/judge", json={"criteria": "x", "trace_id": "a", "input": "q", "output": "a"}
    )
    assert mixed.status_code == 422
    assert "got trace_id and input/output" in mixed.json()["error"]["message"]
