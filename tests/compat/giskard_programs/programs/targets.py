"""Targets as users wire them: sync and async agents, one that reads the trace, one that
returns None, one that raises, a slow one under the user's own timeout, a target on the
scenario overridden at run time, and what `return_exception` changes."""

import asyncio
import json

from giskard.checks import Equals, FnCheck, Scenario, StringMatching, Trace  # IMPORT


class Bank:
    def __init__(self):
        self.calls = []

    def answer(self, inputs):
        self.calls.append(inputs)
        if "balance" in inputs:
            return {"reply": "Your balance is 42 EUR", "intent": "balance"}
        return {"reply": "I can only help with balances", "intent": "other"}

    async def answer_async(self, inputs):
        await asyncio.sleep(0)
        return self.answer(inputs)


def none_target(inputs):
    return None


def raising_target(inputs):
    raise ConnectionError(f"backend down for {inputs!r}")


async def slow_target(inputs):
    await asyncio.sleep(5)
    return "too late"


def with_history(trace, inputs):
    return f"turn {len(trace.interactions) + 1}: {inputs}"


def describe(result):
    return {
        "status": result.status.value,
        "passed": result.passed,
        "failed": result.failed,
        "errored": result.errored,
        "skipped": result.skipped,
        "runs_executed": result.runs_executed,
        "steps": [
            {
                "status": s.status.value,
                "error": None
                if s.error is None
                else [s.error.phase, s.error.exception_type, s.error.message],
                "results": [[r.status.value, r.message] for r in s.results],
                "failures": s.format_failures(),
            }
            for s in result.steps
        ],
        "outputs": [i.outputs for i in result.final_trace.interactions],
    }


def bank_scenario(name):
    return (
        Scenario(name)
        .interact(inputs="what is my balance?")
        .check(Equals(target_key="trace.last.outputs.intent", expected_value="balance"))
        .check(StringMatching(keyword="42", target_key="trace.last.outputs.reply"))
        .interact(inputs="open an account")
        .check(Equals(target_key="trace.last.outputs.intent", expected_value="other"))
    )


async def main():
    out = {}
    bank = Bank()
    out["sync"] = describe(await bank_scenario("sync").run(target=bank.answer))
    out["async"] = describe(await bank_scenario("async").run(target=bank.answer_async))
    out["calls"] = bank.calls
    out["on_scenario"] = describe(await bank_scenario("on scenario").with_target(bank.answer).run())
    out["overridden"] = describe(
        await bank_scenario("overridden").with_target(none_target).run(target=bank.answer)
    )
    none_scenario = (
        Scenario("none")
        .interact(inputs="hello", outputs=none_target)
        .check(FnCheck(fn=lambda t: t.last.outputs is None, name="is none"))
        .check(Equals(expected_value=None))
        .check(StringMatching(keyword="x"))
    )
    out["none"] = describe(await none_scenario.run(return_exception=True))
    raising = (
        Scenario("raising")
        .interact(inputs="ping", outputs=raising_target)
        .check(FnCheck(fn=lambda t: True, name="after"))
    )
    out["raising"] = describe(await raising.run(return_exception=True))
    try:
        await raising.run()
        out["raising_default"] = "returned"
    except Exception as exc:
        out["raising_default"] = [type(exc).__name__, str(exc)]
    history = (
        Scenario("history")
        .interact(inputs="a", outputs=with_history)
        .interact(inputs="b", outputs=with_history)
        .check(Equals(expected_value="turn 2: b"))
    )
    out["history"] = describe(await history.run())
    out["for_target"] = type(Trace.for_target(with_history)).__name__

    slow = (
        Scenario("slow").interact(inputs="x", outputs=slow_target).check(Equals(expected_value="x"))
    )
    try:
        await asyncio.wait_for(slow.run(), timeout=0.2)
        out["slow"] = "finished"
    except TimeoutError:
        out["slow"] = "timed out"
    missing = Scenario("no target").interact(inputs="x").check(Equals(expected_value="x"))
    result = await missing.run(return_exception=True)
    out["no_target"] = [
        result.status.value,
        [s.error.exception_type if s.error else None for s in result.steps],
    ]
    try:
        await missing.run()
        out["no_target_raises"] = "returned"
    except Exception as exc:
        out["no_target_raises"] = type(exc).__name__
        out["no_target_is_value_error"] = isinstance(exc, ValueError)
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
