"""The Hub payload keeps giskard's shape and always serialises to strict JSON."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

from report_factories import failing, outputs_raised, passing, suite_of, with_spans

from scenarist.model.results import CheckResult, Metric, ScenarioResult, SuiteResult, TestCaseResult
from scenarist.model.trace import Interaction, Trace

SUITE_KEYS = [
    "results",
    "duration_ms",
    "recommendation",
    "passed_count",
    "failed_count",
    "errored_count",
    "skipped_count",
    "pass_rate",
]
SCENARIO_KEYS = [
    "scenario_name",
    "steps",
    "duration_ms",
    "final_trace",
    "multiple_runs",
    "runs_executed",
    "tags",
    "status",
]
STEP_KEYS = ["results", "duration_ms", "last_interaction_index", "error", "status"]


def test_hub_keys_match_giskard(demo_suite: SuiteResult) -> None:
    payload = demo_suite.to_hub_format()
    assert list(payload) == SUITE_KEYS
    for scenario in payload["results"]:
        assert list(scenario) == SCENARIO_KEYS
        assert list(scenario["final_trace"]) == ["interactions", "annotations", "last"]
        for step in scenario["steps"]:
            assert list(step) == STEP_KEYS
            for check in step["results"]:
                assert list(check) == ["status", "message", "metrics", "details"]
    counts = [payload[k] for k in SUITE_KEYS[3:]]
    assert counts == [2, 1, 1, 0, 0.5]


def test_hub_failing_scenario_payload() -> None:
    payload = suite_of(failing()).to_hub_format()["results"][0]
    assert payload == {
        "scenario_name": "failing",
        "steps": [
            {
                "results": [
                    {
                        "status": "fail",
                        "message": "Expected value equal to 'right' but got 'wrong'",
                        "metrics": [],
                        "details": {
                            "duration_ms": 0,
                            "check_kind": "equals",
                            "check_name": None,
                            "check_description": None,
                        },
                    }
                ],
                "duration_ms": 1,
                "last_interaction_index": 0,
                "error": None,
                "status": "fail",
            },
            {
                "results": [
                    {
                        "status": "skip",
                        "message": "Step 2 was skipped due to previous failure",
                        "metrics": [],
                        "details": {
                            "duration_ms": 0,
                            "check_kind": "equals",
                            "check_name": None,
                            "check_description": None,
                        },
                    }
                ],
                "duration_ms": 0,
                "last_interaction_index": 0,
                "error": None,
                "status": "skip",
            },
        ],
        "duration_ms": 1,
        "final_trace": {
            "interactions": [{"inputs": "q1", "outputs": "wrong", "metadata": {}}],
            "annotations": {},
            "last": {"inputs": "q1", "outputs": "wrong", "metadata": {}},
        },
        "multiple_runs": 1,
        "runs_executed": 1,
        "tags": ["team:b"],
        "status": "fail",
    }


def test_hub_step_error_and_empty_trace() -> None:
    scenario = suite_of(outputs_raised()).to_hub_format()["results"][0]
    assert scenario["final_trace"] == {"interactions": [], "annotations": {}, "last": None}
    error = scenario["steps"][0]["error"]
    assert list(error) == ["message", "exception_type", "traceback", "phase"]
    assert error["exception_type"] == "ZeroDivisionError"


def test_hub_empty_suite_matches_giskard() -> None:
    assert SuiteResult(duration_ms=1).to_hub_format() == {
        "results": [],
        "duration_ms": 1,
        "recommendation": None,
        "passed_count": 0,
        "failed_count": 0,
        "errored_count": 0,
        "skipped_count": 0,
        "pass_rate": None,
    }


@dataclasses.dataclass
class Point:
    x: int
    y: float


class Opaque:
    def __str__(self) -> str:
        return "<opaque>"


def test_hub_non_json_values_become_strings() -> None:
    when = datetime(2026, 1, 2, tzinfo=UTC)
    details: dict[Any, Any] = {
        "nan": float("nan"),
        "tuple": (1, 2),
        "set": {3},
        "when": when,
        "point": Point(1, 2.5),
        "opaque": Opaque(),
        1: "int key",
        "metric": Metric(name="m", value=0.5),
    }
    check = CheckResult.failure("x", details=details, metrics=[Metric(name="score", value=0.25)])
    trace: Trace[Any, Any] = Trace(
        interactions=[Interaction(inputs=Opaque(), outputs=Point(0, 1.0), metadata={"t": when})],
        annotations={"obj": Opaque()},
    )
    result = ScenarioResult(
        scenario_name="odd", steps=[TestCaseResult(results=[check])], final_trace=trace
    )
    payload = suite_of(result).to_hub_format()
    text = json.dumps(payload, allow_nan=False)
    scenario = json.loads(text)["results"][0]
    got = scenario["steps"][0]["results"][0]
    assert got["details"] == {
        "nan": "nan",
        "tuple": [1, 2],
        "set": [3],
        "when": "2026-01-02T00:00:00+00:00",
        "point": {"x": 1, "y": 2.5},
        "opaque": "<opaque>",
        "1": "int key",
        "metric": {"name": "m", "value": 0.5},
    }
    assert got["metrics"] == [{"name": "score", "value": 0.25}]
    assert scenario["final_trace"]["last"] == {
        "inputs": "<opaque>",
        "outputs": {"x": 0, "y": 1.0},
        "metadata": {"t": "2026-01-02T00:00:00+00:00"},
    }
    assert scenario["final_trace"]["annotations"] == {"obj": "<opaque>"}


def test_hub_leaves_out_scenarist_only_fields() -> None:
    payload = suite_of(passing(), with_spans()).to_hub_format()
    text = json.dumps(payload)
    assert "spans" not in text
    assert "run_statuses" not in text
