"""Majority voting over samples, thresholds, and ``TraceAssert.judge`` (Veval's wording)."""

from __future__ import annotations

from typing import Any

import pytest

from scenarist import CheckStatus, Conformity, TraceAssert
from scenarist.judges import TraceJudge

from .conftest import FakeProvider, make_trace, verdict

TRACE = make_trace(("Where is my parcel?", "It left the depot this morning."))


def metrics(result: Any) -> dict[str, float]:
    return {m.name: m.value for m in result.metrics}


@pytest.mark.anyio
async def test_samples_majority_wins_and_agreement_is_reported() -> None:
    provider = FakeProvider(
        verdict(False, "no, it fails"),
        verdict(True, "yes, first pass"),
        verdict(True, "yes, second pass"),
    )
    result = await Conformity(rule="r", judge=provider, samples=3, temperature=0.7).run(TRACE)
    assert result.status is CheckStatus.PASS
    assert result.message == "yes, first pass"  # the first sample that agrees with the majority
    assert metrics(result)["judge_agreement"] == pytest.approx(2 / 3)
    assert [s["passed"] for s in result.details["samples"]] == [False, True, True]
    assert {r["temperature"] for r in provider.requests} == {0.7}
    assert result.details["judge"]["calls"] == 3


@pytest.mark.anyio
async def test_samples_tie_fails() -> None:
    provider = FakeProvider(verdict(True, "yes, it passes"), verdict(False, "no, it fails"))
    result = await Conformity(rule="r", judge=provider, samples=2).run(TRACE)
    assert result.status is CheckStatus.FAIL
    assert result.message == "no, it fails"
    assert metrics(result)["judge_agreement"] == 0.5


@pytest.mark.anyio
async def test_samples_one_invalid_sample_makes_the_check_error() -> None:
    provider = FakeProvider(verdict(True), "garbage", verdict(True))
    result = await Conformity(rule="r", judge=provider, samples=3, max_retries=0).run(TRACE)
    assert result.status is CheckStatus.ERROR
    assert "(sample 2 of 3): attempt 1: the answer is not JSON: 'garbage'." in result.message


@pytest.mark.anyio
async def test_samples_score_metric_is_the_mean() -> None:
    provider = FakeProvider(
        verdict(True, "a good answer", 0.6), verdict(True, "a perfect answer", 1.0)
    )
    result = await Conformity(rule="r", judge=provider, samples=2).run(TRACE)
    assert metrics(result)["judge_score"] == pytest.approx(0.8)
    assert metrics(result)["judge_agreement"] == 1.0


@pytest.mark.anyio
async def test_threshold_lets_the_score_decide_and_needs_a_score() -> None:
    low = FakeProvider(verdict(True, "meh, barely passing", 0.4))
    assert (await Conformity(rule="r", judge=low, threshold=0.5).run(TRACE)).failed
    high = FakeProvider(verdict(False, "good enough overall", 0.7))
    assert (await Conformity(rule="r", judge=high, threshold=0.5).run(TRACE)).passed
    none = FakeProvider(verdict(True, "no score given here"))
    result = await Conformity(rule="r", judge=none, threshold=0.5).run(TRACE)
    assert result.status is CheckStatus.ERROR
    assert result.message == "threshold=0.5 needs a score, but the judge gave none."


# -- TraceAssert.judge ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_trace_assert_judge_failure_message_is_vevals() -> None:
    provider = FakeProvider(verdict(False, "It never says where the parcel is.", 0.3))
    check = TraceAssert.judge("Answers with the parcel's location", model=provider)
    assert isinstance(check, TraceJudge)
    result = await check.run(TRACE)
    assert result.status is CheckStatus.FAIL
    assert result.message == (
        "Judge: Answers with the parcel's location (score 0.30) — "
        "It never says where the parcel is."
    )
    assert "<input>\nWhere is my parcel?\n</input>" in provider.prompt
    assert "<output>\nIt left the depot this morning.\n</output>" in provider.prompt
    assert "<criteria>\nAnswers with the parcel's location\n</criteria>" in provider.prompt
    assert "reference_output" not in provider.prompt


@pytest.mark.anyio
async def test_trace_assert_judge_reference_threshold_samples_and_no_score() -> None:
    provider = FakeProvider(
        verdict(True, "Close to the reference."), verdict(True, "The same as the reference.")
    )
    check = TraceAssert.judge(
        "Is accurate", model=provider, reference_output={"status": "shipped"}, samples=2
    )
    result = await check.run(TRACE)
    assert result.message == "Judge: Is accurate — Close to the reference."
    assert '<reference_output>\n{"status": "shipped"}\n</reference_output>' in provider.prompt
    spec = TraceAssert.judge("c", model="openai/gpt-4o-mini", threshold=0.7).to_spec()
    assert spec == {  # temperature, samples and max_retries at their defaults: left out
        "kind": "trace_judge",
        "judge": "openai/gpt-4o-mini",
        "threshold": 0.7,
        "criteria": "c",
    }
    custom = TraceAssert.judge("c", model="openai/gpt-4o-mini", samples=3).copy_with(
        temperature=0.5, max_retries=0
    )
    assert {k: custom.to_spec()[k] for k in ("temperature", "samples", "max_retries")} == {
        "temperature": 0.5,
        "samples": 3,
        "max_retries": 0,
    }


@pytest.mark.anyio
async def test_trace_assert_judge_error_message_is_vevals() -> None:
    result = await TraceAssert.judge("Is polite", model=FakeProvider("??", "??", "??")).run(TRACE)
    assert result.status is CheckStatus.ERROR
    assert result.message.startswith("Judge: evaluation failed — The judge gave no valid verdict")


def test_trace_assert_judge_accepts_vevals_client_first_form() -> None:
    client = object()
    check = TraceAssert.judge(client, "Is polite", threshold=0.5)  # type: ignore[arg-type]
    assert check.criteria == "Is polite" and check.threshold == 0.5 and check.judge is None
    with pytest.raises(ValueError, match="expects the criteria first"):
        TraceAssert.judge(client)  # type: ignore[arg-type]
