"""Agents the Ray tests run: in a module, so the workers import them by name."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx2


async def echo(inputs: str) -> str:
    """Early scenarios are slower, so later batches finish first."""
    number = int(inputs.rsplit("q", 1)[1])
    await asyncio.sleep(max(0.0, 0.2 - number * 0.01))
    return f"echo {inputs}"


def held(inputs: str) -> str:
    """``"q<n> <marker>"``: ``q0`` waits until the test creates ``marker``, which it does
    only once it has received results of other batches (starting a Ray worker process
    took over 120 s beside two busy loops: test_ray_bench.py); ``HANG_S`` is for results
    that never stream."""
    import time

    from tests.helpers.limits import HANG_S

    question, marker = inputs.split(" ", 1)
    if question == "q0":
        deadline = time.monotonic() + HANG_S
        while not Path(marker).exists():
            if time.monotonic() > deadline:
                return "gave up waiting: results were not streamed"
            time.sleep(0.05)
    return f"echo {question}"


def dying(inputs: str) -> str:
    """``die-always`` kills its worker every time; ``die-once:PATH`` only the first time."""
    if inputs == "die-always":
        os._exit(1)
    if inputs.startswith("die-once:"):
        marker = Path(inputs.split(":", 1)[1])
        if not marker.exists():
            marker.write_text("died")
            os._exit(1)
    return f"echo {inputs}"


async def ask_llm(inputs: str) -> str:
    """``inputs`` is ``"<openai base url> <question>"``: one chat completion."""
    url, question = inputs.split(" ", 1)
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            url + "/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
        )
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


LOOKUPS = {"count": 0}


async def tracked_agent(ctx: Any) -> str:
    """A Veval-style agent with one tracked step (replayed: served from the recording)."""
    notes = await ctx.track_step_async("lookup", ctx.input, step=lambda: f"notes on {ctx.input}")
    return f"answer from {notes}"
