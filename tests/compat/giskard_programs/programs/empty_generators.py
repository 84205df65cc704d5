"""Input generators that yield nothing, written as the "Simulate Users" how-to
(oss/checks/how-to/simulate-users: ``UserSimulator(persona=..., max_steps=...)`` as the
inputs of ``.interact()``) and the "Generators" reference (a custom ``InputGenerator``) and
``Interact``'s documented input forms (an async generator function, a generator, a callable)
describe them: what a scenario, a suite and its JUnit XML say when one yields no input, with
checks after it or none. Offline: ``max_steps=0`` never asks the simulator's model, and the
other generators need none."""

import asyncio
import json
import xml.etree.ElementTree as ET

from giskard.checks import Equals, FnCheck, Scenario, Suite  # IMPORT
from giskard.checks.core.input_generator import InputGenerator  # IMPORT
from giskard.checks.generators.user import UserSimulator  # IMPORT


@InputGenerator.register("silent_customer")
class SilentCustomer(InputGenerator):
    """A custom generator whose customer has nothing to say."""

    lines: tuple[str, ...] = ()

    async def __call__(self, trace, input_type=None):
        for line in self.lines:
            trace = yield line  # noqa: F841 (the updated trace, unused: it never speaks)


async def nothing_async(trace):
    if len(trace.interactions) > 99:
        yield "never"


def nothing_sync(trace):
    if len(trace.interactions) > 99:
        yield "never"


async def two_async():
    yield "first"
    yield "second"


async def _empty_async():
    for message in []:
        yield message


def shop_agent(inputs):
    return f"shop: {inputs}"


FORMS = {
    "async_function": lambda: nothing_async,
    "sync_function": lambda: nothing_sync,
    "generator_object": lambda: (m for m in []),
    "async_generator_object": lambda: _empty_async(),
    "callable_returning_generator": lambda: lambda: (m for m in []),
    "simulator_max_steps_0": lambda: UserSimulator(persona="a shopper", max_steps=0),
    "custom_generator": lambda: SilentCustomer(),
}


def shape(result):
    return {
        "status": str(result.status),
        "passed": result.passed,
        "interactions": len(result.final_trace.interactions),
        "steps": [
            {
                "status": str(step.status),
                "checks": [[str(c.status), c.message] for c in step.results],
                "error": None if step.error is None else step.error.message[:40],
            }
            for step in result.steps
        ],
    }


def variants(form):
    make = FORMS[form]
    return {
        "bare": Scenario(f"{form} bare").interact(inputs=make(), outputs=shop_agent),
        "fn_check": Scenario(f"{form} fn")
        .interact(inputs=make(), outputs=shop_agent)
        .check(FnCheck(fn=lambda trace: len(trace.interactions) == 0, name="none happened")),
        "needs_last": Scenario(f"{form} last")
        .interact(inputs=make(), outputs=shop_agent)
        .check(Equals(target_key="trace.last.outputs", expected_value="shop: hi")),
        "then_static": Scenario(f"{form} then")
        .interact(inputs=make(), outputs=shop_agent)
        .interact(inputs="hi", outputs=shop_agent)
        .check(Equals(target_key="trace.last.outputs", expected_value="shop: hi")),
        "after_static": Scenario(f"{form} after")
        .interact(inputs="hi", outputs=shop_agent)
        .check(Equals(target_key="trace.last.outputs", expected_value="shop: hi"))
        .interact(inputs=make(), outputs=shop_agent)
        .check(FnCheck(fn=lambda trace: len(trace.interactions) == 1, name="still one")),
    }


def junit(result):
    root = ET.fromstring(result.to_junit_xml())
    keep = ("tests", "failures", "errors", "skipped")
    cases = {}
    for case in root.iter("testcase"):
        final = None
        for prop in case.iter("property"):
            if prop.get("name") == "final_trace":
                final = len(json.loads(prop.get("value"))["interactions"])
        cases[case.get("name")] = {
            "children": sorted({child.tag for child in case}),
            "final_interactions": final,
        }
    return {"root": {k: root.get(k) for k in keep}, "cases": cases}


async def main():
    out = {}
    simulator = UserSimulator(persona="a shopper", max_steps=0)
    dump = simulator.model_dump()
    out["simulator"] = {"max_steps": simulator.max_steps, "dumped": dump["max_steps"]}
    for form in FORMS:
        out[form] = {}
        for name, scenario in variants(form).items():
            try:
                out[form][name] = shape(await scenario.run(return_exception=True))
            except Exception as exc:
                out[form][name] = type(exc).__name__

    # no outputs and no target: nothing to answer, and nothing asked
    unanswered = await Scenario("unanswered").interact(inputs=nothing_async).run()
    out["no_target"] = shape(unanswered)
    repeated = Scenario("repeated", multiple_runs=3).interact(inputs=nothing_sync, outputs="o")
    out["multiple_runs"] = shape(await repeated.run()) | {
        "runs": (await repeated.run()).runs_executed
    }

    # a non-empty generator object is iterated, one interaction per input
    iterated = await Scenario("iterated").interact(inputs=two_async(), outputs=shop_agent).run()
    out["iterated"] = [i.outputs for i in iterated.final_trace.interactions]

    # the how-to's shape, a suite of them, and its JUnit XML
    suite = Suite(name="empty inputs", target=shop_agent)
    suite.append(Scenario("silent simulator").interact(inputs=simulator))
    suite.append(
        Scenario("silent then checked")
        .interact(inputs=nothing_async)
        .check(FnCheck(fn=lambda trace: True, name="anything"))
    )
    suite.append(
        Scenario("silent then needs a turn")
        .interact(inputs=SilentCustomer())
        .check(Equals(target_key="trace.last.outputs", expected_value="shop: hi"))
    )
    suite.append(Scenario("talks").interact(inputs="hi").check(Equals(expected_value="shop: hi")))
    result = await suite.run(return_exception=True, verbose=False)
    out["suite"] = {
        "statuses": [str(r.status) for r in result.results],
        "interactions": [len(r.final_trace.interactions) for r in result.results],
        "passed": [r.passed for r in result.results],
        "junit": junit(result),
    }
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
