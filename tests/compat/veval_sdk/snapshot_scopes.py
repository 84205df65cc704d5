"""Run under the veval-sdk side venv against a real server with API keys
(``VEVAL_INTERNAL_ENDPOINT`` points the SDK at it; the key is ``argv[1]``). Records a
run, then saves a snapshot of it twice: from the stored trace (its id), and from the run
itself (its steps). Prints one JSON line: what each save gave, or the error it raised."""

import asyncio
import json
import sys

from veval import VevalOptions, VevalSdk

sdk = VevalSdk(VevalOptions(api_key=sys.argv[1], raise_on_send_failure=True))


async def agent(ctx):
    async def classify():
        return "refund"

    return await ctx.track_step_async("classify", ctx.input, classify)


async def save(name, source):
    try:
        snapshot = await sdk.save_snapshot_async(name, source)
    except Exception as exc:  # the SDK raises on a refused save
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"steps": [(s.name, s.input) for s in snapshot.steps]}


async def main():
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    await sdk.run_async("support", remember, input="Where is my refund?")
    ctx = seen["ctx"]
    by_id = await save("from-trace", ctx.trace_id)
    by_steps = await save("from-run", ctx)
    print(json.dumps({"by_id": by_id, "by_steps": by_steps}))


asyncio.run(main())
