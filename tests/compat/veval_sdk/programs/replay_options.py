"""One recorded SDK agent replayed every way ReplayOptions allow: mocked, with its model
steps live against the fake provider (counting the calls that reach it), compared with the
recording, with extra assertions; then after the agent changed (a step added, a step
dropped): what each replay reports, and which calls went live. Then ctx.load_mock_outputs
as users call it at the top of their own agent wrapper: strict and lenient, with the model
steps live, with a changed input, a step not recorded, an empty recording. Last, live model
steps at their edges (README, "Scenarios": ReplayOptions(live_model_steps=True) runs the
steps recorded as llm for real and serves the rest): a model step called once more than
recorded, a step the recording lacks, a recording with no model step. And Veval's default,
ReplayOptions() (mock_llm_responses=False): the agent runs again live, nothing served, no
fidelity report, an empty recording accepted."""

import asyncio
import json

import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import (  # IMPORT
    ReplayOptions,
    SnapshotOptions,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live


def fake_model(request):
    return Reply(f"live answer to {request.text}", tokens_in=7, tokens_out=4)


RECORDING = TraceData.from_dict(
    {
        "trace_id": "tr_support_0001",
        "agent_name": "support",
        "input": "Where is my refund?",
        "output": "recorded: refund for order 42",
        "status": "success",
        "steps": [
            {
                "step_id": "s1",
                "name": "classify",
                "type": "llm",
                "input": "Where is my refund?",
                "output": "refund",
                "status": "success",
                "model": "gpt-4o-mini",
                "cost_usd": 0.002,
                "tokens_in": 12,
                "tokens_out": 1,
            },
            {
                "step_id": "s2",
                "name": "lookup_order",
                "type": "tool",
                "input": {"intent": "refund"},
                "output": {"order": 42},
                "status": "success",
            },
            {
                "step_id": "s3",
                "name": "answer",
                "type": "llm",
                "input": {"intent": "refund", "order": 42},
                "output": "recorded: refund for order 42",
                "status": "success",
                "model": "gpt-4o-mini",
                "cost_usd": 0.003,
            },
        ],
    }
)


def make_agent(server, escalate=False, skip_lookup=False):
    client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    tools = []

    def ask(prompt):
        response = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )
        return response.choices[0].message.content

    def agent(ctx):
        def classify(handle):
            handle.set_meta("type", "llm")
            return ask(f"classify {ctx.input}")

        intent = ctx.track_step("classify", ctx.input, classify)
        order = {"order": 42}
        if not skip_lookup:

            def lookup(handle):
                handle.set_meta("type", "tool")
                tools.append("lookup_order")
                return {"order": 42}

            order = ctx.track_step("lookup_order", {"intent": intent}, lookup)
        if escalate:
            ctx.track_step("escalate", intent, lambda: "ticket 9")

        def answer(handle):
            handle.set_meta("type", "llm")
            return ask(f"answer about {intent}")

        return ctx.track_step("answer", {"intent": intent, **order}, answer)

    return agent, tools


def describe(replay, calls, tools):
    fidelity = replay.fidelity
    diff = replay.recording_diff
    return {
        "passed": replay.passed,
        "failures": [f.split(" — ")[0] for f in replay.failures],
        "output": replay.output,
        "status": replay.status,
        "steps": [(s.name, s.output) for s in replay.replayed_context.steps]
        if replay.replayed_context
        else None,
        "fidelity": None
        if fidelity is None
        else [fidelity.matched, fidelity.diverged, fidelity.live, fidelity.is_faithful],
        "unused": [u.step_name for u in fidelity.unused] if fidelity else None,
        "recording_diff": None
        if diff is None
        else {
            "has_changes": diff.has_changes,
            "changes": [(c.step_name, c.label) for c in diff.changes],
            "added": diff.added_steps,
            "removed": diff.removed_steps,
        },
        "server_calls": calls,
        "tool_runs": list(tools),
    }


async def main():
    result = {}
    with FakeLLMServer(ScriptedLLM(fake_model)) as server:
        cases = {
            "mocked": ({}, ReplayOptions(mock_llm_responses=True)),
            "model steps live": (
                {},
                ReplayOptions(mock_llm_responses=True, live_model_steps=True),
            ),
            "compared": (
                {},
                ReplayOptions(
                    mock_llm_responses=True,
                    compare_with_recording=SnapshotOptions(),
                    assertions=[TraceAssert.max_steps(3), TraceAssert.tool_called("lookup_order")],
                ),
            ),
            "model steps live, outputs compared": (
                {"skip_lookup": True},
                ReplayOptions(
                    mock_llm_responses=True,
                    live_model_steps=True,
                    compare_with_recording=SnapshotOptions(
                        compare_outputs=True, ignore_steps={"lookup_order"}
                    ),
                ),
            ),
            "failing assertions": (
                {},
                ReplayOptions(
                    mock_llm_responses=True,
                    assertions=[TraceAssert.max_steps(2), TraceAssert.step_exists("refund")],
                ),
            ),
            "step added": (
                {"escalate": True},
                ReplayOptions(mock_llm_responses=True, compare_with_recording=SnapshotOptions()),
            ),
            "step dropped": ({"skip_lookup": True}, ReplayOptions(mock_llm_responses=True)),
            # ReplayOptions() as the dataclass defaults it: mock_llm_responses=False
            "bare options": ({}, ReplayOptions()),
            "bare options, compared": (
                {"escalate": True},
                ReplayOptions(compare_with_recording=SnapshotOptions()),
            ),
        }
        for name, (variant, options) in cases.items():
            agent, tools = make_agent(server, **variant)
            before = len(server.requests)
            try:
                replay = await sdk.replay_async(RECORDING, agent, options)
                result[name] = describe(replay, len(server.requests) - before, tools)
            except Exception as error:
                result[name] = f"raised {type(error).__name__}"
    return result


MANUAL_RECORDING = {
    "trace_id": "tr_manual",
    "agent_name": "support",
    "input": "Where is my refund?",
    "output": "recorded answer",
    "status": "success",
    "steps": [
        {
            "step_id": "a",
            "name": "classify",
            "type": "llm",
            "input": "Where is my refund?",
            "output": "refund",
            "status": "success",
        },
        {
            "step_id": "b",
            "name": "answer",
            "type": "llm",
            "input": "refund",
            "output": "recorded answer",
            "status": "success",
        },
    ],
}


def make_manual_agent(server):
    client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)

    def ask(prompt):
        response = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )
        return response.choices[0].message.content

    def agent(ctx):
        intent = ctx.track_step("classify", ctx.input, lambda: ask(f"classify {ctx.input}"))
        return ctx.track_step("answer", intent, lambda: ask(f"answer {intent}"))

    return agent


async def manual_mocks():
    result = {}
    with FakeLLMServer(ScriptedLLM(default=Reply("live", tokens_in=2, tokens_out=1))) as server:
        agent = make_manual_agent(server)
        cases = {
            "strict": ("Where is my refund?", MANUAL_RECORDING, {}),
            "lenient, changed input": (
                "Where is my parcel?",
                MANUAL_RECORDING,
                {"strict": False},
            ),
            "strict, changed input": ("Where is my parcel?", MANUAL_RECORDING, {}),
            "lenient, answer not recorded": (
                "Where is my refund?",
                {**MANUAL_RECORDING, "steps": MANUAL_RECORDING["steps"][:1]},
                {"strict": False},
            ),
            "strict, answer not recorded": (
                "Where is my refund?",
                {**MANUAL_RECORDING, "steps": MANUAL_RECORDING["steps"][:1]},
                {},
            ),
            "model steps live": (
                "Where is my refund?",
                MANUAL_RECORDING,
                {"live_model_steps": True},
            ),
            "empty recording": ("Where is my refund?", {**MANUAL_RECORDING, "steps": []}, {}),
        }
        for name, (question, recording, options) in cases.items():
            seen = {}

            def wrapper(ctx, recording=recording, options=options, seen=seen):
                seen["ctx"] = ctx
                ctx.load_mock_outputs(TraceData.from_dict(recording), **options)
                return agent(ctx)

            before = len(server.requests)
            try:
                output = await sdk.run_async("support", wrapper, input=question)
                outcome = {"output": output}
            except RuntimeError:  # Veval's replay errors
                outcome = {"raised": "RuntimeError"}
            except Exception as error:
                outcome = {"raised": type(error).__name__}
            ctx = seen["ctx"]
            fidelity = ctx.replay_fidelity
            outcome.update(
                {
                    "is_replay": ctx.is_replay,
                    "steps": [(s.name, s.status, s.output) for s in ctx.steps],
                    "fidelity": None
                    if fidelity is None
                    else [fidelity.matched, fidelity.diverged, fidelity.live],
                    "server_calls": len(server.requests) - before,
                    "last_status": sdk.last_status,
                }
            )
            result[name] = outcome
    return result


async def live_edges():
    """live_model_steps at its edges: a model step called once more than recorded, a step
    the recording lacks, and a recording in which no step is a model step."""
    recording = TraceData.from_dict(MANUAL_RECORDING)
    tools_only = TraceData.from_dict(
        {**MANUAL_RECORDING, "steps": [{**s, "type": "tool"} for s in MANUAL_RECORDING["steps"]]}
    )

    def answer_twice(ctx):
        intent = ctx.track_step("classify", ctx.input, lambda: "refund")
        first = ctx.track_step("answer", intent, lambda: "live answer")
        return [first, ctx.track_step("answer", intent, lambda: "live answer, again")]

    def notify_too(ctx):
        intent = ctx.track_step("classify", ctx.input, lambda: "refund")
        answer = ctx.track_step("answer", intent, lambda: "live answer")
        ctx.track_step("notify", answer, lambda: "sent")
        return answer

    def plain(ctx):
        intent = ctx.track_step("classify", ctx.input, lambda: "refund")
        return ctx.track_step("answer", intent, lambda: "live answer")

    result = {}
    live = ReplayOptions(mock_llm_responses=True, live_model_steps=True)
    for name, trace, agent in (
        ("model step called again", recording, answer_twice),
        ("step not recorded", recording, notify_too),
        ("no model step recorded", tools_only, plain),
    ):
        replay = await sdk.replay_async(trace, agent, live)
        fidelity = replay.fidelity
        result[name] = {
            "passed": replay.passed,
            "failures": [f.split(" — ")[0] for f in replay.failures],
            "output": replay.output,
            "fidelity": [fidelity.matched, fidelity.diverged, fidelity.live, fidelity.is_faithful],
            "bindings": [(b.step_name, b.kind, b.recorded_index) for b in fidelity.bindings],
            "steps": [(s.name, s.output) for s in replay.replayed_context.steps],
        }
    return result


result = asyncio.run(main())
result["mocks"] = asyncio.run(manual_mocks())  # ctx.load_mock_outputs
result["live edges"] = asyncio.run(live_edges())
with FakeLLMServer(ScriptedLLM(fake_model)) as server:  # no options at all, an empty recording
    agent, tools = make_agent(server)
    empty = TraceData.from_dict({**MANUAL_RECORDING, "trace_id": "tr_empty", "steps": []})
    for name, trace in (("no options", RECORDING), ("no options, no steps", empty)):
        before = len(server.requests)
        try:
            replay = asyncio.run(sdk.replay_async(trace, agent))
            result[name] = describe(replay, len(server.requests) - before, tools)
        except Exception as error:
            result[name] = f"raised {type(error).__name__}: {error}"
with FakeLLMServer(ScriptedLLM(fake_model)) as server:  # sync code, no event loop running
    agent, tools = make_agent(server)
    replay = sdk.replay(RECORDING, agent, ReplayOptions(mock_llm_responses=True))
    result["replay_sync"] = describe(replay, len(server.requests), tools)
print(json.dumps(result, default=str))
