"""Smaller scenario definitions (issue 15, item 3) behave exactly like validated ones.

``Scenario.interact`` builds specs of plain values without validation, and those specs
share one private state; validated checks and scenarios share their fields sets. These
tests pin what users can observe: the same fields, dumps and errors as before, and no
change made to one definition ever showing up in another.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist import Equals, FnCheck, Interact, Scenario, StringMatching
from scenarist.engine.interactions import interact_spec, recorded


def _spec(scenario: Scenario, index: int = 0) -> Interact:
    spec = scenario.steps[0].interacts[index]
    assert isinstance(spec, Interact)
    return spec


@pytest.mark.parametrize(
    ("inputs", "outputs", "metadata"),
    [
        ("hello", "hi", None),
        ({"role": "user", "text": "hello"}, ["a", "b"], {"lang": "en"}),
        ("hello", Interact.model_fields["outputs"].default, None),  # no outputs: the target
        (42, None, {}),
    ],
)
def test_a_plain_interact_equals_the_validated_one(
    inputs: Any, outputs: Any, metadata: dict[str, Any] | None
) -> None:
    fast = interact_spec(inputs, outputs, metadata)
    slow = Interact(inputs=inputs, outputs=outputs, metadata=metadata or {})
    assert type(fast) is Interact
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast.needs_target == slow.needs_target
    assert (recorded(fast) is fast) == (recorded(slow) is slow)
    assert Interact.model_validate(fast.model_dump()) == slow


def test_interact_copies_the_metadata_it_is_given() -> None:
    metadata = {"lang": "en"}
    scenario = Scenario("s").interact("q", "a", metadata=metadata)
    metadata["lang"] = "fr"
    assert _spec(scenario).metadata == {"lang": "en"}


def test_changing_one_interaction_spec_leaves_the_others_alone() -> None:
    scenario = Scenario("s").interact("q1", "a1").interact("q2", "a2")
    first, second = _spec(scenario, 0), _spec(scenario, 1)
    first._recorded = False  # private state both specs started from
    first.outputs = "changed"
    assert second.__pydantic_private__ == {
        "_input_mode": "static",
        "_inputs_binding": None,
        "_outputs_binding": None,
        "_recorded": True,
    }
    assert recorded(second) is second
    assert second.outputs == "a2"
    assert (
        Scenario("t").interact("q3", "a3").steps[0].interacts[0].__pydantic_private__["_recorded"]
    )


def test_specs_that_run_code_are_still_validated() -> None:
    def reply(inputs: str) -> str:
        return inputs.upper()

    scenario = Scenario("s").interact("q", reply)
    spec = _spec(scenario)
    assert spec.__pydantic_private__ is not None
    assert spec.__pydantic_private__["_outputs_binding"] is not None
    result = scenario.run_sync()
    assert result.passed
    assert result.final_trace.last is not None
    assert result.final_trace.last.outputs == "Q"


def test_a_dumped_input_generator_still_loads_as_one() -> None:
    from scenarist.generators import InputGenerator

    dumped = {"kind": "user_simulator", "persona": "a customer who wants a refund"}
    spec = _spec(Scenario("s").interact(dumped))
    assert isinstance(spec.inputs, InputGenerator.kind_class("user_simulator"))
    assert spec.__pydantic_private__ is not None
    assert spec.__pydantic_private__["_input_mode"] != "static"


@pytest.mark.parametrize("metadata", [{1: "not a string key"}, "not a dict"])
def test_bad_metadata_still_fails_validation_naming_the_field(metadata: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        Scenario("s").interact("q", "a", metadata=metadata)
    assert "metadata" in str(caught.value)


def test_a_run_after_changing_a_spec_sees_the_change() -> None:
    scenario = Scenario("s").interact("q", "a").check(Equals(name="eq", expected_value="b"))
    assert not scenario.run_sync().passed
    _spec(scenario).outputs = "b"
    assert scenario.run_sync().passed


def test_checks_built_alike_do_not_share_changes_to_their_fields_set() -> None:
    first = Equals(name="eq", expected_value="x")
    second = Equals(name="eq", expected_value="y")
    assert first.model_fields_set == second.model_fields_set == {"name", "expected_value"}
    first.description = "now set"
    assert first.model_fields_set == {"name", "expected_value", "description"}
    assert second.model_fields_set == {"name", "expected_value"}
    assert "description" not in second.model_dump(exclude_unset=True)
    second.model_fields_set.add("target_key")  # the set handed out is second's own
    assert Equals(name="eq", expected_value="z").model_fields_set == {"name", "expected_value"}
    third = StringMatching(name="sm", keyword="ok")
    del third.name
    assert StringMatching(name="sm", keyword="ok").model_fields_set == {"name", "keyword"}


def test_a_copied_check_keeps_its_own_fields_set() -> None:
    check = FnCheck(name="fn", fn=lambda trace: True)
    copy = check.model_copy(update={"success_message": "yes"})
    assert copy.model_fields_set == {"name", "fn", "success_message"}
    assert check.model_fields_set == {"name", "fn"}
    assert FnCheck(name="fn", fn=lambda trace: True).model_fields_set == {"name", "fn"}


def test_scenarios_built_alike_do_not_share_changes_to_their_fields_set() -> None:
    first, second = Scenario("a"), Scenario("b")
    first.with_tags(["smoke"])  # validate_assignment path
    first.timeout_s = 5
    assert first.model_fields_set == {"name", "tags", "timeout_s"}
    assert second.model_fields_set == {"name"}
    assert Scenario("c").model_fields_set == {"name"}
    assert second.model_dump(exclude_unset=True) == {"name": "b"}


def test_the_fields_set_stays_picklable_and_deep_copyable() -> None:
    import copy
    import pickle

    check = Equals(name="eq", expected_value="x")
    for clone in (pickle.loads(pickle.dumps(check)), copy.deepcopy(check), copy.copy(check)):
        assert clone == check
        clone.description = "clone only"
        assert check.description is None
        assert check.model_fields_set == {"name", "expected_value"}


def test_many_scenarios_run_independently_after_the_fast_build() -> None:
    scenarios = [
        Scenario(f"s{i}")
        .interact(f"q{i}", f"a{i} ok")
        .check(Equals(name="eq", expected_value=f"a{i} ok"))
        .check(StringMatching(name="sm", keyword="ok"))
        for i in range(20)
    ]

    async def run_all() -> list[Any]:
        return [await s.run() for s in scenarios]

    results = asyncio.run(run_all())
    assert [r.status.value for r in results] == ["pass"] * 20
    assert [r.final_trace.last.outputs for r in results] == [f"a{i} ok" for i in range(20)]


def test_building_and_running_serially_does_not_import_anyio() -> None:
    code = (
        "import asyncio, sys\n"
        "from scenarist import Equals, Scenario, Suite\n"
        "s = Scenario('s').interact('q', 'a').check(Equals(name='eq', expected_value='a'))\n"
        "assert asyncio.run(s.run()).passed\n"
        "assert asyncio.run(Suite(name='x', scenarios=[s]).run(verbose=False)).passed_count\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'anyio')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == []
