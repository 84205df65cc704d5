"""LLM-judge assertions kept deterministic and free with the test double's judge mocks.

Follows veval-sdk 1.4.0's documented API (its docstrings; the README does not cover
judging): ``VevalTestSdk.with_judge_mock(criteria, passed, score=1.0, reasoning="")``
registers a canned verdict per criteria "so scenarios/replays using TraceAssert.judge stay
deterministic and free in CI", and without a matching mock the judge refuses rather than
making a real, billed call; ``TraceAssert.judge(sdk, criteria, model=None,
threshold=None, ...)`` scores the trace's output against a rubric and records the verdict
on the run's context (``ctx.judgments``). Used here in a scenario (section "Scenarios" of
the README: ``run_scenario_async`` with items), in a replay (section "Replay and snapshot
testing": ``ReplayOptions(assertions=...)``), and through ``sdk.judge_async`` directly.
"""

import asyncio
import json

from veval import (  # IMPORT
    ReplayOptions,
    ScenarioItem,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT

sdk.with_judge_mock("concise", True, 0.9, "Short and to the point.")
sdk.with_judge_mock("concise", False, 0.4, "Rambles.")
sdk.with_judge_mock("polite", True)
sdk.with_judge_mock("grounded", False, 0.25)
sdk.with_judge_mock("accurate", True, 0.5, "Right order number.")


async def support_agent(ctx):
    intent = await ctx.track_step_async("classify", ctx.input, lambda: asyncio.sleep(0, "refund"))
    return await ctx.track_step_async(
        "answer", intent, lambda: asyncio.sleep(0, f"Your {intent} is on its way.")
    )


def judged(ctx):
    return (
        [(j["criteria"], j["score"], j["passed"], j["reasoning"]) for j in ctx.judgments]
        if ctx
        else None
    )


async def main():
    result = {}
    run = await sdk.run_scenario_async(
        "support-quality",
        support_agent,
        [TraceAssert.judge(sdk, "concise"), TraceAssert.judge(sdk, "polite")],
        items=[
            ScenarioItem(name="refund", input="Where is my refund?"),
            ScenarioItem(
                name="long question",
                input="I ordered last week and nothing came, where is my refund?",
                assertions=[TraceAssert.judge(sdk, criteria="grounded")],
            ),
            ScenarioItem(name="third", input="Refund?"),
        ],
    )
    result["scenario"] = {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": [
            {
                "name": r.item.name,
                "passed": r.passed,
                "failures": r.failures,
                "judgments": judged(r.context),
            }
            for r in run.results
        ],
    }

    recording = TraceData.from_dict(
        {
            "trace_id": "tr_judged",
            "agent_name": "support",
            "input": "Where is my refund?",
            "output": "Your refund is on its way.",
            "status": "success",
            "steps": [
                {
                    "step_id": "a",
                    "name": "classify",
                    "input": "Where is my refund?",
                    "output": "refund",
                    "status": "success",
                },
                {
                    "step_id": "b",
                    "name": "answer",
                    "input": "refund",
                    "output": "Your refund is on its way.",
                    "status": "success",
                },
            ],
        }
    )
    replay = await sdk.replay_async(
        recording,
        support_agent,
        ReplayOptions(
            mock_llm_responses=True,
            assertions=[
                TraceAssert.judge(sdk, "accurate", threshold=0.8),
                TraceAssert.judge(sdk, "helpful"),
            ],
        ),
    )
    result["replay"] = {
        "passed": replay.passed,
        "failures": replay.failures,
        "judgments": judged(replay.replayed_context),
    }

    ctx = replay.replayed_context
    sdk.with_judge_mock("on topic", False, 0.1, "Talks about shipping.")
    verdict = await sdk.judge_async("on topic", ctx)
    result["judge_async"] = [verdict["passed"], verdict["score"], verdict["reasoning"]]
    try:
        await sdk.judge_async("on topic", ctx)
        result["judge_async unmocked"] = "answered"
    except RuntimeError as error:
        result["judge_async unmocked"] = str(error)
    result["judgments after judge_async"] = len(ctx.judgments)
    return result


print(json.dumps(asyncio.run(main()), default=str))
