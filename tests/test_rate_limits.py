"""Rate limits for the agent's own LLM calls: budgets, the schedule, 429s, the report.

The limiter runs on a ManualClock (waiting moves it; no wall clock). The provider is a
FakeLLMServer on 127.0.0.1 that counts requests and answers 429 past its own budget per
minute of the same clock; in serial runs that is exactly what the provider saw. In
parallel runs the clock jumps as soon as any call's turn is booked, so there the
schedule is asserted on the clock and the provider only counts.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx2
import pytest
from rich.console import Console

from scenarist import Scenario, Suite
from scenarist.checks import StringMatching
from scenarist.engine.rate_limits import RateLimit, RateLimiter, parse_rate_limits
from scenarist.errors import UserError
from scenarist.testing import FakeLLMServer, FakeRequest, ManualClock, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio


# -- budgets ---------------------------------------------------------------------------------


def test_budgets_parse_from_text_and_dicts() -> None:
    limits = parse_rate_limits("openai/gpt-4o-mini=500rpm, 200000tpm; anthropic/*=2rps")
    assert limits == [
        RateLimit("openai/gpt-4o-mini", requests=500, tokens=200000),
        RateLimit("anthropic/*", requests=120),
    ]
    assert parse_rate_limits({"*": "30rpm"}) == [RateLimit("*", requests=30)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("openai/*", "is not PATTERN=LIMITS"),
        ("openai/*=500", "'500' is not a limit; use a number with rpm"),
        ("openai/*=5rpm,6rpm", "requests per minute is given twice"),
        ({"openai/*": 5}, "give limits as text like '500rpm, 20000tpm'"),
        (42, "rate_limits must be a dict"),
    ],
)
def test_bad_budgets_say_what_to_write(value: Any, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_rate_limits(value)


def test_env_budget_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_RATE_LIMITS", "openai/*=fast")
    suite = Suite(name="s", scenarios=[Scenario("a").interact("x", "y")])
    with pytest.raises(UserError, match=r"SCENARIST_RATE_LIMITS\['openai/\*'\]: 'fast'"):
        suite.run_sync(verbose=False)


# -- the schedule ----------------------------------------------------------------------------


def test_requests_are_spaced_after_the_burst() -> None:
    clock = ManualClock()
    limiter = RateLimiter([RateLimit("openai/*", requests=6, burst=2)], clock=clock)
    for _ in range(5):
        limiter.acquire("openai/gpt-4o-mini")
    # two at once (the burst), then one every 10 s
    assert clock.waits == [0.0, 0.0, 10.0, 20.0, 30.0]
    assert limiter.snapshot().delayed == 3


def test_tokens_per_minute_hold_back_big_calls() -> None:
    clock = ManualClock()
    limiter = RateLimiter([RateLimit("*", tokens=600)], clock=clock)  # 10 tokens a second
    limiter.acquire("openai/m", tokens=100)  # a call bigger than the burst goes alone
    limiter.acquire("openai/m", tokens=100)
    limiter.acquire("openai/m", tokens=5)
    assert clock.waits == [0.0, 10.0, 19.5]  # 200 tokens paid off by 20 s, 1 s of burst


def test_budgets_are_per_pattern_and_unmatched_calls_never_wait() -> None:
    clock = ManualClock()
    limiter = RateLimiter(
        [RateLimit("openai/gpt-4o", requests=1), RateLimit("openai/*", requests=2)], clock=clock
    )
    assert limiter.budget_for("openai/gpt-4o") == "openai/gpt-4o"
    assert limiter.budget_for("openai/gpt-4o-mini") == "openai/*"
    assert limiter.budget_for("anthropic/claude") is None
    assert [limiter.reserve("openai/gpt-4o") for _ in range(2)] == [0.0, 60.0]
    assert [limiter.reserve("openai/gpt-4o-mini") for _ in range(2)] == [0.0, 30.0]
    assert [limiter.reserve("anthropic/claude") for _ in range(3)] == [0.0, 0.0, 0.0]


def test_a_pause_holds_every_call_of_the_budget() -> None:
    clock = ManualClock(100.0)
    limiter = RateLimiter([RateLimit("openai/*", requests=600)], clock=clock)
    limiter.pause("openai/a", 7.0)
    assert limiter.reserve("openai/b") == pytest.approx(7.0)
    limiter.pause("anthropic/x", 3.0)  # no budget names it: the pause still holds it
    assert limiter.reserve("anthropic/x") == pytest.approx(3.0)


# -- through the HTTP layer, against a fake provider -----------------------------------------


class WindowedProvider:
    """A provider allowing ``budget`` requests per minute of ``clock``; 429 past it."""

    def __init__(self, clock: ManualClock, budget: int, retry_after: str = "60") -> None:
        self.clock, self.budget, self.retry_after = clock, budget, retry_after
        self.accepted: list[float] = []
        self.rejected = 0
        self._lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> Reply:
        with self._lock:
            now = self.clock.now()
            recent = [t for t in self.accepted if now - t < 60.0]
            if len(recent) >= self.budget:
                self.rejected += 1
                return Reply(status=429, headers={"retry-after": self.retry_after})
            self.accepted.append(now)
        return Reply(f"answer to {request.text}")


def llm_agent(server: FakeLLMServer, http: httpx2.AsyncClient) -> Any:
    async def agent(inputs: str) -> str:
        response = await http.post(
            server.openai_url + "/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": inputs}]},
        )
        if response.status_code != 200:
            raise RuntimeError(f"provider answered {response.status_code}")
        return str(response.json()["choices"][0]["message"]["content"])

    return agent


def suite_of(count: int) -> Suite:
    return Suite(
        name="paced",
        scenarios=[
            Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"q{i}"))
            for i in range(count)
        ],
    )


async def test_the_budget_is_shared_by_parallel_scenarios() -> None:
    clock = ManualClock()
    provider = WindowedProvider(clock, budget=100)  # counts; the schedule is the clock's
    limiter = RateLimiter([RateLimit("openai/gpt-4o-mini", requests=3, burst=3)], clock=clock)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(9).run(
                llm_agent(server, http),
                parallel=True,
                max_concurrency=9,
                verbose=False,
                rate_limits=limiter,
            )
    assert result.passed_count == 9, [r.format_failures() for r in result.results]
    assert provider.rejected == 0
    assert len(server.requests) == 9
    # one schedule for all nine: three at once (the burst), then one every 20 s
    assert sorted(clock.waits) == [0.0, 0.0, 0.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
    stats = result.rate_limits
    assert (stats.requests, stats.delayed, stats.throttled) == (9, 6, 0)


async def test_without_limits_the_same_run_is_refused_by_the_provider() -> None:
    clock = ManualClock()  # never moves: every call lands in the provider's first minute
    provider = WindowedProvider(clock, budget=3)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(6).run(
                llm_agent(server, http), verbose=False, return_exception=True
            )
    assert (result.passed_count, result.errored_count) == (3, 3)
    assert provider.rejected == 3
    assert result.rate_limits is None


async def test_a_429_pauses_the_run_and_the_call_is_retried() -> None:
    clock = ManualClock()
    provider = WindowedProvider(clock, budget=2, retry_after="30")
    # the configured budget is looser than the provider's: the provider's 429 corrects it
    limiter = RateLimiter([RateLimit("openai/*", requests=100, burst=100)], clock=clock)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(4).run(
                llm_agent(server, http), verbose=False, rate_limits=limiter
            )
    assert result.passed_count == 4, [r.format_failures() for r in result.results]
    assert provider.rejected == 2  # the third call met 429 twice (two pauses of 30 s)
    assert provider.accepted == [0.0, 0.0, 60.0, 60.0]
    stats = result.rate_limits
    assert (stats.throttled, stats.retried, stats.gave_up) == (2, 2, 0)
    console = Console(record=True, width=200)
    result.print_report(console=console)
    assert (
        "Rate limits: 6 LLM request(s) paced, 2 waited 60.0s in total; 2 answered 429 (2 retried)"
        in (console.export_text())
    )


class LoopGuardedLimiter(RateLimiter):
    """Stands in for a Ray worker's limiter, whose every answer is a call to an actor: a
    sync question asked from inside the event loop would stall the worker's other
    scenarios (their connect timers fired while it waited), so here it is refused."""

    def take_retry(self) -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return super().take_retry()
        raise AssertionError("take_retry() blocked the event loop: await take_retry_async()")


async def test_an_async_agent_asks_the_retry_budget_without_blocking_the_loop() -> None:
    clock = ManualClock()
    provider = WindowedProvider(clock, budget=1, retry_after="60")
    limiter = LoopGuardedLimiter([RateLimit("openai/*", requests=100, burst=100)], clock=clock)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(2).run(
                llm_agent(server, http), verbose=False, rate_limits=limiter
            )
    assert result.passed_count == 2, [r.format_failures() for r in result.results]
    assert (provider.rejected, result.rate_limits.retried) == (1, 1)
    assert await asyncio.to_thread(limiter.take_retry) is True  # off the loop: it answers


async def test_past_the_retry_budget_the_429_reaches_the_agent() -> None:
    clock = ManualClock()
    provider = WindowedProvider(clock, budget=0, retry_after="1")
    limiter = RateLimiter([RateLimit("openai/*", requests=100)], clock=clock, retry_budget=3)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(1).run(
                llm_agent(server, http), verbose=False, rate_limits=limiter, return_exception=True
            )
    assert result.errored_count == 1
    assert "provider answered 429" in result.results[0].format_failures()
    assert provider.rejected == 4  # the first try and three retries
    assert (result.rate_limits.retried, result.rate_limits.gave_up) == (3, 1)


def test_sync_agents_are_paced_too() -> None:
    clock = ManualClock()
    provider = WindowedProvider(clock, budget=100)
    limiter = RateLimiter([RateLimit("openai/*", requests=2, burst=2)], clock=clock)
    with FakeLLMServer(ScriptedLLM(provider)) as server, httpx2.Client() as http:

        def agent(inputs: str) -> str:
            response = http.post(
                server.openai_url + "/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": inputs}]},
            )
            return str(response.json()["choices"][0]["message"]["content"])

        result = suite_of(4).run_sync(
            agent, parallel=True, max_concurrency=4, verbose=False, rate_limits=limiter
        )
    assert result.passed_count == 4
    assert len(provider.accepted) == 4
    assert sorted(clock.waits) == [0.0, 0.0, 30.0, 60.0]


async def test_env_budgets_apply_when_the_run_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_RATE_LIMITS", "openai/gpt-4o-mini=600rpm")
    with FakeLLMServer(ScriptedLLM(lambda r: Reply(f"ok {r.text}"))) as server:
        async with httpx2.AsyncClient() as http:
            result = await suite_of(2).run(llm_agent(server, http), verbose=False)
    assert result.passed_count == 2
    assert result.rate_limits.requests == 2


async def test_veval_items_retry_a_429_under_env_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarist.model.items import ScenarioItem
    from scenarist.store.memory import MemoryStore
    from scenarist.tracing import RunContext
    from scenarist.veval.client import Client

    answers = [Reply(status=429, headers={"retry-after": "0"}), Reply("fine")]

    def provider(request: FakeRequest) -> Reply:
        return answers.pop(0) if answers else Reply("fine")

    with FakeLLMServer(ScriptedLLM(provider)) as server:
        async with httpx2.AsyncClient() as http:

            async def agent(ctx: RunContext) -> str:
                response = await http.post(
                    server.openai_url + "/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": ctx.input}]},
                )
                response.raise_for_status()
                return str(response.json()["choices"][0]["message"]["content"])

            client = Client(store=MemoryStore())
            items = [ScenarioItem(name="one", input="hi")]
            failed = await client.run_scenario_async("paced", agent, items=items)
            assert not failed.passed  # no budget: the 429 reaches the agent
            answers[:] = [Reply(status=429, headers={"retry-after": "0"})]
            monkeypatch.setenv("SCENARIST_RATE_LIMITS", "openai/*=6000rpm")
            passed = await client.run_scenario_async("paced", agent, items=items)
    assert passed.passed, passed.results[0].failures
    assert len(server.requests) == 3


def test_calls_are_keyed_by_provider_and_model_and_charged_when_sent() -> None:
    from scenarist.tracing.http._llm_payloads import Endpoint
    from scenarist.tracing.http._throttle import call_key

    body = b'{"model": "gpt-4o-mini", "max_tokens": 50, "messages": []}'
    request = httpx2.Request("POST", "http://x/v1/chat/completions", content=body)
    assert call_key(Endpoint("openai", "openai.chat.completions"), request) == (
        "openai/gpt-4o-mini",
        len(body) // 4 + 50,
    )
    gemini = httpx2.Request(
        "POST", "http://x/v1beta/models/gemini-2.0-flash:generateContent", content=b"{}"
    )
    assert call_key(Endpoint("gemini", "gemini.generate_content"), gemini)[0] == (
        "gemini/gemini-2.0-flash"
    )


async def test_an_sdk_agent_is_paced_with_no_code_change() -> None:
    import openai

    clock = ManualClock()
    answers = [Reply(status=429, headers={"retry-after": "2"})]

    def provider(request: FakeRequest) -> Reply:
        return answers.pop(0) if answers else Reply(f"answer to {request.text}")

    limiter = RateLimiter([RateLimit("openai/gpt-4o-mini", requests=60)], clock=clock)
    with FakeLLMServer(ScriptedLLM(provider)) as server:
        llm = openai.AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)

        async def agent(inputs: str) -> str:
            reply = await llm.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": inputs}]
            )
            return reply.choices[0].message.content or ""

        result = await suite_of(2).run(agent, verbose=False, rate_limits=limiter)
        await llm.close()
    assert result.passed_count == 2, [r.format_failures() for r in result.results]
    assert len(server.requests) == 3  # the SDK never saw the 429: the layer retried it
    assert clock.waits == [0.0, 2.0, 3.0]  # paused 2 s, then paced at one a second
