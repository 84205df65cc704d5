"""ctx.load_mock_outputs as users call it, at the top of their own agent wrapper: strict and
lenient, with the model steps live, with a changed input, with an empty recording; the SDK
agent's answers, its steps, the fidelity report and the calls that reached the provider."""

import asyncio
import json

import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import TraceData, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live

RECORDING = {
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


def make_agent(server):
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


async def main():
    result = {}
    with FakeLLMServer(ScriptedLLM(default=Reply("live", tokens_in=2, tokens_out=1))) as server:
        agent = make_agent(server)
        cases = {
            "strict": ("Where is my refund?", RECORDING, {}),
            "lenient, changed input": (
                "Where is my parcel?",
                RECORDING,
                {"strict": False},
            ),
            "strict, changed input": ("Where is my parcel?", RECORDING, {}),
            "lenient, answer not recorded": (
                "Where is my refund?",
                {**RECORDING, "steps": RECORDING["steps"][:1]},
                {"strict": False},
            ),
            "strict, answer not recorded": (
                "Where is my refund?",
                {**RECORDING, "steps": RECORDING["steps"][:1]},
                {},
            ),
            "model steps live": ("Where is my refund?", RECORDING, {"live_model_steps": True}),
            "empty recording": ("Where is my refund?", {**RECORDING, "steps": []}, {}),
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


print(json.dumps(asyncio.run(main()), default=str))
