"""Old import path of :mod:`scenarist.run_comparison` (renamed), kept so existing imports work."""

from scenarist.run_comparison import (
    Outcome,
    RunComparison,
    ScenarioChange,
    ScenarioOutcome,
    compare_outcomes,
    compare_runs,
    pass_rate_of,
)

__all__ = [
    "Outcome",
    "RunComparison",
    "ScenarioChange",
    "ScenarioOutcome",
    "compare_outcomes",
    "compare_runs",
    "pass_rate_of",
]
