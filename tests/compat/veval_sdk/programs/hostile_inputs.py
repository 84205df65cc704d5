"""Inputs users do not plan for: unicode everywhere (step names too), an empty input and an
empty answer, a very long prompt through the SDK, a None output; and trace-backed items that
must fail without going live: a missing trace, a trace with no steps, a recording that does
not cover a call the agent makes, one that covers more than it makes."""

import asyncio
import json

import openai
from fake_llm import FakeLLMServer, Reply, ScriptedLLM

from veval import ScenarioItem, TraceAssert, TraceData, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT live

UNICODE = "Où est mon remboursement ? 🧾 — مرحبا — e\u0301 — 中文 — \u200d"
LONG = "refund " * 30000


def fake_model(request):
    text = request.text
    if text == "":
        return Reply("", tokens_in=0, tokens_out=0)
    return Reply(f"{len(text)} chars: {text[:40]}", tokens_in=len(text.split()), tokens_out=3)


def make_agent(server):
    client = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)

    async def agent(ctx):
        question = ctx.input

        async def ask():
            response = await client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
            )
            return response.choices[0].message.content

        answer = await ctx.track_step_async("demander ✓", question, ask)
        if question == UNICODE:
            ctx.track_step("résumé", {"clé": "välue 🧾"}, lambda: {"ok": "✓"})
        if question == "nothing":
            return None
        return answer

    return agent


def recording(trace_id, steps):
    return TraceData.from_dict(
        {
            "trace_id": trace_id,
            "agent_name": "support",
            "input": "Where is my refund?",
            "output": "recorded",
            "status": "success",
            "steps": steps,
        }
    )


def step(name, input, output):
    return {"name": name, "type": "llm", "input": input, "output": output}  # no step_id


def describe(run):
    return {
        "passed": run.passed,
        "counts": [run.pass_count, run.fail_count],
        "items": [
            {
                "name": r.item.name,
                "passed": r.passed,
                "failures": [f.split(" — ")[0] for f in r.failures],
                "steps": [(s.name, s.input, s.output) for s in r.context.steps]
                if r.context
                else None,
            }
            for r in run.results
        ],
    }


async def main():
    with FakeLLMServer(ScriptedLLM(fake_model)) as server:
        agent = make_agent(server)
        run = await sdk.run_scenario_async(
            "hostile",
            agent,
            [TraceAssert.no_errors(), TraceAssert.max_steps(2)],
            items=[
                ScenarioItem(name="unicode ✓", input=UNICODE),
                ScenarioItem(name="empty", input="", assertions=[TraceAssert.output_contains("")]),
                ScenarioItem(name="long", input=LONG, assertions=[TraceAssert.max_cost(1)]),
                ScenarioItem(name="none output", input="nothing"),
            ],
        )
        result = {"live": describe(run), "live_calls": len(server.requests)}
        result["long_prompt_reached_server"] = len(server.requests[2].text)

        before = len(server.requests)
        cases = {
            "no steps": recording("tr_empty", []),
            "uncovered call": recording("tr_other", [step("something else", "q", "x")]),
            "more recorded": recording(
                "tr_more",
                [
                    step("demander ✓", "Where is my refund?", "recorded answer"),
                    step("escalate", "Where is my refund?", "ticket 7"),
                ],
            ),
            "unicode recorded": recording(
                "tr_unicode", [step("demander ✓", "Where is my refund?", "réponse 🧾 enregistrée")]
            ),
        }
        outcomes = {}
        for name, trace in cases.items():  # Veval's test double serves the last trace given
            sdk.with_replay(trace)
            try:
                run = await sdk.run_scenario_async(
                    "hostile",
                    agent,
                    [TraceAssert.no_errors()],
                    items=[ScenarioItem(name=name, trace_id=trace.trace_id)],
                )
                outcomes[name] = describe(run)
            except Exception as error:
                outcomes[name] = f"raised {type(error).__name__}"
        run = await sdk.run_scenario_async(
            "hostile", agent, [], items=[ScenarioItem(name="missing", trace_id="tr_nowhere")]
        )
        outcomes["missing"] = describe(run)["passed"]
        result["trace_backed"] = outcomes
        result["trace_backed_calls"] = len(server.requests) - before
    return result


print(json.dumps(asyncio.run(main()), default=str))
