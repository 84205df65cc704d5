"""An agent with structured output: it returns pydantic models (and dataclasses, dates,
tuples); checks read their fields by path, compare them, and the results are dumped to
JSON and read back as an app would."""

import asyncio
import dataclasses
import datetime
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    GreaterThan,
    Interaction,
    JsonValid,
    RegexMatching,
    Scenario,
    ScenarioResult,
    StringMatching,
    Trace,
)
from pydantic import BaseModel


class Item(BaseModel):
    sku: str
    quantity: int


class Order(BaseModel):
    order_id: int
    items: list[Item]
    status: str
    note: str | None = None


@dataclasses.dataclass
class Receipt:
    total: float
    currency: str


def agent(inputs):
    return Order(
        order_id=7,
        items=[Item(sku="A-1", quantity=2), Item(sku="B-9", quantity=1)],
        status="shipped",
    )


async def main():
    out = {}
    scenario = (
        Scenario("structured")
        .interact(inputs="where is my order?", outputs=agent)
        .check(Equals(expected_value="shipped", target_key="trace.last.outputs.status"))
        .check(Equals(expected_value=7, target_key="trace.last.outputs.order_id"))
        .check(GreaterThan(expected_value=1, target_key="trace.last.outputs.items[0].quantity"))
        .check(Equals(expected_value=["A-1", "B-9"], target_key="trace.last.outputs.items[*].sku"))
        .check(StringMatching(keyword="A-1", target_key="trace.last.outputs.items[0].sku"))
        .check(RegexMatching(pattern="^[A-Z]-\\d$", target_key="trace.last.outputs.items[1].sku"))
        .check(Equals(expected_value=None, target_key="trace.last.outputs.note"))
        .check(FnCheck(fn=lambda t: isinstance(t.last.outputs, Order), name="is Order"))
        .check(JsonValid(target_key="trace.last.outputs", parse=False))
        .check(Equals(expected_value=1, target_key="trace.last.outputs.missing_field"))
    )
    result = await scenario.run()
    out["checks"] = [[r.status.value, r.message] for s in result.steps for r in s.results]
    dumped = result.model_dump(mode="json")
    out["dumped_outputs"] = dumped["final_trace"]["interactions"][0]["outputs"]
    again = ScenarioResult.model_validate_json(result.model_dump_json())
    out["reloaded_outputs"] = [
        type(again.final_trace.interactions[0].outputs).__name__,
        again.final_trace.interactions[0].outputs,
    ]

    trace = await Trace.from_interactions(
        Interaction(
            inputs={"day": datetime.date(2024, 2, 29)}, outputs=Receipt(total=9.5, currency="EUR")
        ),
        Interaction(inputs=("a", 1), outputs={"set": sorted({3, 1, 2})}),
    )
    for key in (
        "trace.interactions[0].outputs.total",
        "trace.interactions[0].inputs.day",
        "trace.last.inputs[0]",
    ):
        result = await Equals(expected_value=9.5, target_key=key).run(trace)
        out[f"path:{key}"] = [result.status.value, result.message]
    trace_json = json.loads(trace.model_dump_json())
    out["trace_json"] = {k: v for k, v in trace_json.items() if k != "last"}
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
