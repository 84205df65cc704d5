"""The test double built with a recorded trace, then the service called normally.

Follows the veval-sdk 1.4.0 README, section "Test SDK" (build ``VevalTestSdk(options)``
with ``.with_replay(trace)``, then ``run_async("my-agent", my_agent, input="test input")``,
an input of the test's own, not the recording's), and section "Replay and snapshot
testing" (``replay_async(trace, my_agent, ReplayOptions(mock_llm_responses=True))``, and
its rule: a changed input is served the next unused recording and reported as diverged in
the fidelity report; a step with no recording raises instead of calling live; a recorded
step the agent never calls fails). Also the synchronous ``run`` (section "Synchronous
agents"), ``last_status`` / ``last_error``, and whether a replay leaves a trace behind.
"""

import asyncio
import json

from veval import (  # IMPORT
    ReplayBinding,
    ReplayFidelity,
    ReplayOptions,
    ReplayResult,
    TraceData,
    UnusedRecording,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT

RECORDING = {
    "trace_id": "tr_double0001",
    "agent_name": "my-agent",
    "input": "Where is my refund?",
    "output": "Refund for order 42 is on its way",
    "status": "success",
    "steps": [
        {
            "step_id": "s1",
            "name": "classify",
            "type": "llm",
            "input": "Where is my refund?",
            "output": "refund",
            "status": "success",
            "model": "gpt-4o-mini",
            "cost_usd": 0.002,
        },
        {
            "step_id": "s2",
            "name": "lookup_order",
            "type": "tool",
            "input": {"intent": "refund"},
            "output": {"order": 42},
            "status": "success",
        },
        {
            "step_id": "s3",
            "name": "answer",
            "type": "llm",
            "input": {"intent": "refund", "order": 42},
            "output": "Refund for order 42 is on its way",
            "status": "success",
        },
    ],
}

RAN = []  # step code that actually ran (a served step never runs its code)
SEEN = {}


async def my_agent(ctx):
    SEEN["ctx"] = ctx

    async def classify(handle):
        handle.set_meta("type", "llm")
        RAN.append("classify")
        return "other"

    intent = await ctx.track_step_async("classify", ctx.input, classify)

    async def lookup(handle):
        handle.set_meta("type", "tool")
        RAN.append("lookup_order")
        return {"order": 7}

    order = await ctx.track_step_async("lookup_order", {"intent": intent}, lookup)

    async def answer():
        RAN.append("answer")
        return "live answer"

    return await ctx.track_step_async("answer", {"intent": intent, **order}, answer)


def sync_agent(ctx):
    SEEN["ctx"] = ctx
    intent = ctx.track_step("classify", ctx.input, lambda: RAN.append("classify") or "other")
    order = ctx.track_step("lookup_order", {"intent": intent}, lambda: {"order": 7})
    return ctx.track_step("answer", {"intent": intent, **order}, lambda: "live answer")


async def escalating_agent(ctx):
    SEEN["ctx"] = ctx
    await my_agent(ctx)
    return await ctx.track_step_async("escalate", ctx.input, lambda: asyncio.sleep(0, "t-9"))


async def hasty_agent(ctx):
    SEEN["ctx"] = ctx
    return await ctx.track_step_async("classify", ctx.input, lambda: asyncio.sleep(0, "x"))


def describe_run(output=None, error=None):
    ctx = SEEN.pop("ctx")
    fidelity = ctx.replay_fidelity
    return {
        "output": output,
        "error": None if error is None else str(error),
        "is_runtime_error": isinstance(error, RuntimeError) if error else None,
        "last_status": sdk.last_status,
        "last_error": sdk.last_error,
        "is_replay": ctx.is_replay,
        "input": ctx.input,
        "steps": [
            (s.name, s.type, s.status, s.output, s.metadata.get("_source")) for s in ctx.steps
        ],
        "fidelity": None
        if fidelity is None
        else {
            "counts": [fidelity.matched, fidelity.diverged, fidelity.live, fidelity.is_faithful],
            "bindings": [
                (b.step_name, b.kind, b.recorded_index, b.recorded_input, b.actual_input)
                for b in fidelity.bindings
            ],
            "unused": [(u.step_name, u.recorded_index) for u in fidelity.unused],
        },
        "ran": RAN[:],
    }


async def run(agent, question):
    RAN.clear()
    try:
        output = await sdk.run_async("my-agent", agent, input=question)
    except Exception as error:
        return describe_run(error=error)
    return describe_run(output)


async def main():
    trace = TraceData.from_dict(RECORDING)
    sdk.with_replay(trace)
    result = {
        "recorded input": await run(my_agent, "Where is my refund?"),
        "test input": await run(my_agent, "test input"),
        "unrecorded step": await run(escalating_agent, "Where is my refund?"),
        "skipped steps": await run(hasty_agent, "Where is my refund?"),
    }
    RAN.clear()
    output = await asyncio.to_thread(sdk.run, "my-agent", sync_agent, "another input")
    result["sync run"] = describe_run(output)

    replay = await sdk.replay_async(trace, my_agent, ReplayOptions(mock_llm_responses=True))
    replayed = replay.replayed_context
    result["replay_async"] = {
        "passed": replay.passed,
        "failures": replay.failures,
        "output": replay.output,
        "steps": [(s.name, s.output) for s in replayed.steps],
        "replay trace kept": sdk.get_trace(replayed.trace_id) is not None,
        "recording served by id": sdk.get_trace("tr_double0001").trace_id,
    }
    SEEN.clear()

    # A test of one's own that fakes a replay's outcome builds Veval's result types.
    fidelity = ReplayFidelity([UnusedRecording("classify", 0), UnusedRecording("answer", 2)])
    binding = ReplayBinding("classify", "diverged", 0, "Where is my refund?", "test input")
    faked = ReplayResult(["Replay drifted"], None, "out", status="error", fidelity=fidelity)
    result["built by hand"] = {
        "fidelity": [fidelity.matched, fidelity.diverged, fidelity.live, fidelity.is_faithful],
        "unused": [(u.step_name, u.recorded_index) for u in fidelity.unused],
        "binding": [binding.step_name, binding.kind, binding.recorded_index],
        "binding inputs": [binding.recorded_input, binding.actual_input],
        "result": [faked.passed, faked.failures, faked.output, faked.status, faked.error],
        "result times": [faked.started_at, faked.completed_at, faked.recording_diff],
        "result fidelity": faked.fidelity.unused[1].step_name,
        "empty result": [ReplayResult().passed, ReplayResult().failures],
    }
    return result


print(json.dumps(asyncio.run(main()), default=str))
