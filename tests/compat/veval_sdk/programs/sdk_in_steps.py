"""An agent built on the official SDKs, each model call inside a tracked step (OpenAI sync,
OpenAI async streaming, Anthropic sync, Anthropic async streaming), against a fake provider
on 127.0.0.1; then the trace it recorded replayed as a trace-backed item and through
replay_async: the recorded answers, and no call reaching the server. Then a tool-calling
loop (the model step asks for tools until it answers, the same step name again and
again), replayed from the JSON a user would keep: the same turns, no call."""

import asyncio
import json

import anthropic
import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM, ToolCall

from veval import (  # IMPORT
    ReplayOptions,
    ScenarioItem,
    TraceAssert,
    TraceData,
    VevalOptions,
    VevalTestSdk,
)

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live


def fake_model(request):
    text = request.text
    if "classify" in text:
        return Reply("refund", tokens_in=11, tokens_out=1)
    if "draft" in text:
        return Reply("Your refund is on its way", tokens_in=20, tokens_out=6)
    if "review" in text:
        return Reply("LGTM", tokens_in=30, tokens_out=1)
    return Reply("Your refund is on its way.", tokens_in=25, tokens_out=6)


def make_agent(server):
    oa = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    aoa = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    an = anthropic.Anthropic(base_url=server.anthropic_url, api_key="sk-test", max_retries=0)
    aan = anthropic.AsyncAnthropic(base_url=server.anthropic_url, api_key="sk-test", max_retries=0)

    async def agent(ctx):
        question = ctx.input

        def classify(handle):
            response = oa.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"classify: {question}"}],
            )
            handle.set_meta("type", "llm")
            handle.set_meta("model", response.model)
            handle.set_meta("tokens_in", response.usage.prompt_tokens)
            handle.set_meta("tokens_out", response.usage.completion_tokens)
            return response.choices[0].message.content

        intent = ctx.track_step("classify", question, classify)

        async def draft():
            stream = await aoa.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"draft an answer about {intent}"}],
                stream=True,
            )
            pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            return "".join(pieces)

        text = await ctx.track_step_async("draft", {"intent": intent}, draft)

        def review(handle):
            message = an.messages.create(
                model="claude-3-5-haiku-latest",
                max_tokens=50,
                messages=[{"role": "user", "content": f"review: {text}"}],
            )
            handle.set_meta("type", "llm")
            handle.set_meta("tokens_in", message.usage.input_tokens)
            handle.set_meta("tokens_out", message.usage.output_tokens)
            handle.set_meta("cost_usd", 0.0005)
            return message.content[0].text

        verdict = ctx.track_step("review", text, review)

        async def polish():
            async with aan.messages.stream(
                model="claude-3-5-haiku-latest",
                max_tokens=50,
                messages=[{"role": "user", "content": f"polish: {text}"}],
            ) as stream:
                return await stream.get_final_text()

        final = await ctx.track_step_async("polish", {"text": text, "verdict": verdict}, polish)
        ctx.set_metadata("verdict", verdict)
        return final

    return agent


def describe_steps(steps):
    return [
        {
            "name": s.name,
            "type": s.type,
            "input": s.input,
            "output": s.output,
            "status": s.status,
            "model": s.model,
            "tokens_in": s.tokens_in,
            "tokens_out": s.tokens_out,
            "cost_usd": s.cost_usd,
            "top_level": s.parent_step_id is None,
        }
        for s in steps
    ]


def as_trace(ctx, output):
    """What a user keeps of a run to replay it later (Veval's trace JSON)."""
    return TraceData.from_dict(
        {
            "trace_id": ctx.trace_id,
            "agent_name": "support",
            "input": ctx.input,
            "output": output,
            "status": "success",
            "steps": [
                {
                    "step_id": s.step_id,
                    "parent_step_id": s.parent_step_id,
                    "name": s.name,
                    "type": s.type,
                    "input": s.input,
                    "output": s.output,
                    "status": s.status,
                    "model": s.model,
                    "tokens_in": s.tokens_in,
                    "tokens_out": s.tokens_out,
                    "cost_usd": s.cost_usd,
                }
                for s in ctx.steps
            ],
        }
    )


async def main():
    with FakeLLMServer(ScriptedLLM(fake_model)) as server:
        agent = make_agent(server)
        seen = {}

        async def remember(ctx):
            seen["ctx"] = ctx
            return await agent(ctx)

        output = await sdk.run_async("support", remember, input="Where is my refund?")
        ctx = seen["ctx"]
        result = {
            "live": {
                "output": output,
                "last_status": sdk.last_status,
                "steps": describe_steps(ctx.steps),
                "server_calls": [(r.provider, r.stream) for r in server.requests],
            }
        }
        trace = as_trace(ctx, output)
        calls_before = len(server.requests)

        replay = await sdk.replay_async(trace, agent, ReplayOptions(mock_llm_responses=True))
        result["replay"] = {
            "passed": replay.passed,
            "failures": replay.failures,
            "output": replay.output,
            "matched": replay.fidelity.matched,
            "diverged": replay.fidelity.diverged,
            "is_faithful": replay.fidelity.is_faithful,
            "steps": [(s.name, s.output) for s in replay.replayed_context.steps],
            "server_calls": len(server.requests) - calls_before,
        }

        sdk.with_replay(trace)
        run = await sdk.run_scenario_async(
            "support",
            agent,
            [TraceAssert.no_errors(), TraceAssert.step_exists("polish")],
            items=[
                ScenarioItem(
                    name="recorded",
                    trace_id=trace.trace_id,
                    assertions=[TraceAssert.max_cost(0.01), TraceAssert.max_steps(4)],
                ),
                ScenarioItem(
                    name="recorded, over budget",
                    trace_id=trace.trace_id,
                    assertions=[TraceAssert.max_steps(3), TraceAssert.output_contains("never")],
                ),
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
                    "steps": [(s.name, s.output) for s in r.context.steps] if r.context else None,
                }
                for r in run.results
            ],
            "server_calls": len(server.requests) - calls_before,
        }
    return result


# A second client for the loop: with_replay above makes the first one replay every run.
loop_sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"order": {"type": "integer"}}},
        },
    }
    for name in ("find_order", "refund_status")
]


def fake_loop_model(request):
    turns = len(request.body["messages"])
    if turns == 1:
        return Reply(tool_calls=[ToolCall("find_order", {"order": 42}, id="call_1")])
    if turns == 3:
        return Reply(tool_calls=[ToolCall("refund_status", {"order": 42}, id="call_2")])
    return Reply("Refund for order 42 was sent on Monday.", tokens_in=30, tokens_out=9)


def run_tool(name, arguments):
    if name == "find_order":
        return {"order": arguments["order"], "status": "refunded"}
    return {"order": arguments["order"], "sent": "Monday"}


def make_loop_agent(server):
    client = openai.OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)

    def agent(ctx):
        messages = [{"role": "user", "content": ctx.input}]
        for _ in range(5):

            def think(handle, messages=messages):
                handle.set_meta("type", "llm")
                response = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS
                )
                return response.choices[0].message.model_dump(exclude_none=True)

            message = ctx.track_step("think", list(messages), think)
            messages.append(message)
            if not message.get("tool_calls"):
                return message["content"]
            for call in message["tool_calls"]:
                name = call["function"]["name"]
                arguments = json.loads(call["function"]["arguments"])

                def tool(handle, name=name, arguments=arguments):
                    handle.set_meta("type", "tool")
                    return run_tool(name, arguments)

                result = ctx.track_step(name, arguments, tool)
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
                )
        return "gave up"

    return agent


def kept_as_json(ctx, output):
    data = {
        "trace_id": ctx.trace_id,
        "agent_name": "support",
        "input": ctx.input,
        "output": output,
        "status": "success",
        "steps": [
            {
                "step_id": s.step_id,
                "name": s.name,
                "type": s.type,
                "input": s.input,
                "output": s.output,
                "status": s.status,
            }
            for s in ctx.steps
        ],
    }
    return TraceData.from_dict(json.loads(json.dumps(data)))


async def tool_loop():
    with FakeLLMServer(ScriptedLLM(fake_loop_model)) as server:
        agent = make_loop_agent(server)
        seen = {}

        def remember(ctx):
            seen["ctx"] = ctx
            return agent(ctx)

        output = await loop_sdk.run_async("support", remember, input="Where is my refund?")
        ctx = seen["ctx"]
        result = {
            "output": output,
            "steps": [(s.name, s.type) for s in ctx.steps],
            "live_calls": len(server.requests),
        }
        trace = kept_as_json(ctx, output)
        replay = await loop_sdk.replay_async(trace, agent, ReplayOptions(mock_llm_responses=True))
        result["replay"] = {
            "passed": replay.passed,
            "failures": replay.failures,
            "output": replay.output,
            "matched": replay.fidelity.matched,
            "steps": [s.name for s in replay.replayed_context.steps],
        }
        loop_sdk.with_replay(trace)
        run = await loop_sdk.run_scenario_async(
            "support",
            agent,
            [TraceAssert.tool_called("refund_status"), TraceAssert.max_steps(5)],
            items=[ScenarioItem(name="recorded", trace_id=trace.trace_id)],
        )
        result["scenario"] = [(r.passed, r.failures) for r in run.results]
        result["calls_after_replays"] = len(server.requests)
    return result


result = asyncio.run(main())
result["tool_loop"] = asyncio.run(tool_loop())
print(json.dumps(result, default=str))
