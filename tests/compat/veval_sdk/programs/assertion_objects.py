"""Veval's assertions as objects, the way the SDK's README (veval-sdk 1.4.0 on PyPI,
"Assertions" and custom assertions with ``ITraceAssertion``) uses them: each built-in
evaluated directly with ``evaluate_async(ctx)`` on a finished run, ``isinstance`` against
``ITraceAssertion``, custom assertions (one composing built-ins) in a scenario, steps and
traces built by hand (``StepData``, ``TraceData``, the ``Step`` builder), and
``VevalOptions``' deprecated ``project_id``."""

import asyncio
import contextlib
import json
import types
import warnings

from veval import (  # IMPORT
    ITraceAssertion,
    ScenarioItem,
    Step,
    StepData,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


async def agent(ctx):
    def classify(handle):
        handle.set_meta("type", "llm")
        handle.set_meta("model", "gpt-4o-mini")
        handle.set_meta("cost_usd", 0.25)
        return "refund"

    intent = ctx.track_step("classify", ctx.input, classify)

    def lookup(handle):
        handle.set_meta("type", "tool")
        if ctx.input == "broken":
            raise KeyError("order_id")
        return {"order": 42}

    try:
        order = ctx.track_step("lookup_order", intent, lookup)
    except KeyError:
        order = None
    if ctx.input == "explode":
        raise RuntimeError("agent gave up")
    return f"order {order['order']}" if order else "no order"


BUILT_INS = [
    ("no_errors", TraceAssert.no_errors()),
    ("max_steps 1", TraceAssert.max_steps(1)),
    ("max_steps 5", TraceAssert.max_steps(5)),
    ("step_exists lookup", TraceAssert.step_exists("lookup_order")),
    ("step_exists refund", TraceAssert.step_exists("refund")),
    ("tool_called lookup", TraceAssert.tool_called("lookup_order")),
    ("tool_called classify", TraceAssert.tool_called("classify")),
    ("max_cost 0.1", TraceAssert.max_cost(0.1)),
    ("max_cost 1", TraceAssert.max_cost(1)),
    ("output_contains 42", TraceAssert.output_contains("42")),
    ("output_contains answer", TraceAssert.output_contains("order 42")),
    ("max_duration", TraceAssert.max_duration(60000)),
]


class AllOf(ITraceAssertion):
    """A custom assertion made of built-ins: the first failure wins."""

    def __init__(self, *assertions):
        self.assertions = assertions

    async def evaluate_async(self, ctx):
        for assertion in self.assertions:
            failure = await assertion.evaluate_async(ctx)
            if failure:
                return f"AllOf: {failure}"
        return None


class StepOutput(ITraceAssertion):
    def __init__(self, step_name, expected):
        self.step_name, self.expected = step_name, expected

    async def evaluate_async(self, ctx):
        outputs = [s.output for s in ctx.steps if s.name == self.step_name]
        if self.expected in outputs:
            return None
        return f"StepOutput: {self.step_name} gave {outputs}, expected {self.expected!r}"


async def finished_run(question):
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    with contextlib.suppress(RuntimeError):  # the "explode" run raises, as the agent does
        await sdk.run_async("objects", remember, input=question)
    return seen["ctx"]


async def evaluate_all(ctx):
    return {name: await a.evaluate_async(ctx) for name, a in BUILT_INS}


async def main():
    result = {"is_assertion": {name: isinstance(a, ITraceAssertion) for name, a in BUILT_INS}}
    result["custom_is_assertion"] = isinstance(StepOutput("x", 1), ITraceAssertion)
    result["refund"] = await evaluate_all(await finished_run("refund"))
    result["broken"] = await evaluate_all(await finished_run("broken"))
    result["explode"] = await evaluate_all(await finished_run("explode"))

    # any object with Veval's steps will do as the context
    built = types.SimpleNamespace(steps=[Step("hand-made")], output=None)
    result["duck_ctx"] = [
        await TraceAssert.max_steps(0).evaluate_async(built),
        await TraceAssert.step_exists("hand-made").evaluate_async(built),
    ]

    run = await sdk.run_scenario_async(
        "objects",
        agent,
        [AllOf(TraceAssert.no_errors(), TraceAssert.max_steps(3))],
        items=[
            ScenarioItem(
                name="refund", input="refund", assertions=[StepOutput("classify", "refund")]
            ),
            ScenarioItem(
                name="broken",
                input="broken",
                assertions=[StepOutput("lookup_order", {"order": 42}), TraceAssert.max_cost(0.2)],
            ),
            ScenarioItem(name="explode", input="explode", assertions=[TraceAssert.no_errors()]),
        ],
    )
    result["scenario"] = {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": {r.item.name: r.failures for r in run.results},
    }

    step = StepData(
        step_id="classify",
        name="classify",
        type="llm",
        input="q",
        output="refund",
        status="success",
    )
    failed = StepData(
        step_id="lookup",
        parent_step_id="classify",
        name="lookup",
        type="tool",
        status="error",
        error="KeyError: 'order_id'",
        cost_usd=0.01,
    )
    trace = TraceData(
        trace_id="tr_hand", input="q", output="no order", status="success", steps=[step, failed]
    )
    result["hand_made"] = {
        "step": [step.step_id, step.name, step.type, step.input, step.output, step.status],
        "failed": [failed.parent_step_id, failed.status, failed.error, "order_id" in failed.error],
        "trace": [trace.trace_id, trace.input, trace.output, trace.status, len(trace.steps)],
        "trace_defaults": [trace.project_id, trace.error, trace.metadata],
        "priced": TraceData(
            trace_id="tr_priced", total_cost_usd=0.5, steps=[failed]
        ).total_cost_usd,
        # a hand-built trace has no total unless given (Veval's server computes it)
        "unpriced": TraceData(trace_id="tr_unpriced", steps=[failed]).total_cost_usd,
        "defaults": {
            "step_status": StepData().status,
            "step_named_status": StepData(step_id="s", name="plan").status,
            "trace_status": TraceData().status,
            "trace_agent_name": TraceData().agent_name,
            "trace_total": TraceData().total_cost_usd,
        },
        "from_dict": [
            [t.status, t.agent_name, t.total_cost_usd, [s.status for s in t.steps]]
            for t in (
                TraceData.from_dict({"trace_id": "tr_bare", "steps": [{"step_id": "s1"}]}),
                TraceData.from_dict(
                    {
                        "trace_id": "tr_full",
                        "agent_name": "bot",
                        "status": "error",
                        "total_cost_usd": 0.75,
                        "steps": [{"step_id": "s1", "status": "success"}],
                    }
                ),
            )
        ],
        "names": [s.name for s in trace.steps],
        "positional": StepData("s1", None, "plan", "tool").type,
    }

    root = Step("agent")
    sub = Step("side", root.step_id)  # by position, as Veval's Step takes them
    child = root.create_step("lookup")
    child.complete({"order": 42})
    root.fail("timeout")
    result["builder"] = {
        "root": [root.status, root.error, root.completed_at is not None],
        "child": [child.name, child.status, child.output, child.parent_step_id == root.step_id],
        "children": [c.name for c in root.children],
        "by_position": [sub.name, sub.parent_step_id == root.step_id, sub.status, len(sub.step_id)],
        "duration_type": type(child.duration_ms).__name__,
    }

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        VevalOptions(api_key="vk_test")
        quiet = len(caught)
        VevalOptions(api_key="vk_test", project_id="proj")
    result["options_warnings"] = [quiet, [w.category.__name__ for w in caught]]
    return result


print(json.dumps(asyncio.run(main()), default=str))
