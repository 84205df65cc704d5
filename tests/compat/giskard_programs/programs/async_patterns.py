"""Async patterns in user code: a blocking sync agent in a parallel suite, an agent that
offloads to a thread, context variables set by the caller, a check that runs a scenario of
its own, checks gathering other checks, and a sync target that calls an async helper."""

import asyncio
import contextvars
import json
import threading
import time

from giskard.checks import (  # IMPORT
    Check,
    CheckResult,
    Equals,
    FnCheck,
    Interaction,
    Scenario,
    StringMatching,
    Suite,
    Trace,
)

REQUEST_ID = contextvars.ContextVar("request_id", default="unset")


def blocking_agent(inputs):
    time.sleep(0.01)
    return f"blocking:{inputs}"


async def threaded_agent(inputs):
    return await asyncio.to_thread(
        lambda: f"thread:{inputs}:{threading.current_thread() is not threading.main_thread()}"
    )


def context_agent(inputs):
    return f"{inputs}@{REQUEST_ID.get()}"


async def async_context_agent(inputs):
    await asyncio.sleep(0)
    return f"{inputs}@{REQUEST_ID.get()}"


class SubScenarioCheck(Check):
    """Re-asks the last question in a scenario of its own and compares the answers."""

    async def run(self, trace):
        question = trace.last.inputs
        inner = await (
            Scenario("inner")
            .interact(inputs=question, outputs=lambda inputs: f"blocking:{inputs}")
            .check(Equals(expected_value=trace.last.outputs))
            .run()
        )
        if inner.passed:
            return CheckResult.success(message="stable answer")
        return CheckResult.failure(message="unstable answer")


class Gathered(Check):
    async def run(self, trace):
        results = await asyncio.gather(
            StringMatching(keyword="blocking").run(trace),
            Equals(expected_value="nope").run(trace),
            FnCheck(fn=lambda t: True).run(trace),
        )
        return CheckResult.success(message=",".join(r.status.value for r in results))


async def main():
    out = {}
    suite = Suite(name="blocking", target=blocking_agent)
    for n in range(6):
        suite.append(
            Scenario(f"s{n}")
            .interact(inputs=str(n))
            .check(Equals(expected_value=f"blocking:{n}"))
            .check(SubScenarioCheck())
            .check(Gathered())
        )
    result = await suite.run(parallel=True, verbose=False)
    out["blocking"] = [
        [r.scenario_name, r.status.value, [c.message for c in r.steps[0].results]]
        for r in result.results
    ]
    threaded = await Scenario("threaded").interact(inputs="x", outputs=threaded_agent).run()
    out["threaded"] = threaded.final_trace.last.outputs
    REQUEST_ID.set("req-7")
    ctx = await (
        Scenario("context")
        .interact(inputs="sync", outputs=context_agent)
        .interact(inputs="async", outputs=async_context_agent)
        .check(FnCheck(fn=lambda t: REQUEST_ID.get() == "req-7", name="check sees context"))
        .run()
    )
    out["context"] = [[i.outputs for i in ctx.final_trace.interactions], ctx.status.value]
    trace = await Trace.from_interactions(Interaction(inputs="q", outputs="blocking:q"))
    many = await asyncio.gather(*(SubScenarioCheck().run(trace) for _ in range(5)))
    out["gathered_direct"] = [r.message for r in many]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
