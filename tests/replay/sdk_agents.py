"""A Veval-style support agent written the way people write them: tracked steps, each
LLM call made through the official ``openai`` SDK (async and sync) inside a step."""

from __future__ import annotations

from typing import Any

import openai

from scenarist import RunContext

MODEL = "gpt-4o-mini"


def ask_sync(base_url: str, prompt: str) -> str:
    with openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0) as llm:
        reply = llm.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": prompt}]
        )
    return reply.choices[0].message.content or ""


async def ask(base_url: str, prompt: str) -> str:
    async with openai.AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0) as llm:
        reply = await llm.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": prompt}]
        )
    return reply.choices[0].message.content or ""


def support_agent(base_url: str, *, answer_suffix: str = "", declare_usage: bool = False) -> Any:
    """classify (sync SDK call), lookup (a tool, no LLM), answer (async SDK call)."""

    async def agent(ctx: RunContext) -> str:
        question = str(ctx.input)
        label = await ctx.track_step_async(
            "classify", question, lambda: ask_sync(base_url, f"classify: {question}")
        )
        policy = await ctx.track_step_async("lookup", label, lambda: f"policy for {label}")
        prompt = f"answer {question} with {policy}{answer_suffix}"

        async def answer(step: Any) -> str:
            if declare_usage:
                step.set_meta("type", "llm")
                step.set_meta("model", MODEL)
                step.set_meta("tokens_in", 100)
                step.set_meta("tokens_out", 10)
                step.set_meta("cost_usd", 0.5)
            return await ask(base_url, prompt)

        return str(await ctx.track_step_async("answer", prompt, answer))

    return agent
