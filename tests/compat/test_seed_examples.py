"""The giskard-checks documentation examples (the seed page), run verbatim.

Each snippet below is copied from the seed document's code blocks unchanged, except for
the import line (``from giskard.checks import`` → ``from scenarist import``), and executed
in order in one namespace with top-level ``await`` allowed, exactly as a reader would.
"""

from __future__ import annotations

import ast
import inspect
import io
from contextlib import redirect_stdout
from typing import Any

import pytest

SNIPPETS = [
    # Multi-step example
    """
from giskard.checks import Scenario, FnCheck, Equals

result = await (
    Scenario("two_step_example")
    .with_tags(["example:multi-step"])
    .interact(
        inputs="Find item 42",
        outputs={"answer": "Which collection?", "found": False},
    )
    .check(
        FnCheck(
            fn=lambda trace: trace.last is not None
            and "?" in trace.last.outputs["answer"],
            name="asks_follow_up",
        )
    )
    .interact(
        inputs="In the archive",
        outputs={"answer": "Item found", "found": True},
    )
    .check(Equals(expected_value=True, target_key="trace.last.outputs.found"))
    .run()
)
""",
    # Dynamic interactions
    '''
from giskard.checks import Scenario


def bank_support_agent(inputs: str) -> str:
    """Stand-in for the agent under test. Replace with your own call."""
    if "transfer" in inputs.lower():
        return "A SEPA transfer arrives within one working day and is free."
    return "Could you tell me a bit more about what you need?"


scenario = Scenario("transfer_timing").interact(
    inputs="How long does a SEPA transfer take?", outputs=bank_support_agent
)
''',
    # Context-aware interactions
    """
scenario = (
    Scenario("bank_agent_follow_up")
    .interact(
        inputs="How long does a SEPA transfer take?",
        outputs=bank_support_agent,
    )
    .interact(
        inputs=lambda trace: f"You said: {trace.last.outputs} Is that the same at a weekend?",
        outputs=bank_support_agent,
    )
)
""",
    # ScenarioResult
    """
result = await scenario.run()
result.print_report()

if result.passed:
    print("All checks passed!")

print(f"Total interactions: {len(result.final_trace.interactions)}")

for i, check_result in enumerate(
    r for step in result.steps for r in step.results
):
    print(f"Check {i}: {check_result.status}")
""",
    # ScenarioStatus
    """
from giskard.checks import ScenarioStatus

if result.status == ScenarioStatus.PASS:
    print("Success!")
""",
    # Suite
    """
from giskard.checks import Scenario, StringMatching, Suite


def target(inputs: str) -> str:
    return f"Received: {inputs}"


suite = Suite(name="examples", target=target)
suite.append(
    Scenario("contains_received")
    .with_tags(["example:greeting"])
    .interact(
        inputs="Hello"
    ).check(
        StringMatching(
            keyword="Received", target_key="trace.last.outputs"
        )
    )
)
suite.append(
    Scenario("another_input").with_tags(["example:greeting"]).interact(inputs="Goodbye")
)

result = await suite.run()

rate = result.pass_rate
print("no scenarios evaluated" if rate is None else f"{rate:.0%}")
""",
    # SuiteResult
    """
grouped = result.group_by("example")
result.print_report(group_by="example")
payload = result.to_hub_format()
""",
]


async def _run(source: str, namespace: dict[str, Any]) -> None:
    source = source.replace("from giskard.checks import", "from scenarist import")
    code = compile(source, "<seed>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(code, namespace)
    if inspect.iscoroutine(outcome):
        await outcome


@pytest.fixture
async def seed_namespace() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "seed"}
    out = io.StringIO()
    with redirect_stdout(out):
        for snippet in SNIPPETS[:1]:
            await _run(snippet, namespace)
    return namespace


@pytest.mark.anyio
async def test_seed_multi_step_example_passes(seed_namespace: dict[str, Any]) -> None:
    result = seed_namespace["result"]
    assert result.status == "pass"
    assert [len(step.results) for step in result.steps] == [1, 1]
    assert result.tags == ["example:multi-step"]


@pytest.mark.anyio
async def test_seed_examples_run_in_order_and_print_what_the_page_promises() -> None:
    namespace: dict[str, Any] = {"__name__": "seed"}
    out = io.StringIO()
    with redirect_stdout(out):
        for snippet in SNIPPETS:
            await _run(snippet, namespace)
    printed = out.getvalue()
    # the context-aware scenario ran both turns through the agent
    assert "Total interactions: 2" in printed
    assert "All checks passed!" in printed and "Success!" in printed
    second_input = namespace["scenario"].steps[0].interacts[1].inputs
    assert callable(second_input)
    # the suite: one scenario checked, one with no checks; both pass
    suite_result = namespace["result"]
    assert [r.status for r in suite_result.results] == ["pass", "pass"]
    assert "100%" in printed
    assert "Results by example" in printed
    assert namespace["grouped"].groups["greeting"].passed == 2
    payload = namespace["payload"]
    assert payload["pass_rate"] == 1.0
    assert [r["scenario_name"] for r in payload["results"]] == [
        "contains_received",
        "another_input",
    ]
