"""Run under the veval-sdk side venv against a real ``scenarist serve``
(``VEVAL_INTERNAL_ENDPOINT`` points the SDK at it). Prints one JSON line of results.

Phase ``record``: a traced run (stored on the server), fetched back, saved as a snapshot.
Phase ``scenario``: the scenario's items fetched by name from the server (one synthetic,
one trace-backed), run with the SDK's own replay; then ``replay_async`` directly.
Phase ``free``: a run whose steps cost nothing (one priced 0, one unpriced), fetched back,
and the same run sent by scenarist's client (its trace id given), fetched by the SDK.
Phase ``judge``: ``judge_async`` on a run's last step, judged by the server's model.
"""

import asyncio
import json
import sys

from veval import ReplayOptions, TraceAssert, VevalExecutionContext, VevalOptions, VevalSdk

sdk = VevalSdk(VevalOptions(api_key="vk_anything", raise_on_send_failure=True))
LIVE = []


async def agent(ctx):
    async def classify():
        LIVE.append("classify")
        return "refund" if "refund" in str(ctx.input) else "other"

    intent = await ctx.track_step_async("classify", ctx.input, classify)

    async def lookup(handle):
        LIVE.append("lookup_order")
        handle.set_meta("type", "tool")
        handle.set_meta("cost_usd", 0.001)
        return {"order": 42, "intent": intent}

    order = await ctx.track_step_async("lookup_order", {"intent": intent}, lookup)
    ctx.set_metadata("channel", "email")
    return f"Your {intent} for order {order['order']} is on its way"


async def record():
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    output = await sdk.run_async("support", remember, input="Where is my refund?")
    trace_id = seen["ctx"].trace_id
    fetched = await sdk.get_trace_async(trace_id)
    missing = await sdk.get_trace_async("tr_does_not_exist")
    snapshot = await sdk.save_snapshot_async("support-baseline", trace_id)
    loaded = await sdk.get_snapshot_async("support-baseline")
    return {
        "output": output,
        "trace_id": trace_id,
        "fetched": {
            "trace_id": fetched.trace_id,
            "agent_name": fetched.agent_name,
            "input": fetched.input,
            "output": fetched.output,
            "status": fetched.status,
            "metadata_channel": fetched.metadata.get("channel"),
            "total_cost_usd": fetched.total_cost_usd,
            "steps": [(s.name, s.type, s.input, s.output, s.cost_usd) for s in fetched.steps],
        },
        "missing": missing,
        "snapshot": {"name": snapshot.name, "steps": [s.name for s in snapshot.steps]},
        "loaded": {"name": loaded.name, "steps": [(s.name, s.input) for s in loaded.steps]},
    }


async def scenario(trace_id):
    LIVE.clear()
    run = await sdk.run_scenario_async(
        "support",
        agent,
        [TraceAssert.step_exists("lookup_order"), TraceAssert.max_steps(2)],
        mock_model_steps=True,
    )
    trace = await sdk.get_trace_async(trace_id)
    replay = await sdk.replay_async(trace, agent, ReplayOptions(mock_llm_responses=True))
    return {
        "passed": run.passed,
        "items": [(r.item.name, bool(r.item.trace_id), r.passed, r.failures) for r in run.results],
        "live_calls": LIVE,
        "replay": {
            "passed": replay.passed,
            "output": replay.output,
            "failures": replay.failures,
            "matched": replay.fidelity.matched,
            "is_faithful": replay.fidelity.is_faithful,
        },
    }


async def free_agent(ctx):
    async def classify(handle):
        handle.set_meta("cost_usd", 0)
        return "refund"

    intent = await ctx.track_step_async("classify", ctx.input, classify)
    return ctx.track_step("answer", intent, lambda: f"about {intent}")


async def free(scenarist_trace_id):
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await free_agent(ctx)

    await sdk.run_async("free", remember, input="Where is my refund?")

    def read(trace):
        steps = [(s.name, s.cost_usd) for s in trace.steps]
        return {
            "agent_name": trace.agent_name,
            "total_cost_usd": trace.total_cost_usd,
            "steps": steps,
        }

    return {
        "veval_sent": read(await sdk.get_trace_async(seen["ctx"].trace_id)),
        "scenarist_sent": read(await sdk.get_trace_async(scenarist_trace_id)),
    }


async def judge():
    ctx = VevalExecutionContext("tr_judged", "Where is my refund?")
    ctx.track_step("answer", "Where is my refund?", lambda: "It arrives on Friday")
    verdict = await sdk.judge_async("Says when the refund arrives", ctx, model="gpt-4o")
    return {"passed": verdict["passed"], "score": verdict["score"]}


phase = sys.argv[1]
phases = {"record": record, "scenario": scenario, "free": free, "judge": judge}
result = asyncio.run(phases[phase](*sys.argv[2:]))
print(json.dumps(result, default=str))
