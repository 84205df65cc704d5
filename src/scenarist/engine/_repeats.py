"""Repeated runs of one scenario: ``Suite.run(repeat=k)`` and ``repeat="auto"``.

Each scenario runs ``k`` independent times (``repeat=k``), or, with ``repeat="auto"``,
one run at a time until the sequential verdict of :mod:`scenarist.model.stats` decides
its required pass rate (PASS or FAIL) or the cap is reached (INCONCLUSIVE). The result
handed on is the first run that did not pass (else the last), as before, carrying every
run's status (``repeat_statuses``) and the statistics (``repeat_stats``). Only the run
shown and the first failure are kept alive, however many repeats run.

The required rate of a scenario is its own ``min_pass_rate``, else its suite's, else the
run's (``Suite.run(min_pass_rate=...)``, ``--min-pass-rate``): the most specific wins.
A run without repeats never comes here (the executor's one-run path is untouched).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from scenarist.errors import UserError
from scenarist.model.results import RepeatStats
from scenarist.model.stats import sequential_verdict
from scenarist.model.status import RateVerdict, ScenarioStatus

if TYPE_CHECKING:
    from scenarist.engine.executor import RunPlan
    from scenarist.engine.scenario import Scenario
    from scenarist.model.results import ScenarioResult

__all__ = ["AUTO_CAP", "check_rates", "parse_auto", "required_rate", "run_repeats"]

AUTO_CAP = 100
"""The most runs ``repeat="auto"`` makes of one scenario unless told (``"auto:N"``)."""


def parse_auto(value: str, *, source: str) -> int:
    """``"auto"`` → :data:`AUTO_CAP`; ``"auto:N"`` → ``N`` (an int ≥ 1); anything else is
    a ``ValueError`` naming ``source`` (``repeat``, ``--repeat``)."""
    text = value.strip().lower()
    head, sep, tail = text.partition(":")
    if head == "auto" and not sep:
        return AUTO_CAP
    if head == "auto" and tail.isdigit() and int(tail) >= 1:
        return int(tail)
    raise ValueError(
        f"{source} must be a whole number >= 1, 'auto' or 'auto:N' (N >= 1, the most runs "
        f"of one scenario), got {value!r}"
    )


def required_rate(scenario: Scenario, plan: RunPlan) -> float | None:
    """The scenario's own ``min_pass_rate``, else the run's (the suite's folded in)."""
    own = scenario.min_pass_rate
    return own if own is not None else plan.min_pass_rate


def _no_rate(names: list[str]) -> UserError:
    shown = ", ".join(repr(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")
    return UserError(
        f"repeat='auto' repeats a scenario until its pass rate is shown to reach a required "
        f"rate, and {len(names)} scenario(s) have none ({shown}): set min_pass_rate on the "
        "scenario or the suite, or pass min_pass_rate= (--min-pass-rate 0.9)"
    )


def check_rates(scenarios: Iterable[Scenario], min_pass_rate: float | None) -> None:
    """With ``repeat="auto"``: every scenario needs a required rate (before anything runs)."""
    if min_pass_rate is None:
        missing = [s.name for s in scenarios if s.min_pass_rate is None]
        if missing:
            raise _no_rate(missing)


async def run_repeats(
    run: Callable[[], Awaitable[ScenarioResult]], scenario: Scenario, plan: RunPlan
) -> ScenarioResult:
    """Run ``scenario`` repeatedly through ``run`` (see the module docstring)."""
    rate = required_rate(scenario, plan)
    auto = plan.repeat_auto
    if auto and rate is None:  # a streamed suite's scenario (a list is checked first)
        raise _no_rate([scenario.name])
    statuses: list[ScenarioStatus] = []
    first_failure: ScenarioResult | None = None
    last: ScenarioResult | None = None
    runs = passed = 0
    for _ in range(plan.repeat):
        last = await run()
        status = last.status
        statuses.append(status)
        if first_failure is None and status is not ScenarioStatus.PASS:
            first_failure = last
        if status is not ScenarioStatus.SKIP:
            runs += 1
            passed += status is ScenarioStatus.PASS
        if (
            auto
            and rate is not None
            and sequential_verdict(runs, passed, rate) is not RateVerdict.INCONCLUSIVE
        ):
            break
    chosen = first_failure if first_failure is not None else last
    assert chosen is not None  # plan.repeat >= 1
    chosen.repeat_statuses = statuses
    chosen.repeat_stats = RepeatStats.of(
        statuses, rate, sequential=auto, cap=plan.repeat if auto else None
    )
    return chosen
