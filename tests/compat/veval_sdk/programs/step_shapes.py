"""Steps as agents really use them: a step tracked inside another step, a step that raises
and is caught, async and sync agents (run, run_async and the sync run_scenario), non-string
outputs (dicts, lists, numbers, booleans, None, tuples), and an agent that raises."""

import asyncio
import json

from veval import ScenarioItem, TraceAssert, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


async def agent(ctx):
    def retrieve(handle):
        handle.set_meta("type", "retrieval")
        found = ctx.track_step("search_index", {"query": ctx.input, "k": 3}, lambda: [3, 1, 2])
        return {"docs": sorted(found), "count": len(found)}

    docs = ctx.track_step("retrieve", ctx.input, retrieve)

    def flaky():
        raise KeyError("order_id")

    try:
        ctx.track_step("flaky_lookup", {"order": None}, flaky)
        recovered = None
    except KeyError as error:
        recovered = f"recovered from {error}"

    async def score():
        await asyncio.sleep(0)
        return 0.25

    ratio = await ctx.track_step_async("score", docs, score)
    nothing = ctx.track_step("side_effect", "", lambda: None)
    flag = ctx.track_step("is_vip", 0, lambda: False)
    if ctx.input == "explode":
        raise RuntimeError("agent gave up")
    return {"docs": docs, "ratio": ratio, "nothing": nothing, "flag": flag, "note": recovered}


def sync_agent(ctx):
    parts = ctx.track_step("split", ctx.input, lambda: ctx.input.split())
    return ctx.track_step("count", parts, lambda: (len(parts), parts[0]))


def attempt(fn):
    try:
        return fn()
    except Exception as error:
        return f"raised {type(error).__name__}"


def describe(steps):
    names = {s.step_id: s.name for s in steps}
    return [
        {
            "name": s.name,
            "type": s.type,
            "status": s.status,
            "error": s.error,
            "input": s.input,
            "output": s.output,
            "parent": names.get(s.parent_step_id) if s.parent_step_id else None,
        }
        for s in steps
    ]


async def main():
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    output = await sdk.run_async("shapes", remember, input="refund")
    result = {
        "output": output,
        "steps": describe(seen["ctx"].steps),
        "last_status": sdk.last_status,
    }
    error = seen["ctx"].steps[2].error  # what users do with a failed step's error
    result["error_as_text"] = {
        "is_str": isinstance(error, str),
        "equals": error == "'order_id'",
        "contains": attempt(lambda: "order_id" in error),
        "json": attempt(lambda: json.dumps({"error": error})),
    }
    try:
        await sdk.run_async("shapes", remember, input="explode")
        result["explode"] = "no error"
    except RuntimeError as error:
        result["explode"] = str(error)
    result["explode_steps"] = [(s.name, s.status) for s in seen["ctx"].steps]
    result["explode_status"] = [sdk.last_status, sdk.last_error]

    sync_output = sdk.run("shapes", sync_agent, input="two words")
    result["sync_output"] = sync_output
    result["sync_type"] = type(sync_output).__name__

    run = await sdk.run_scenario_async(
        "shapes",
        agent,
        [TraceAssert.no_errors(), TraceAssert.step_exists("search_index")],
        items=[
            ScenarioItem(name="refund", input="refund", assertions=[TraceAssert.max_steps(6)]),
            ScenarioItem(name="explode", input="explode"),
            ScenarioItem(name="dict input", input={"q": "refund", "n": 2}),
            ScenarioItem(name="neither"),
        ],
    )
    result["scenario"] = {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": {
            r.item.name: {
                "passed": r.passed,
                "failures": r.failures,
                "steps": [s.name for s in r.context.steps] if r.context else None,
            }
            for r in run.results
        },
    }
    return result


result = asyncio.run(main())
sync_run = sdk.run_scenario(
    "shapes-sync",
    sync_agent,
    [TraceAssert.max_steps(2), TraceAssert.tool_called("count")],
    items=[ScenarioItem(name="words", input="a b c"), ScenarioItem(name="number", input=7)],
)
result["sync_scenario"] = [(r.item.name, r.passed, r.failures) for r in sync_run.results]
print(json.dumps(result, default=str))
