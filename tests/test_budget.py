"""Budgets that fail closed (``Suite.run(budget=...)``): the spend is counted from what the
fake provider reported (or estimated from the call's size when it reported nothing, or
priced at the dearest known price for an unknown model), a scenario that would go over
is not started and is BUDGET (an ERROR for giskard-checks code), the results so far are
kept, and parallel starts reserve their estimates so they cannot overshoot together."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from scenarist import Scenario, StringMatching, Suite
from scenarist.engine.budget import Budget, Estimate, parse_budget
from scenarist.errors import UserError
from scenarist.providers.pricing import ceiling_price, cost_usd
from scenarist.testing import FakeLLMServer, Reply

TOKENS = 1000  # each fake answer reports 1000 tokens in and 1000 out
CALL_USD = cost_usd("openai", "gpt-4o-mini", TOKENS, TOKENS)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(lambda request: Reply("hi there", tokens_in=TOKENS, tokens_out=TOKENS)) as s:
        yield s


def agent_for(server: FakeLLMServer, model: str = "gpt-4o-mini") -> Callable[[str], str]:
    def agent(inputs: str) -> str:
        body = {"model": model, "messages": [{"role": "user", "content": inputs}]}
        reply = httpx.post(server.openai_url + "/chat/completions", json=body, timeout=30)
        return str(reply.json()["choices"][0]["message"]["content"])

    return agent


def suite_of(count: int, agent: Callable[[str], str], **scenario: Any) -> Suite:
    return Suite(
        name="paid",
        target=agent,
        scenarios=[
            Scenario(f"s{i}", **scenario).interact("hello").check(StringMatching(keyword="hi"))
            for i in range(count)
        ],
    )


def test_budget_counts_the_usage_the_provider_reported(server: FakeLLMServer) -> None:
    assert CALL_USD is not None
    result = suite_of(3, agent_for(server)).run_sync(budget=1.0, verbose=False)
    assert [r.outcome for r in result.results] == ["pass"] * 3
    assert result.budget is not None
    assert result.budget.spent_usd == pytest.approx(3 * CALL_USD)
    assert result.budget.spent_tokens == 3 * 2 * TOKENS
    assert result.budget.estimated_calls == 0 and not result.budget.failed


def test_budget_prices_calls_without_usage_from_their_size_never_free() -> None:
    text = "hi " + "x" * 397  # 400 characters of answer
    with FakeLLMServer(lambda request: Reply(text, usage=False)) as server:
        result = suite_of(2, agent_for(server)).run_sync(budget=100, verbose=False)
    assert result.budget is not None
    assert result.cost_usd is None  # the trace itself knows no cost
    _, price_out = ceiling_price("openai")
    assert result.budget.estimated_calls == 2
    assert result.budget.spent_usd > 0
    # at least the answer's 100 tokens at the dearest output price, for each call
    assert result.budget.spent_usd >= 2 * 100 * price_out / 1_000_000
    assert len(result.budget.warnings) == 1  # one warning for the model, not one a call
    assert "reported no usage" in result.budget.warnings[0]


def test_budget_prices_an_unknown_model_at_the_dearest_price_of_its_provider(
    server: FakeLLMServer,
) -> None:
    agent = agent_for(server, model="no-such-model-anywhere")
    result = suite_of(2, agent).run_sync(budget=100, verbose=False)
    assert result.budget is not None
    price_in, price_out = ceiling_price("openai")
    expected = 2 * (TOKENS * price_in + TOKENS * price_out) / 1_000_000
    assert result.budget.spent_usd == pytest.approx(expected)
    assert result.budget.estimated_calls == 2
    assert [w for w in result.budget.warnings if "no price is known" in w] == [
        result.budget.warnings[0]
    ]
    assert "no-such-model-anywhere" in result.budget.warnings[0]


def test_budget_stops_a_suite_half_way_and_keeps_the_results(server: FakeLLMServer) -> None:
    assert CALL_USD is not None
    result = suite_of(5, agent_for(server)).run_sync(budget=CALL_USD * 2.5, verbose=False)
    assert [r.outcome for r in result.results] == ["pass", "pass", "budget", "budget", "budget"]
    assert len(server.requests) == 2  # the stopped scenarios never called the model
    stopped = result.results[2]
    # giskard-checks code sees an ERROR whose message names the budget
    assert stopped.status.value == "error" and stopped.errored and not stopped.passed
    error = stopped.steps[0].error
    assert error is not None and error.exception_type == "BudgetExceeded"
    assert "budget" in error.message and "not started" in error.message
    assert all(c.status.value == "skip" for c in stopped.steps[0].results)
    assert result.errored_count == 3 and result.budget_count == 3
    assert result.pass_rate == pytest.approx(0.4)  # a stopped scenario is not left out
    assert "3 not started (budget)" in result.summary_line()
    assert result.budget is not None and result.budget.failed
    assert result.budget.stopped == ["s2", "s3", "s4"]
    with pytest.raises(AssertionError):
        result.assert_passed()
    dumped = result.results[2].model_dump()
    assert dumped["status"] == "error"  # the four statuses only, where giskard reads


def test_parallel_starts_reserve_their_estimates(server: FakeLLMServer) -> None:
    """Eight workers, a budget for two calls: two scenarios start, never eight."""
    assert CALL_USD is not None
    suite = suite_of(8, agent_for(server))
    estimates = {f"s{i}": Estimate(CALL_USD, 0, "given") for i in range(8)}
    budget = Budget(CALL_USD * 2.5, estimates=estimates)
    result = suite.run_sync(parallel=True, max_concurrency=8, budget=budget, verbose=False)
    assert len(server.requests) == 2
    assert sorted(r.outcome for r in result.results).count("pass") == 2
    assert budget.report.spent_usd <= CALL_USD * 2.5
    assert budget.report.estimate_usd == pytest.approx(8 * CALL_USD)
    assert budget.report.estimated_from == {"given": 8}


def test_parallel_starts_without_estimates_probe_one_at_a_time(server: FakeLLMServer) -> None:
    """No estimate at all: one scenario runs alone until its spend is known, so eight
    workers cannot all start on an unknown cost."""
    assert CALL_USD is not None
    suite = suite_of(8, agent_for(server))
    result = suite.run_sync(parallel=True, max_concurrency=8, budget=CALL_USD * 2.5, verbose=False)
    assert len(server.requests) == 2
    assert result.budget is not None and result.budget.spent_usd <= CALL_USD * 2.5
    assert result.budget.estimated_from == {"unknown": 8}


def test_a_scenario_over_its_own_budget_is_not_started(server: FakeLLMServer) -> None:
    assert CALL_USD is not None
    suite = suite_of(2, agent_for(server))
    suite.append(
        Scenario("dear", budget=CALL_USD / 2).interact("hello").check(StringMatching(keyword="hi"))
    )
    suite.append(Scenario("after").interact("hello").check(StringMatching(keyword="hi")))
    result = suite.run_sync(verbose=False)  # no run budget: the scenario's own applies
    assert [r.outcome for r in result.results] == ["pass", "pass", "budget", "pass"]
    error = result.results[2].steps[0].error
    assert error is not None and "its own budget" in error.message
    assert len(server.requests) == 3


def test_no_budget_leaves_results_as_before(server: FakeLLMServer) -> None:
    result = suite_of(2, agent_for(server)).run_sync(verbose=False)
    assert result.budget is None
    assert "budget" not in result.model_dump()
    assert all(r.outcome == "pass" and not r.budget_stopped for r in result.results)
    assert "budget" not in Scenario("x").model_dump()


@pytest.mark.parametrize(
    ("value", "usd", "tokens"),
    [
        (5, 5.0, None),
        ("5usd", 5.0, None),
        ("$0.5", 0.5, None),
        ("100ktokens", None, 100_000),
        ("5usd,2Mtokens", 5.0, 2_000_000),
        ("0", 0.0, None),
    ],
)
def test_budget_amounts(value: Any, usd: float | None, tokens: int | None) -> None:
    budget = parse_budget(value)
    assert budget is not None and (budget.usd, budget.tokens) == (usd, tokens)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("five", "budget takes an amount of USD or tokens, like 5usd"),
        ("-1", "budget must be 0 or more, got '-1'"),
        (-2.0, "budget must be 0 or more"),
        (True, "budget takes an amount"),
        ("nan", "budget takes an amount"),
        ("5usd,6usd", "names USD twice"),
    ],
)
def test_bad_budgets_are_refused_naming_the_argument(value: Any, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("$", r"\$")):
        Suite(name="x").run_sync(budget=value, verbose=False)


def test_a_negative_scenario_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget"):
        Scenario("x", budget=-1)


def test_the_run_log_of_a_library_run_keeps_the_budget(server: FakeLLMServer) -> None:
    from scenarist.formats.runlog import decode_text, run_log_from_suite_result

    assert CALL_USD is not None
    result = suite_of(3, agent_for(server)).run_sync(budget=CALL_USD * 1.5, verbose=False)
    log = run_log_from_suite_result(result)
    text = "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in log.records())
    again = decode_text(text)
    assert again.header.budget is not None and again.header.budget.stopped == ["s1", "s2"]
    assert [r.outcome for r in again.scenarios] == [None, "budget", "budget"]
    assert [r.result.status.value for r in again.scenarios] == ["pass", "error", "error"]
    assert [r.outcome for r in again.to_suite_result().results] == ["pass", "budget", "budget"]


def test_a_scenario_that_spends_over_its_own_budget_fails_the_budget(
    server: FakeLLMServer,
) -> None:
    """Nothing tells its cost before it runs: it runs, and spending over its own budget
    is reported (the run must not pass)."""
    assert CALL_USD is not None
    first = Scenario("first", budget=CALL_USD / 2).interact("hello")
    suite = Suite(
        name="paid", target=agent_for(server), scenarios=[first.check(StringMatching(keyword="hi"))]
    )
    result = suite.run_sync(verbose=False)
    assert result.results[0].outcome == "pass"
    assert result.budget is not None and result.budget.over_budget == ["first"]
    assert result.budget.failed


def test_the_budgets_guide_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "budgets.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(block, "docs/budgets.md", "exec"), {})
    assert "['pass', 'pass', 'budget', 'budget', 'budget']" in capsys.readouterr().out


def test_a_zero_budget_starts_nothing_of_unknown_cost(server: FakeLLMServer) -> None:
    result = suite_of(2, agent_for(server)).run_sync(budget=0, verbose=False)
    assert [r.outcome for r in result.results] == ["budget", "budget"]
    assert server.requests == []


def test_a_token_budget_stops_the_run(server: FakeLLMServer) -> None:
    result = suite_of(4, agent_for(server)).run_sync(budget="5ktokens", verbose=False)
    # each call is 2000 tokens: two fit in 5000, a third would not
    assert [r.outcome for r in result.results] == ["pass", "pass", "budget", "budget"]
    error = result.results[2].steps[0].error
    assert error is not None and "5000 tokens" in error.message


def test_the_html_report_shows_budget_outcomes(server: FakeLLMServer) -> None:
    assert CALL_USD is not None
    result = suite_of(3, agent_for(server)).run_sync(budget=CALL_USD * 1.5, verbose=False)
    from scenarist.report.html import to_html

    html = to_html(result)
    assert html.count('<span class="error">BUDGET</span>') == result.budget_count >= 1
    assert "<strong>Budget</strong>: " in html and "not started" in html


def test_a_scenario_with_a_budget_is_refused_by_scenario_run() -> None:
    """Scenario.run alone cannot keep a budget (nothing estimates it before it starts):
    it says so rather than letting the budget pass silently."""
    from scenarist.errors import UserError

    scenario = Scenario("dear", budget=0.01).interact("hello", outputs="hi")
    with pytest.raises(UserError, match=r"budget=0\.01: budgets are kept by suite runs"):
        scenario.run_sync()
    suite = Suite(name="s", scenarios=[scenario.check(StringMatching(keyword="hi"))])
    assert suite.run_sync(verbose=False).results[0].outcome == "pass"  # a suite keeps it
