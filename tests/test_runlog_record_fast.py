"""``ScenarioRecord.from_result`` builds a finished scenario's record without validation,
reading each figure once (issue 30 item 4): it must give exactly the record the
validated constructor gives, for every kind of result."""

from __future__ import annotations

import itertools
from typing import Any

import openai
import pytest

from scenarist import Equals, FnCheck, Scenario, StringMatching, Suite, step
from scenarist.formats.runlog import ScenarioRecord, record_json
from scenarist.model.certificate import scenario_certificate
from scenarist.model.results import ScenarioResult
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM


def _validated(index: int, result: ScenarioResult, guarantee: Any) -> ScenarioRecord:
    """The record as the validated constructor builds it (the path before the fast one)."""
    return ScenarioRecord(
        certificate=scenario_certificate(result, guarantee),
        index=index,
        result=result,
        check_count=result.check_count,
        no_checks=not result.has_checks,
        vacuous=result.vacuous,
        flaky=result.flaky,
        cost_usd=result.cost_usd,
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        outcome="budget" if result.budget_stopped else None,
    )


def _costly(question: str) -> str:
    with step("plan", kind="llm") as plan:  # a declared cost and tokens
        plan.set_meta("cost_usd", 0.25)
        plan.set_meta("tokens_in", 7)
        plan.set_meta("tokens_out", 3)
        with step("inner") as inner:
            inner.set_meta("tokens_in", 100)  # inside a step that declares tokens
    with step("tool", kind="tool") as tool:
        tool.set_meta("cost_usd", 0.5)
    return f"ok {question}"


def _raises(question: str) -> str:
    raise RuntimeError("the agent broke")


_flips = itertools.count()


def _flaky(question: str) -> str:
    return "yes" if next(_flips) % 2 else "no"


def _results() -> list[ScenarioResult]:
    suite = Suite(name="kinds", target=_costly)
    suite.append(Scenario("passes").interact("a").check(StringMatching(keyword="ok")))
    suite.append(Scenario("fails").interact("b").check(Equals(expected_value="nope")))
    suite.append(Scenario("no checks").interact("c"))
    suite.append(Scenario("vacuous").check(FnCheck(fn=lambda trace: True)))
    suite.append(Scenario("errors", target=_raises).interact("d").check(Equals(expected_value="x")))
    suite.append(Scenario("déjà vu ✓").interact("é").check(StringMatching(keyword="ok")))
    results = list(suite.run_sync(verbose=False).results)
    flaky = Suite(name="flaky", target=_flaky)
    flaky.append(Scenario("flips").interact("q").check(Equals(expected_value="yes")))
    results += flaky.run_sync(verbose=False, repeat=4).results
    budgeted = Suite(name="budget", target=_costly)
    budgeted.append(Scenario("over").interact("q").check(StringMatching(keyword="ok")))
    results += budgeted.run_sync(verbose=False, budget=0.0).results
    return results


def _llm_results() -> list[ScenarioResult]:
    script = ScriptedLLM(lambda r: Reply(f"answer to {r.text}", tokens_in=11, tokens_out=4))
    with FakeLLMServer(script) as server:

        def agent(question: str) -> str:
            client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
            with step("wrapper") as wrapper:  # a step declaring cost: the call's is covered
                wrapper.set_meta("cost_usd", 1.0)
                reply = client.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
                )
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
            )
            return reply.choices[0].message.content or ""

        suite = Suite(name="llm", target=agent)
        suite.append(Scenario("calls").interact("q1").check(StringMatching(keyword="q1")))
        return list(suite.run_sync(verbose=False).results)


@pytest.mark.parametrize("guarantee", [None, "in-process"])
def test_the_fast_record_is_the_validated_record(guarantee: Any) -> None:
    results = _results() + _llm_results()
    outcomes = {r.scenario_name: r.outcome for r in results}
    assert outcomes["over"] == "budget" and outcomes["errors"] != "pass"  # the kinds ran
    assert any(r.flaky for r in results) and any(r.vacuous for r in results)
    assert any(r.cost_usd for r in results) and any(r.tokens_in for r in results)
    for index, result in enumerate(results):
        fast = ScenarioRecord.from_result(index, result, guarantee)
        slow = _validated(index, result, guarantee)
        assert fast == slow, result.scenario_name
        assert fast.model_fields_set == slow.model_fields_set
        assert fast.result is result
        assert record_json(fast) == slow.model_dump_json(fallback=str), result.scenario_name
        assert (fast.cost_usd, fast.tokens_in, fast.tokens_out) == (
            result.cost_usd,
            result.tokens_in,
            result.tokens_out,
        )


def test_a_result_subclass_takes_the_validated_path() -> None:
    class Mine(ScenarioResult):
        @property
        def check_count(self) -> int:  # type: ignore[override]
            return 42

    result = Mine(scenario_name="mine")
    assert ScenarioRecord.from_result(0, result).check_count == 42
