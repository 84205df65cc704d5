"""Trace assertions on synthetic items: the built-in ones, passing and failing, and a custom one."""

import asyncio
import json

from veval import ITraceAssertion, ScenarioItem, TraceAssert, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


async def agent(ctx):
    question = ctx.input

    async def classify(handle):
        handle.set_meta("type", "llm")
        handle.set_meta("cost_usd", 0.002)
        handle.set_meta("model", "gpt-4o-mini")
        return "refund" if "refund" in question else "other"

    intent = await ctx.track_step_async("classify", question, classify)
    if intent == "refund":

        def lookup(handle):
            handle.set_meta("type", "tool")
            return {"order": 42, "status": "refund sent"}

        order = ctx.track_step("lookup_order", {"q": question}, lookup)
        answer = f"Your refund for order {order['order']} is on its way"
    elif "crash" in question:

        def broken():
            raise RuntimeError("lookup failed")

        ctx.track_step("lookup_order", question, broken)
        answer = "unreachable"
    else:
        answer = "How can I help?"
    ctx.track_step("answer", intent, lambda: answer)
    return answer


class MentionsOrder(ITraceAssertion):
    async def evaluate_async(self, ctx):
        outputs = [str(s.output) for s in ctx.steps]
        return None if any("42" in o for o in outputs) else "MentionsOrder: no order number"


async def main():
    shared = [TraceAssert.max_steps(3), TraceAssert.step_exists("classify")]
    items = [
        ScenarioItem(
            name="refund",
            input="Where is my refund?",
            assertions=[
                TraceAssert.tool_called("lookup_order"),
                TraceAssert.no_errors(),
                TraceAssert.max_cost(0.01),
                TraceAssert.output_contains("refund"),
                MentionsOrder(),
            ],
        ),
        ScenarioItem(
            name="small talk",
            input="hello",
            assertions=[
                TraceAssert.tool_called("lookup_order"),
                TraceAssert.max_cost(0.001),
                TraceAssert.step_exists("lookup_order"),
                MentionsOrder(),
            ],
        ),
        ScenarioItem(name="crash", input="please crash", assertions=[TraceAssert.no_errors()]),
        ScenarioItem(
            name="too many", input="Where is my refund?", assertions=[TraceAssert.max_steps(2)]
        ),
        ScenarioItem(name="nothing"),
        ScenarioItem("positional", None, "Where is my refund?"),
    ]
    run = await sdk.run_scenario_async("support", agent, shared, items=items)
    return {
        "passed": run.passed,
        "pass_count": run.pass_count,
        "fail_count": run.fail_count,
        "items": {r.item.name: {"passed": r.passed, "failures": r.failures} for r in run.results},
        "steps_seen": {
            r.item.name: [s.name for s in r.context.steps] if r.context else None
            for r in run.results
        },
    }


print(json.dumps(asyncio.run(main()), default=str))
