"""Custom interaction specs: a scripted conversation from an async generator that reads the
updated trace, a sync-looking spec, one that yields nothing, one that breaks halfway, and
checks that read metadata and trace paths."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    Interact,
    Interaction,
    InteractionSpec,
    Scenario,
    StringMatching,
    Trace,
)


@InteractionSpec.register("scripted_chat")
class ScriptedChat(InteractionSpec):
    """Replays user turns; the bot's answer counts the turns it has seen."""

    turns: list[str]

    async def generate(self, trace):
        for turn in self.turns:
            seen = len(trace.interactions)
            trace = yield Interaction(
                inputs=turn,
                outputs=f"[{seen}] you said {turn!r}",
                metadata={"turn": seen, "tokens": len(turn.split())},
            )


class Silent(InteractionSpec):
    async def generate(self, trace):
        return
        yield  # an async generator that yields nothing


class BreaksHalfway(InteractionSpec):
    async def generate(self, trace):
        yield Interaction(inputs="one", outputs="fine")
        raise RuntimeError("lost connection")


def describe(result):
    return {
        "status": result.status.value,
        "steps": [
            {
                "status": s.status.value,
                "error": None
                if s.error is None
                else [s.error.phase, s.error.exception_type, s.error.message],
                "results": [[r.status.value, r.message] for r in s.results],
            }
            for s in result.steps
        ],
        "trace": [[i.inputs, i.outputs, i.metadata] for i in result.final_trace.interactions],
    }


async def main():
    out = {}
    chat = ScriptedChat(turns=["hello", "what is my order status", "bye"])
    trace = await Trace.from_interactions(chat, Interaction(inputs="x", outputs="y"))
    out["from_interactions"] = [[i.inputs, i.outputs, i.metadata] for i in trace.interactions]
    out["last"] = [trace.last.inputs, trace.last.outputs]
    out["empty_last"] = Trace().last is None

    scenario = (
        Scenario("scripted")
        .add_interaction(chat)
        .check(FnCheck(fn=lambda t: len(t.interactions) == 3, name="three turns"))
        .check(Equals(target_key="trace.last.metadata.turn", expected_value=2, name="turn index"))
        .check(Equals(target_key="trace.interactions[1].metadata.tokens", expected_value=5))
        .check(StringMatching(keyword="bye", target_key="trace.last.outputs"))
        .check(StringMatching(keyword="BYE", case_sensitive=False))
        .add_interaction(Silent())
        .check(FnCheck(fn=lambda t: len(t.interactions) == 3, name="silent added nothing"))
        .extend(Interact(inputs="after", outputs=lambda inputs: inputs.upper()))
        .check(Equals(expected_value="AFTER"))
    )
    out["scripted"] = describe(await scenario.run(return_exception=True))

    broken = (
        Scenario("broken")
        .add_interaction(BreaksHalfway())
        .check(FnCheck(fn=lambda t: True, name="never reached"))
    )
    out["broken"] = describe(await broken.run(return_exception=True))
    try:
        await broken.run()
        out["broken_raises"] = "no"
    except Exception as exc:
        out["broken_raises"] = type(exc).__name__

    only_silent = (
        Scenario("silent only")
        .add_interaction(Silent())
        .check(FnCheck(fn=lambda t: t.last is None, name="no turn"))
    )
    out["silent_only"] = describe(await only_silent.run(return_exception=True))

    out["kind"] = chat.kind
    dumped = chat.model_dump(mode="json")
    out["dump"] = dumped
    again = InteractionSpec.model_validate(dumped)
    out["reloaded"] = [type(again).__name__, again.turns]

    def inputs_from_history(trace):
        return f"question #{len(trace.interactions) + 1}"

    def sync_gen(trace):
        trace = yield "first"
        yield f"second, after {len(trace.interactions)}"

    async def async_gen(trace):
        yield "a"
        yield "b"

    gen_scenario = (
        Scenario("generated inputs")
        .interact(inputs=inputs_from_history, outputs=lambda inputs: inputs[::-1])
        .interact(
            inputs=sync_gen, outputs=lambda trace, inputs: f"{len(trace.interactions)}:{inputs}"
        )
        .interact(inputs=async_gen, outputs=lambda inputs: inputs * 2)
        .check(FnCheck(fn=lambda t: len(t.interactions) == 5, name="five"))
    )
    out["generated_inputs"] = describe(await gen_scenario.run(return_exception=True))
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
