"""Snapshots: a baseline from a run, compared with a drifted run (locally, through the
client, and as a scenario assertion), and built as Veval builds them."""

import asyncio
import json

from veval import (  # IMPORT
    ScenarioItem,
    SnapshotData,
    SnapshotOptions,
    SnapshotStep,
    TraceAssert,
    VevalOptions,
    VevalTestSdk,
    compare_snapshots,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


def make_agent(prompt, extra_step):
    async def agent(ctx):
        async def classify():
            return "refund"

        await ctx.track_step_async("classify", {"prompt": prompt, "q": ctx.input}, classify)
        if extra_step:

            async def escalate():
                return "ticket 9"

            await ctx.track_step_async("escalate", ctx.input, escalate)

        async def answer():
            return "on its way"

        return await ctx.track_step_async("answer", ctx.input, answer)

    return agent


async def run_and_keep(agent, question):
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    await sdk.run_async("support", remember, input=question)
    return seen["ctx"]


def describe(diff):
    return {
        "has_changes": diff.has_changes,
        "kinds": [c.kind for c in diff.changes],
        "summary": diff.summary(),
        "named_summary": diff.summary("support-baseline"),
        "changes": [
            (c.step_name, c.expected_index, c.actual_index, c.occurrence, c.label)
            for c in diff.changes
        ],
        "expected": [c.expected for c in diff.changes],
        "actual": [c.actual for c in diff.changes],
        "has_detail": [c.detail is not None for c in diff.changes],
        "alignment": [
            (r.kind, r.step_name, r.expected_index, r.actual_index, r.input_changed)
            for r in diff.alignment
        ],
        "expected_steps": [s.name for s in diff.expected_steps],
        "actual_steps": [s.name for s in diff.actual_steps],
        "added_steps": diff.added_steps,
        "removed_steps": diff.removed_steps,
        "compared_content": diff.compared_content,
    }


async def main():
    good = await run_and_keep(make_agent("v1", False), "Where is my refund?")
    baseline = SnapshotData.from_context(good)
    drifted = await run_and_keep(make_agent("v2", True), "Where is my refund?")
    result = {
        "baseline": {
            "source_trace_id_is_run": baseline.source_trace_id == good.trace_id,
            "step_order": baseline.step_order,
            "step_count": baseline.step_count,
            "has_step_content": baseline.has_step_content,
            "steps": [(s.name, s.type, s.input, s.output) for s in baseline.ordered_steps()],
        },
        "same": describe(compare_snapshots(baseline, good)),
        "drifted": describe(compare_snapshots(baseline, drifted)),
        "outputs_too": describe(
            compare_snapshots(
                baseline, drifted, SnapshotOptions(compare_outputs=True, ignore_steps={"escalate"})
            )
        ),
    }
    through_client = await sdk.compare_snapshot_async("support-baseline", baseline, drifted)
    result["through_client"] = describe(through_client)

    legacy = SnapshotData(name="legacy", step_order=["classify", "answer"], step_count=2)
    result["legacy"] = {
        "has_step_content": legacy.has_step_content,
        "ordered": [s.name for s in legacy.ordered_steps()],
        "diff": describe(compare_snapshots(legacy, drifted)),
    }
    built = SnapshotData.from_dict(
        {
            "id": "snap_1",
            "name": "support-baseline",
            "source_trace_id": "tr_1",
            "version": 2,
            "steps": [{"name": "classify", "type": "llm", "input": "q", "output": "refund"}],
        }
    )
    result["from_dict"] = [
        built.id,
        built.name,
        built.source_trace_id,
        built.version,
        built.step_count,
    ]
    step = SnapshotStep("classify", "llm", "q", "refund")
    result["positional_step"] = [step.name, step.type, step.input, step.output]
    # a step without a type: built by hand, read from a dict, or a legacy snapshot's
    typeless = SnapshotData.from_dict(
        {
            "name": "typeless",
            "steps": [
                {"name": "classify", "input": {"prompt": "v1", "q": "Where is my refund?"}},
                {"name": "answer", "type": None, "input": "changed"},
            ],
        }
    )
    against_run = compare_snapshots(typeless, good)
    result["typeless"] = {
        "default": SnapshotStep().type,
        "by_keyword": SnapshotStep(name="classify", input="q").type,
        "from_dict": [s.type for s in typeless.steps],
        "legacy": [s.type for s in legacy.ordered_steps()],
        "taken_from_run": [s.type for s in baseline.steps],
        "diff": describe(against_run),
        "diff_types": [
            [s.type for s in against_run.expected_steps],
            [s.type for s in against_run.actual_steps],
        ],
    }

    sdk.with_snapshot("support-baseline", baseline)
    run = await sdk.run_scenario_async(
        "support",
        make_agent("v2", True),
        [TraceAssert.matches_snapshot(sdk, "support-baseline")],
        items=[ScenarioItem(name="drifted", input="Where is my refund?")],
    )
    result["as_assertion"] = {
        "passed": run.passed,
        "failure_prefixes": [f.split(":")[0] for r in run.results for f in r.failures],
        "failures": [r.failures for r in run.results],
    }
    run = await sdk.run_scenario_async(
        "support",
        make_agent("v1", False),
        [TraceAssert.matches_snapshot(baseline)],
        items=[ScenarioItem(name="same", input="Where is my refund?")],
    )
    result["inline_assertion_passed"] = run.passed
    run = await sdk.run_scenario_async(
        "support",
        make_agent("v2", True),
        [TraceAssert.matches_snapshot(legacy)],
        items=[ScenarioItem(name="legacy", input="Where is my refund?")],
    )
    result["legacy_assertion"] = [(r.passed, r.failures) for r in run.results]
    return result


print(json.dumps(asyncio.run(main()), default=str))
