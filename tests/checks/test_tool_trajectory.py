"""ToolTrajectory: whole-trajectory matching of tool calls, its modes, argument matchers,
partial-credit scores, aligned failure table, judged arguments, files and bad input."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError
from tests.judges.conftest import FakeProvider, verdict

from scenarist import Check, Scenario, ToolTrajectory, TraceAssert
from scenarist.checks.trajectory import PairOutcome, align
from scenarist.errors import SerializationError, UserError
from scenarist.formats.scenario_schema import json_schema
from scenarist.judges.mocks import JudgeMocks, using_judge_mocks
from scenarist.model.results import CheckResult, CheckStatus
from scenarist.model.trace import Interaction, Span, Trace

from .conftest import CheckRunner

_ids = iter(range(1_000_000))


def call(tool: str, args: Any = None, kind: str = "tool") -> Span:
    return Span(span_id=f"t{next(_ids)}", name=tool, kind=kind, input=args)


def trace_of(*turns: list[Span]) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace()
    for spans in turns:
        trace = trace.with_interaction(Interaction(inputs="in", outputs="out", spans=spans))
    return trace


@pytest.fixture
def booking() -> Trace[Any, Any]:
    """search, then lookup (arguments as a JSON string, as LLM tool calls send them), then
    book; an llm span in between is not a tool call."""
    return trace_of(
        [
            call("search", {"q": "refund policy", "limit": 5}),
            call("plan", None, kind="llm"),
            call("lookup", '{"order_id": "A-1", "amount": 30.004}'),
            call("book", {"when": "today", "urgent": True}),
        ]
    )


def score(result: CheckResult) -> float:
    value = result.details["score"]
    assert isinstance(value, float)
    assert [m.value for m in result.metrics if m.name == "trajectory_score"] == [value]
    return value


# -- modes -------------------------------------------------------------------------------


def test_tool_trajectory_strict_passes_on_the_same_calls_in_order(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    check = TraceAssert.tool_trajectory(["search", "lookup", "book"])
    result = run(check, booking)
    assert result.status is CheckStatus.PASS, result.message
    assert score(result) == 1.0
    assert result.message == (
        "ToolTrajectory: score 1.00 reaches the threshold 1.00 (mode strict: 3 of 3 expected "
        "call(s) matched fully, 3 call(s) made)."
    )


@pytest.mark.parametrize(
    ("mode", "expected", "wanted_score"),
    [
        # order matters: the best order-keeping alignment pairs 2 of the 3 calls
        ("strict", ["lookup", "search", "book"], 2 / 3),
        ("strict", ["search", "lookup"], 2 / 3),  # one call too many
        ("strict", ["search", "lookup", "book", "pay"], 3 / 4),  # one missing
        ("unordered", ["book", "lookup", "search"], 1.0),
        ("unordered", ["book", "search"], 2 / 3),
        ("unordered", ["book", "search", "lookup", "lookup"], 3 / 4),
        ("subset", ["search", "lookup", "book", "pay", "email"], 1.0),  # missing ones allowed
        ("subset", ["search", "book"], 2 / 3),  # lookup was not expected
        ("superset", ["book", "search"], 1.0),  # extra calls allowed, any order
        ("superset", ["search", "pay"], 1 / 2),  # pay was not made
    ],
)
def test_tool_trajectory_mode_scores(
    booking: Trace[Any, Any],
    run: CheckRunner,
    mode: Any,
    expected: list[str],
    wanted_score: float,
) -> None:
    result = run(TraceAssert.tool_trajectory(expected, mode), booking)
    assert score(result) == pytest.approx(wanted_score)
    assert result.passed is (wanted_score == 1.0)


def test_tool_trajectory_ordered_superset_keeps_the_order(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    assert run(TraceAssert.tool_trajectory(["search", "book"], "superset", ordered=True), booking)
    result = run(TraceAssert.tool_trajectory(["book", "search"], "superset", ordered=True), booking)
    assert result.status is CheckStatus.FAIL
    assert score(result) == 0.5
    ordered_subset = TraceAssert.tool_trajectory(
        ["lookup", "search", "book"], "subset", ordered=True
    )
    assert score(run(ordered_subset, booking)) == pytest.approx(2 / 3)


def test_tool_trajectory_subset_of_no_calls_and_strict_empty(run: CheckRunner) -> None:
    nothing = trace_of([call("answer", kind="llm")])
    assert run(TraceAssert.tool_trajectory(["search"], "subset"), nothing).passed
    assert run(TraceAssert.tool_trajectory([], "strict"), nothing).passed  # "no tool calls"
    result = run(TraceAssert.tool_trajectory([], "strict"), trace_of([call("search")]))
    assert result.status is CheckStatus.FAIL and score(result) == 0.0


def test_tool_trajectory_unordered_finds_the_optimal_pairing(run: CheckRunner) -> None:
    # Pairing each expected call with the first call it fits (search(q=*) with the first
    # search) leaves search(q='b') against q='c': 1.5 of 2. The optimal pairing scores 2.
    trace = trace_of([call("search", {"q": "b"}), call("search", {"q": "c"})])
    check = TraceAssert.tool_trajectory(
        [("search", {"q": "*"}), ("search", {"q": "b"})], "unordered"
    )
    result = run(check, trace)
    assert result.passed, result.message
    assert [(r["expected"], r["actual"]) for r in result.details["alignment"]] == [(0, 1), (1, 0)]


def test_tool_trajectory_interaction_narrows_the_calls(run: CheckRunner) -> None:
    trace = trace_of([call("search")], [call("book")])
    assert run(TraceAssert.tool_trajectory(["book"], interaction=-1), trace).passed
    result = run(TraceAssert.tool_trajectory(["book"]), trace)
    assert result.status is CheckStatus.FAIL
    assert result.details.get("interaction") is None
    bad = run(TraceAssert.tool_trajectory(["book"], interaction=5), trace)
    assert bad.status is CheckStatus.ERROR and "no interaction at index 5" in bad.message


# -- matchers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "value", "passed"),
    [
        ("refund policy", "refund policy", True),
        ("refund policy", "Refund policy", False),
        (1, True, False),  # a bool never equals a number
        (True, True, True),
        ({"exact": {"regex": "x"}}, {"regex": "x"}, True),  # a dict that looks like a matcher
        ({"city": "Paris"}, {"city": "Paris"}, True),  # a plain dict is a value
        ({"regex": "^refund"}, "refund policy", True),
        ({"regex": "policy$"}, "refund policy", True),  # re.search
        ({"regex": "^policy"}, "refund policy", False),
        ({"regex": "5"}, 5, False),  # not a string
        ({"approx": 30.0, "tol": 0.01}, 30.004, True),
        ({"approx": 30.0, "tol": 0.001}, 30.004, False),
        ({"approx": 30}, 30.0, True),
        ({"approx": 30.0, "tol": 1}, "30", False),  # not a number
        ({"approx": 1.0, "tol": 0.5}, True, False),
        ("*", None, True),
        ({"any": True}, [1, 2], True),
        (lambda v: v.startswith("refund"), "refund policy", True),
        (lambda v: v.startswith("refund"), "a refund", False),
    ],
)
def test_tool_trajectory_argument_matchers(
    run: CheckRunner, matcher: Any, value: Any, passed: bool
) -> None:
    trace = trace_of([call("search", {"q": value})])
    result = run(TraceAssert.tool_trajectory([("search", {"q": matcher})]), trace)
    assert result.passed is passed, result.message


def test_tool_trajectory_any_needs_the_argument(run: CheckRunner) -> None:
    trace = trace_of([call("search", {"limit": 5}), call("book", "not json")])
    result = run(
        TraceAssert.tool_trajectory([("search", {"q": "*"}), ("book", {"when": {"any": True}})]),
        trace,
    )
    assert result.status is CheckStatus.FAIL
    assert result.details["alignment"][0]["mismatches"] == ["q: missing (expected *)"]
    assert result.details["alignment"][1]["mismatches"] == ["when: missing (expected *)"]


def test_tool_trajectory_arguments_not_named_are_not_checked(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    check = TraceAssert.tool_trajectory(
        [("search", {"q": {"regex": "refund"}}), ("lookup", {}), {"tool": "book", "args": {}}]
    )
    assert run(check, booking).passed


@pytest.mark.parametrize(
    ("predicate", "problem"),
    [
        (lambda v: v["missing"], "the predicate for argument 'q' raised TypeError"),
        (lambda v: "yes", "the predicate for argument 'q' must return a bool, got str: 'yes'"),
    ],
)
def test_tool_trajectory_broken_predicate_is_error(
    run: CheckRunner, predicate: Any, problem: str
) -> None:
    trace = trace_of([call("search", {"q": "refund"})])
    result = run(TraceAssert.tool_trajectory([("search", {"q": predicate})]), trace)
    assert result.status is CheckStatus.ERROR
    assert result.message.startswith(f"ToolTrajectory: {problem}")


def test_tool_trajectory_regex_that_backtracks_forever_is_error(
    run: CheckRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("scenarist.checks.trajectory.REGEX_TIMEOUT_S", 0.05)
    trace = trace_of([call("search", {"q": "a" * 40 + "b"})])
    result = run(TraceAssert.tool_trajectory([("search", {"q": {"regex": "(a|aa)+$"}})]), trace)
    assert result.status is CheckStatus.ERROR
    assert result.message == (
        "ToolTrajectory: matching argument 'q' against /(a|aa)+$/ timed out after 0.05s; "
        "simplify the pattern"
    )


# -- partial credit ----------------------------------------------------------------------


def test_tool_trajectory_partial_credit_weighs_arguments(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    expected = [
        ("search", {"q": {"regex": "refund"}, "limit": 3}),  # 1 + 1 of 1 + 2 fields: 2/3
        ("lookup", {"order_id": "A-1", "amount": {"approx": 30, "tol": 0.01}}),  # 3/3
        ("book", {"when": "tomorrow", "urgent": False}),  # the tool only: 1/3
    ]
    result = run(TraceAssert.tool_trajectory(expected), booking)
    assert score(result) == pytest.approx((2 / 3 + 1 + 1 / 3) / 3)
    assert [r["credit"] for r in result.details["alignment"]] == pytest.approx([2 / 3, 1, 1 / 3])
    assert run(TraceAssert.tool_trajectory(expected, threshold=0.66), booking).passed
    assert not run(TraceAssert.tool_trajectory(expected, threshold=0.67), booking).passed
    # an extra expected call in strict mode: the denominator is the longer trajectory
    longer = TraceAssert.tool_trajectory([*expected, "pay"])
    assert score(run(longer, booking)) == pytest.approx(2 / 4)
    # superset divides by the expected calls, subset by the calls made
    superset = TraceAssert.tool_trajectory([expected[0], "pay"], "superset")
    assert score(run(superset, booking)) == pytest.approx((2 / 3) / 2)
    subset = TraceAssert.tool_trajectory([expected[2], "search"], "subset")
    assert score(run(subset, booking)) == pytest.approx((1 / 3 + 1) / 3)


def test_tool_trajectory_passing_below_one_shows_the_table(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    check = TraceAssert.tool_trajectory(["search", "lookup"], "unordered", threshold=0.5)
    result = run(check, booking)
    assert result.passed
    assert result.message.splitlines()[0] == (
        "ToolTrajectory: score 0.67 reaches the threshold 0.50 (mode unordered: 2 of 2 "
        "expected call(s) matched fully, 3 call(s) made)."
    )
    assert result.message.splitlines()[-1].endswith("unexpected call")


def _best(credits: list[list[float]], ordered: bool) -> float:
    """The greatest total credit of a one-to-one pairing, by brute force."""
    n, m = len(credits), len(credits[0]) if credits else 0
    best = 0.0
    for columns in itertools.product([None, *range(m)], repeat=n):
        used = [c for c in columns if c is not None]
        if len(set(used)) < len(used) or (ordered and used != sorted(used)):
            continue
        if any(c is not None and credits[i][c] == 0 for i, c in enumerate(columns)):
            continue
        best = max(best, sum(credits[i][c] for i, c in enumerate(columns) if c is not None))
    return best


@pytest.mark.parametrize("ordered", [False, True])
def test_tool_trajectory_alignment_is_optimal(ordered: bool) -> None:
    rng = random.Random(32)
    for _ in range(300):
        n, m = rng.randint(0, 4), rng.randint(0, 4)
        credits = [[rng.choice([0.0, 0.0, 1 / 3, 0.5, 1.0]) for _ in range(m)] for _ in range(n)]
        outcomes = [[PairOutcome(c) if c else None for c in row] for row in credits]
        alignment = align(outcomes, n, m, "unordered", ordered=False)
        if ordered:
            alignment = align(outcomes, n, m, "strict", ordered=False)
        assert alignment.credit == pytest.approx(_best(credits, ordered)), credits
        pairs = [(r.expected, r.actual) for r in alignment.rows if r.outcome is not None]
        assert len({e for e, _ in pairs}) == len({a for _, a in pairs}) == len(pairs)
        shown = sorted(r.expected for r in alignment.rows if r.expected is not None)
        assert shown == list(range(n))  # every call has its row, once
        assert sorted(r.actual for r in alignment.rows if r.actual is not None) == list(range(m))
        if ordered:
            assert [a for _, a in pairs] == sorted(a for _, a in pairs)


# -- the failure message -----------------------------------------------------------------


def test_tool_trajectory_failure_message_aligns_both_trajectories(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    check = TraceAssert.tool_trajectory(
        [
            ("search", {"q": {"regex": "^refund"}, "limit": {"approx": 10, "tol": 2}}),
            ("email", {"to": "*"}),
            ("lookup", {"order_id": "A-2"}),
        ]
    )
    result = run(check, booking)
    assert result.status is CheckStatus.FAIL
    assert result.message == (
        # credits: search 2/3 (tool, q), email 0, lookup 1/2 (tool): (2/3 + 1/2) / 3
        "ToolTrajectory: score 0.39 is below the threshold 1.00 (mode strict: 0 of 3 expected "
        "call(s) matched fully, 3 call(s) made)\n"
        "exp  act  expected                          actual                                 "
        "mismatch\n"
        "1    1    search(q=/^refund/, limit=≈10±2)  search(q='refund policy', limit=5)     "
        "limit: 5 is not within 2 of 10\n"
        "2    -    email(to=*)                       -                                      "
        "missing call\n"
        "3    2    lookup(order_id='A-2')            lookup(order_id='A-1', amount=30.004)  "
        "order_id: expected 'A-2', got 'A-1'\n"
        "-    3    -                                 book(when='today', urgent=True)        "
        "unexpected call"
    )
    assert result.details["tool_calls"][1] == {
        "tool": "lookup",
        "args": {"order_id": "A-1", "amount": 30.004},
    }


def test_tool_trajectory_table_says_what_a_mode_allows(
    booking: Trace[Any, Any], run: CheckRunner
) -> None:
    superset = run(TraceAssert.tool_trajectory(["book", "pay"], "superset"), booking)
    lines = superset.message.splitlines()
    assert lines[2].endswith("ok") and lines[3].endswith("missing call")
    assert lines[4].endswith("extra call (allowed in superset)")
    subset = run(TraceAssert.tool_trajectory(["pay", "book"], "subset"), booking)
    lines = subset.message.splitlines()
    assert lines[2].endswith("not called (allowed in subset)")
    assert lines[-1].endswith("unexpected call")


# -- judged arguments --------------------------------------------------------------------


def judged_check(provider: FakeProvider, **options: Any) -> ToolTrajectory:
    return TraceAssert.tool_trajectory(
        [("search", {"q": {"judge": "asks about refunds"}, "limit": 5})],
        judge=provider,
        **options,
    )


def test_tool_trajectory_judged_argument_passes_on_the_judges_word(run: CheckRunner) -> None:
    provider = FakeProvider(verdict(True, "The query names the refund policy."))
    trace = trace_of([call("search", {"q": "refund policy", "limit": 5})])
    result = run(judged_check(provider), trace)
    assert result.status is CheckStatus.PASS, result.message
    assert len(provider.requests) == 1
    prompt = provider.prompt
    assert "<criterion>\nasks about refunds\n</criterion>" in prompt
    assert "<tool>search</tool>\n<argument>q</argument>" in prompt
    assert "<value>\nrefund policy\n</value>" in prompt
    assert result.details["judged"] == [
        {
            "tool": "search",
            "argument": "q",
            "criterion": "asks about refunds",
            "value": "refund policy",
            "passed": True,
            "reason": "The query names the refund policy.",
        }
    ]
    metrics = {m.name: m.value for m in result.metrics}
    assert metrics["judge_calls"] == 1 and metrics["judge_cost_usd"] == 0.001


def test_tool_trajectory_judged_argument_fails_with_the_judges_reason(run: CheckRunner) -> None:
    provider = FakeProvider(verdict(False, "The query is about shipping times."))
    trace = trace_of([call("search", {"q": "shipping", "limit": 5})])
    result = run(judged_check(provider), trace)
    assert result.status is CheckStatus.FAIL
    assert score(result) == pytest.approx(2 / 3)
    assert result.message.splitlines()[-1].endswith(
        "q: the judge found 'shipping' fails 'asks about refunds': "
        "The query is about shipping times."
    )


def test_tool_trajectory_judges_each_distinct_value_once(run: CheckRunner) -> None:
    provider = FakeProvider(
        verdict(True, "The query names the refund policy."),
        verdict(False, "The query is about shipping times."),
    )
    trace = trace_of(
        [
            call("search", {"q": "refund policy", "limit": 5}),
            call("search", {"q": "shipping", "limit": 5}),
            call("search", {"q": "refund policy", "limit": 5}),
            call("email", {"q": "not judged: another tool"}),
        ]
    )
    check = TraceAssert.tool_trajectory(
        [("search", {"q": {"judge": "asks about refunds"}, "limit": 5})] * 2,
        "superset",
        judge=provider,
    )
    result = run(check, trace)
    assert result.passed, result.message
    assert len(provider.requests) == 2
    assert [r["actual"] for r in result.details["alignment"][:2]] == [0, 2]


def test_tool_trajectory_unparsable_judge_answer_is_error_never_pass(run: CheckRunner) -> None:
    provider = FakeProvider("ok", "looks fine", "yes")  # three answers, none a verdict
    trace = trace_of([call("search", {"q": "refund policy", "limit": 5})])
    result = run(judged_check(provider, threshold=0.0), trace)  # even a 0 threshold
    assert result.status is CheckStatus.ERROR
    assert len(provider.requests) == 3  # the first try and max_retries=2
    assert result.message.startswith(
        "ToolTrajectory: the judge gave no valid verdict on argument 'q' of tool 'search' "
        "('asks about refunds') after 3 attempt(s) (the answer is not JSON: 'yes')"
    )
    assert result.details["judge"]["calls"] == 3


def test_tool_trajectory_judge_that_cannot_be_built_is_error(run: CheckRunner) -> None:
    check = TraceAssert.tool_trajectory(
        [("search", {"q": {"judge": "asks about refunds"}})], judge="nosuchprovider/model"
    )
    result = run(check, trace_of([call("search", {"q": "refund"})]))
    assert result.status is CheckStatus.ERROR
    assert result.message.startswith(
        "ToolTrajectory: judging argument 'q' of tool 'search' ('asks about refunds'): "
    )


def test_tool_trajectory_judge_is_not_asked_without_a_candidate(run: CheckRunner) -> None:
    provider = FakeProvider()  # no scripted reply: a request would fail the test
    trace = trace_of([call("search", {"limit": 5}), call("email", {"q": "refund"})])
    result = run(judged_check(provider), trace)
    assert result.status is CheckStatus.FAIL
    assert provider.requests == [] and "judged" not in result.details


def test_tool_trajectory_judged_argument_answers_from_judge_mocks(run: CheckRunner) -> None:
    mocks = JudgeMocks()
    mocks.add("asks about refunds", passed=True, score=1.0, reasoning="mocked")
    provider = FakeProvider()
    trace = trace_of([call("search", {"q": "refund policy", "limit": 5})])
    with using_judge_mocks(mocks):
        assert run(judged_check(provider), trace).passed
        missing = run(judged_check(provider), trace)  # the queue is empty now
    assert missing.status is CheckStatus.ERROR
    assert "no judge mock for criteria 'asks about refunds'" in missing.message
    assert provider.requests == []


# -- the three faces: giskard-style check, TraceAssert, scenario files ------------------


def test_tool_trajectory_is_a_registered_serialisable_check() -> None:
    check = ToolTrajectory(
        expected=[
            {"tool": "search", "args": {"q": {"regex": "refund"}, "limit": {"approx": 5}}},
            "lookup",
            ("book", {"when": "*", "note": {"judge": "is polite"}}),
        ],
        mode="superset",
        ordered=True,
        threshold=0.8,
        judge="openai/gpt-4o-mini",
    )
    spec = check.to_spec()
    assert spec == {
        "kind": "tool_trajectory",
        "judge": "openai/gpt-4o-mini",
        "expected": [
            {"tool": "search", "args": {"q": {"regex": "refund"}, "limit": {"approx": 5}}},
            {"tool": "lookup", "args": {}},
            {"tool": "book", "args": {"when": "*", "note": {"judge": "is polite"}}},
        ],
        "mode": "superset",
        "ordered": True,
        "threshold": 0.8,
    }
    again = Check.model_validate(json.loads(check.model_dump_json()))
    assert isinstance(again, ToolTrajectory) and again == check
    assert TraceAssert.tool_trajectory(["lookup"]).to_spec() == {
        "kind": "tool_trajectory",
        "expected": [{"tool": "lookup", "args": {}}],
        "mode": "strict",
        "threshold": 1.0,
    }


def test_tool_trajectory_predicates_cannot_be_written_to_json() -> None:
    def polite(value: Any) -> bool:
        return True

    check = TraceAssert.tool_trajectory([("email", {"body": polite})])
    with pytest.raises(SerializationError, match=r"'email\.body' with Python predicates"):
        check.model_dump_json()
    with pytest.raises(SerializationError, match="use a data matcher"):
        check.model_dump(mode="json")
    assert check.to_spec()["expected"] == [
        {"tool": "email", "args": {"body": "<predicate polite>"}}
    ]
    assert check.model_dump()["expected"][0]["args"]["body"] is polite
    scenario = Scenario("s").interact("hi", outputs="ok").check(check)
    with pytest.raises(Exception, match=r"'email\.body' with Python predicates"):
        scenario.model_dump_json()  # inside a scenario: the same words


def test_tool_trajectory_works_as_a_veval_item_assertion(booking: Trace[Any, Any]) -> None:
    assert (
        asyncio.run(
            TraceAssert.tool_trajectory(["search", "lookup", "book"]).evaluate_async(booking)
        )
        is None
    )
    failure = asyncio.run(TraceAssert.tool_trajectory(["book"]).evaluate_async(booking))
    assert failure is not None and failure.startswith("ToolTrajectory: score 0.33 is below")


def test_tool_trajectory_as_a_veval_scenario_assertion_with_judge_mocks() -> None:
    from scenarist import RunContext, ScenarioItem
    from scenarist.testing import TestClient

    def agent(ctx: RunContext) -> str:
        with ctx.step("search", input={"q": "refund policy"}, kind="tool"):
            pass
        with ctx.step("lookup", input={"order_id": "A-1"}, kind="tool"):
            pass
        return "sent"

    check = TraceAssert.tool_trajectory(
        [("search", {"q": {"judge": "asks about refunds"}}), ("lookup", {"order_id": "A-2"})]
    )
    client = TestClient().with_judge_mock("asks about refunds", True, 1.0, "about refunds")
    result = asyncio.run(
        client.run_scenario_async("trajectory", agent, [check], items=[ScenarioItem(input="q")])
    )
    (item,) = result.results
    assert item.passed is False
    (failure,) = item.failures
    assert failure.startswith("ToolTrajectory: score 0.75 is below the threshold 1.00")
    assert failure.endswith("order_id: expected 'A-2', got 'A-1'")


AGENT = """
from scenarist import step


@step(kind="tool")
def search(q, limit=5):
    return ["doc"]


@step(kind="tool")
def lookup(order_id):
    return {"status": "refunded"}


def answer(inputs):
    search("refund policy", limit=3)
    lookup("A-1")
    return "Your refund was sent."
"""

SCENARIO = """
name: refund
target: {module}:answer
steps:
  - interacts:
      - {{kind: interact, inputs: "where is my refund?"}}
    checks:
      - kind: tool_trajectory
        mode: {mode}
        expected:
          - tool: search
            args:
              q: {{regex: "^refund"}}
              limit: {{approx: 3, tol: 0.5}}
          - tool: lookup
            args: {{order_id: "*"}}
      - kind: tool_trajectory
        mode: {mode}
        expected: [search, lookup]
"""


@pytest.mark.parametrize(("mode", "passed"), [("strict", True), ("superset", True)])
def test_tool_trajectory_from_a_yaml_scenario(
    tmp_path: Path, mode: str, passed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"trajectory_agent_{mode}"
    (tmp_path / f"{module}.py").write_text(AGENT)
    path = tmp_path / "refund.yaml"
    path.write_text(SCENARIO.format(module=module, mode=mode))
    import yaml

    jsonschema.validate(yaml.safe_load(path.read_text()), json_schema())
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = Scenario.from_file(path)
    result = scenario.run_sync()
    assert result.passed is passed, result
    check, shorthand = scenario.steps[0].checks
    assert isinstance(check, ToolTrajectory) and check.mode == mode
    assert isinstance(shorthand, ToolTrajectory)
    assert [c.tool for c in shorthand.expected] == ["search", "lookup"]
    typo = yaml.safe_load(path.read_text())
    typo["steps"][0]["checks"][0]["expected"][0]["arg"] = {}
    with pytest.raises(jsonschema.ValidationError):  # the schema catches a typo, too
        jsonschema.validate(typo, json_schema())


def test_tool_trajectory_yaml_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: s\nsteps:\n  - checks:\n"
        "      - kind: tool_trajectory\n"
        "        mode: sideways\n"
        "        expected: [{tool: search, args: {q: {regex: '('}}}]\n"
    )
    with pytest.raises(UserError) as caught:
        Scenario.from_file(path)
    message = str(caught.value)
    assert "steps[0].checks[0].mode: Input should be 'strict', 'unordered'" in message
    assert (
        "steps[0].checks[0].expected[0].args: q.regex: '(' is not a valid regular expression"
        in message
    )


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "where", "problem"),
    [
        ({"mode": "sideways"}, "mode", "Input should be 'strict', 'unordered', 'subset' or"),
        (
            {"expected": [("search", {"q": {"regex": "(unclosed"}})]},
            "expected.0.args",
            "q.regex: '(unclosed' is not a valid regular expression",
        ),
        (
            {"expected": [("search", {"q": {"regex": 5}})]},
            "expected.0.args",
            "q.regex: the pattern",
        ),
        (
            {"expected": [("search", {"n": {"approx": 3.0, "tol": -0.01}})]},
            "expected.0.args",
            "n.tol: the tolerance must be a number >= 0, got -0.01",
        ),
        (
            {"expected": [("search", {"n": {"approx": "three"}})]},
            "expected.0.args",
            "n.approx: expected a number, got 'three'",
        ),
        (
            {"expected": [("search", {"n": {"approx": 3, "flags": 1}})]},
            "expected.0.args",
            "n: {'approx': 3, 'flags': 1} is not a matcher",
        ),
        ({"expected": [("search", {"n": {"any": False}})]}, "expected.0.args", "n.any: only"),
        ({"expected": [("search", {"n": {"judge": " "}})]}, "expected.0.args", "n.judge: the crit"),
        (
            {"expected": [{"tool": "search", "tol": 1}]},
            "expected.0.tol",
            "Extra inputs are not permitted",
        ),
        ({"expected": [""]}, "expected.0.tool", "at least 1 character"),
        ({"threshold": 1.5}, "threshold", "less than or equal to 1"),
        ({"mode": "strict", "ordered": True}, "", "ordered=True applies to mode subset or"),
        ({"mode": "superset", "expected": []}, "", "a superset of no calls asserts nothing"),
    ],
)
def test_tool_trajectory_bad_input_names_the_field(
    fields: dict[str, Any], where: str, problem: str
) -> None:
    data = {"expected": ["search"], **fields}
    with pytest.raises(ValidationError) as caught:
        ToolTrajectory(**data)
    errors = caught.value.errors()
    assert len(errors) == 1, errors
    assert ".".join(map(str, errors[0]["loc"])) == where
    assert problem in errors[0]["msg"]


# -- the docs example --------------------------------------------------------------------


def test_tool_trajectory_docs_example_runs() -> None:
    text = (Path(__file__).parents[2] / "docs" / "checks.md").read_text(encoding="utf-8")
    section = text.split("### Trajectories", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert block is not None
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(block.group(1), "docs/checks.md", "exec"), namespace)
    result = namespace["result"]
    assert result.passed, result
    yaml_block = re.search(r"```yaml\n(.*?)```", section, flags=re.S)
    assert yaml_block is not None
    import yaml

    (check,) = yaml.safe_load(yaml_block.group(1))["checks"]
    loaded = Check.model_validate(check)
    assert isinstance(loaded, ToolTrajectory)
    assert loaded.expected[1].matchers["order_id"].value == r"^A-\d+$"
