"""Budgets that fail closed: a run that stops starting scenarios before it spends too much.

``Suite.run(budget=5)`` (USD), ``budget="5usd,2Mtokens"`` or a :class:`Budget` (shared
by several runs, as the CLI shares one across files) and ``scenarist run --budget 5usd``.
A scenario's own ``Scenario(budget=0.5)`` caps what that scenario may be expected to spend.

Before a scenario starts, the ledger compares what the run has spent, plus what the
scenarios already running are expected to spend (their *reservations*), plus this
scenario's estimate, with the limit. Over it, the scenario is not started and is reported
BUDGET (an ERROR for giskard-checks code, see :mod:`scenarist.model.budget`), and so is
every scenario after it: the run stops, its results so far kept. A scenario already
running when the limit is crossed finishes (its spend counts; the run then reports the
limit crossed and fails): cancelling it would throw away money already spent for no
verdict, and leave the agent's side effects half done.

Estimates per run of a scenario, first found: the ``estimates`` given (the CLI fills them
from cassettes and the store's history), what the same scenario spent earlier in this run,
the mean of the scenarios finished so far. A scenario with no estimate at all starts only
when no other such scenario is running (a *probe*), so ``--parallel N`` cannot start N
unknown scenarios together; its spend then teaches the others.

Spend is counted from each run's trace (the usage rule of :mod:`scenarist.model.usage`)
and from judges' usage in the check results. Replayed calls cost nothing; a call whose
cost is unknown (no usage reported, or a model missing from the price table) is priced
from its size (characters / 4 tokens when no usage) at the dearest known price of its
provider (:func:`~scenarist.providers.pricing.ceiling_price`), never as free, with one
warning per model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scenarist.engine.scenario import Scenario, Step
from scenarist.errors import UserError
from scenarist.model._construct import construct
from scenarist.model.budget import BUDGET_ERROR, BUDGET_PHASE, BudgetReport
from scenarist.model.budget import usd_text as _money
from scenarist.model.results import ScenarioResult, StepError, TestCaseResult
from scenarist.model.trace import Span, Trace
from scenarist.model.usage import cost_spans, token_spans
from scenarist.providers.pricing import ceiling_price

__all__ = ["Budget", "Estimate", "Spend", "parse_budget", "result_spend", "stopped_result"]

_log = logging.getLogger("scenarist.budget")

CHARS_PER_TOKEN = 4
"""A call that reported no usage is counted at one token per 4 characters of its JSON."""
JUDGE_CALL_TOKENS = (1000, 250)
"""Tokens in and out a judge call that reported nothing is counted at."""

_PART = re.compile(
    r"^\s*(?:\$\s*)?(?P<number>-?[0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(?P<scale>[km]?)\s*"
    r"(?P<unit>usd|\$|tokens?|tok)?\s*$",
    re.IGNORECASE,
)
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class Spend:
    """Money and tokens spent; ``estimated_calls``: calls priced from their size."""

    usd: float = 0.0
    tokens: int = 0
    estimated_calls: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.usd + other.usd,
            self.tokens + other.tokens,
            self.estimated_calls + other.estimated_calls,
        )


@dataclass(frozen=True)
class Estimate:
    """What one run of a scenario is expected to spend, and where that came from
    (``given``, ``history``, ``cassette``, ``this run``)."""

    usd: float
    tokens: int = 0
    source: str = "given"


def parse_budget(value: Any, *, source: str = "budget") -> Budget | None:
    """A :class:`Budget` from ``value``: ``None``, a ``Budget``, a number of USD, or text
    (``5usd``, ``$5``, ``5``, ``100000tokens``, ``100k tokens``, ``5usd,2Mtokens``).

    A value that is none of these, negative or not finite raises :class:`UserError`
    naming ``source`` (the flag or argument) and the accepted forms.
    """
    if value is None or isinstance(value, Budget):
        return value
    usage = (
        f"{source} takes an amount of USD or tokens, like 5usd, $5, 0.5, 100000tokens, "
        f"100ktokens or 5usd,1Mtokens"
    )
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UserError(f"{usage}; got {value!r}")
    if not isinstance(value, str):
        return Budget(usd=_amount(float(value), value, source, usage))
    usd: float | None = None
    tokens: int | None = None
    for part in value.split(","):
        found = _PART.match(part)
        if found is None or not part.strip():
            raise UserError(f"{usage}; got {value!r}")
        number = float(found["number"]) * _SCALE[found["scale"].lower()]
        unit = (found["unit"] or "usd").lower()
        if unit in ("usd", "$"):
            if usd is not None:
                raise UserError(f"{source} names USD twice in {value!r}; give one amount")
            usd = _amount(number, value, source, usage)
        else:
            if tokens is not None:
                raise UserError(f"{source} names tokens twice in {value!r}; give one amount")
            tokens = int(_amount(number, value, source, usage))
    return Budget(usd=usd, tokens=tokens)


def _amount(number: float, value: Any, source: str, usage: str) -> float:
    if not math.isfinite(number):
        raise UserError(f"{usage}; got {value!r}, which is not a finite amount")
    if number < 0:
        raise UserError(f"{source} must be 0 or more, got {value!r}")
    return number


def _size_tokens(value: Any) -> int:
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _replayed(span: Span) -> bool:
    metadata = span.metadata
    return bool(metadata.get("replayed")) or metadata.get("_source") == "replay"


class _Pricer:
    """Prices calls whose cost is unknown, warning once per provider and model."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self._warned: set[tuple[str, str | None, str | None]] = set()

    def warn(self, why: str, provider: str | None, model: str | None, text: str) -> None:
        key = (why, provider, model)
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(text)
            _log.warning("%s", text)

    def call(self, span: Span) -> Spend:
        """The estimated spend of an LLM span whose cost is unknown."""
        provider = span.metadata.get("provider")
        provider = provider if isinstance(provider, str) else None
        url = span.metadata.get("url")
        price_in, price_out = ceiling_price(provider, url if isinstance(url, str) else None)
        tokens_in, tokens_out = span.tokens_in, span.tokens_out
        who = f"{provider or 'unknown provider'}/{span.model or 'unknown model'}"
        price = f"${price_in:g}/${price_out:g} per million tokens in/out"
        if tokens_in is None and tokens_out is None:
            tokens_in, tokens_out = _size_tokens(span.input), _size_tokens(span.output)
            self.warn(
                "usage",
                provider,
                span.model,
                f"LLM calls to {who} reported no usage: counted from their size "
                f"({CHARS_PER_TOKEN} characters a token) at {price}, the dearest known",
            )
        else:
            self.warn(
                "price",
                provider,
                span.model,
                f"no price is known for {who}: its calls are counted at {price}, the "
                "dearest known for the provider",
            )
        tokens_in, tokens_out = tokens_in or 0, tokens_out or 0
        usd = (tokens_in * price_in + tokens_out * price_out) / 1_000_000
        return Spend(usd, tokens_in + tokens_out, 1)

    def judge(self, usage: Mapping[str, Any]) -> Spend:
        """A judge's usage (``CheckResult.details["judge"]``)."""
        calls = usage.get("calls") or 0
        cost, tokens_in, tokens_out = (
            usage.get("cost_usd"),
            usage.get("tokens_in"),
            usage.get("tokens_out"),
        )
        known_tokens = (tokens_in or 0) + (tokens_out or 0)
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            return Spend(float(cost), int(known_tokens))
        if not calls:
            return Spend()
        if tokens_in is None and tokens_out is None:
            tokens_in, tokens_out = JUDGE_CALL_TOKENS[0] * calls, JUDGE_CALL_TOKENS[1] * calls
        price_in, price_out = ceiling_price(None)
        model = usage.get("model")
        self.warn(
            "judge",
            None,
            model if isinstance(model, str) else None,
            f"the judge {model or '(unknown model)'} reported no cost: its calls are counted "
            f"at ${price_in:g}/${price_out:g} per million tokens in/out",
        )
        usd = ((tokens_in or 0) * price_in + (tokens_out or 0) * price_out) / 1_000_000
        return Spend(usd, (tokens_in or 0) + (tokens_out or 0), int(calls))

    def trace(self, trace: Trace[Any, Any]) -> Spend:
        """What a trace spent live (replayed calls cost nothing)."""
        return self.spans(
            [span for interaction in trace.interactions for span in interaction.spans]
        )

    def spans(self, roots: list[Span]) -> Spend:
        """What some root spans (and their children) spent live."""
        if not roots:
            return Spend()
        usd, estimated, tokens = 0.0, Spend(), 0
        priced: set[int] = set()
        for span in cost_spans(roots):
            if _replayed(span):
                continue
            if span.cost_usd is not None:
                usd += span.cost_usd
            elif span.kind == "llm":
                estimated += self.call(span)
                priced.add(id(span))
        for span in token_spans(roots):
            if _replayed(span) or id(span) in priced:
                continue
            tokens += (span.tokens_in or 0) + (span.tokens_out or 0)
        return Spend(usd, tokens) + estimated


def result_spend(result: ScenarioResult, pricer: _Pricer | None = None) -> Spend:
    """What one run's result spent: its trace (times the runs executed, as only the last
    run's trace is kept with ``multiple_runs``) and its judges' usage."""
    pricer = pricer or _Pricer()
    spend = pricer.trace(result.final_trace)
    runs = max(result.runs_executed, 1)
    if runs > 1:
        spend = Spend(spend.usd * runs, spend.tokens * runs, spend.estimated_calls * runs)
    for step in result.steps:
        for check in step.results:
            usage = check.details.get("judge")
            if isinstance(usage, Mapping):
                spend += pricer.judge(usage)
    return spend


def stopped_result(scenario: Scenario, message: str) -> ScenarioResult:
    """The result of a scenario the budget did not start: an ERROR for giskard-checks
    code (a first step with a ``budget`` error, its checks SKIP), BUDGET for ours."""
    from scenarist.engine.runner import _empty_trace, _skipped_checks

    error = StepError(
        message=message, exception_type=BUDGET_ERROR, traceback=None, phase=BUDGET_PHASE
    )
    steps: list[Step] = scenario.steps or [Step()]
    results = [
        construct(
            TestCaseResult,
            {
                "results": _skipped_checks(
                    step,
                    f"Checks were skipped: {message}"
                    if index == 0
                    else f"Step {index + 1} was skipped due to previous failure",
                ),
                "duration_ms": 0,
                "last_interaction_index": None,
                "error": error if index == 0 else None,
                "empty_generators": (),
            },
        )
        for index, step in enumerate(steps)
    ]
    return construct(
        ScenarioResult,
        {
            "scenario_name": scenario.name,
            "steps": results,
            "final_trace": _empty_trace(scenario.trace_type or Trace),
            "duration_ms": 0,
            "multiple_runs": scenario.multiple_runs,
            "runs_executed": 0,
            "run_statuses": [],
            "repeat_statuses": [],
            "tags": list(scenario.tags),
            "certificate": None,  # never started: no call, replayed or live
            "repeat_stats": None,
        },
    )


@dataclass
class _Ticket:
    need_usd: float
    need_tokens: int
    probe: bool


class Budget:
    """A run's spending limit and its ledger: what was spent, what running scenarios
    reserved, what was stopped.

    ``usd`` and/or ``tokens`` (``None``: no limit of that kind; both ``None``: only the
    scenarios' own budgets apply). ``estimates`` maps scenario names to what one run of
    each is expected to spend (a number of USD or an :class:`Estimate`). One ``Budget``
    may be given to several runs (the CLI runs each file separately): they share it.
    """

    def __init__(
        self,
        usd: float | None = None,
        *,
        tokens: int | None = None,
        estimates: Mapping[str, float | Estimate] | None = None,
    ) -> None:
        for name, amount in (("usd", usd), ("tokens", tokens)):
            if amount is not None and (
                isinstance(amount, bool)
                or not isinstance(amount, int | float)
                or not math.isfinite(amount)
                or amount < 0
            ):
                raise UserError(f"Budget({name}=...) must be a number >= 0, got {amount!r}")
        self.usd = None if usd is None else float(usd)
        self.tokens = None if tokens is None else int(tokens)
        self.estimates: dict[str, Estimate] = {
            name: e if isinstance(e, Estimate) else Estimate(float(e))
            for name, e in (estimates or {}).items()
        }
        self.spent = Spend()
        self._reserved_usd = 0.0
        self._reserved_tokens = 0
        self._stop: str | None = None
        self._probing = False
        self._waiters: list[asyncio.Future[None]] = []
        self._learned: dict[str, Estimate] = {}
        self._finished_usd = 0.0
        self._finished_tokens = 0
        self._finished_runs = 0
        self._pricer = _Pricer()
        self.report = BudgetReport(limit_usd=self.usd, limit_tokens=self.tokens)

    def __repr__(self) -> str:
        return f"Budget(usd={self.usd!r}, tokens={self.tokens!r})"

    @property
    def stopped(self) -> bool:
        """Whether the run's limit refused a scenario (every later one is refused too)."""
        return self._stop is not None

    # -- before the run --------------------------------------------------------------

    def estimate_run(self, scenarios: Iterable[Scenario], repeat: int = 1) -> BudgetReport:
        """Estimate the spend of ``scenarios`` (added to any estimate made before, as the
        CLI does file by file) and keep it in :attr:`report`."""
        usd, tokens = self.report.estimate_usd or 0.0, self.report.estimate_tokens or 0
        sources = dict(self.report.estimated_from)
        unknown = sources.get("unknown", 0)
        for scenario in scenarios:
            found = self.estimates.get(scenario.name)
            if found is None:
                unknown += 1
                continue
            runs = repeat * scenario.multiple_runs
            usd += found.usd * runs
            tokens += found.tokens * runs
            sources[found.source] = sources.get(found.source, 0) + 1
        if unknown:
            sources["unknown"] = unknown
        known = any(n for s, n in sources.items() if s != "unknown")
        self.report = self.report.model_copy(
            update={
                "estimate_usd": usd if known else None,
                "estimate_tokens": tokens if known else None,
                "estimated_from": sources,
            }
        )
        if unknown and known:  # a lower bound is still worth saying
            self.report.warnings.append(
                f"{unknown} scenario(s) have no estimate (no history, no cassette): the "
                f"others are estimated at {_money(usd)}; the unknown ones start one at a "
                "time until one has finished"
            )
        return self.report

    # -- during the run --------------------------------------------------------------

    def _estimate(self, name: str, fallback: Estimate | None = None) -> Estimate | None:
        found = self.estimates.get(name) or self._learned.get(name) or fallback
        if found is not None:
            return found
        if self._finished_runs:
            runs = self._finished_runs
            return Estimate(self._finished_usd / runs, self._finished_tokens // runs, "this run")
        return None

    def _refusal(
        self, name: str, own: float | None, runs: int, fallback: Estimate | None
    ) -> tuple[str | None, _Ticket | None]:
        """Why ``name`` may not start now (and the ticket it holds when it may)."""
        if self._stop is not None:
            return self._stop, None
        found = self._estimate(name, fallback)
        probe = found is None
        estimate = found or Estimate(0.0, 0, "unknown")
        need_usd, need_tokens = estimate.usd * runs, estimate.tokens * runs
        basis = f"estimated at {_money(need_usd)} ({estimate.source})"
        if own is not None and need_usd > own:
            return (
                f"not started: its own budget is {_money(own)} and it is {basis}",
                None,
            )
        committed = self.spent.usd + self._reserved_usd
        # nothing known of its cost: it may start only while something is left
        if self.usd is not None and (
            committed + need_usd > self.usd or (probe and committed >= self.usd)
        ):
            self._stop = (
                f"not started: the run's budget of {_money(self.usd)} would be exceeded "
                f"({_money(committed)} spent or reserved by running scenarios when "
                f"{name!r} was next, {basis}); the run stopped there"
            )
            return self._stop, None
        used = self.spent.tokens + self._reserved_tokens
        if self.tokens is not None and (
            used + need_tokens > self.tokens or (probe and used >= self.tokens)
        ):
            self._stop = (
                f"not started: the run's budget of {self.tokens} tokens would be exceeded "
                f"({used} spent or reserved when "
                f"{name!r} was next, estimated at {need_tokens} tokens "
                f"({estimate.source})); the run stopped there"
            )
            return self._stop, None
        return None, _Ticket(need_usd, need_tokens, probe)

    async def admit(
        self,
        name: str,
        *,
        own: float | None = None,
        runs: int = 1,
        fallback: Estimate | None = None,
    ) -> tuple[str | None, _Ticket | None]:
        """Reserve what ``name`` is expected to spend (``runs`` times its estimate per
        run, ``fallback`` when nothing else is known), or say why it may not start: a
        refusal message and no ticket. An unknown estimate waits for a running probe."""
        while True:
            if (
                not self._probing
                or self._stop is not None
                or fallback is not None
                or self._estimate(name) is not None
            ):
                break
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter  # a probe finished: an estimate is known now
        refused, ticket = self._refusal(name, own, runs, fallback)
        if ticket is not None:
            self._reserved_usd += ticket.need_usd
            self._reserved_tokens += ticket.need_tokens
            self._probing = self._probing or ticket.probe
        else:
            self._record(stopped=[name])
        return refused, ticket

    def settle(
        self,
        name: str,
        ticket: _Ticket,
        spend: Spend,
        executed: int,
        own: float | None = None,
        *,
        learn: bool = True,
    ) -> None:
        """Count what ``name`` spent over ``executed`` runs; release its reservation.
        ``learn=False``: its spend says nothing of the others' (a replayed item)."""
        self._reserved_usd -= ticket.need_usd
        self._reserved_tokens -= ticket.need_tokens
        self.spent += spend
        if executed and learn:
            self._learned[name] = Estimate(
                spend.usd / executed, spend.tokens // executed, "this run"
            )
            self._finished_usd += spend.usd
            self._finished_tokens += spend.tokens
            self._finished_runs += executed
        over = own is not None and spend.usd > own
        self._record(over_budget=[name] if over else [])
        if ticket.probe:
            self._probing = False
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def spend_of(self, results: Iterable[ScenarioResult]) -> Spend:
        """What some results spent (each run's trace and judges)."""
        spend = Spend()
        for result in results:
            spend += result_spend(result, self._pricer)
        return spend

    def spend_of_spans(self, roots: list[Span]) -> Spend:
        """What some recorded spans spent live (a Veval item's run)."""
        return self._pricer.spans(roots)

    def _record(self, *, stopped: list[str] = (), over_budget: list[str] = ()) -> None:  # type: ignore[assignment]
        report = self.report
        self.report = report.model_copy(
            update={
                "spent_usd": self.spent.usd,
                "spent_tokens": self.spent.tokens,
                "estimated_calls": self.spent.estimated_calls,
                "stopped": [*report.stopped, *stopped],
                "over_budget": [*report.over_budget, *over_budget],
                "warnings": [*report.warnings, *self._new_warnings()],
            }
        )

    def _new_warnings(self) -> list[str]:
        known = set(self.report.warnings)
        return [w for w in self._pricer.warnings if w not in known]

    async def run(
        self,
        scenario: Scenario,
        runs: int,
        start: Callable[[], Awaitable[tuple[ScenarioResult, list[ScenarioResult]]]],
    ) -> ScenarioResult:
        """Start ``scenario`` (``runs``: how many runs it may make) through ``start`` if the
        budget allows it, else give its BUDGET result; its spend is counted when it ends."""
        own = scenario.budget
        refused, ticket = await self.admit(scenario.name, own=own, runs=runs)
        if ticket is None:
            return stopped_result(scenario, refused or "not started: over budget")
        try:
            result, every_run = await start()
        except BaseException:
            self.settle(scenario.name, ticket, Spend(), 0, own)
            raise
        executed = sum(max(r.runs_executed, 1) for r in every_run)
        self.settle(scenario.name, ticket, self.spend_of(every_run), executed, own)
        return result
