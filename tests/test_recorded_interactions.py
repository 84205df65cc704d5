"""Recorded interactions are built when first read (issue 15, item 3), invisibly.

A step of static inputs and outputs keeps a small record per turn in the trace's log
and builds the :class:`Interaction` on first read. These tests pin that a user never
sees the difference: every read gives the same full interaction, values are the ones of
the run (not of a spec changed later), runs never share what a user can change, and
dumps, copies and pickles hold interactions.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
from datetime import datetime
from typing import Any

from scenarist import Equals, FnCheck, Interaction, Scenario, StringMatching, Trace
from scenarist.engine.runner import _empty_trace
from scenarist.model.results import ScenarioResult
from scenarist.model.trace import InteractionLog, RecordedInteractions


def _static(name: str = "s", turns: int = 3) -> Scenario:
    scenario = Scenario(name)
    for i in range(turns):
        scenario.interact(f"q{i}", f"a{i} ok", metadata={"turn": i} if i == 1 else None)
    return scenario.check(Equals(name="eq", expected_value=f"a{turns - 1} ok")).check(
        StringMatching(name="sm", keyword="ok")
    )


def _unbuilt(trace: Trace[Any, Any]) -> int:
    log = trace.interactions
    if type(log._items) is RecordedInteractions:  # a log of one record, nothing read yet
        return len(log)
    return sum(type(item) is RecordedInteractions for item in log._items)


def test_checks_on_the_last_outputs_build_no_interaction() -> None:
    async def run() -> tuple[bool, int]:
        # Counted inside the loop: asyncio.run on 3.11 reprs the value its task returns.
        result = await _static().run()
        return result.passed, _unbuilt(result.final_trace)

    assert asyncio.run(run()) == (True, 3)  # nothing read them yet


def test_every_read_gives_the_same_full_interaction() -> None:
    result = _static().run_sync()
    log = result.final_trace.interactions
    first = log[0]
    assert type(first) is Interaction
    assert (first.inputs, first.outputs, first.metadata) == ("q0", "a0 ok", {})
    assert first.spans == () and first.error is None and first.duration_ms == 0.0
    assert isinstance(first.started_at, datetime)
    assert log[0] is first and next(iter(log)) is first and log[-3] is first
    assert list(log)[2] is log[2]
    assert result.final_trace.last is log[2] is log[-1]
    assert log[1].metadata == {"turn": 1}
    assert [type(i) for i in log[0:2]] == [Interaction, Interaction]
    assert _unbuilt(result.final_trace) == 0


def test_a_result_reads_like_one_built_eagerly() -> None:
    result = _static().run_sync()
    eager = [
        Interaction(
            inputs=f"q{i}",
            outputs=f"a{i} ok",
            metadata={"turn": i} if i == 1 else {},
            started_at=result.final_trace.interactions[i].started_at,
            duration_ms=0.0,
        )
        for i in range(3)
    ]
    assert result.final_trace.interactions == eager
    lazy = _static().run_sync()
    dumped = lazy.model_dump(mode="json")  # dumping first, before any read
    assert [i["inputs"] for i in dumped["final_trace"]["interactions"]] == ["q0", "q1", "q2"]
    assert "RecordedInteractions" not in repr(_static().run_sync())
    again = ScenarioResult.model_validate_json(lazy.model_dump_json())
    assert again.final_trace.interactions == lazy.final_trace.interactions


def test_changing_the_spec_after_a_run_does_not_reach_its_trace() -> None:
    scenario = _static()
    result = scenario.run_sync()
    spec = scenario.steps[0].interacts[1]
    spec.outputs = "changed"
    spec.metadata["turn"] = 99
    interaction = result.final_trace.interactions[1]  # built only now
    assert interaction.outputs == "a1 ok"
    assert interaction.metadata == {"turn": 1}


def test_what_a_user_changes_in_one_run_stays_in_that_run() -> None:
    scenario = _static()
    first, second = scenario.run_sync(), scenario.run_sync()
    first.final_trace.interactions[0].metadata["note"] = "first run only"
    first.final_trace.interactions[1].metadata["turn"] = -1
    assert second.final_trace.interactions[0].metadata == {}
    assert second.final_trace.interactions[1].metadata == {"turn": 1}
    assert scenario.steps[0].interacts[1].metadata == {"turn": 1}
    assert scenario.run_sync().final_trace.interactions[0].metadata == {}


def test_a_check_sees_the_trace_the_result_keeps() -> None:
    seen: list[Trace[Any, Any]] = []

    def keep(trace: Trace[Any, Any]) -> bool:
        seen.append(trace)
        return True

    scenario = (
        Scenario("steps")
        .interact("q0", "a0")
        .check(FnCheck(name="first", fn=keep))
        .interact("q1", "a1")
        .check(FnCheck(name="second", fn=keep))
    )

    async def run() -> None:  # asserted in the loop: asyncio.run on 3.11 reprs its result
        result = await scenario.run()
        assert [len(t.interactions) for t in seen] == [1, 2]
        # Branching off the older view before anything was read: the copy shares objects.
        branched = seen[0].with_interaction(Interaction(inputs="other", outputs="branch"))
        assert branched.interactions[0] is result.final_trace.interactions[0]
        assert seen[0].interactions[0] is result.final_trace.interactions[0]
        assert [i.inputs for i in branched.interactions] == ["q0", "other"]
        assert [i.inputs for i in result.final_trace.interactions] == ["q0", "q1"]

    asyncio.run(run())


def test_copies_and_pickles_hold_interactions() -> None:
    result = _static().run_sync()
    log = result.final_trace.interactions
    for clone in (copy.copy(log), copy.deepcopy(log), pickle.loads(pickle.dumps(log))):
        assert type(clone) is InteractionLog
        assert not any(type(item) is RecordedInteractions for item in clone._items)
        assert clone == log
    deep = copy.deepcopy(result)
    deep.final_trace.interactions[0].metadata["deep"] = True
    assert result.final_trace.interactions[0].metadata == {}
    assert pickle.loads(pickle.dumps(result)).final_trace.interactions == log


def test_turns_read_in_any_order_are_the_ones_of_their_positions() -> None:
    scenario = Scenario("mixed")
    scenario.interact("q0", "a0").interact("q1", "a1", metadata={"turn": 1})
    scenario.interact("q2", lambda inputs: f"computed {inputs}")  # runs code: splits the record
    scenario.interact("q3", "a3").interact("q4", "a4", metadata={"turn": 4}).interact("q5", "a5")
    result = scenario.check(Equals(name="eq", expected_value="a5")).run_sync()
    log = result.final_trace.interactions
    assert result.passed and _unbuilt(result.final_trace) == 5
    read = {i: log[i] for i in (4, 1, 5, 0, 3, 2)}  # out of order, each position built alone
    assert [(read[i].inputs, read[i].outputs, read[i].metadata) for i in range(6)] == [
        ("q0", "a0", {}),
        ("q1", "a1", {"turn": 1}),
        ("q2", "computed q2", {}),
        ("q3", "a3", {}),
        ("q4", "a4", {"turn": 4}),
        ("q5", "a5", {}),
    ]
    assert all(log[i] is read[i] for i in range(6)) and _unbuilt(result.final_trace) == 0
    assert read[0].started_at == read[1].started_at  # one clock read per record
    assert read[3].started_at >= read[2].started_at


def test_a_run_reads_nothing_of_another_runs_trace() -> None:
    async def run() -> list[int]:
        # Every run starts from the same empty trace: none may grow the list of another.
        results = [await _static(f"s{i}").run() for i in range(3)]
        return [_unbuilt(r.final_trace) for r in results]

    assert asyncio.run(run()) == [3, 3, 3]
    assert _empty_trace(Trace).interactions._items == []


def test_a_log_of_one_record_and_the_logs_grown_from_it_share_every_interaction() -> None:
    for read_first in (False, True):
        result = _static().run_sync()
        log = result.final_trace.interactions
        assert type(log._items) is RecordedInteractions  # kept as the record alone
        first = log[0] if read_first else None
        grown = result.final_trace.with_interaction(Interaction(inputs="q3", outputs="a3"))
        other = result.final_trace.with_interaction(Interaction(inputs="x", outputs="y"))
        assert [i.inputs for i in grown.interactions] == ["q0", "q1", "q2", "q3"]
        assert [i.inputs for i in other.interactions] == ["q0", "q1", "q2", "x"]
        assert [i.inputs for i in log] == ["q0", "q1", "q2"]  # unchanged
        for i in range(3):
            assert log[i] is grown.interactions[i] is other.interactions[i]
        assert first is None or first is log[0]
        assert log[1].metadata == {"turn": 1} and log[0].metadata == {}
