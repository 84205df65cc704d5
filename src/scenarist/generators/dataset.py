"""``DatasetInputGenerator``: one structured input, filled in by an LLM from a prompt.

``prompt`` (a Jinja2 template that sees ``trace``) says what input to make;
``input_type`` (a pydantic model class) says its shape. The model answers JSON matching
the class's schema, which is validated into an instance; that instance is the step's one
input. Without ``input_type`` (and none offered by the interaction) the input is a string.
In JSON dumps ``input_type`` is written as ``"module:QualName"`` and imported on load::

    class Order(BaseModel):
        order_id: str
        quantity: int

    Scenario("orders").interact(
        inputs=DatasetInputGenerator(prompt="An order of 3 to 5 mugs.", input_type=Order)
    )
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncGenerator
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer, ValidationError

from scenarist.errors import InputGenerationException
from scenarist.generators._templates import render_package, render_string
from scenarist.generators.base import InputGenerator, ask
from scenarist.model.trace import Trace
from scenarist.providers.base import Message, ProviderError
from scenarist.providers.mixins import WithGeneratorMixin

__all__ = ["DatasetInputGenerator"]

_WRAPPED = {
    "type": "object",
    "properties": {"input": {"type": "string"}},
    "required": ["input"],
    "additionalProperties": False,
}


def _import_type(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    module, _, name = value.partition(":")
    try:
        target: Any = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import input_type {value!r}: {exc}") from None
    return target


def _type_path(value: type[BaseModel] | None) -> str | None:
    return None if value is None else f"{value.__module__}:{value.__qualname__}"


InputType = Annotated[
    type[BaseModel] | None,
    BeforeValidator(_import_type),
    PlainSerializer(_type_path, return_type=str | None),
]


@InputGenerator.register("dataset_input")
class DatasetInputGenerator(InputGenerator, WithGeneratorMixin):
    """Produce one input of ``input_type`` from ``prompt``."""

    prompt: str
    input_type: InputType = None
    max_retries: int = Field(default=2, ge=0)
    temperature: float = Field(default=0.0, ge=0.0)

    def messages(self, trace: Trace[Any, Any]) -> list[Message]:
        return [
            {"role": "system", "content": render_package("dataset_input.j2")},
            {"role": "user", "content": render_string(self.prompt, trace=trace)},
        ]

    async def generate(self, trace: Trace[Any, Any], input_type: type[Any] | None = None) -> Any:
        """The one input (``InputGenerationException`` if none could be made)."""
        wanted = self.input_type or input_type
        model = wanted if isinstance(wanted, type) and issubclass(wanted, BaseModel) else None
        schema = model.model_json_schema() if model is not None else _WRAPPED
        try:
            provider = self.resolve_generator()
        except ProviderError as exc:
            raise InputGenerationException(f"{self.kind}: {exc}") from exc
        answer = await ask(
            self,
            provider,
            self.messages(trace),
            schema,
            attempts=1 + self.max_retries,
            temperature=self.temperature,
        )
        if model is None:
            return answer["input"]
        try:
            return model.model_validate(answer)
        except ValidationError as exc:
            raise InputGenerationException(
                f"{self.kind}: the answer is not a valid {model.__name__}: {exc}"
            ) from None

    async def __call__(
        self, trace: Trace[Any, Any], input_type: type[Any] | None = None
    ) -> AsyncGenerator[Any, Trace[Any, Any]]:
        yield await self.generate(trace, input_type)
