"""Chains of trace assertions over cost, tokens, latency and steps (presence, order), at and
over their limits, with judges mocked and custom assertions (a token budget, a step order,
one that raises): which pass, which fail, and their messages in order."""

import asyncio
import json
import re

from veval import ITraceAssertion, ScenarioItem, TraceAssert, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


async def agent(ctx):
    plan = ctx.input

    def llm(name, cost, tokens_in, tokens_out, answer):
        def call(handle):
            handle.set_meta("type", "llm")
            handle.set_meta("model", "gpt-4o-mini")
            handle.set_meta("cost_usd", cost)
            handle.set_meta("tokens_in", tokens_in)
            handle.set_meta("tokens_out", tokens_out)
            return answer

        return ctx.track_step(name, plan.get("question", ""), call)

    intent = llm("classify", 0.1, 100, 2, "refund")
    if plan.get("slow"):

        async def wait():
            await asyncio.sleep(0.05)
            return "waited"

        await ctx.track_step_async("slow_tool", intent, wait)

    def lookup(handle):
        handle.set_meta("type", "tool")
        return {"order": 42}

    ctx.track_step("lookup_order", intent, lookup)
    return llm("answer", plan.get("answer_cost", 0.2), 300, 40, "Your refund is on its way")


class TokenBudget(ITraceAssertion):
    def __init__(self, budget):
        self.budget = budget

    async def evaluate_async(self, ctx):
        used = sum((s.tokens_in or 0) + (s.tokens_out or 0) for s in ctx.steps)
        if used > self.budget:
            return f"TokenBudget: used {used} tokens, budget {self.budget}"
        return None


class StepOrder(ITraceAssertion):
    def __init__(self, *names):
        self.names = list(names)

    async def evaluate_async(self, ctx):
        seen = [s.name for s in ctx.steps if s.name in self.names]
        return None if seen == self.names else f"StepOrder: expected {self.names}, got {seen}"


class Broken(ITraceAssertion):
    async def evaluate_async(self, ctx):
        raise ValueError("assertion bug")


def normalise(message):
    """Durations differ from run to run: keep the message, not the milliseconds."""
    return re.sub(r"\d+(\.\d+)?\s*ms", "<n>ms", message)


async def main():
    sdk.with_judge_mock("polite", True, 0.9, "polite enough")
    sdk.with_judge_mock("polite", False, 0.2, "rude")
    shared = [TraceAssert.no_errors(), TraceAssert.step_exists("classify")]
    question = {"question": "Where is my refund?"}
    items = [
        ScenarioItem(
            name="at the limits",
            input=question,
            assertions=[
                TraceAssert.max_steps(3),
                TraceAssert.max_cost(0.31),
                TraceAssert.max_duration(60000),
                TokenBudget(442),
                StepOrder("classify", "lookup_order", "answer"),
                TraceAssert.tool_called("lookup_order"),
            ],
        ),
        ScenarioItem(
            name="float sum",
            input=question,
            assertions=[TraceAssert.max_cost(0.3)],
        ),
        ScenarioItem(
            name="over every limit",
            input={**question, "slow": True, "answer_cost": 0.5},
            assertions=[
                TraceAssert.max_steps(3),
                TraceAssert.max_cost(0.5),
                TraceAssert.max_duration(10),
                TokenBudget(100),
                StepOrder("answer", "classify"),
                TraceAssert.tool_called("classify"),
                TraceAssert.step_exists("refund_issued"),
            ],
        ),
        ScenarioItem(
            name="judged twice",
            input=question,
            assertions=[TraceAssert.judge(sdk, "polite"), TraceAssert.judge(sdk, "polite")],
        ),
        ScenarioItem(
            name="zero budget",
            input={**question, "answer_cost": 0},
            assertions=[TraceAssert.max_cost(0.1), TraceAssert.max_cost(0)],
        ),
    ]
    run = await sdk.run_scenario_async("assertions", agent, shared, items=items)
    result = {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": {
            r.item.name: {
                "passed": r.passed,
                "failures": [normalise(f) for f in r.failures],
                "costs": [s.cost_usd for s in r.context.steps] if r.context else None,
            }
            for r in run.results
        },
    }
    broken = [
        ScenarioItem(name="broken", input=question),
        ScenarioItem(name="after", input=question),
    ]
    try:
        run = await sdk.run_scenario_async("assertions", agent, [Broken()], items=broken)
        result["broken"] = [(r.item.name, r.passed, r.failures) for r in run.results]
    except ValueError as error:
        result["broken"] = f"raised ValueError: {error}"
    return result


print(json.dumps(asyncio.run(main()), default=str))
