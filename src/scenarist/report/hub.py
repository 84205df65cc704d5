"""The Hub payload: a suite result as the JSON document giskard's Hub accepts.

The shape is fixed by compatibility (spec 03 §3): the suite's counts and scenarios, each
scenario with its steps, check results and ``final_trace`` (``interactions``,
``annotations``, ``last``). Fields that scenarist adds to its models (spans, run
statuses, suite name...) are deliberately left out so the Hub sees exactly what it
expects; the run log (:mod:`scenarist.formats.runlog`) is where the full record lives.

Built by hand from the models rather than with ``model_dump`` so that arbitrary user
values (a dataclass as outputs, a numpy float in details) never raise or warn: anything
that is not JSON becomes a string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scenarist._jsonable import as_text, to_json_value
from scenarist.model.results import CheckResult, ScenarioResult, SuiteResult, TestCaseResult
from scenarist.model.trace import Interaction, Trace

__all__ = ["jsonable", "scenario_payload", "to_hub_format"]


def to_hub_format(result: SuiteResult) -> dict[str, Any]:
    """The whole suite result as a JSON-serialisable dict (``json.dumps`` never fails)."""
    return {
        "results": [scenario_payload(r) for r in result.results],
        "duration_ms": result.duration_ms,
        "recommendation": result.recommendation,
        "passed_count": result.passed_count,
        "failed_count": result.failed_count,
        "errored_count": result.errored_count,
        "skipped_count": result.skipped_count,
        "pass_rate": result.pass_rate,
    }


def scenario_payload(result: ScenarioResult) -> dict[str, Any]:
    """One scenario of the payload (also what JUnit's ``final_trace`` / ``step_N`` hold)."""
    return {
        "scenario_name": result.scenario_name,
        "steps": [_step(s) for s in result.steps],
        "duration_ms": result.duration_ms,
        "final_trace": _trace(result.final_trace),
        "multiple_runs": result.multiple_runs,
        "runs_executed": result.runs_executed,
        "tags": [str(t) for t in result.tags],
        "status": result.status.value,
    }


def _step(step: TestCaseResult) -> dict[str, Any]:
    error = step.error
    return {
        "results": [_check(r) for r in step.results],
        "duration_ms": step.duration_ms,
        "last_interaction_index": step.last_interaction_index,
        "error": None
        if error is None
        else {
            "message": error.message,
            "exception_type": error.exception_type,
            "traceback": error.traceback,
            "phase": error.phase,
        },
        "status": step.status.value,
    }


def _check(result: CheckResult) -> dict[str, Any]:
    return {
        "status": result.status.value,
        "message": result.message,
        "metrics": [{"name": m.name, "value": jsonable(m.value)} for m in result.metrics],
        "details": jsonable(result.details),
    }


def _trace(trace: Trace[Any, Any] | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(trace, Mapping):  # a trace read back from JSON as plain dicts
        interactions = [jsonable(i) for i in trace.get("interactions", [])]
        annotations = jsonable(trace.get("annotations", {}))
    else:
        interactions = [_interaction(i) for i in trace.interactions]
        annotations = jsonable(trace.annotations)
    return {
        "interactions": interactions,
        "annotations": annotations,
        "last": interactions[-1] if interactions else None,
    }


def _interaction(interaction: Interaction[Any, Any]) -> dict[str, Any]:
    return {
        "inputs": jsonable(interaction.inputs),
        "outputs": jsonable(interaction.outputs),
        "metadata": jsonable(interaction.metadata),
    }


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: containers recurse, models dump, the rest is ``str``.

    Non-finite floats become strings too, so the result is valid strict JSON. Bytes,
    cycles and objects that cannot be printed are marked as :mod:`scenarist._jsonable`
    documents, so a hostile value never stops a report.
    """
    return to_json_value(value, other=as_text, mark_text=True)
