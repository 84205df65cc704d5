"""Replay throughput of recorded LLM calls through the HTTP interception (not a test).

Records one JSON call and one streamed call against ``FakeLLMServer``, writes cassettes
holding ``N`` copies of each (one FIFO lane of identical calls), then replays them with
no network: raw ``httpx2`` clients (sync, async, with a traced run recording spans),
``aiohttp`` and the ``openai`` SDK. Prints calls per second (median of rounds; the cassette load is
timed apart). Spec 07 §1 target: ≥ 5,000 calls/s with a raw httpx client.

    .venv/bin/python bench/replay_throughput.py [--calls N] [--rounds R] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import openai

from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing import RunContext

BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello there"}]}
STREAM = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens: a replay that reached it would fail
TARGET = 5_000


def record(directory: Path) -> dict[str, tuple[str, str]]:
    """One call of each shape recorded live: the cassette's header and the call's line."""
    path = directory / "recorded.jsonl"
    script = ScriptedLLM(default=Reply("The quick brown fox jumps over the lazy dog."))
    with FakeLLMServer(script) as server, cassette(path, "record"), httpx2.Client() as http:
        http.post(server.openai_url + "/chat/completions", json=BODY).read()
        http.post(server.openai_url + "/chat/completions", json=STREAM).read()
    header, plain, streamed = path.read_text().splitlines()
    return {"json": (header, plain), "stream": (header, streamed)}


def measure(
    path: Path, recorded: tuple[str, str], calls: int, rounds: int, run: Callable[[int], None]
) -> dict[str, float]:
    """Replay ``calls`` copies of one recorded call, ``rounds`` times; the median rate."""
    header, line = recorded
    path.write_text(header + "\n" + (line + "\n") * calls)
    rates, loads = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        with cassette(path, "replay") as tape:
            loaded = time.perf_counter()
            run(calls)
            done = time.perf_counter()
        stats = tape.stats
        assert (stats.replayed, stats.missed, stats.unused) == (calls, 0, 0), stats
        rates.append(calls / (done - loaded))
        loads.append((loaded - start) / calls * 1e6)
    rate = statistics.median(rates)
    return {"calls_per_s": rate, "us_per_call": 1e6 / rate, "load_us_per_call": min(loads)}


def measure_floor(recorded: tuple[str, str], calls: int, rounds: int) -> dict[str, float]:
    """The same call answered by httpx2 itself (a ``MockTransport`` returning the recorded
    body, no cassette, no hooks): the client's own cost, which no replay can beat. The
    gap to the replay row is what scenarist adds."""
    body = json.dumps(json.loads(recorded[1])["response"]["body"]).encode()
    headers = {"content-type": "application/json"}

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=headers, content=body)

    url = BASE_URL + "/chat/completions"
    rates = []
    with httpx2.Client(transport=httpx2.MockTransport(answer)) as mock:
        for _ in range(20):
            mock.post(url, json=BODY).read()
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                mock.post(url, json=BODY).read()
            rates.append(calls / (time.perf_counter() - start))
    rate = statistics.median(rates)
    return {"calls_per_s": rate, "us_per_call": 1e6 / rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per round (raw httpx2)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args()
    calls, sdk_calls = args.calls, max(args.calls // 4, 1)
    url = BASE_URL + "/chat/completions"
    with tempfile.TemporaryDirectory() as tmp:
        recorded = record(Path(tmp))
        path = Path(tmp) / "replayed.jsonl"
        http = httpx2.Client()
        sdk = openai.OpenAI(base_url=BASE_URL, api_key="sk-bench", max_retries=0)

        def raw_json(n: int) -> None:
            for _ in range(n):
                http.post(url, json=BODY).read()

        def raw_stream(n: int) -> None:
            for _ in range(n):
                with http.stream("POST", url, json=STREAM) as response:
                    for _ in response.iter_raw():
                        pass

        def raw_json_traced(n: int) -> None:
            ctx = RunContext(input="bench")
            with ctx.recorder:
                raw_json(n)
            assert len(ctx.spans) == n
            assert ctx.spans[0].metadata["replayed"]

        def raw_async(n: int) -> None:
            async def go() -> None:
                async with httpx2.AsyncClient() as client:
                    for _ in range(n):
                        await client.post(url, json=BODY)

            asyncio.run(go())

        def aiohttp_json(n: int) -> None:
            async def go() -> None:
                async with aiohttp.ClientSession() as session:
                    for _ in range(n):
                        async with session.post(url, json=BODY) as response:
                            await response.read()

            asyncio.run(go())

        def sdk_json(n: int) -> None:
            for _ in range(n):
                sdk.chat.completions.create(**BODY)  # type: ignore[call-overload]

        def sdk_stream(n: int) -> None:
            for _ in range(n):
                list(sdk.chat.completions.create(**STREAM))  # type: ignore[call-overload]

        cases: list[tuple[str, str, int, Callable[[int], None]]] = [
            ("httpx2 sync, JSON", "json", calls, raw_json),
            ("httpx2 sync, SSE stream", "stream", calls, raw_stream),
            ("httpx2 sync, JSON, traced run", "json", calls, raw_json_traced),
            ("httpx2 async, JSON", "json", calls, raw_async),
            ("aiohttp, JSON", "json", sdk_calls, aiohttp_json),
            ("openai SDK, JSON", "json", sdk_calls, sdk_json),
            ("openai SDK, stream", "stream", sdk_calls, sdk_stream),
        ]
        for _, lane, _, run in cases:  # warm up: imports, pydantic models, hooks
            measure(path, recorded[lane], 20, 1, run)
        results: dict[str, Any] = {}
        print(f"{'replay through the interception':32} {'calls/s':>9} {'µs/call':>8} {'load':>8}")
        for name, lane, n, run in cases:
            numbers = measure(path, recorded[lane], n, args.rounds, run)
            results[name] = {**numbers, "calls": n}
            print(
                f"{name:32} {numbers['calls_per_s']:9,.0f} {numbers['us_per_call']:6.0f}µs"
                f" {numbers['load_us_per_call']:6.1f}µs"
            )
        floor = measure_floor(recorded["json"], calls, args.rounds)
        results["floor: httpx2 MockTransport, JSON"] = {**floor, "calls": calls}
        print(f"{'floor: httpx2 MockTransport, JSON':32} {floor['calls_per_s']:9,.0f} "
              f"{floor['us_per_call']:6.0f}µs")  # fmt: skip
        http.close()
        sdk.close()
    raw = results["httpx2 sync, JSON"]["calls_per_s"]
    floor = results["floor: httpx2 MockTransport, JSON"]["calls_per_s"]
    verdict = "meets" if raw >= TARGET else "MISSES"
    print(f"\nraw httpx2 replay: {raw:,.0f} calls/s, {verdict} the {TARGET:,} calls/s target")
    print(
        f"floor (httpx2 answering from a MockTransport, no scenarist): {floor:,.0f} calls/s; "
        f"scenarist adds {1e6 / raw - 1e6 / floor:.0f} µs per call"
    )
    if args.json:
        args.json.write_text(json.dumps({"target_calls_per_s": TARGET, "results": results}))


if __name__ == "__main__":
    main()
