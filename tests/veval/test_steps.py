"""Veval's ``Step`` and ``StepData`` under their own names (``scenarist.veval``): the
compat table maps both to ``Span``, whose positional order is ``StepData``'s."""

from __future__ import annotations

import pytest

from scenarist.model.trace import Span
from scenarist.veval import Step, StepData


def test_step_by_position_is_a_running_step_with_a_new_id() -> None:
    root = Step("agent")
    child = Step("lookup", root.step_id)
    assert (root.name, root.status, root.parent_step_id) == ("agent", "running", None)
    assert root.started_at is not None and len(root.step_id) == 36
    assert (child.name, child.parent_step_id) == ("lookup", root.step_id)
    assert child.step_id != root.step_id
    child.complete({"order": 42})
    assert (child.status, child.output) == ("success", {"order": 42})
    assert isinstance(root, Span)  # whatever takes a span takes it


def test_step_keeps_what_is_given_by_keyword() -> None:
    step = Step("plan", step_id="s1", status="success", type="tool")
    assert (step.step_id, step.status, step.type) == ("s1", "success", "tool")


def test_step_data_is_span_in_veval_field_order() -> None:
    assert StepData is Span
    data = StepData("s1", None, "plan", "tool")
    assert (data.step_id, data.name, data.type, data.status) == ("s1", "plan", "tool", "")
    assert data.started_at is None  # a record, not a started step


def test_step_takes_at_most_veval_positions() -> None:
    with pytest.raises(TypeError, match=r"at most 2 positional arguments \(name, parent_step_id\)"):
        Step("a", None, "extra")
