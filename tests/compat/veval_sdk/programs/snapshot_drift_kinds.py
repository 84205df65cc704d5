"""Every kind of drift the Veval README's "Replay and snapshot testing" section says a
snapshot detects (a changed prompt or tool argument, a step added, dropped, repeated or
reordered), each compared with a baseline taken from a good run; the changes read the way
a Veval user reads them (filtering `diff.changes` by `kind`, printing `diff.summary()`
when `diff.has_changes`), with outputs compared, with steps ignored, and against a
names-only (legacy) baseline."""

import asyncio
import json

from veval import (  # IMPORT
    SnapshotData,
    SnapshotOptions,
    VevalOptions,
    VevalTestSdk,
    compare_snapshots,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT

GOOD = [
    ("classify", {"prompt": "Classify the request", "q": "refund?"}, "refund"),
    ("lookup_order", {"order_id": 42, "fields": ["status", "eta"]}, {"status": "sent"}),
    ("answer", "Write a short answer", "Your refund is on its way."),
]


def variant(kind):
    steps = list(GOOD)
    if kind == "prompt":
        steps[0] = ("classify", {"prompt": "Label the request", "q": "refund?"}, "refund")
    elif kind == "tool_argument":
        steps[1] = ("lookup_order", {"order_id": 43, "fields": ["status"]}, {"status": "sent"})
    elif kind == "added":
        steps.insert(2, ("escalate", {"team": "billing"}, "ticket 7"))
    elif kind == "dropped":
        del steps[1]
    elif kind == "repeated":
        steps.insert(2, steps[1])
    elif kind == "reordered":
        steps[0], steps[1] = steps[1], steps[0]
    elif kind == "answer_changed":
        steps[2] = ("answer", "Write a short answer", "Refund sent, 3 days.")
    elif kind == "multiline":
        steps[2] = ("answer", "Write a short answer\nin two lines", "Your refund is on its way.")
    return steps


def make_agent(steps):
    async def agent(ctx):
        output = None
        for name, step_input, step_output in steps:

            async def run(value=step_output):
                return value

            output = await ctx.track_step_async(name, step_input, run)
        return output

    return agent


async def run_and_keep(steps):
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await make_agent(steps)(ctx)

    await sdk.run_async("support", remember, input="refund?")
    return seen["ctx"]


def read(diff):
    added = [c for c in diff.changes if c.kind == "Added"]
    removed = [c for c in diff.changes if c.kind == "Removed"]
    moved = [c for c in diff.changes if c.kind == "Moved"]
    inputs = [c for c in diff.changes if c.kind == "InputChanged"]
    outputs = [c for c in diff.changes if c.kind == "OutputChanged"]
    return {
        "kinds": [c.kind for c in diff.changes],
        "added": [(c.step_name, c.actual_index, c.occurrence) for c in added],
        "removed": [(c.step_name, c.expected_index, c.occurrence) for c in removed],
        "moved": [(c.step_name, c.expected_index, c.actual_index) for c in moved],
        "inputs": [(c.step_name, c.expected, c.actual, c.detail) for c in inputs],
        "outputs": [(c.step_name, c.expected, c.actual, c.detail) for c in outputs],
        "summary": diff.summary("support") if diff.has_changes else None,
        "untitled": diff.summary(),
        "rows": [(r.kind, r.step_name, r.expected_index, r.actual_index) for r in diff.alignment],
    }


async def main():
    baseline = SnapshotData.from_context(await run_and_keep(GOOD))
    result = {"same": read(compare_snapshots(baseline, await run_and_keep(GOOD)))}
    kinds = ["prompt", "tool_argument", "added", "dropped", "repeated", "reordered"]
    kinds += ["answer_changed", "multiline"]
    for kind in kinds:
        ctx = await run_and_keep(variant(kind))
        result[kind] = read(compare_snapshots(baseline, ctx))
        result[kind + " outputs"] = read(
            compare_snapshots(baseline, ctx, SnapshotOptions(compare_outputs=True))
        )
    ctx = await run_and_keep(variant("added"))
    result["ignoring escalate"] = read(
        compare_snapshots(baseline, ctx, SnapshotOptions(ignore_steps={"escalate"}))
    )
    result["ignoring lookup"] = read(
        compare_snapshots(baseline, ctx, SnapshotOptions(ignore_steps={"lookup_order"}))
    )
    ctx = await run_and_keep(variant("tool_argument"))
    result["ignoring order_id"] = read(
        compare_snapshots(baseline, ctx, SnapshotOptions(ignore_fields={"order_id"}))
    )
    legacy = SnapshotData(name="support", step_order=["classify", "answer"], step_count=2)
    result["legacy"] = read(compare_snapshots(legacy, await run_and_keep(variant("reordered"))))
    result["legacy_vs_names_only"] = read(compare_snapshots(legacy, SnapshotData(step_order=["x"])))
    through_client = await sdk.compare_snapshot_async(
        "support", baseline, await run_and_keep(variant("prompt"))
    )
    result["through_client"] = read(through_client)
    return result


print(json.dumps(asyncio.run(main()), default=str))
