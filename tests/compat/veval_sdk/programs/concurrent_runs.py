"""Identical prompts at once: traced runs gathered on one event loop and sync runs from a
thread pool (an OpenAI call inside a tracked step, the fake model answering per customer),
then recordings with the same prompt and different answers replayed side by side and as
one scenario's trace-backed items: every result must belong to its own run or recording."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import (  # IMPORT
    ReplayOptions,
    ScenarioItem,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live

PROMPT = "What is the status of my order?"
CUSTOMERS = [f"c{i}" for i in range(8)]


def fake_model(request):
    return Reply(f"order of {request.body.get('user')} ships today", tokens_in=8, tokens_out=4)


def make_agents(server):
    aclient = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)

    async def agent(ctx):
        async def ask(handle):
            response = await aclient.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": PROMPT}],
                user=ctx.input["customer"],
            )
            handle.set_meta("type", "llm")
            handle.set_meta("tokens_in", response.usage.prompt_tokens)
            return response.choices[0].message.content

        answer = await ctx.track_step_async("ask", PROMPT, ask)
        return {"customer": ctx.input["customer"], "answer": answer}

    def sync_agent(ctx):
        def ask():
            response = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": PROMPT}],
                user=ctx.input["customer"],
            )
            return response.choices[0].message.content

        return {"customer": ctx.input["customer"], "answer": ctx.track_step("ask", PROMPT, ask)}

    return agent, sync_agent


def recording(customer):
    return TraceData.from_dict(
        {
            "trace_id": f"tr_{customer}",
            "agent_name": "orders",
            "input": {"customer": customer},
            "output": {"customer": customer, "answer": f"recorded for {customer}"},
            "status": "success",
            "steps": [
                {
                    "step_id": f"s_{customer}",
                    "name": "ask",
                    "type": "llm",
                    "input": PROMPT,
                    "output": f"recorded for {customer}",
                    "status": "success",
                    "cost_usd": 0.001,
                }
            ],
        }
    )


async def main():
    with FakeLLMServer(ScriptedLLM(fake_model)) as server:
        agent, sync_agent = make_agents(server)
        contexts = {}

        async def remember(ctx):
            contexts[ctx.input["customer"]] = ctx
            return await agent(ctx)

        outputs = await asyncio.gather(
            *(sdk.run_async("orders", remember, input={"customer": c}) for c in CUSTOMERS)
        )
        result = {
            "gathered": [(o["customer"], o["answer"]) for o in outputs],
            "gathered_steps": {
                c: [(s.name, s.output, s.tokens_in) for s in contexts[c].steps] for c in CUSTOMERS
            },
            "distinct_trace_ids": len({contexts[c].trace_id for c in CUSTOMERS}),
        }

        def run_one(customer):
            return sdk.run("orders", sync_agent, input={"customer": customer})

        with ThreadPoolExecutor(max_workers=4) as pool:
            threaded = list(pool.map(run_one, CUSTOMERS))
        result["threaded"] = [(o["customer"], o["answer"]) for o in threaded]
        calls_before = len(server.requests)
        result["live_server_calls"] = calls_before

        traces = [recording(c) for c in CUSTOMERS]
        replays = await asyncio.gather(
            *(sdk.replay_async(t, agent, ReplayOptions(mock_llm_responses=True)) for t in traces)
        )
        result["replays"] = [
            (r.passed, r.output["customer"], r.output["answer"], r.fidelity.matched)
            for r in replays
        ]

        items = []
        for trace in traces:  # Veval's test double serves the last trace given
            sdk.with_replay(trace)
            run = await sdk.run_scenario_async(
                "orders",
                agent,
                [TraceAssert.no_errors(), TraceAssert.step_exists("ask")],
                items=[
                    ScenarioItem(name="recorded", trace_id=trace.trace_id),
                    ScenarioItem(name="missing", trace_id="tr_elsewhere"),
                ],
            )
            items.append(
                [
                    (
                        r.item.name,
                        r.passed,
                        [s.output for s in r.context.steps] if r.context else None,
                    )
                    for r in run.results
                ]
            )
        result["scenarios"] = items
        result["replay_server_calls"] = len(server.requests) - calls_before
    return result


print(json.dumps(asyncio.run(main()), default=str))
