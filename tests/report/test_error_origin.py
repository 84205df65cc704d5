"""An errored step says what raised (the agent call, the input generator, the outputs
function) and the user's own line, in the console and from a result read back from its
JSON; giskard's ``summary()`` keeps its words."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from scenarist import Scenario, StringMatching, Suite
from scenarist.model.results import ScenarioResult, StepError

HERE = "tests/report/test_error_origin.py"


def _line_of(fn: Any, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def lookup_customer(question: str) -> str:
    raise ConnectionError("upstream CRM returned 503 for /customers/42")


def crm_agent(question: str) -> str:
    return f"Hello {lookup_customer(question)}"


async def async_agent(question: str) -> str:
    return json.loads("{not json")  # the error is raised inside the json module


def failing_inputs() -> str:
    raise KeyError("no such customer")


def failing_outputs(inputs: str) -> str:
    raise ValueError(f"cannot answer {inputs}")


def _error(result: ScenarioResult) -> StepError:
    error = result.steps[0].error
    assert error is not None
    return error


def _run(scenario: Scenario, target: Any = None, **options: Any) -> ScenarioResult:
    suite = Suite(name="s", target=target) if target is not None else Suite(name="s")
    suite.append(scenario)
    return suite.run_sync(return_exception=True, **options).results[0]


@pytest.mark.parametrize("threads", [False, True])
def test_an_agent_that_raises_is_named_with_its_own_line(threads: bool) -> None:
    scenario = Scenario("greets").interact("Hi").check(StringMatching(keyword="Hello"))
    if threads:  # a deadline runs a sync agent in a worker thread
        scenario = scenario.model_copy(update={"timeout_s": 60.0})
    result = _run(scenario, crm_agent)
    error = _error(result)
    origin = error.origin()
    assert origin.what == "the agent call"
    line = _line_of(lookup_customer, "raise ConnectionError")
    assert origin.location == f"{HERE}:{line} in lookup_customer"
    assert error.describe() == (
        "ConnectionError in the agent call: upstream CRM returned 503 for /customers/42\n"
        f"  at {HERE}:{line} in lookup_customer"
    )
    assert error.summary().startswith("ConnectionError during input_generation: ")  # giskard's


def test_an_error_inside_a_library_points_at_the_agents_call() -> None:
    error = _error(_run(Scenario("parses").interact("q"), async_agent))
    origin = error.origin()
    assert (origin.what, origin.function) == ("the agent call", "async_agent")
    assert origin.line == _line_of(async_agent, "json.loads")


def test_the_input_generator_and_the_outputs_function_are_told_apart() -> None:
    inputs = _error(_run(Scenario("i").interact(failing_inputs, outputs="x")))
    assert inputs.origin().what == "the input generator"
    assert inputs.origin().function == "failing_inputs"
    outputs = _error(_run(Scenario("o").interact("q", outputs=failing_outputs)))
    assert outputs.origin().what == "the outputs function"
    assert outputs.origin().location == (
        f"{HERE}:{_line_of(failing_outputs, 'raise ValueError')} in failing_outputs"
    )


def test_the_origin_survives_the_results_json() -> None:
    result = _run(Scenario("greets").interact("Hi"), crm_agent)
    again = ScenarioResult.model_validate_json(result.model_dump_json())
    assert _error(again).origin() == _error(result).origin()


def test_a_chained_error_is_placed_where_the_last_one_was_raised() -> None:
    def wrapping_agent(question: str) -> str:
        try:
            return lookup_customer(question)
        except ConnectionError as exc:
            raise RuntimeError("the CRM is down") from exc

    error = _error(_run(Scenario("chained").interact("q"), wrapping_agent))
    assert error.origin().function == "wrapping_agent"
    assert error.origin().line == _line_of(wrapping_agent, "raise RuntimeError")


def test_an_error_without_a_traceback_keeps_giskards_words() -> None:
    error = StepError(message="division by zero", exception_type="ZeroDivisionError")
    assert error.origin().what is None and error.origin().location is None
    assert error.describe() == "ZeroDivisionError during outputs: division by zero"
