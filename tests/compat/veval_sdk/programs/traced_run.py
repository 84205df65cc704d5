"""A traced run with steps (async and sync, a handle, metadata), and a run that raises."""

import asyncio
import json

from veval import VevalExecutionContext, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


def classify(question):
    return "refund" if "refund" in question else "other"


async def agent(ctx: VevalExecutionContext):
    async def run_classify():
        await asyncio.sleep(0)
        return classify(ctx.input)

    intent = await ctx.track_step_async("classify", ctx.input, step=run_classify)

    def lookup(handle):
        handle.set_meta("type", "tool")
        handle.set_meta("tokens_in", 12)
        handle.set_meta("color", "blue")
        return {"order": 42, "intent": intent}

    order = ctx.track_step("lookup_order", {"intent": intent}, lookup)
    ctx.set_metadata("channel", "email")
    return f"Your refund for order {order['order']} is on its way"


async def failing(ctx):
    def explode():
        raise ValueError("the order service is down")

    ctx.track_step("lookup_order", ctx.input, explode)


def steps_of(ctx):
    return [
        {
            "name": s.name,
            "type": s.type,
            "input": s.input,
            "output": s.output,
            "status": s.status,
            "tokens_in": s.tokens_in,
            "parent_step_id": s.parent_step_id,
            "metadata": s.metadata,
        }
        for s in ctx.steps
    ]


async def main():
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    output = await sdk.run_async("support", remember, input="Where is my refund?")
    ctx = seen["ctx"]
    result = {
        "output": output,
        "input": ctx.input,
        "trace_id_prefix": ctx.trace_id[:3],
        "is_replay": ctx.is_replay,
        "trace_meta": ctx.trace_meta,
        "steps": steps_of(ctx),
        "last_status": sdk.last_status,
        "last_error": sdk.last_error,
        "replay_fidelity": ctx.replay_fidelity,
        "judgments": ctx.judgments,
    }
    context = VevalExecutionContext("tr_1")
    result["context_built"] = {"trace_id": context.trace_id, "input": context.input}
    context = VevalExecutionContext("tr_2", {"q": 1})
    result["context_built_with_input"] = {"trace_id": context.trace_id, "input": context.input}

    seen.clear()

    async def remember_failing(ctx):
        seen["ctx"] = ctx
        return await failing(ctx)

    try:
        await sdk.run_async("support", remember_failing, input="Where is my refund?")
        result["raised"] = None
    except ValueError as error:
        result["raised"] = str(error)
    result["failed_steps"] = [(s.name, s.status, s.error) for s in seen["ctx"].steps]
    result["failed_last_status"] = sdk.last_status
    result["failed_last_error"] = sdk.last_error
    return result


print(json.dumps(asyncio.run(main()), default=str))
