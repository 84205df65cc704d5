"""TraceAssert.matches_snapshot with a snapshot source of the user's own: any object with
`get_snapshot_async(name)`, the interface the Veval SDK itself offers (README, "Replay and
snapshot testing": `TraceAssert.matches_snapshot(sdk, "my-baseline")`, "a missing baseline
fails; it never passes silently"). The source here keeps baselines in a dict, as a team
might keep them next to its tests; one answers nothing, one raises. Used in scenario runs
and in a replay with `compare_with_recording`, as the README's example does."""

import asyncio
import json

from veval import (  # IMPORT
    ReplayOptions,
    ScenarioItem,
    SnapshotData,
    SnapshotOptions,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


class Shelf:
    """Baselines kept in memory, looked up by name."""

    def __init__(self):
        self.saved = {}
        self.asked = []

    async def get_snapshot_async(self, name):
        self.asked.append(name)
        return self.saved.get(name)


class Unreachable:
    """A snapshot service that is down."""

    def __init__(self, error):
        self.error = error

    async def get_snapshot_async(self, name):
        raise self.error


def make_agent(prompt, extra_step=False):
    async def agent(ctx):
        async def classify():
            return "refund"

        intent = await ctx.track_step_async(
            "classify", {"prompt": prompt, "q": ctx.input}, classify
        )
        if extra_step:

            async def escalate():
                return "ticket 9"

            await ctx.track_step_async("escalate", intent, escalate)

        async def answer():
            return "on its way"

        return await ctx.track_step_async("answer", intent, answer)

    return agent


async def run_and_keep(agent, question):
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    await sdk.run_async("support", remember, input=question)
    return seen["ctx"]


async def scenario(agent, assertion):
    run = await sdk.run_scenario_async(
        "support",
        agent,
        [assertion],
        items=[ScenarioItem(name="refund", input="Where is my refund?")],
    )
    return {"passed": run.passed, "failures": [r.failures for r in run.results]}


RECORDING = TraceData.from_dict(
    {
        "trace_id": "tr_support_0001",
        "agent_name": "support",
        "input": "Where is my refund?",
        "output": "on its way",
        "status": "success",
        "steps": [
            {
                "step_id": "s1",
                "name": "classify",
                "type": "llm",
                "input": {"prompt": "v1", "q": "Where is my refund?"},
                "output": "refund",
                "status": "success",
            },
            {
                "step_id": "s2",
                "name": "answer",
                "type": "tool",
                "input": "refund",
                "output": "on its way",
                "status": "success",
            },
        ],
    }
)


async def main():
    shelf = Shelf()
    good = await run_and_keep(make_agent("v1"), "Where is my refund?")
    shelf.saved["support"] = SnapshotData.from_context(good)
    result = {
        "same": await scenario(make_agent("v1"), TraceAssert.matches_snapshot(shelf, "support")),
        "drifted": await scenario(
            make_agent("v2", extra_step=True), TraceAssert.matches_snapshot(shelf, "support")
        ),
        "outputs": await scenario(
            make_agent("v1"),
            TraceAssert.matches_snapshot(shelf, "support", SnapshotOptions(compare_outputs=True)),
        ),
        "missing": await scenario(make_agent("v1"), TraceAssert.matches_snapshot(shelf, "other")),
        "keyword": await scenario(
            make_agent("v2"), TraceAssert.matches_snapshot(shelf, snapshot_name="support")
        ),
        "down": await scenario(
            make_agent("v1"),
            TraceAssert.matches_snapshot(
                Unreachable(ConnectionError("snapshot service unavailable")), "support"
            ),
        ),
        "down_no_text": await scenario(
            make_agent("v1"),
            TraceAssert.matches_snapshot(Unreachable(TimeoutError()), "support"),
        ),
        "asked": shelf.asked,
    }
    replay = await sdk.replay_async(
        RECORDING,
        make_agent("v1"),
        ReplayOptions(
            mock_llm_responses=True,
            assertions=[TraceAssert.matches_snapshot(shelf, "support")],
            compare_with_recording=SnapshotOptions(),
        ),
    )
    result["replay"] = {"passed": replay.passed, "failures": replay.failures}
    replay = await sdk.replay_async(
        RECORDING,
        make_agent("v1"),
        ReplayOptions(
            mock_llm_responses=True,
            assertions=[TraceAssert.matches_snapshot(shelf, "gone")],
        ),
    )
    result["replay_missing"] = {"passed": replay.passed, "failures": replay.failures}
    return result


print(json.dumps(asyncio.run(main()), default=str))
