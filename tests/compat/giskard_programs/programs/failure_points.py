"""Where a scenario can break and what the user reads afterwards: inputs that raise (plain
callable, sync and async generators, mid-conversation), outputs that raise, a spec that
raises before yielding, in the first or a later step; with and without return_exception."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    InteractionSpec,
    Scenario,
    StringMatching,
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


def build(name, first, second=None):
    scenario = Scenario(name)
    scenario = first(scenario).check(StringMatching(keyword="echo", name="first check"))
    if second is not None:
        scenario = second(scenario).check(Equals(expected_value="never", name="second check"))
    return scenario


CASES = {
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


def describe(result):
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
    for name, (first, second) in CASES.items():
        scenario = build(name, first, second)
        out[name] = describe(await scenario.run(return_exception=True))
        try:
            await build(name, first, second).run()
            out[f"{name}:raises"] = None
        except Exception as exc:
            out[f"{name}:raises"] = [type(exc).__name__, str(exc)]
    checks_after = (
        Scenario("check raises then more")
        .interact(inputs="x", outputs=echo)
        .check(FnCheck(fn=lambda t: [][1], name="index"))
        .check(StringMatching(keyword="echo"))
        .interact(inputs="y", outputs=echo)
        .check(StringMatching(keyword="echo"))
    )
    out["check_raises"] = describe(await checks_after.run(return_exception=True))
    try:
        await checks_after.run()
        out["check_raises:raises"] = None
    except Exception as exc:
        out["check_raises:raises"] = [type(exc).__name__, str(exc)]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
