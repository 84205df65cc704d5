"""Custom checks as users write them: a registered check with typed fields (and the
validation errors a typo gives), an async check, a generic one, checks that return every
status, one that raises, and checks that call other checks."""

import asyncio
import json
from typing import Literal

from giskard.checks import (
    Check,
    CheckResult,
    Equals,
    Interaction,
    Metric,
    Scenario,
    Trace,
)  # IMPORT
from pydantic import Field, ValidationError


@Check.register("word_budget")
class WordBudget(Check):
    """Fails when the last answer has more words than the budget."""

    max_words: int = Field(ge=1)
    mode: Literal["strict", "lenient"] = "strict"

    async def run(self, trace):
        words = len(str(trace.last.outputs).split())
        limit = self.max_words if self.mode == "strict" else self.max_words * 2
        metrics = [Metric(name="words", value=float(words))]
        if words <= limit:
            return CheckResult.success(message=f"{words} words", metrics=metrics)
        return CheckResult.failure(
            message=f"{words} words > {limit}", metrics=metrics, details={"limit": limit}
        )


@Check.register("polite")
class Polite(Check):
    words: list[str] = ["please", "thanks"]  # noqa: RUF012 (a pydantic field: copied)

    async def run(self, trace):
        await asyncio.sleep(0)
        text = str(trace.last.outputs).lower()
        found = [w for w in self.words if w in text]
        if not text.strip():
            return CheckResult.skip(message="nothing to judge")
        return (
            CheckResult.success(details={"found": found})
            if found
            else CheckResult.failure(message="impolite", details={"found": found})
        )


class Exploding(Check):
    async def run(self, trace):
        raise KeyError("no such column")


class ReportsError(Check):
    async def run(self, trace):
        return CheckResult.error(message="upstream unavailable", details={"retry": True})


class Both(Check):
    """Delegates to two inner checks and merges their verdicts."""

    expected: str

    async def run(self, trace):
        first = await Equals(expected_value=self.expected).run(trace)
        second = await Polite().run(trace)
        passed = first.passed and second.passed
        message = f"equals={first.status.value} polite={second.status.value}"
        return (
            CheckResult.success(message=message) if passed else CheckResult.failure(message=message)
        )


class TypedLength(Check[str, str, Trace[str, str]]):
    at_least: int = 1

    async def run(self, trace: Trace[str, str]) -> CheckResult:
        n = len(trace.last.outputs)
        return CheckResult(
            status="pass" if n >= self.at_least else "fail",
            message=f"length {n}",
            metrics=[Metric(name="length", value=n)],
        )


def describe(result):
    return {
        "status": result.status.value,
        "passed": result.passed,
        "failed": result.failed,
        "errored": result.errored,
        "skipped": result.skipped,
        "message": result.message,
        "details": result.details,
        "metrics": [[m.name, m.value] for m in result.metrics],
    }


def shown(details):
    """Details as a user prints them, timings and tracebacks by their type only."""
    volatile = {"duration_ms", "traceback"}
    return {k: type(v).__name__ if k in volatile else v for k, v in details.items()}


def validation(data):
    try:
        check = Check.model_validate(data)
        return {"ok": type(check).__name__, "dump": check.model_dump(mode="json")}
    except ValidationError as exc:
        return {"errors": [[list(map(str, e["loc"])), e["type"]] for e in exc.errors()]}


async def main():
    out = {}
    trace = await Trace.from_interactions(
        Interaction(inputs="hi", outputs="Thanks for asking, here it is"),
    )
    empty = await Trace.from_interactions(Interaction(inputs="hi", outputs="   "))
    checks = {
        "budget_ok": WordBudget(max_words=10),
        "budget_fail": WordBudget(max_words=2),
        "budget_lenient": WordBudget(max_words=3, mode="lenient"),
        "polite": Polite(),
        "polite_custom": Polite(words=["sorry"]),
        "exploding": Exploding(name="explodes"),
        "reports_error": ReportsError(),
        "both": Both(expected="Thanks for asking, here it is"),
        "typed": TypedLength(at_least=100),
    }
    for name, check in checks.items():
        out[name] = describe(await check.run(trace)) if name != "exploding" else None
    out["polite_on_blank"] = describe(await Polite().run(empty))
    try:
        await Exploding().run(trace)
        out["exploding_direct"] = "returned"
    except KeyError as exc:
        out["exploding_direct"] = ["raised", str(exc)]

    scenario = Scenario("custom checks").interact(inputs="hi", outputs="Please wait, thanks")
    for check in checks.values():
        scenario = scenario.check(check)
    result = await scenario.run(return_exception=True)
    step = result.steps[0]
    out["in_scenario"] = {
        "status": result.status.value,
        "step_status": step.status.value,
        "results": [[r.status.value, r.message, shown(r.details)] for r in step.results],
        "names": [c.name for c in checks.values()],
    }

    out["kinds"] = [WordBudget(max_words=1).kind, Polite().kind, TypedLength().kind]
    out["registered"] = sorted(k for k in Check.kinds() if k in {"word_budget", "polite"})
    out["validate"] = {
        "good": validation({"kind": "word_budget", "max_words": 5}),
        "zero": validation({"kind": "word_budget", "max_words": 0}),
        "typo": validation({"kind": "word_budget", "max_word": 5}),
        "bad_mode": validation({"kind": "word_budget", "max_words": 5, "mode": "loose"}),
        "unknown_kind": validation({"kind": "nope"}),
    }
    try:
        WordBudget(max_words="many")
        out["construct_bad"] = "accepted"
    except ValidationError as exc:
        out["construct_bad"] = [e["type"] for e in exc.errors()]
    try:

        @Check.register("polite")
        class Again(Check):
            async def run(self, trace):
                return CheckResult.success()

        out["duplicate_kind"] = "accepted"
    except Exception as exc:
        out["duplicate_kind"] = type(exc).__name__
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
