"""Mocked outputs for steps whose inputs are not plain JSON, from a trace as Veval stores it.

Follows the veval-sdk 1.4.0 README, section "Replay and snapshot testing" (each call gets
the recorded step with the same name and an identical input, else the next unused one,
reported as diverged in the fidelity), the ``load_mock_outputs`` note ("live_model_steps:
run steps recorded as llm for real and serve every other step") and section "Test SDK"
(``with_replay(trace)`` then a run). A trace is stored as the SDK sends it, JSON written
with ``default=str``: a datetime, a dataclass, a UUID or a Decimal step input is kept as
its text. The agent calls its steps with those objects again, and once with a changed one.
"""

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from veval import ReplayOptions, TraceData, VevalOptions, VevalTestSdk  # IMPORT

sdk = VevalTestSdk(VevalOptions(api_key="vk_test"))  # CLIENT


@dataclass
class Order:
    order_id: int
    region: str


WHEN = datetime(2024, 5, 1, 9, 30)
TICKET = uuid.UUID("12345678-1234-5678-1234-567812345678")
ORDER = Order(42, "EU")


def recorded(name, input, output):
    return {
        "step_id": f"s_{name}",
        "name": name,
        "type": "tool",
        "input": input,
        "output": output,
        "status": "success",
    }


def sent(value):
    """What the SDK puts on the wire for a step input."""
    return json.loads(json.dumps(value, default=str))


RECORDING = {
    "trace_id": "tr_rich",
    "agent_name": "billing",
    "input": "refund order 42",
    "output": "done",
    "status": "success",
    "steps": [
        recorded("schedule", sent(WHEN), "slot 9:30"),
        recorded("load_order", sent(ORDER), {"total": "19.99"}),
        recorded("open_ticket", sent({"ticket": TICKET, "at": WHEN}), "ticket opened"),
        recorded("refund", sent(Decimal("19.99")), "refunded"),
        recorded("notify", sent([ORDER, "sms"]), "sent"),
    ],
}


def agent_with(when=WHEN, order=ORDER, amount=Decimal("19.99")):
    def agent(ctx):
        slot = ctx.track_step("schedule", when, lambda: "live slot")
        details = ctx.track_step("load_order", order, lambda: {"total": "0"})
        ticket = ctx.track_step("open_ticket", {"at": when, "ticket": TICKET}, lambda: "live")
        refund = ctx.track_step("refund", amount, lambda: "live refund")
        notified = ctx.track_step("notify", (order, "sms"), lambda: "live notify")
        return [slot, details, ticket, refund, notified]

    return agent


def bindings(fidelity):
    return {
        "counts": [fidelity.matched, fidelity.diverged, fidelity.live, fidelity.is_faithful],
        "kinds": [(b.step_name, b.kind, b.recorded_index) for b in fidelity.bindings],
        "unused": [u.step_name for u in fidelity.unused],
    }


async def replayed(agent):
    replay = await sdk.replay_async(
        TraceData.from_dict(RECORDING), agent, ReplayOptions(mock_llm_responses=True)
    )
    return {
        "passed": replay.passed,
        "failures": replay.failures,
        "output": replay.output,
        "fidelity": bindings(replay.fidelity),
    }


async def main():
    result = {
        "same objects": await replayed(agent_with()),
        "later date": await replayed(agent_with(when=datetime(2024, 5, 2, 9, 30))),
        "other order": await replayed(agent_with(order=Order(43, "EU"))),
        "amount as float": await replayed(agent_with(amount=19.99)),
    }
    seen = {}

    def wrapper(ctx):
        seen["ctx"] = ctx
        ctx.load_mock_outputs(TraceData.from_dict(RECORDING))
        return agent_with()(ctx)

    output = await sdk.run_async("billing", wrapper, input="refund order 42")
    result["load_mock_outputs"] = {
        "output": output,
        "fidelity": bindings(seen["ctx"].replay_fidelity),
    }
    sdk.with_replay(TraceData.from_dict(RECORDING))
    seen.clear()

    def plain(ctx):
        seen["ctx"] = ctx
        return agent_with()(ctx)

    output = await sdk.run_async("billing", plain, input="another input")
    result["with_replay"] = {"output": output, "fidelity": bindings(seen["ctx"].replay_fidelity)}
    return result


print(json.dumps(asyncio.run(main()), default=str))
