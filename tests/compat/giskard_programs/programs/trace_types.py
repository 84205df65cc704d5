"""A custom trace type with computed properties that checks address by path, scenario
annotations, interaction metadata built per turn, `resolve` on the final trace, and a
multi-turn stateful agent whose checks read the whole history."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    GreaterThanEquals,
    LessThan,
    Scenario,
    StringMatching,
    Trace,
    resolve,
)
from pydantic import computed_field


class ChatTrace(Trace[str, str]):
    @computed_field
    @property
    def transcript(self) -> str:
        return "\n".join(f"U: {i.inputs}\nA: {i.outputs}" for i in self.interactions)

    @computed_field
    @property
    def turns(self) -> int:
        return len(self.interactions)


class PlainTrace(Trace[str, str]):
    @property
    def shouted(self) -> str:  # a plain property, not a computed field
        return str(self.last.outputs).upper()


class Agent:
    """Remembers the user's name across turns."""

    def __init__(self):
        self.name = None

    def __call__(self, trace, inputs):
        if inputs.startswith("I am "):
            self.name = inputs[5:]
            return f"Nice to meet you, {self.name}."
        if inputs == "who am I?":
            return f"You are {self.name}." if self.name else "I don't know."
        return f"({trace.turns} earlier turns) ok"


def describe(result):
    return {
        "status": result.status.value,
        "trace_type": type(result.final_trace).__name__,
        "results": [[r.status.value, r.message] for s in result.steps for r in s.results],
        "metadata": [i.metadata for i in result.final_trace.interactions],
        "annotations": result.final_trace.annotations,
    }


async def main():
    out = {}
    agent = Agent()
    scenario = (
        Scenario("memory", trace_type=ChatTrace)
        .with_annotations({"persona": "returning customer"})
        .interact(inputs="I am Zoé", outputs=agent, metadata={"channel": "web"})
        .check(StringMatching(keyword="Zoé"))
        .interact(inputs="who am I?", outputs=agent, metadata={"channel": "web", "turn": 2})
        .check(Equals(expected_value="You are Zoé."))
        .check(StringMatching(keyword="U: I am Zoé", target_key="trace.transcript"))
        .check(GreaterThanEquals(expected_value=2, target_key="trace.turns"))
        .check(LessThan(expected_value=3, target_key="trace.turns", name="few turns"))
        .check(Equals(expected_value="returning customer", target_key="trace.annotations.persona"))
        .check(FnCheck(fn=lambda t: isinstance(t, ChatTrace), name="is ChatTrace"))
        .interact(inputs="anything else?", outputs=agent)
        .check(Equals(expected_value="(2 earlier turns) ok"))
    )
    result = await scenario.run()
    out["memory"] = describe(result)
    final = result.final_trace
    for key in (
        "trace.turns",
        "trace.last.outputs",
        "trace.interactions[0].metadata.channel",
        "trace.interactions[-1].inputs",
        "trace.interactions[*].metadata.channel",
        "trace.annotations",
        "trace.nothing_here",
        "trace.interactions[1].metadata.turn",
    ):
        try:
            out[f"resolve:{key}"] = resolve(final, key)
        except Exception as exc:
            out[f"resolve:{key}"] = ["raised", type(exc).__name__]
    out["transcript"] = final.transcript
    plain = Scenario("plain").interact(inputs="a", outputs="b")
    out["plain_type"] = type((await plain.run()).final_trace).__name__
    wrong = (
        Scenario("wrong path")
        .interact(inputs="a", outputs="b")
        .check(Equals(expected_value=1, target_key="trace.turns"))
    )
    out["wrong"] = describe(await wrong.run())
    plain_property = (
        Scenario("plain property", trace_type=PlainTrace)
        .interact(inputs="a", outputs="b")
        .check(Equals(expected_value="B", target_key="trace.shouted"))
    )
    out["plain_property"] = describe(await plain_property.run())
    out["dump_keys"] = sorted(final.model_dump())
    print(
        json.dumps(
            out, sort_keys=True, ensure_ascii=False, default=lambda o: ["object", type(o).__name__]
        )
    )


asyncio.run(main())
