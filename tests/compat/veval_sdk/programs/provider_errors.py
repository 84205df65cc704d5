"""The provider misbehaves under an agent whose SDK calls sit inside tracked steps: a 500, a
429 (the SDK's retries off), a 400, a refusal, a reply too slow for the agent's timeout.
What the agent sees, what the steps record, what the scenario says, how many requests the
provider received.

Only the slow question has a short timeout, and its reply comes ten minutes late: no stall
of a loaded machine lets it arrive in time. Every other call has a timeout no machine
reaches (one 0.3 s timeout for every call timed out the first, cold call on a busy one).
"""

import asyncio
import json

import anthropic
import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import ScenarioItem, TraceAssert, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live


def fake_model(request):
    text = request.text
    if "overloaded" in text:
        return Reply(status=500, error="upstream exploded")
    if "busy" in text:
        return Reply(status=429, error="slow down", headers={"retry-after": "0"})
    if "malformed" in text:
        return Reply(status=400, error="messages: too short")
    if "forbidden topic" in text:
        return Reply(refusal="I can't help with that.")
    if "slow" in text:
        return Reply("too late", delay_s=600)
    return Reply("fine", tokens_in=3, tokens_out=1)


def make_agent(server):
    oa = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    an = anthropic.AsyncAnthropic(base_url=server.anthropic_url, api_key="sk-test", max_retries=0)

    async def agent(ctx):
        question = ctx.input

        async def ask(handle):
            handle.set_meta("type", "llm")
            response = await oa.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
            )
            message = response.choices[0].message
            return message.refusal or message.content

        limit_s = 0.3 if question == "slow" else 600
        try:
            answer = await asyncio.wait_for(ctx.track_step_async("ask", question, ask), limit_s)
        except openai.APIStatusError as error:
            answer = f"openai said {error.status_code}"
        except TimeoutError:
            answer = "timed out"

        async def check(handle):
            handle.set_meta("type", "llm")
            message = await an.messages.create(
                model="claude-3-5-haiku-latest",
                max_tokens=20,
                messages=[{"role": "user", "content": question}],
            )
            return message.stop_reason

        if "anthropic" in question:
            stop = await ctx.track_step_async("check", question, check)  # errors propagate
            answer = f"{answer} / {stop}"
        return answer

    return agent


async def main():
    with FakeLLMServer(ScriptedLLM(fake_model)) as server:
        agent = make_agent(server)
        questions = {
            "ok": "hello",
            "500": "overloaded",
            "429": "busy",
            "400": "malformed",
            "refusal": "forbidden topic",
            "timeout": "slow",
            "anthropic 500": "anthropic overloaded",
            "anthropic refusal": "anthropic forbidden topic",
        }
        run = await sdk.run_scenario_async(
            "errors",
            agent,
            [TraceAssert.no_errors()],
            items=[ScenarioItem(name=name, input=q) for name, q in questions.items()],
        )
        result = {
            "passed": run.passed,
            "counts": [run.pass_count, run.fail_count],
            "items": {
                r.item.name: {
                    "passed": r.passed,
                    "failures": [f.split(" — ")[0] for f in r.failures],
                    "steps": [(s.name, s.status) for s in r.context.steps] if r.context else None,
                }
                for r in run.results
            },
            "requests": [(r.provider, r.text) for r in server.requests],
        }
        try:
            await sdk.run_async("errors", agent, input="anthropic busy")
            result["raised"] = None
        except anthropic.APIStatusError as error:
            result["raised"] = [type(error).__name__, error.status_code]
        result["last_status"] = sdk.last_status
        result["requests_after_raise"] = len(server.requests)
    return result


print(json.dumps(asyncio.run(main()), default=str))
