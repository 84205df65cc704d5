"""UserSimulator drives a multi-turn scenario against a scripted model (real HTTP)."""

from __future__ import annotations

import json

import pytest

from scenarist import Equals, Scenario, UserSimulator, set_default_generator
from scenarist.checks import FnCheck
from scenarist.engine.interactions import Interact
from scenarist.providers import OpenAIProvider
from scenarist.testing import FakeLLMServer, Reply

pytestmark = pytest.mark.anyio


def turn(message: str, goal_reached: bool = False) -> str:
    return json.dumps({"goal_reached": goal_reached, "message": message})


def agent(inputs: str) -> str:
    return f"agent heard: {inputs}"


async def test_simulated_user_stops_when_the_goal_is_reached(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script.add(turn("I want a refund for order 12."), turn("", goal_reached=True))
    simulator = UserSimulator(persona="A customer wanting a refund.", generator=model, max_steps=5)
    scenario = (
        Scenario("refund")
        .interact(inputs=simulator)
        .check(FnCheck(fn=lambda trace: len(trace.interactions) == 1))
        .check(Equals(expected_value="agent heard: I want a refund for order 12."))
    )
    result = await scenario.run(target=agent)
    assert result.status == "pass"
    assert len(server.requests) == 2
    first, second = (r.body["messages"] for r in server.requests)
    assert "A customer wanting a refund." in first[0]["content"]
    assert "you speak first" in first[1]["content"]
    assert "User: I want a refund for order 12." in second[1]["content"]
    assert "Assistant: agent heard: I want a refund for order 12." in second[1]["content"]
    assert server.requests[0].body["response_format"]["type"] == "json_schema"


async def test_simulated_user_two_turns_then_goal(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script.add(turn("Hello"), turn("Order 12 please"), turn("", goal_reached=True))
    scenario = Scenario("two").interact(inputs=UserSimulator(persona="p", generator=model))
    result = await scenario.run(target=agent)
    assert [i.inputs for i in result.final_trace.interactions] == ["Hello", "Order 12 please"]


async def test_simulated_user_stops_at_max_steps(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script = type(server.script)(default=turn("still waiting"))
    scenario = Scenario("max").interact(
        inputs=UserSimulator(persona="p", generator=model, max_steps=3)
    )
    result = await scenario.run(target=agent)
    assert len(result.final_trace.interactions) == 3
    assert len(server.requests) == 3


async def test_simulated_user_empty_message_stops(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script.add(turn("Hello"), turn("   "))
    result = (
        await Scenario("e")
        .interact(inputs=UserSimulator(persona="p", generator=model))
        .run(target=agent)
    )
    assert [i.inputs for i in result.final_trace.interactions] == ["Hello"]


@pytest.mark.parametrize(
    ("first", "why"),
    [
        pytest.param(turn("", goal_reached=True), "goal_reached=true", id="goal-at-once"),
        pytest.param(turn("Hi", goal_reached=True), "goal_reached=true", id="goal-with-text"),
        pytest.param(turn("   "), "an empty message", id="empty-message"),
    ],
)
async def test_zero_turns_pass_as_in_giskard_but_flagged_vacuous(
    server: FakeLLMServer, model: OpenAIProvider, first: str, why: str
) -> None:
    """giskard-checks ends the conversation with no turn and the scenario passes; ours
    passes too, and says it tested nothing."""
    server.script.add(first)
    scenario = (
        Scenario("zero")
        .interact(inputs=UserSimulator(persona="p", generator=model))
        .check(FnCheck(fn=lambda trace: True))
    )
    result = await scenario.run(target=agent)
    assert result.status == "pass" and len(result.final_trace.interactions) == 0
    (step,) = result.steps
    assert step.error is None and step.empty_generators == ("user_simulator",)
    assert result.vacuous
    reason = "the input generator 'user_simulator' of step 1 yielded no input"
    assert result.vacuous_reason == reason


@pytest.mark.parametrize(
    ("first", "why"),
    [
        pytest.param(turn("", goal_reached=True), "goal_reached=true", id="goal-at-once"),
        pytest.param(turn("   "), "an empty message", id="empty-message"),
    ],
)
async def test_min_turns_1_makes_zero_turns_the_steps_error(
    server: FakeLLMServer, model: OpenAIProvider, first: str, why: str
) -> None:
    """SmolLM2 answered goal_reached before the first turn: the strict option refuses it."""
    server.script.add(first)
    scenario = (
        Scenario("zero")
        .interact(inputs=UserSimulator(persona="p", generator=model, min_turns=1))
        .check(FnCheck(fn=lambda trace: True))
    )
    result = await scenario.run(target=agent, return_exception=True)
    assert result.status == "error" and not result.vacuous
    (step,) = result.steps
    assert step.error is not None and step.error.phase == "input_generation"
    assert (
        f"user_simulator stopped after 0 turn(s) ({why}), before min_turns=1" in step.error.message
    )
    assert step.results[0].status.value == "skip"
    assert len(result.final_trace.interactions) == 0


async def test_min_turns_holds_the_goal_back(server: FakeLLMServer, model: OpenAIProvider) -> None:
    server.script.add(turn("Hello"), turn("", goal_reached=True))
    simulator = UserSimulator(persona="p", generator=model, min_turns=2, max_steps=4)
    result = (
        await Scenario("short").interact(inputs=simulator).run(target=agent, return_exception=True)
    )
    assert result.status == "error"
    assert "stopped after 1 turn(s) (goal_reached=true), before min_turns=2" in (
        result.steps[0].error.message  # type: ignore[union-attr]
    )
    assert "min_turns" not in UserSimulator(persona="p").model_dump(mode="json")  # giskard loads
    assert UserSimulator(persona="p", min_turns=1).model_dump(mode="json")["min_turns"] == 1


async def test_max_steps_0_makes_no_call_and_passes_vacuously(server: FakeLLMServer) -> None:
    """giskard-checks accepts max_steps=0: no turn, no model call, a PASS with 0 interactions."""
    simulator = UserSimulator(persona="a shopper", max_steps=0)  # no generator: never asked
    result = await Scenario("x").interact(inputs=simulator, outputs=lambda inputs: "hi").run()
    assert result.status == "pass" and len(result.final_trace.interactions) == 0
    assert result.vacuous and result.steps[0].empty_generators == ("user_simulator",)
    assert server.requests == []
    assert UserSimulator(persona="p", max_steps=0).model_dump(mode="json")["max_steps"] == 0


def test_min_turns_above_max_steps_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match=r"min_turns=1 is more than max_steps=0.*lower min_turns"):
        UserSimulator(persona="p", max_steps=0, min_turns=1)
    with pytest.raises(ValueError, match=r"min_turns=4 is more than max_steps=3"):
        UserSimulator(persona="p", min_turns=4)
    assert UserSimulator(persona="p", max_steps=2, min_turns=2).min_turns == 2


async def test_min_inputs_1_makes_an_empty_simulation_the_steps_error(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    """The strict option for any generator, here the simulator with min_turns at 0."""
    server.script.add(turn("", goal_reached=True))
    simulator = UserSimulator(persona="p", generator=model)
    result = (
        await Scenario("none")
        .interact(inputs=simulator, min_inputs=1)
        .run(target=agent, return_exception=True)
    )
    assert result.status == "error"
    error = result.steps[0].error
    assert error is not None and error.phase == "input_generation"
    assert "the input generator 'user_simulator' yielded 0 input(s), fewer than min_inputs=1" in (
        error.message
    )


async def test_unparsable_answers_make_the_step_error_in_input_generation(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script = type(server.script)(default="I am the user, hello!")
    scenario = (
        Scenario("broken")
        .interact(inputs=UserSimulator(persona="p", generator=model, max_retries=2))
        .check(Equals(expected_value="x"))
    )
    result = await scenario.run(target=agent, return_exception=True)
    assert result.status == "error"
    (step,) = result.steps
    assert step.error is not None and step.error.phase == "input_generation"
    assert step.error.exception_type == "InputGenerationException"
    assert "user_simulator could not produce an input in 3 attempt(s)" in step.error.message
    assert "not valid JSON" in step.error.message
    assert step.results[0].status == "skip"
    assert len(server.requests) == 3


async def test_refusals_are_asked_again(server: FakeLLMServer, model: OpenAIProvider) -> None:
    server.script.add(Reply(refusal="no"), turn("ok then"), turn("", goal_reached=True))
    result = (
        await Scenario("r")
        .interact(inputs=UserSimulator(persona="p", generator=model))
        .run(target=agent)
    )
    assert [i.inputs for i in result.final_trace.interactions] == ["ok then"]


async def test_simulator_uses_the_default_generator(server: FakeLLMServer) -> None:
    set_default_generator(
        OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, api_key="k", json_retries=0)
    )
    server.script.add(turn("hi"), turn("", goal_reached=True))
    result = await Scenario("d").interact(inputs=UserSimulator(persona="p")).run(target=agent)
    assert [i.inputs for i in result.final_trace.interactions] == ["hi"]


async def test_no_generator_configured_is_an_input_generation_error() -> None:
    result = (
        await Scenario("none")
        .interact(inputs=UserSimulator(persona="p"))
        .run(target=agent, return_exception=True)
    )
    error = result.steps[0].error
    assert error is not None and error.phase == "input_generation"
    assert "set_default_generator('openai/gpt-4o-mini')" in error.message


def test_simulator_scenario_round_trips_through_json() -> None:
    scenario = Scenario("saved").interact(
        inputs=UserSimulator(persona="p", context="c", generator="openai/gpt-4o-mini")
    )
    data = json.loads(scenario.model_dump_json())
    inputs = data["steps"][0]["interacts"][0]["inputs"]
    assert inputs == {
        "kind": "user_simulator",
        "generator": "openai/gpt-4o-mini",
        "max_steps": 3,
        "max_retries": 2,
        "temperature": 0.0,
        "persona": "p",
        "context": "c",
    }
    loaded = Interact.model_validate(data["steps"][0]["interacts"][0])
    assert isinstance(loaded.inputs, UserSimulator) and loaded.inputs.context == "c"
    assert Interact.model_validate({"kind": "interact", "inputs": {"kind": "other"}}).inputs == {
        "kind": "other"
    }


def test_simulator_validates_its_fields() -> None:
    with pytest.raises(ValueError, match="provider/model"):
        UserSimulator(persona="p", generator="/gpt-4o")
    with pytest.raises(ValueError, match="max_steps"):
        UserSimulator(persona="p", max_steps=-1)
    with pytest.raises(ValueError, match="extra"):
        UserSimulator(persona="p", persona_typo="x")  # type: ignore[call-arg]


async def test_each_simulated_turn_records_its_output_in_the_metadata(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    """giskard's simulate-users page reads ``final_trace.last.metadata["simulator_output"]``."""
    from scenarist.generators.base import LLMGeneratorOutput

    server.script.add(turn("Hello"), turn("Order 12 please"), turn("", goal_reached=True))
    simulator = UserSimulator(persona="p", generator=model)
    result = await (
        Scenario("meta").interact(inputs=simulator, metadata={"source": "sim"}).run(target=agent)
    )
    outputs = [i.metadata["simulator_output"] for i in result.final_trace.interactions]
    assert all(isinstance(o, LLMGeneratorOutput) for o in outputs)
    assert [(o.goal_reached, o.message, o.schema_issue) for o in outputs] == [
        (False, "Hello", None),
        (False, "Order 12 please", None),
    ]
    assert result.final_trace.last.metadata["source"] == "sim"  # the spec's metadata stays
    dumped = result.model_dump(mode="json")["final_trace"]["interactions"][1]["metadata"]
    assert dumped == {
        "source": "sim",
        "simulator_output": {
            "goal_reached": False,
            "schema_issue": None,
            "message": "Order 12 please",
        },
    }


async def test_a_generator_with_its_own_call_is_called_and_records_no_output(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    class Shouting(UserSimulator):
        async def __call__(self, trace, input_type=None):  # type: ignore[no-untyped-def,override]
            inner = super().__call__(trace, input_type)
            try:
                message = await inner.__anext__()
                while True:
                    trace = yield message.upper()
                    message = await inner.asend(trace)
            except StopAsyncIteration:
                return

    server.script.add(turn("hello"), turn("", goal_reached=True))
    result = await (
        Scenario("own").interact(inputs=Shouting(persona="p", generator=model)).run(target=agent)
    )
    (only,) = result.final_trace.interactions
    assert (only.inputs, only.metadata) == ("HELLO", {})


def test_llm_generator_output_validates_as_giskards() -> None:
    from scenarist.generators.base import LLMGeneratorOutput

    assert LLMGeneratorOutput[str](goal_reached=True).message is None
    with pytest.raises(ValueError, match="'message' and 'schema_issue' cannot both be set"):
        LLMGeneratorOutput[str](goal_reached=False, message="x", schema_issue="no text field")
    with pytest.raises(ValueError, match="goal_reached"):
        LLMGeneratorOutput[str](message="x")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="message"):
        LLMGeneratorOutput[int](goal_reached=False, message="not a number")
    with pytest.raises(ValueError, match="persona"):
        UserSimulator(persona="")
