"""Checks from plain functions, the quickest thing a user writes: from_fn and FnCheck with
sync and async functions, returning bools, CheckResults or odd values, raising, with
custom messages and details, composed with AllOf / AnyOf / Not."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    AllOf,
    AnyOf,
    CheckResult,
    FnCheck,
    Interaction,
    Not,
    Scenario,
    Trace,
    from_fn,
)


def short(trace):
    return len(trace.last.outputs) < 20


async def async_has_price(trace):
    await asyncio.sleep(0)
    return "€" in trace.last.outputs


def graded(trace):
    score = trace.last.outputs.count("!")
    if score > 2:
        return CheckResult.failure(message=f"{score} exclamation marks", details={"score": score})
    return CheckResult.success(message="calm enough", details={"score": score})


def returns_none(trace):
    return None


def returns_string(trace):
    return "yes"


def returns_zero(trace):
    return 0


def raises(trace):
    raise ZeroDivisionError("division by zero in user code")


CHECKS = {
    "short": from_fn(short, name="short answer"),
    "short_msgs": from_fn(short, success_message="nice and short", failure_message="too long!"),
    "price": from_fn(async_has_price, name="has price", details={"currency": "EUR"}),
    "graded": from_fn(graded),
    "none": from_fn(returns_none, name="none"),
    "string": from_fn(returns_string, name="string"),
    "zero": from_fn(returns_zero, name="zero"),
    "fn_check": FnCheck(fn=short, name="via FnCheck", failure_message="nope"),
    "lambda": FnCheck(fn=lambda trace: trace.last.inputs == "price?"),
    "all_of": AllOf(checks=[from_fn(short), from_fn(async_has_price)], name="short and priced"),
    "any_of": AnyOf(checks=[from_fn(returns_zero), from_fn(async_has_price)]),
    "not_short": Not(check=from_fn(short, name="short")),
    "not_graded": Not(check=from_fn(graded)),
    "nested": AllOf(checks=[AnyOf(checks=[from_fn(short)]), Not(check=from_fn(returns_zero))]),
}


def describe(result):
    return {
        "status": result.status.value,
        "message": result.message,
        "details": {
            k: v for k, v in result.details.items() if k not in ("traceback", "duration_ms")
        },
    }


async def main():
    out = {}
    answers = {
        "calm": "It costs 5 €.",
        "loud": "It costs 5 €!!! Buy now!!! Really, it is the best deal of the year!",
    }
    for label, answer in answers.items():
        trace = await Trace.from_interactions(Interaction(inputs="price?", outputs=answer))
        for name, check in CHECKS.items():
            try:
                out[f"{label}:{name}"] = describe(await check.run(trace))
            except Exception as exc:
                out[f"{label}:{name}"] = ["raised", type(exc).__name__]
    try:
        trace = await Trace.from_interactions(Interaction(inputs="a", outputs="b"))
        out["raises_direct"] = describe(await from_fn(raises, name="raises").run(trace))
    except Exception as exc:
        out["raises_direct"] = ["raised", type(exc).__name__]
    scenario = Scenario("fn in scenario").interact(inputs="price?", outputs="It costs 5 €.")
    for check in [*CHECKS.values(), from_fn(raises, name="raises")]:
        scenario = scenario.check(check)
    result = await scenario.run(return_exception=True)
    out["scenario"] = [result.status.value, [describe(r) for r in result.steps[0].results]]
    out["names"] = {name: check.name for name, check in CHECKS.items()}
    out["kinds"] = {name: check.kind for name, check in CHECKS.items()}
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
