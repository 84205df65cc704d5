"""LLMGenerator (custom Jinja prompt) and DatasetInputGenerator (a structured input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from scenarist import DatasetInputGenerator, LLMGenerator, Scenario
from scenarist.engine.interactions import Interact
from scenarist.providers import CallableProvider, OpenAIProvider
from scenarist.testing import FakeLLMServer

pytestmark = pytest.mark.anyio


class Order(BaseModel):
    order_id: str
    quantity: int


def turn(message: str, goal_reached: bool = False) -> str:
    return json.dumps({"goal_reached": goal_reached, "message": message})


async def test_llm_generator_renders_the_custom_template(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script.add(turn("Bonjour"), turn("Merci"), turn("", goal_reached=True))
    prompt = (
        "Play a French tourist. Turn {{ turn + 1 }}/{{ max_steps }}, "
        "{{ interactions | length }} done."
    )
    generator = LLMGenerator(prompt=prompt, generator=model, max_steps=4)
    result = await Scenario("fr").interact(inputs=generator).run(target=lambda inputs: "ok")
    assert [i.inputs for i in result.final_trace.interactions] == ["Bonjour", "Merci"]
    systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert systems == [
        "Play a French tourist. Turn 1/4, 0 done.",
        "Play a French tourist. Turn 2/4, 1 done.",
        "Play a French tourist. Turn 3/4, 2 done.",
    ]


async def test_llm_generator_reads_a_template_file(
    server: FakeLLMServer, model: OpenAIProvider, tmp_path: Path
) -> None:
    path = tmp_path / "user.j2"
    path.write_text("You are {{ 'a pirate' }}.\n{{ transcript }}", encoding="utf-8")
    server.script.add(turn("Arr"), turn("", goal_reached=True))
    generator = LLMGenerator(prompt_path=str(path), generator=model)
    await Scenario("file").interact(inputs=generator).run(target=lambda inputs: "ahoy")
    second = server.requests[1].body["messages"][0]["content"]
    assert second == "You are a pirate.\nUser: Arr\nAssistant: ahoy"


async def test_llm_generator_undefined_variable_is_an_error(model: OpenAIProvider) -> None:
    generator = LLMGenerator(prompt="Hello {{ city }}", generator=model)
    result = (
        await Scenario("typo")
        .interact(inputs=generator)
        .run(target=lambda inputs: "x", return_exception=True)
    )
    error = result.steps[0].error
    assert error is not None and error.phase == "input_generation"
    assert "city" in error.message


def test_llm_generator_needs_exactly_one_prompt() -> None:
    with pytest.raises(ValueError, match="Exactly one of 'prompt' or 'prompt_path'"):
        LLMGenerator()
    with pytest.raises(ValueError, match="Exactly one of 'prompt' or 'prompt_path'"):
        LLMGenerator(prompt="a", prompt_path="b")


async def test_dataset_generator_produces_a_pydantic_input(
    server: FakeLLMServer, model: OpenAIProvider
) -> None:
    server.script.add(json.dumps({"order_id": "A-7", "quantity": 4}))
    seen: list[object] = []

    def agent(inputs: Order) -> str:
        seen.append(inputs)
        return f"{inputs.quantity} mugs"

    generator = DatasetInputGenerator(
        prompt="An order of {{ 3 }} to 5 mugs.", input_type=Order, generator=model
    )
    result = await Scenario("orders").interact(inputs=generator).run(target=agent)
    assert seen == [Order(order_id="A-7", quantity=4)]
    assert result.final_trace.last.outputs == "4 mugs"
    body = server.requests[0].body
    assert body["response_format"]["json_schema"]["schema"] == Order.model_json_schema()
    assert body["messages"][1]["content"] == "An order of 3 to 5 mugs."


async def test_dataset_generator_invalid_answers_raise_input_generation() -> None:
    calls: list[int] = []

    def bad(messages: list[dict[str, str]]) -> dict[str, object]:
        calls.append(1)
        return {"order_id": "A", "quantity": "many"}

    generator = DatasetInputGenerator(
        prompt="x", input_type=Order, generator=CallableProvider(bad), max_retries=1
    )
    result = (
        await Scenario("bad")
        .interact(inputs=generator)
        .run(target=lambda inputs: "x", return_exception=True)
    )
    error = result.steps[0].error
    assert error is not None and error.exception_type == "InputGenerationException"
    assert len(calls) == 2


async def test_dataset_generator_without_type_gives_a_string() -> None:
    provider = CallableProvider(lambda messages: {"input": "Where is my parcel?"})
    generator = DatasetInputGenerator(prompt="A delivery question.", generator=provider)
    result = await Scenario("s").interact(inputs=generator).run(target=lambda inputs: inputs)
    assert result.final_trace.last.outputs == "Where is my parcel?"


def test_dataset_generator_round_trips_with_its_type() -> None:
    generator = DatasetInputGenerator(prompt="p", input_type=Order)
    data = json.loads(Interact(inputs=generator).model_dump_json())
    assert data["inputs"]["input_type"] == f"{__name__}:Order"
    loaded = Interact.model_validate(data)
    assert isinstance(loaded.inputs, DatasetInputGenerator)
    assert loaded.inputs.input_type is Order
