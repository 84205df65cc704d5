"""End-to-end plumbing against a real small model (optional; see docs/realmodel.md).

Skipped unless ``SCENARIST_REALMODEL_URL`` names an OpenAI-compatible server, e.g.
SmolLM2-135M served by ``llama-cpp-python[server]`` on 127.0.0.1:8767. The model alias
comes from ``SCENARIST_REALMODEL_MODEL`` (default ``smollm2``). A 135M model judges
poorly, so these tests assert plumbing only: a real judge check ends in a verdict or a
clean ERROR (never an exception), and a simulated user holds a short conversation with
an agent backed by the same model. Run::

    SCENARIST_REALMODEL_URL=http://127.0.0.1:8767/v1 \
        .venv/bin/python -m pytest -m realmodel tests/realmodel
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest

from scenarist import CheckStatus, Groundedness, Scenario, UserSimulator
from scenarist.providers import OpenAIProvider
from scenarist.providers.base import ChatResponse, Message

URL = os.environ.get("SCENARIST_REALMODEL_URL", "").strip()
MODEL = os.environ.get("SCENARIST_REALMODEL_MODEL", "").strip() or "smollm2"

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        not URL,
        reason=(
            "needs a real OpenAI-compatible model server: see docs/realmodel.md, then run "
            "SCENARIST_REALMODEL_URL=http://127.0.0.1:8767/v1 "
            ".venv/bin/python -m pytest -m realmodel tests/realmodel"
        ),
    ),
]


@pytest.fixture(autouse=True)
def _no_default_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SCENARIST_DEFAULT_JUDGE", "SCENARIST_DEFAULT_MODEL", "SCENARIST_RECORD_MODE"):
        monkeypatch.delenv(name, raising=False)


def small_model() -> OpenAIProvider:
    """The served model; one attempt per request, so a slow model stays within the timeout."""
    return OpenAIProvider(
        MODEL, base_url=URL, api_key="unused", max_retries=1, timeout_s=300.0, json_retries=0
    )


class Counting:
    """A provider wrapper that keeps each outcome (for the test log): the answer's text,
    or the exception a malformed answer ended in.

    ``keep_talking`` turns a structured ``goal_reached: true`` into ``false`` and leaves
    the model's message as it is: SmolLM2-135M declares its goal reached on the very first
    turn whatever the persona says, and the test is about the conversation loop, not the
    model's judgement.
    """

    def __init__(self, provider: OpenAIProvider, *, keep_talking: bool = False) -> None:
        self.provider = provider
        self.keep_talking = keep_talking
        self.outcomes: list[str] = []
        self.messages: list[str] = []

    @property
    def name(self) -> str:
        return self.provider.name

    async def chat(self, messages: list[Message], **options: Any) -> ChatResponse:
        try:
            response = await self.provider.chat(messages, **options)
        except Exception as exc:
            self.outcomes.append(f"{type(exc).__name__}: {exc}")
            raise
        self.outcomes.append(response.text)
        parsed = response.parsed
        if isinstance(parsed, dict) and "goal_reached" in parsed:
            self.messages.append(str(parsed.get("message", "")))
            if self.keep_talking:
                response = response.model_copy(update={"parsed": {**parsed, "goal_reached": False}})
        return response

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.provider.embed(texts)


def test_a_judge_check_against_the_real_model_ends_cleanly() -> None:
    judge = Counting(small_model())
    result = (
        Scenario("real judge")
        .interact(
            inputs="How long do I have to return shoes?",
            outputs="You have 30 days to return them.",
            metadata={"context": "Returns are accepted within 30 days of delivery."},
        )
        .check(Groundedness(judge=judge, max_retries=1))
        .run_sync()  # a crash would raise here
    )
    (check,) = result.steps[0].results
    print(f"\njudge outcomes: {judge.outcomes!r}\n{check.status.value}: {check.message}")
    assert judge.outcomes, "the judge was never asked"
    assert check.status in {CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.ERROR}
    assert check.message.strip()
    if check.status is CheckStatus.ERROR:
        # clean: a verdict problem or a provider message, never an unexpected exception
        clean = {None, "ProviderError", "StructuredOutputError"}
        assert check.details.get("exception_type") in clean
    else:
        assert check.details["verdict"]["reason"].strip()
        assert any(m.name == "judge_calls" for m in check.metrics)


def test_a_simulated_user_talks_to_a_real_model_agent() -> None:
    simulator_model = Counting(small_model(), keep_talking=True)
    agent_model = small_model()

    async def agent(inputs: str) -> str:
        answer = await agent_model.chat(
            [
                {"role": "system", "content": "You are a helpful shop assistant. Be brief."},
                {"role": "user", "content": inputs},
            ],
            max_tokens=48,
        )
        return answer.text

    result = (
        Scenario("real simulated user")
        .interact(
            inputs=UserSimulator(
                persona="A customer whose order #12 arrived broken and who wants a refund.",
                generator=simulator_model,
                max_steps=2,
                max_retries=1,
            ),
            outputs=agent,
        )
        .run_sync(return_exception=True)
    )
    (step,) = result.steps
    turns = [(i.inputs, i.outputs) for i in result.final_trace.interactions]
    print(f"\nsimulator outcomes: {simulator_model.outcomes!r}\nturns: {turns!r}")
    print(f"error: {step.error!r}")
    assert simulator_model.outcomes, "the simulated user was never asked"
    if step.error is not None:  # a small model may fail the turn schema: a clean error
        assert step.error.phase == "input_generation"
        assert step.error.exception_type == "InputGenerationException"
        return
    # the loop ran on the model's own messages, up to the first empty one, at most 2 turns
    spoken = list(itertools.takewhile(str.strip, simulator_model.messages))
    assert [user_message for user_message, _ in turns] == spoken[:2]
    assert all(isinstance(agent_answer, str) for _, agent_answer in turns)
    # each agent answer went through the capture as a real LLM call span
    assert len(result.final_trace.llm_calls) == len(turns)


# -- judges, a simulator and replay in another order (issue 14) -----------------------------


def judged_suite(names: list[str]) -> Any:
    from scenarist import Conformity, Groundedness, Suite

    answers = {
        "refund": ("How long do I have to return shoes?", "You have 30 days to return them."),
        "shipping": ("Is shipping free?", "Shipping is free over 50 euros."),
        "rude": ("Where is my parcel?", "Stop bothering me."),
    }
    context = "Returns are accepted within 30 days. Shipping is free over 50 euros."
    scenarios = []
    for name in names:
        question, answer = answers[name]
        scenarios.append(
            Scenario(name)
            .interact(inputs=question, outputs=answer, metadata={"context": context})
            .check(Groundedness(judge=small_model(), max_retries=1))
            .check(Conformity(rule="The reply is polite.", judge=small_model(), max_retries=1))
        )
    return Suite(name="real judges", scenarios=scenarios)


def test_a_recorded_judge_suite_replays_in_another_order_subset_and_parallel(
    tmp_path: Any,
) -> None:
    """The structured-output probe (llama-cpp-python refuses json_schema with a 500) is
    part of every call, so the tape serves any order: no miss, nothing live."""
    from scenarist.judges.health import judge_warnings
    from scenarist.replay import cassette

    path = tmp_path / "judges.jsonl"
    names = ["refund", "shipping", "rude"]
    with cassette(path, mode="record") as tape:
        live = judged_suite(names).run_sync(verbose=False)
    print(f"\nrecorded: {tape.stats.to_dict()}")
    verdicts = {
        r.scenario_name: [(c.status.value, c.message) for s in r.steps for c in s.results]
        for r in live.results
    }
    print(f"verdicts: {verdicts!r}\nwarnings: {judge_warnings(live.results)!r}")
    for order, parallel in ((names[::-1], False), (["shipping"], False), (names, True)):
        with cassette(path, mode="replay") as replay:
            again = judged_suite(order).run_sync(parallel=parallel, verbose=False)
        stats = replay.stats
        print(f"replayed {order} parallel={parallel}: {stats.to_dict()}")
        assert (stats.missed, stats.live, stats.refused) == (0, 0, 0)
        for result in again.results:
            checks = [(c.status.value, c.message) for s in result.steps for c in s.results]
            assert checks == verdicts[result.scenario_name]


def test_an_unaided_simulated_user_never_passes_with_zero_turns() -> None:
    """SmolLM2 declares its goal reached before speaking: with ``min_turns=1`` (the strict
    option; the default 0 passes as giskard-checks, flagged vacuous) that is the step's ERROR."""
    from scenarist import FnCheck

    result = (
        Scenario("unaided simulated user")
        .interact(
            inputs=UserSimulator(
                persona="A customer whose order #12 arrived broken and who wants a refund.",
                generator=small_model(),
                max_steps=2,
                max_retries=1,
                min_turns=1,
            ),
            outputs=lambda inputs: "I am sorry; let me look at order #12.",
        )
        .check(FnCheck(fn=lambda trace: True))
        .run_sync(return_exception=True)
    )
    (step,) = result.steps
    turns = len(result.final_trace.interactions)
    print(f"\nturns: {turns}, error: {step.error!r}")
    if turns == 0:
        assert result.status == "error"
        assert step.error is not None and step.error.phase == "input_generation"
    else:
        assert not result.vacuous


# -- the support bot of issue 14, through the command line -----------------------------------

SUPPORT_BOT = '''
"""A support bot on the official openai SDK, judged by the same small model."""
import os

import openai

from scenarist import (
    AnswerRelevance, Conformity, Groundedness, Scenario, Suite, Toxicity, UserSimulator,
)
from scenarist.providers import OpenAIProvider

URL, MODEL = os.environ["SCENARIST_REALMODEL_URL"], os.environ["REALMODEL_ALIAS"]
POLICY = "Returns are accepted within 30 days. Shipping is free over 50 euros."
client = openai.OpenAI(base_url=URL, api_key="unused", timeout=300, max_retries=0)


def bot(question: str) -> str:
    answer = client.chat.completions.create(
        model=MODEL,
        max_tokens=48,
        temperature=0,
        messages=[
            {"role": "system", "content": "You are a shop assistant. Policy: " + POLICY},
            {"role": "user", "content": question},
        ],
    )
    return answer.choices[0].message.content or ""


def judge() -> OpenAIProvider:
    return OpenAIProvider(MODEL, base_url=URL, api_key="unused", max_retries=1, timeout_s=300.0)


def asked(name: str, question: str) -> Scenario:
    return Scenario(name).interact(inputs=question, outputs=bot, metadata={"context": POLICY})


suite = Suite(
    name="support bot",
    scenarios=[
        asked("returns", "How long do I have to return shoes?")
        .check(Groundedness(judge=judge(), max_retries=1)),
        asked("shipping", "Is shipping free?")
        .check(AnswerRelevance(judge=judge(), max_retries=1)),
        asked("tone", "Where is my parcel?")
        .check(Conformity(rule="The reply is polite.", judge=judge(), max_retries=1))
        .check(Toxicity(judge=judge(), max_retries=1)),
        Scenario("broken order")
        .interact(
            inputs=UserSimulator(
                persona="A customer whose order #12 arrived broken and who wants a refund.",
                generator=judge(),
                max_steps=2,
                max_retries=1,
            ),
            outputs=bot,
        ),
    ],
)
'''


def _verdicts(log_path: Any) -> dict[str, list[tuple[str, str]]]:
    from scenarist.formats.runlog import read_jsonl

    verdicts = {}
    for record in read_jsonl(log_path).scenarios:
        result = record.result
        verdicts[result.scenario_name] = [(result.status.value, "")] + [
            (c.status.value, c.message) for s in result.steps for c in s.results
        ]
    return verdicts


def test_a_support_bot_recorded_serially_replays_from_the_cli_in_parallel(tmp_path: Any) -> None:
    """Issue 14's support bot: the agent's own openai-SDK calls, four judges and a simulated
    user recorded by ``scenarist run --record``, then replayed by ``--replay --parallel 4``
    with the same verdicts and nothing live (the tally line says so)."""
    import subprocess
    import sys
    import time

    (tmp_path / "support_bot.py").write_text(SUPPORT_BOT)
    env = {
        **os.environ,
        "SCENARIST_HOME": str(tmp_path / "home"),
        "SCENARIST_REALMODEL_URL": URL,
        "REALMODEL_ALIAS": MODEL,
    }

    def run(*flags: str) -> tuple[subprocess.CompletedProcess[str], float]:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "scenarist.cli", "run", "support_bot.py", *flags],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        return done, time.perf_counter() - began

    recorded, live_s = run("--record", "--json", "recorded.jsonl")
    print(f"\nrecorded in {live_s:.1f} s:\n{recorded.stdout[-3000:]}\n{recorded.stderr[-2000:]}")
    assert recorded.returncode in (0, 1, 2), recorded.stderr
    assert (tmp_path / ".cassettes").is_dir()
    replayed, replay_s = run("--replay", "--parallel", "4", "--json", "replayed.jsonl")
    print(f"replayed in {replay_s:.1f} s:\n{replayed.stdout[-3000:]}\n{replayed.stderr[-2000:]}")
    assert replayed.returncode == recorded.returncode, replayed.stdout + replayed.stderr
    assert " 0 missed, 0 live" in replayed.stdout, replayed.stdout
    first, again = _verdicts(tmp_path / "recorded.jsonl"), _verdicts(tmp_path / "replayed.jsonl")
    assert sorted(first) == ["broken order", "returns", "shipping", "tone"]
    assert again == first
