"""``WithSpy``: giskard-checks' record (a mock replaces the target; calls read as
``unittest.mock.call`` objects), as plain data that paths, dumps and the run log handle."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock, call

import pytest
from pydantic import ValidationError

from helpers import spied_tools
from scenarist import Equals, Interact, Scenario, Suite, WithSpy
from scenarist.engine.spy import SpyCall
from scenarist.formats.runlog import read_jsonl, run_log_from_suite_result, write_jsonl

TARGET = "helpers.spied_tools.lookup"


def agent(inputs: str) -> str:
    found = spied_tools.lookup(inputs, source="kb")
    return f"answer: {found['found']}" if isinstance(found, dict) else "mocked"


def _spied(inputs: str, **kw: Any) -> WithSpy:
    spec = Interact(inputs=inputs, outputs=agent)
    return WithSpy(interaction_generator=spec, target=TARGET, **kw)


def _record(result: Any) -> dict[str, Any]:
    return result.final_trace.last.metadata[TARGET]  # type: ignore[no-any-return]


def test_with_spy_replaces_the_target_with_a_mock_and_records_giskards_keys() -> None:
    result = Scenario("spy").add_interaction(_spied("q1")).run_sync()
    assert result.final_trace.last.outputs == "mocked"  # type: ignore[union-attr]
    record = _record(result)
    assert list(record) == ["call_args_list", "call_count", "call_args", "mock_calls"]
    assert record["call_count"] == 1
    assert record["call_args"] == call("q1", source="kb")
    assert call("q1", source="kb") == record["call_args"]
    assert record["call_args"] != call("q2", source="kb")
    assert record["call_args"].args == ("q1",)
    assert record["call_args"].kwargs == {"source": "kb"}
    assert record["call_args"][0] == ("q1",)  # call_args[0] is the positional arguments
    assert record["call_args_list"] == [call("q1", source="kb")]
    # the agent's isinstance() check on the mock's return value is recorded too
    assert record["mock_calls"][0] == call("q1", source="kb")
    assert repr(record["mock_calls"][0]) == "call('q1', source='kb')"


def test_with_spy_call_through_runs_the_real_function_and_records_the_same() -> None:
    result = Scenario("spy").add_interaction(_spied("q1", call_through=True)).run_sync()
    assert result.final_trace.last.outputs == "answer: q1"  # type: ignore[union-attr]
    record = _record(result)
    assert (record["call_count"], record["call_args"]) == (1, call("q1", source="kb"))
    assert record["mock_calls"] == [call("q1", source="kb")]  # nothing used the mock's value


def test_with_spy_records_no_call_as_giskard_does() -> None:
    spec = WithSpy(interaction_generator=Interact(inputs="q", outputs="a"), target=TARGET)
    record = _record(Scenario("quiet").add_interaction(spec).run_sync())
    assert record == {"call_args_list": [], "call_count": 0, "call_args": None, "mock_calls": []}


def test_with_spy_path_checks_read_the_record() -> None:
    """giskard: every path check errors after a spy (its dump of the trace fails)."""
    key = f"trace.last.metadata['{TARGET}']"
    result = (
        Scenario("paths")
        .add_interaction(_spied("q1", call_through=True))
        .check(Equals(expected_value="answer: q1"))
        .check(Equals(expected_value=1, target_key=f"{key}.call_count"))
        .check(Equals(expected_value=("q1",), target_key=f"{key}.call_args.args"))
        .check(Equals(expected_value="kb", target_key=f"{key}.call_args.kwargs.source"))
        .check(Equals(expected_value=["q1"], target_key=f"{key}.call_args_list[*].args[0]"))
    ).run_sync()
    assert result.passed, result.format_failures()


def test_with_spy_record_dumps_and_round_trips_the_run_log(tmp_path: Path) -> None:
    suite = Suite(name="spies", scenarios=[Scenario("s").add_interaction(_spied("q1"))])
    result = suite.run_sync(verbose=False)
    dumped = json.loads(result.results[0].final_trace.model_dump_json())
    assert dumped["last"]["metadata"][TARGET]["call_args"] == [["q1"], {"source": "kb"}]
    path = tmp_path / "run.jsonl"
    write_jsonl(run_log_from_suite_result(result), path)
    read = read_jsonl(path).scenarios[0].result.final_trace.last
    assert read is not None and read.metadata[TARGET]["call_count"] == 1


def test_spy_call_copies_pickles_and_prints_as_mock_calls() -> None:
    named = SpyCall((), {}, "().__len__")
    assert repr(named) == "call().__len__()"
    assert repr(SpyCall((1,), {"a": 2}, "child")) == "call.child(1, a=2)"
    assert named == call().__len__()
    for made in (SpyCall(("x",), {"k": 1}), named):
        assert copy.deepcopy(made) == made and len(copy.deepcopy(made)) == len(made)
        assert pickle.loads(pickle.dumps(made)) == made
    assert SpyCall(("x",), {}) == (("x",), {})  # a plain tuple of the same form
    with pytest.raises(TypeError):
        hash(SpyCall(("x",), {}))


def test_with_spy_on_a_method_records_the_call_without_self() -> None:
    def send(inputs: str) -> str:
        return str(spied_tools.Client().send(inputs, urgent=True))

    target = "helpers.spied_tools.Client.send"
    for through, outputs in ((False, "<MagicMock"), (True, "sent q (urgent)")):
        spec = WithSpy(
            interaction_generator=Interact(inputs="q", outputs=send),
            target=target,
            call_through=through,
        )
        last = Scenario("method").add_interaction(spec).run_sync().final_trace.last
        assert last is not None and str(last.outputs).startswith(outputs)
        assert last.metadata[target]["call_args"] == call("q", urgent=True)
    assert spied_tools.Client().send("x") == "sent x"  # restored


def test_with_spy_restores_the_function_and_resets_between_interactions() -> None:
    original = spied_tools.lookup

    def inputs() -> Iterator[str]:  # a generator of inputs: one interaction each
        yield "a"
        yield "b"

    spec = WithSpy(interaction_generator=Interact(inputs=inputs, outputs=agent), target=TARGET)
    result = Scenario().add_interaction(spec).run_sync()
    assert spied_tools.lookup is original
    counts = [i.metadata[TARGET]["call_args"] for i in result.final_trace.interactions]
    assert counts == [call("a", source="kb"), call("b", source="kb")]


def test_with_spy_keeps_concurrent_scenarios_apart() -> None:
    suite = Suite(name="spies")
    for i in range(20):
        suite.append(
            Scenario(f"s{i}")
            .add_interaction(_spied(f"q{i}"))
            .check(
                Equals(
                    expected_value=[f"q{i}"],
                    target_key=f"trace.last.metadata['{TARGET}'].call_args_list[*].args[0]",
                )
            )
        )
    result = suite.run_sync(parallel=True, max_concurrency=8, verbose=False)
    assert result.passed_count == 20, [r.format_failures() for r in result.results]


def test_with_spy_nested_spies_record_each_target() -> None:
    method = "helpers.spied_tools.Client.send"

    def both(inputs: str) -> str:
        spied_tools.lookup(inputs)
        spied_tools.Client().send(inputs)
        return "done"

    inner = WithSpy(interaction_generator=Interact(inputs="q", outputs=both), target=TARGET)
    outer = WithSpy(interaction_generator=inner, target=method)
    last = Scenario("nested").add_interaction(outer).run_sync().final_trace.last
    assert last is not None
    assert last.metadata[TARGET]["call_args"] == call("q")
    assert last.metadata[method]["call_args"] == call("q")


def test_with_spy_outside_a_spy_the_real_function_runs() -> None:
    spec = _spied("q")
    Scenario().add_interaction(spec).run_sync()
    assert spied_tools.lookup("x") == {"found": "x", "source": "web"}
    assert not isinstance(spied_tools.lookup, MagicMock)


def test_with_spy_rejects_a_target_that_does_not_exist() -> None:
    spec = WithSpy(
        interaction_generator=Interact(inputs="a", outputs="b"), target="helpers.nope.fn"
    )
    with pytest.raises(ValueError, match="cannot be found"):
        Scenario().add_interaction(spec).run_sync()
    with pytest.raises(ValidationError, match="target"):
        WithSpy(interaction_generator=Interact(inputs="a", outputs="b"), target="not a path")


def test_with_spy_round_trips_when_its_spec_is_static() -> None:
    spec = WithSpy(interaction_generator=Interact(inputs="a", outputs="b"), target=TARGET)
    dumped = spec.model_dump(mode="json")
    assert "call_through" not in dumped  # giskard's dump, unless the option is set
    again = WithSpy.model_validate(dumped)
    assert again == spec
    assert again.model_dump(mode="json")["interaction_generator"]["kind"] == "interact"
    through = WithSpy.model_validate({**dumped, "call_through": True})
    assert through.model_dump(mode="json")["call_through"] is True
