from __future__ import annotations

import json
from typing import Any

import pytest

from scenarist.model.veval_wire import from_veval, to_veval
from scenarist.store import MemoryStore
from scenarist.tracing import RunContext, step
from scenarist.veval.client import Client

# A trace in Veval's wire shape (fields as its SDK sends them; values are ours).
VEVAL_TRACE: dict[str, Any] = {
    "trace_id": "tr_0123456789abcdef0123456789abcdef",
    "agent_name": "support-agent",
    "input": "where is my refund?",
    "output": None,
    "status": "error",
    "error": "payment service unreachable",
    "started_at": "2026-11-30T10:00:00+00:00",
    "completed_at": "2026-11-30T10:00:01+00:00",
    "duration_ms": 1000,
    "total_cost_usd": 0.0004,
    "metadata": {"customer": "acme"},
    "steps": [
        {
            "step_id": "a1",
            "parent_step_id": None,
            "name": "classify",
            "type": "llm",
            "input": "where is my refund?",
            "output": {"label": "billing"},
            "status": "success",
            "error": None,
            "started_at": "2026-11-30T10:00:00.100000+00:00",
            "completed_at": "2026-11-30T10:00:00.300000+00:00",
            "duration_ms": 200,
            "cost_usd": 0.0004,
            "tokens_in": 12,
            "tokens_out": 3,
            "model": "gpt-4o-mini",
            "metadata": {"temperature": 0.2},
        },
        {
            "step_id": "b2",
            "parent_step_id": "a1",
            "name": "lookup",
            "type": "tool",
            "input": {"q": "refund"},
            "output": None,
            "status": "error",
            "error": "timeout",
            "started_at": "2026-11-30T10:00:00.400000+00:00",
            "completed_at": "2026-11-30T10:00:00.900000+00:00",
            "duration_ms": 500,
            "cost_usd": None,
            "tokens_in": None,
            "tokens_out": None,
            "model": None,
            "metadata": {},
        },
    ],
}


def _normalise_times(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data).replace("+00:00", "Z"))


def test_veval_trace_round_trips_losslessly() -> None:
    record = from_veval(VEVAL_TRACE)
    assert [s.name for s in record.steps] == ["classify"]
    assert [c.name for c in record.steps[0].children] == ["lookup"]
    assert record.error is not None and record.error.message == "payment service unreachable"
    again = to_veval(record)
    assert _normalise_times(again) == _normalise_times(VEVAL_TRACE)


def test_hand_written_veval_steps_need_no_ids_nor_names() -> None:
    """Veval's steps default to an empty id and name; ours get distinct ids."""
    record = from_veval(
        {"trace_id": "tr_1", "steps": [{"name": "answer", "output": "a"}, {"type": "tool"}, {}]}
    )
    assert [(s.span_id, s.name, s.kind) for s in record.steps] == [
        ("step-1", "answer", "custom"),
        ("step-2", "", "tool"),
        ("step-3", "", "custom"),
    ]
    # what the JSON leaves out reads as Veval's TraceData.from_dict has it
    assert (record.status, record.agent_name, record.total_cost_usd) == ("running", "", None)
    assert [s.status for s in record.steps] == ["", "", ""]
    full = from_veval(
        {"trace_id": "tr_2", "agent_name": "bot", "status": "error", "total_cost_usd": 0.75}
    )
    assert (full.status, full.agent_name, full.total_cost_usd) == ("error", "bot", 0.75)


@pytest.mark.anyio
async def test_our_runs_survive_a_trip_through_the_veval_shape() -> None:
    client = Client(store=MemoryStore())

    async def agent(ctx: RunContext) -> str:
        async with step("outer", kind="agent"), step("inner", kind="tool") as handle:
            handle.output = [1, 2]
        raise KeyError("late failure")

    with pytest.raises(KeyError):
        await client.run_async("wire", agent, input={"q": 1})
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    wire = json.loads(json.dumps(to_veval(record)))
    assert [s["parent_step_id"] for s in wire["steps"]] == [None, "1"]
    back = from_veval(wire)
    assert back.error is not None and back.error.type == "KeyError"
    assert back.model_dump(mode="json") == record.model_dump(mode="json")
