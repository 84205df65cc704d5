"""Snapshots of an agent whose OpenAI calls sit inside tracked steps: the baseline taken
from a run, a faithful run and a drifted one (a step added, a prompt changed) compared with
it, a names-only snapshot, and matches_snapshot as a scenario assertion."""

import asyncio
import json

import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import (  # IMPORT
    ScenarioItem,
    SnapshotData,
    SnapshotOptions,
    TraceAssert,
    VevalOptions,
    VevalTestSdk,
    compare_snapshots,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live


def make_agent(server, prompt="Classify", extra_step=False):
    client = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)

    async def ask(content):
        response = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": content}]
        )
        return response.choices[0].message.content

    async def agent(ctx):
        async def classify(handle):
            handle.set_meta("type", "llm")
            return await ask(f"{prompt}: {ctx.input}")

        intent = await ctx.track_step_async("classify", {"prompt": prompt}, classify)
        if extra_step:
            await ctx.track_step_async("double_check", intent, lambda: ask(f"check {intent}"))

        async def answer():
            return await ask(f"answer about {intent}")

        return await ctx.track_step_async("answer", intent, answer)

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
        "summary": diff.summary("support"),
        "changes": [(c.step_name, c.expected_index, c.actual_index) for c in diff.changes],
        "added": diff.added_steps,
        "removed": diff.removed_steps,
    }


async def main():
    with FakeLLMServer(ScriptedLLM(default=Reply("refund", tokens_in=4, tokens_out=1))) as server:
        good = await run_and_keep(make_agent(server), "Where is my refund?")
        baseline = SnapshotData.from_context(good)
        same = await run_and_keep(make_agent(server), "Where is my refund?")
        drifted = await run_and_keep(
            make_agent(server, prompt="Label", extra_step=True), "Where is my refund?"
        )
        legacy = SnapshotData(name="legacy", step_order=["classify", "answer"], step_count=2)
        result = {
            "baseline": {
                "step_order": baseline.step_order,
                "step_count": baseline.step_count,
                "steps": [(s.name, s.type) for s in baseline.ordered_steps()],
            },
            "same": describe(compare_snapshots(baseline, same)),
            "drifted": describe(compare_snapshots(baseline, drifted)),
            "drifted_names_only": describe(
                compare_snapshots(baseline, drifted, SnapshotOptions(compare_inputs=False))
            ),
            "legacy_same": describe(compare_snapshots(legacy, same)),
        }
        run = await sdk.run_scenario_async(
            "support",
            make_agent(server),
            [TraceAssert.matches_snapshot(baseline)],
            items=[ScenarioItem(name="same", input="Where is my refund?")],
        )
        result["assertion_same"] = [(r.passed, r.failures) for r in run.results]
        run = await sdk.run_scenario_async(
            "support",
            make_agent(server, prompt="Label", extra_step=True),
            [TraceAssert.matches_snapshot(legacy)],
            items=[ScenarioItem(name="drifted", input="Where is my refund?")],
        )
        result["assertion_drifted"] = [
            (r.passed, [f.split(":")[0] for f in r.failures]) for r in run.results
        ]
        result["assertion_drifted_text"] = [r.failures for r in run.results]
    return result


print(json.dumps(asyncio.run(main()), default=str))
