"""Things users do across runs: one scenario object reused in two suites and run twice,
a scenario changed after being appended, a copy branched into variants, and a
conversation driven by an input generator that stops when the agent says goodbye."""

import asyncio
import json

from giskard.checks import Equals, FnCheck, Interact, Scenario, StringMatching, Suite  # IMPORT


def agent(inputs):
    if "bye" in inputs:
        return "Goodbye!"
    return f"echo {inputs}"


async def user(trace):
    """Asks until the agent says goodbye (at most five turns)."""
    for n in range(5):
        word = "bye" if n == 2 else f"question {n}"
        trace = yield word
        if "Goodbye" in trace.last.outputs:
            return


def outline(result):
    return [result.scenario_name, result.status.value, len(result.final_trace.interactions)] + [
        r.status.value for s in result.steps for r in s.results
    ]


async def main():
    out = {}
    shared = Scenario("shared").interact(inputs="hi").check(StringMatching(keyword="echo"))
    first, second = Suite(name="first", target=agent), Suite(name="second", target=agent)
    first.append(shared)
    second.append(shared)
    shared.check(Equals(expected_value="echo hi", name="added later"))
    r1 = await first.run(verbose=False)
    r2 = await second.run(verbose=False)
    out["shared"] = [outline(r) for r in r1.results + r2.results]
    again = await shared.run(target=agent)
    out["shared_rerun"] = outline(again)
    out["shared_steps"] = [len(s.checks) for s in shared.steps]

    branch = shared.model_copy(deep=True)
    branch.check(Equals(expected_value="nope", name="only in branch"))
    out["branch"] = [
        outline(await branch.run(target=agent)),
        outline(await shared.run(target=agent)),
    ]

    conversation = (
        Scenario("conversation")
        .interact(inputs=user, outputs=agent)
        .check(FnCheck(fn=lambda t: len(t.interactions) == 3, name="three turns"))
        .check(Equals(expected_value="Goodbye!"))
    )
    result = await conversation.run()
    out["conversation"] = outline(result)
    out["conversation_inputs"] = [i.inputs for i in result.final_trace.interactions]
    out["conversation_twice"] = outline(await conversation.run())

    spec = Interact(inputs=user, outputs=agent)
    two = Scenario("spec twice").add_interaction(spec).add_interaction(spec)
    result = await two.run()
    out["spec_twice"] = [i.inputs for i in result.final_trace.interactions]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
