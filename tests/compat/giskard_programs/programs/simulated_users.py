"""Simulated users as the "Simulate Users" how-to (oss/checks/how-to/simulate-users) and the
"Generators" reference write them: ``UserSimulator`` from generators.user with a persona and
``max_steps``, each turn's ``LLMGeneratorOutput`` (generators.base), the goal-oriented
check of ``final_trace.last.metadata.get("simulator_output")``, and a custom
``InputGenerator`` (core.input_generator). Offline: the scripted user needs no model, and
the simulator's model is one no client knows, so it fails before any request."""

import asyncio
import json

from giskard.agents.generators import Generator  # IMPORT
from giskard.checks import FnCheck, Scenario  # IMPORT
from giskard.checks.core.input_generator import InputGenerator  # IMPORT
from giskard.checks.generators.base import LLMGeneratorOutput  # IMPORT
from giskard.checks.generators.user import UserSimulator  # IMPORT


@InputGenerator.register("scripted_customer")
class ScriptedCustomer(InputGenerator):
    """A user who says its lines in order, whatever the agent answers."""

    lines: list[str]

    async def __call__(self, trace, input_type=None):
        for line in self.lines:
            trace = yield line  # noqa: F841 (the updated trace, unused by a script)


def support_agent(message: str) -> str:
    """Stub support agent, as the how-to's."""
    if "98765" in message:
        return "Your order #98765 is in transit and arrives tomorrow."
    return "Could you give me your order number?"


def error_text(make):
    try:
        make()
    except Exception as exc:
        return type(exc).__name__
    return "accepted"


def goal(result):
    """The how-to's goal-oriented reading of the last turn."""
    last = result.final_trace.interactions[-1] if result.final_trace.interactions else None
    output = None if last is None else last.metadata.get("simulator_output")
    if isinstance(output, LLMGeneratorOutput):
        return [output.goal_reached, output.message]
    return None


async def main():
    out = {}
    turn = LLMGeneratorOutput[str](goal_reached=False, message="Where is order #98765?")
    done = LLMGeneratorOutput[str](goal_reached=True)
    out["outputs"] = [turn.model_dump(), done.model_dump()]
    out["output_errors"] = {
        "both": error_text(
            lambda: LLMGeneratorOutput[str](goal_reached=False, message="x", schema_issue="y")
        ),
        "no_goal": error_text(lambda: LLMGeneratorOutput[str](message="x")),
        "validated": LLMGeneratorOutput[str]
        .model_validate({"goal_reached": False, "message": "Hi"})
        .message,
    }

    customer = UserSimulator(
        persona="You are a customer tracking order #98765; stop when told where it is.",
        max_steps=8,
    )
    out["simulator"] = {
        "kind": customer.kind,
        "max_steps": customer.max_steps,
        "max_retries": customer.max_retries,
        "context": customer.context,
        "is_input_generator": isinstance(customer, InputGenerator),
        "empty_persona": error_text(lambda: UserSimulator(persona="")),
        "typo": error_text(lambda: UserSimulator(persona="p", max_step=2)),
    }

    scripted = ScriptedCustomer(lines=["Hello", "My order is #98765"])
    result = await (
        Scenario("scripted_support")
        .interact(inputs=scripted, outputs=lambda inputs: support_agent(inputs))
        .check(FnCheck(fn=lambda trace: "transit" in trace.last.outputs, name="located"))
        .run()
    )
    out["scripted"] = {
        "status": result.status.value,
        "turns": [[i.inputs, i.outputs] for i in result.final_trace.interactions],
        "metadata": [i.metadata for i in result.final_trace.interactions],
        "goal": goal(result),
    }

    unreachable = UserSimulator(
        persona="A customer.", max_steps=2, generator=Generator(model="offline/none")
    )
    result = await (
        Scenario("unreachable_model")
        .interact(inputs=unreachable, outputs=lambda inputs: support_agent(inputs))
        .check(FnCheck(fn=lambda trace: True, name="anything"))
        .run(return_exception=True)
    )
    out["unreachable"] = {
        "status": result.status.value,
        "turns": len(result.final_trace.interactions),
        "goal": goal(result),
    }
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
