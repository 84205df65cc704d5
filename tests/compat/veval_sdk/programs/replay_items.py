"""A recorded trace replayed: as a trace-backed scenario item, through replay_async, and as
the test double's run (with_replay then run_async), faithful and diverged."""

import asyncio
import json

from veval import (
    ReplayOptions,
    ScenarioItem,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT

RECORDED = {
    "trace_id": "tr_recorded0001",
    "agent_name": "support",
    "input": "Where is my refund?",
    "output": "Your refund for order 42 is on its way",
    "status": "success",
    "started_at": "2026-11-30T10:00:00+00:00",
    "completed_at": "2026-11-30T10:00:01+00:00",
    "duration_ms": 1000,
    "total_cost_usd": 0.002,
    "metadata": {"channel": "email"},
    "steps": [
        {
            "step_id": "s1",
            "parent_step_id": None,
            "name": "classify",
            "type": "llm",
            "input": "Where is my refund?",
            "output": "refund",
            "status": "success",
            "model": "gpt-4o-mini",
            "cost_usd": 0.002,
            "tokens_in": 20,
            "tokens_out": 1,
            "metadata": {},
        },
        {
            "step_id": "s2",
            "parent_step_id": None,
            "name": "lookup_order",
            "type": "tool",
            "input": {"intent": "refund"},
            "output": {"order": 42},
            "status": "success",
            "metadata": {},
        },
    ],
}

LIVE_CALLS = []


async def agent(ctx):
    async def classify():
        LIVE_CALLS.append("classify")
        return "other"  # what a live model would say today

    intent = await ctx.track_step_async("classify", ctx.input, classify)

    async def lookup():
        LIVE_CALLS.append("lookup_order")
        return {"order": 7}

    order = await ctx.track_step_async("lookup_order", {"intent": intent}, lookup)
    return f"Your {intent} for order {order['order']} is on its way"


async def main():
    trace = TraceData.from_dict(RECORDED)
    result = {
        "trace": {
            "trace_id": trace.trace_id,
            "agent_name": trace.agent_name,
            "status": trace.status,
            "total_cost_usd": trace.total_cost_usd,
            "duration_ms": trace.duration_ms,
            "steps": [
                (s.name, s.type, s.step_id, s.parent_step_id, s.tokens_in) for s in trace.steps
            ],
        }
    }
    replay = await sdk.replay_async(trace, agent, ReplayOptions(mock_llm_responses=True))
    fidelity = replay.fidelity
    result["replay"] = {
        "passed": replay.passed,
        "failures": replay.failures,
        "output": replay.output,
        "status": replay.status,
        "matched": fidelity.matched,
        "diverged": fidelity.diverged,
        "live": fidelity.live,
        "is_faithful": fidelity.is_faithful,
        "unused": [(u.step_name, u.recorded_index) for u in fidelity.unused],
        "bound_steps": [b.step_name for b in fidelity.bindings],
        "is_replay": replay.replayed_context.is_replay,
        "has_times": replay.started_at is not None and replay.completed_at is not None,
    }
    result["live_calls_in_replay"] = list(LIVE_CALLS)

    sdk.with_replay(trace)
    run = await sdk.run_scenario_async(
        "support",
        agent,
        [TraceAssert.step_exists("lookup_order")],
        items=[
            ScenarioItem(name="recorded", trace_id="tr_recorded0001"),
            ScenarioItem(
                name="recorded, too few steps",
                trace_id="tr_recorded0001",
                assertions=[TraceAssert.max_steps(1)],
            ),
            ScenarioItem(name="unknown trace", trace_id="tr_missing"),
        ],
    )
    result["scenario"] = {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": {
            r.item.name: {
                "passed": r.passed,
                "failures": [f.split(" — ")[0] for f in r.failures],
                "output_steps": [s.output for s in r.context.steps] if r.context else None,
            }
            for r in run.results
        },
    }
    result["live_calls_after_scenario"] = list(LIVE_CALLS)

    async def partial(ctx):
        return await ctx.track_step_async("classify", ctx.input, lambda: asyncio.sleep(0, "x"))

    output = await sdk.run_async("support", agent, input="Where is my refund?")
    result["run_after_with_replay"] = {"output": output, "last_status": sdk.last_status}
    try:
        await sdk.run_async("support", partial, input="Where is my refund?")
        result["partial_run"] = "no error"
    except RuntimeError as error:
        result["partial_run"] = "RuntimeError: " + str(error).split(" ")[0]
    result["partial_last_status"] = sdk.last_status
    result["live_calls_at_end"] = list(LIVE_CALLS)
    return result


print(json.dumps(asyncio.run(main()), default=str))
