"""Follows the checks documentation page "Spy on Internal Calls" (oss/checks/how-to/
spy-on-calls): an order-support agent whose database call is wrapped with `WithSpy`, added
with `.add_interaction()`; after the run, the spy's record is read from the last
interaction's metadata under the target (call_count, call_args with its args and kwargs,
call_args_list, mock_calls) and compared with `unittest.mock.call` objects, as the page's
asserts do. Also: a two-turn spy (the record is reset per interaction), a turn that makes no
call, a path check over a spied trace, and a static spy spec's dump."""

import asyncio
import json
from unittest.mock import call

from giskard.checks import Equals, FnCheck, Interact, Scenario, WithSpy  # IMPORT

TARGET = "__main__.fetch_orders"


def fetch_orders(customer_id: str, status: str = "all") -> list:
    """The internal database call under the spy (the page: it never runs under the spy)."""
    return [
        {"order_id": "ORD-1", "status": status, "total": 49.99},
        {"order_id": "ORD-2", "status": status, "total": 12.50},
    ]


def order_support_agent(inputs: str) -> str:
    customer_id = "CUST-002" if "other" in inputs else "CUST-001"
    if "hello" in inputs:
        return "Hello! Ask me about your orders."
    orders = fetch_orders(customer_id, status="shipped")
    return f"You have {len(orders)} shipped order(s), {customer_id}."


def spied(inputs) -> WithSpy:
    return WithSpy(
        interaction_generator=Interact(inputs=inputs, outputs=order_support_agent),
        target=TARGET,
    )


def describe_record(data) -> dict:
    if data is None:
        return {"absent": True}
    last = data["call_args"]
    return {
        "keys": list(data),
        "call_count": data["call_count"],
        "call_args": repr(last),
        "args": None if last is None else list(last.args),
        "kwargs": None if last is None else last.kwargs,
        "first_positional": None if last is None else last[0][0],
        "equals_call": last == call("CUST-001", status="shipped"),
        "call_equals": call("CUST-001", status="shipped") == last,
        "differs_from_other": last != call("CUST-999", status="shipped"),
        "call_args_list": [repr(c) for c in data["call_args_list"]],
        "list_equals": data["call_args_list"] == [call("CUST-001", status="shipped")],
        "mock_calls": [repr(c) for c in data["mock_calls"]],
    }


async def main() -> None:
    out: dict = {}
    scenario = (
        Scenario("verify_order_query")
        .add_interaction(spied("What are my shipped orders?"))
        .check(
            FnCheck(
                fn=lambda trace: "CUST-001" in trace.last.outputs,
                name="references_correct_customer",
            )
        )
    )
    result = await scenario.run()
    spy_data = result.final_trace.last.metadata.get(TARGET)
    out["passed"] = result.passed
    out["outputs"] = result.final_trace.last.outputs
    out["record"] = describe_record(spy_data)
    out["metadata_keys"] = list(result.final_trace.last.metadata)

    def turns(trace):
        yield "What are my shipped orders?"
        yield "hello there"
        yield "orders for the other account"

    multi = await Scenario("three turns").add_interaction(spied(turns)).run()
    out["per_turn"] = [
        describe_record(i.metadata.get(TARGET)) for i in multi.final_trace.interactions
    ]
    out["per_turn_outputs"] = [i.outputs for i in multi.final_trace.interactions]
    out["restored"] = fetch_orders("x")[0]["order_id"]

    path_checked = (
        Scenario("path check")
        .add_interaction(spied("What are my shipped orders?"))
        .check(Equals(expected_value="You have 0 shipped order(s), CUST-001."))
    )
    checked = await path_checked.run(return_exception=True)
    out["path_check"] = [checked.status.value, [r.status.value for r in checked.steps[0].results]]
    static = WithSpy(interaction_generator=Interact(inputs="q", outputs="a"), target=TARGET)
    dumped = static.model_dump(mode="json")
    out["spec_dump"] = {k: v for k, v in dumped.items() if k != "interaction_generator"}
    out["spec_inner_kind"] = dumped["interaction_generator"]["kind"]
    print(json.dumps(out, sort_keys=True, default=lambda o: ["object", type(o).__name__]))


asyncio.run(main())
