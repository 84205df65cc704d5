"""Targets as users wire them: sync and async agents, one that reads the trace, one that
returns None, one that raises, a slow one under the user's own timeout, a target on the
scenario overridden at run time, and what `return_exception` changes; then every place a
scenario can break (inputs, sync and async input generators, outputs, a spec, a check; in
the first or a later step) and what the user reads afterwards."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    InteractionSpec,
    Scenario,
    StringMatching,
    Trace,
)


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


def bad_inputs(trace):
    raise LookupError("no such customer")


def gen_breaks(trace):
    yield "first question"
    raise KeyError("session expired")


async def agen_breaks(trace):
    yield "hello"
    yield "again"
    raise TimeoutError("user simulator timed out")


def bad_outputs(inputs):
    raise ConnectionResetError(f"agent dropped {inputs!r}")


class FailsAtOnce(InteractionSpec):
    async def generate(self, trace):
        raise PermissionError("not allowed")
        yield


def echo(inputs):
    return f"echo {inputs}"


def breaking(name, first, second=None):
    scenario = Scenario(name)
    scenario = first(scenario).check(StringMatching(keyword="echo", name="first check"))
    if second is not None:
        scenario = second(scenario).check(Equals(expected_value="never", name="second check"))
    return scenario


BREAKS = {
    "inputs_raise": (lambda s: s.interact(inputs=bad_inputs, outputs=echo), None),
    "gen_breaks": (lambda s: s.interact(inputs=gen_breaks, outputs=echo), None),
    "agen_breaks": (lambda s: s.interact(inputs=agen_breaks, outputs=echo), None),
    "outputs_raise": (lambda s: s.interact(inputs="hi", outputs=bad_outputs), None),
    "spec_fails": (lambda s: s.add_interaction(FailsAtOnce()), None),
    "second_step_outputs": (
        lambda s: s.interact(inputs="hi", outputs=echo),
        lambda s: s.interact(inputs="again", outputs=bad_outputs),
    ),
    "second_step_inputs": (
        lambda s: s.interact(inputs="hi", outputs=echo),
        lambda s: s.interact(inputs=bad_inputs, outputs=echo),
    ),
    "static_after_error": (
        lambda s: s.interact(inputs="hi", outputs=bad_outputs),
        lambda s: s.add_interaction(FailsAtOnce()),
    ),
}


def broken_outcome(result):
    return {
        "status": result.status.value,
        "steps": [
            {
                "status": s.status.value,
                "error": None
                if s.error is None
                else [
                    s.error.phase,
                    s.error.exception_type,
                    s.error.message,
                    "Traceback" in (s.error.traceback or ""),
                ],
                "results": [[r.status.value, r.message] for r in s.results],
            }
            for s in result.steps
        ],
        "trace": [[i.inputs, i.outputs] for i in result.final_trace.interactions],
    }


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
    bare = await Scenario("no target, no checks").interact(inputs="x").run(return_exception=True)
    out["no_target_no_checks"] = [
        [r.status.value, r.message, r.details.get("check_kind"), r.details.get("check_name")]
        for r in bare.steps[0].results
    ]
    try:
        await missing.run()
        out["no_target_raises"] = "returned"
    except Exception as exc:
        out["no_target_raises"] = type(exc).__name__
        out["no_target_is_value_error"] = isinstance(exc, ValueError)
    for name, (first, second) in BREAKS.items():
        scenario = breaking(name, first, second)
        out[f"break:{name}"] = broken_outcome(await scenario.run(return_exception=True))
        try:
            await breaking(name, first, second).run()
            out[f"break:{name}:raises"] = None
        except Exception as exc:
            out[f"break:{name}:raises"] = [type(exc).__name__, str(exc)]
    checks_after = (
        Scenario("check raises then more")
        .interact(inputs="x", outputs=echo)
        .check(FnCheck(fn=lambda t: [][1], name="index"))
        .check(StringMatching(keyword="echo"))
        .interact(inputs="y", outputs=echo)
        .check(StringMatching(keyword="echo"))
    )
    out["break:check_raises"] = broken_outcome(await checks_after.run(return_exception=True))
    try:
        await checks_after.run()
        out["break:check_raises:raises"] = None
    except Exception as exc:
        out["break:check_raises:raises"] = [type(exc).__name__, str(exc)]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
