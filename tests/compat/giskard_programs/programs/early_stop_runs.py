"""A support flow in several steps: a failing step stops the scenario (later steps are
never run), `multiple_runs` repeats a passing scenario with a fresh trace, stops on the
first failure, and a flaky agent shows how many runs it took."""

import asyncio
import json

from giskard.checks import Equals, FnCheck, Scenario, StringMatching  # IMPORT


class FlakyAgent:
    """Answers correctly except on the given call numbers."""

    def __init__(self, bad_calls):
        self.bad_calls = set(bad_calls)
        self.calls = 0

    def __call__(self, inputs):
        self.calls += 1
        if self.calls in self.bad_calls:
            return "sorry, what?"
        return f"ok: {inputs}"


def flow(name):
    seen = []

    def remember(trace):
        seen.append(len(trace.interactions))
        return True

    scenario = (
        Scenario(name)
        .interact(inputs="hi")
        .check(StringMatching(keyword="ok"))
        .check(FnCheck(fn=remember, name="remember"))
        .interact(inputs="refund")
        .check(Equals(expected_value="ok: refund"))
        .interact(inputs="bye")
        .check(StringMatching(keyword="bye"))
    )
    return scenario, seen


def describe(result):
    return {
        "status": result.status.value,
        "runs_executed": result.runs_executed,
        "multiple_runs": result.multiple_runs,
        "steps": [[s.status.value, [r.status.value for r in s.results]] for s in result.steps],
        "interactions": len(result.final_trace.interactions),
        "failures": [r.message for s in result.steps for r in s.failures_and_errors],
    }


async def main():
    out = {}
    scenario, seen = flow("all good")
    agent = FlakyAgent([])
    out["all_good"] = describe(await scenario.run(target=agent))
    out["all_good_calls"] = [agent.calls, seen]

    scenario, seen = flow("second step fails")
    agent = FlakyAgent([2])
    out["second_fails"] = describe(await scenario.run(target=agent))
    out["second_fails_calls"] = agent.calls

    scenario, seen = flow("first step fails")
    agent = FlakyAgent([1])
    out["first_fails"] = describe(await scenario.run(target=agent))
    out["first_fails_seen"] = seen

    for runs, bad in [(3, []), (3, [5]), (4, [4]), (1, [1])]:
        scenario, seen = flow(f"runs {runs}")
        agent = FlakyAgent(bad)
        result = await scenario.run(target=agent, multiple_runs=runs)
        out[f"multiple_runs:{runs}:{bad}"] = [describe(result), agent.calls, seen]

    scenario, _ = flow("default runs")
    scenario = Scenario("preset", multiple_runs=2)
    scenario = scenario.interact(inputs="x").check(StringMatching(keyword="ok"))
    agent = FlakyAgent([])
    out["preset_runs"] = [describe(await scenario.run(target=agent)), agent.calls]
    for bad in (0, -1, "2"):
        try:
            await scenario.run(target=agent, multiple_runs=bad)
            out[f"bad_runs:{bad!r}"] = "accepted"
        except Exception as exc:
            out[f"bad_runs:{bad!r}"] = type(exc).__name__
    try:
        Scenario("bad", multiple_runs=0)
        out["bad_preset"] = "accepted"
    except Exception as exc:
        out["bad_preset"] = type(exc).__name__

    checks_only = Scenario("checks only").check(FnCheck(fn=lambda t: t.last is None, name="empty"))
    out["checks_only"] = describe(await checks_only.run())
    nothing = Scenario("nothing")
    out["nothing"] = describe(await nothing.run())
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
