"""What a run's budget did: the limit, the estimate made before the run, the spend, and the
scenarios it stopped (the engine's ledger is :mod:`scenarist.engine.budget`).

A scenario the budget did not start is reported **BUDGET** by scenarist (run log,
console, JUnit, dashboard) and, for code written for giskard-checks, as an ERROR: its
first step carries a :class:`~scenarist.model.results.StepError` of phase ``"budget"``
(``exception_type`` ``"BudgetExceeded"``) whose message names the budget, and its checks
are SKIP. ERROR rather than SKIP because a SKIP is left out of giskard's pass rate and
of ``failed_count``/``errored_count``, so a run cut short would look as healthy as one
that finished; an ERROR counts against it (fail closed). See ``docs/design/budget.md``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BUDGET", "BUDGET_ERROR", "BUDGET_PHASE", "BudgetReport", "usd_text"]

BUDGET = "budget"
"""The outcome shown for a scenario the budget did not start (``ScenarioResult.outcome``)."""
BUDGET_PHASE = "budget"
"""The ``StepError.phase`` that marks a scenario the budget did not start."""
BUDGET_ERROR = "BudgetExceeded"
"""The ``StepError.exception_type`` of a scenario the budget did not start."""


def usd_text(usd: float) -> str:
    """An amount of USD as reports show it: ``$5.00``, ``$0.0018`` (small amounts keep
    their digits)."""
    return f"${usd:.2f}" if usd >= 1 or usd == 0 else f"${usd:.4g}"


class BudgetReport(BaseModel):
    """A run's budget: what was allowed, estimated, spent, and what it stopped.

    ``estimate_*`` is the spend estimated before the run (``None``: nothing was known; a
    lower bound when ``estimated_from["unknown"]`` counts scenarios with no estimate, which
    the ledger learns as the run goes); ``estimated_from`` counts the
    scenarios by where their estimate came from (``given``, ``history``, ``cassette``,
    ``unknown``). ``spent_*`` counts what the run spent live: replayed calls cost nothing,
    calls whose usage or price is unknown are priced from their size
    (``estimated_calls``). ``stopped`` names the scenarios not started; ``over_budget``
    those that spent more than their own ``Scenario(budget=...)`` while running.
    """

    model_config = ConfigDict(defer_build=True)

    limit_usd: float | None = None
    limit_tokens: int | None = None
    estimate_usd: float | None = None
    estimate_tokens: int | None = None
    estimated_from: dict[str, int] = Field(default_factory=dict)
    spent_usd: float = 0.0
    spent_tokens: int = 0
    estimated_calls: int = 0
    stopped: list[str] = Field(default_factory=list)
    over_budget: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def exceeded(self) -> bool:
        """The run spent more than its limit (a scenario running when it was crossed
        finished, see ``docs/design/budget.md``)."""
        over_usd = self.limit_usd is not None and self.spent_usd > self.limit_usd
        over_tokens = self.limit_tokens is not None and self.spent_tokens > self.limit_tokens
        return over_usd or over_tokens

    @property
    def failed(self) -> bool:
        """The budget stopped a scenario, or was crossed (the run must not pass)."""
        return bool(self.stopped or self.over_budget or self.exceeded)

    def limit_text(self) -> str:
        """``$5.00``, ``100000 tokens``, ``$5.00 and 100000 tokens``, or ``none``."""
        parts = []
        if self.limit_usd is not None:
            parts.append(usd_text(self.limit_usd))
        if self.limit_tokens is not None:
            parts.append(f"{self.limit_tokens} tokens")
        return " and ".join(parts) or "none (per-scenario budgets only)"

    def estimate_text(self) -> str:
        """The estimate before the run, with where it came from."""
        sources = ", ".join(f"{n} {source}" for source, n in sorted(self.estimated_from.items()))
        if self.estimate_usd is None:
            amount = "unknown"
        else:
            amount = usd_text(self.estimate_usd)
            if self.estimated_from.get("unknown"):
                amount = f"at least {amount}"
            if self.estimate_tokens:
                amount += f" / {self.estimate_tokens} tokens"
        return f"{amount} (scenarios by source: {sources or 'none'})"

    def summary(self) -> str:
        """One line for reports: limit, estimate, spend, and what was stopped."""
        line = (
            f"limit {self.limit_text()} | estimated {self.estimate_text()} | spent "
            f"{usd_text(self.spent_usd)} / {self.spent_tokens} tokens"
        )
        if self.estimated_calls:
            line += f" ({self.estimated_calls} call(s) priced from their size)"
        if self.stopped:
            line += f" | {len(self.stopped)} scenario(s) not started (BUDGET)"
        if self.over_budget:
            line += f" | over their own budget: {', '.join(self.over_budget)}"
        if self.exceeded:
            line += " | limit crossed by scenarios already running"
        return line
