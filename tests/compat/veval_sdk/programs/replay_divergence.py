"""A replayed agent whose step inputs no longer match the recording.

Follows the veval-sdk 1.4.0 README, section "Replay and snapshot testing": "Each call gets
the recorded step with the same name and an identical input, or else the next unused one
in recorded order, reported as diverged in replay.fidelity. A step with no recording
raises instead of calling live"; the ``ReplayOptions`` field notes (without
``compare_with_recording`` a changed input is still served and only reported in the
fidelity; with it, the replay fails on the drift); and section "Scenarios"
(``ReplayOptions(live_model_steps=True)``: model steps run, every other step is served).
Cases: a repeated step called out of order with one input changed, inputs equal up to key
order or tuple/list, the string "1" against the number 1, a tool step whose input changed
after a live model step, the drift check, a step with no recording, an empty recording,
the synchronous replay, and a trace-backed scenario item whose input changed.
"""

import asyncio
import json

from veval import (  # IMPORT
    ReplayOptions,
    ScenarioItem,
    SnapshotOptions,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT

RAN = []  # step code that ran (a served step never runs its code)


def step(step_id, name, input, output, type="tool"):
    return {
        "step_id": step_id,
        "name": name,
        "type": type,
        "input": input,
        "output": output,
        "status": "success",
    }


def trace(trace_id, steps, input="Where is my refund?"):
    return TraceData.from_dict(
        {
            "trace_id": trace_id,
            "agent_name": "support",
            "input": input,
            "output": "recorded",
            "status": "success",
            "steps": steps,
        }
    )


LOOKUPS = trace(
    "tr_lookups",
    [
        step("l1", "lookup", "a", "result a"),
        step("l2", "lookup", "b", "result b"),
        step("l3", "lookup", "c", "result c"),
    ],
)

SHAPES = trace(
    "tr_shapes",
    [
        step("k1", "search", {"b": 1, "a": [1, 2]}, ["doc 1"]),
        step("k2", "fetch", {"id": 1}, {"body": "recorded body"}),
    ],
)

SUPPORT = trace(
    "tr_support",
    [
        step("s1", "classify", "Where is my refund?", "refund", type="llm"),
        step("s2", "lookup_order", {"intent": "refund"}, {"order": 42}),
        step("s3", "answer", {"intent": "refund", "order": 42}, "recorded answer", type="llm"),
    ],
)


def tracked(ctx, name, input, output):
    def run():
        RAN.append(name)
        return output

    return ctx.track_step(name, input, run)


def lookups_in(order):
    def agent(ctx):
        return [tracked(ctx, "lookup", each, f"live {each}") for each in order]

    return agent


def shapes_agent(ctx):
    docs = tracked(ctx, "search", {"a": (1, 2), "b": 1}, ["live doc"])
    return [docs, tracked(ctx, "fetch", {"id": "1"}, {"body": "live body"})]


async def support_agent(ctx, region=None):
    async def classify(handle):
        handle.set_meta("type", "llm")
        RAN.append("classify")
        return "billing"

    intent = await ctx.track_step_async("classify", ctx.input, classify)
    query = {"intent": intent} if region is None else {"intent": intent, "region": region}
    order = tracked(ctx, "lookup_order", query, {"order": 7})

    def answer(handle):
        handle.set_meta("type", "llm")
        RAN.append("answer")
        return f"live answer about {intent} and order {order['order']}"

    return ctx.track_step("answer", {"intent": intent, **order}, answer)


async def support_agent_eu(ctx):
    """The agent after a code change: the order lookup now also sends a region."""
    return await support_agent(ctx, region="EU")


def with_an_extra_step(ctx):
    tracked(ctx, "lookup", "a", "live a")
    return tracked(ctx, "refund", "a", "live refund")


def describe(replay):
    fidelity = replay.fidelity
    diff = replay.recording_diff
    context = replay.replayed_context
    return {
        "passed": replay.passed,
        "failures": [f.split(" — ")[0] for f in replay.failures],
        "output": replay.output,
        "status": replay.status,
        "error": replay.error,
        "steps": None
        if context is None
        else [(s.name, s.type, s.output, s.metadata.get("_source")) for s in context.steps],
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
        "drift": None
        if diff is None
        else [diff.has_changes, [(c.kind, c.step_name) for c in diff.changes]],
        "ran": RAN[:],
    }


async def replay(recording, agent, **options):
    RAN.clear()
    try:
        result = await sdk.replay_async(
            recording, agent, ReplayOptions(mock_llm_responses=True, **options)
        )
    except RuntimeError as error:  # what Veval raises; the text's first sentences
        return {"raised": "RuntimeError", "message": str(error).split(". ")[:2], "ran": RAN[:]}
    except Exception as error:
        return {"raised": type(error).__name__, "message": str(error), "ran": RAN[:]}
    return describe(result)


async def main():
    result = {
        "same order, one changed": await replay(LOOKUPS, lookups_in(["a", "z", "c"])),
        "out of order": await replay(LOOKUPS, lookups_in(["c", "a", "b"])),
        "fewer calls, one changed": await replay(LOOKUPS, lookups_in(["z", "b"])),
        "later match first, then changed": await replay(LOOKUPS, lookups_in(["c", "z", "a"])),
        "shapes": await replay(SHAPES, shapes_agent),
        "model steps live": await replay(SUPPORT, support_agent, live_model_steps=True),
        "mocked, input changed": await replay(SUPPORT, support_agent_eu),
        "drift checked": await replay(
            SUPPORT,
            support_agent_eu,
            compare_with_recording=SnapshotOptions(),
            assertions=[TraceAssert.max_steps(3), TraceAssert.step_exists("lookup_order")],
        ),
        "no recording": await replay(LOOKUPS, with_an_extra_step),
        "empty recording": await replay(trace("tr_empty", []), lookups_in(["a"])),
    }
    sdk.with_replay(SUPPORT)
    RAN.clear()
    run = await sdk.run_scenario_async(
        "support",
        support_agent_eu,
        [TraceAssert.no_errors()],
        [ScenarioItem(trace_id="tr_support")],
    )
    (item,) = run.results
    result["scenario item"] = {
        "passed": [run.passed, item.passed],
        "failures": [f.split("\n")[0] for f in item.failures],
        "steps": [(s.name, s.output) for s in item.context.steps] if item.context else None,
        "ran": RAN[:],
    }
    return result


result = asyncio.run(main())
RAN.clear()  # sync code, no event loop running
sync = sdk.replay(LOOKUPS, lookups_in(["a", "z", "c"]), ReplayOptions(True))
result["replay_sync"] = describe(sync)
print(json.dumps(result, default=str))
