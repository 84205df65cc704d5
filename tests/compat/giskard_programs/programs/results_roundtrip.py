"""Results as data: a suite's results dumped to JSON (as a user saves them), read back with
model_validate, and compared; the scenario and step roll-ups a user reads from them."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    CheckResult,
    Equals,
    FnCheck,
    Metric,
    Scenario,
    ScenarioResult,
    StringMatching,
    Suite,
    SuiteResult,
    TestCaseResult,
)


def scored(trace):
    words = len(str(trace.last.outputs).split())
    return CheckResult.success(
        message="scored", metrics=[Metric(name="words", value=words)], details={"words": words}
    )


def suite():
    s = Suite(name="roundtrip", target=lambda inputs: f"answer to {inputs}")
    s.append(
        Scenario("pass")
        .with_tags(["kind:ok"])
        .interact(inputs="q1", metadata={"lang": "en"})
        .check(FnCheck(fn=scored, name="score"))
        .check(StringMatching(keyword="q1"))
    )
    s.append(Scenario("fail").interact(inputs="q2").check(Equals(expected_value="nope")))
    s.append(Scenario("error").interact(inputs="q3").check(FnCheck(fn=lambda t: 1 / 0, name="div")))
    return s


def strip_timing(value):
    if isinstance(value, dict):
        return {
            k: (type(v).__name__ if k in ("duration_ms", "traceback") else strip_timing(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


async def main():
    out = {}
    result = await suite().run(return_exception=True, verbose=False)
    scenario = result.results[0]
    dumped = scenario.model_dump(mode="json")
    out["scenario_keys"] = sorted(dumped)
    out["step_keys"] = sorted(dumped["steps"][0])
    out["check_keys"] = sorted(dumped["steps"][0]["results"][0])
    out["scenario_dump"] = strip_timing({k: v for k, v in dumped.items() if k != "final_trace"})
    out["final_trace"] = dumped["final_trace"]
    text = scenario.model_dump_json()
    again = ScenarioResult.model_validate_json(text)
    out["reloaded"] = {
        "status": again.status.value,
        "name": again.scenario_name,
        "tags": again.tags,
        "results": [
            [r.status.value, r.message, r.details.get("words")]
            for s in again.steps
            for r in s.results
        ],
        "metrics": [[m.name, m.value] for s in again.steps for r in s.results for m in r.metrics],
        "outputs": [i.outputs for i in again.final_trace.interactions],
        "equal": again == scenario,
    }
    step = result.results[2].steps[0]
    out["error_step"] = {
        "status": step.status.value,
        "failures": step.format_failures(),
        "last_interaction_index": step.last_interaction_index,
        "dump": strip_timing(step.model_dump(mode="json")),
    }
    step_again = TestCaseResult.model_validate(step.model_dump())
    out["error_step_reloaded"] = [step_again.status.value, step_again.errored]
    check = CheckResult.failure(
        message="m", details={"a": [1, 2]}, metrics=[Metric(name="x", value=0.5)]
    )
    out["check_dump"] = check.model_dump(mode="json")
    out["check_json"] = json.loads(check.model_dump_json())
    out["check_reloaded_equal"] = CheckResult.model_validate(check.model_dump()) == check
    suite_dump = result.model_dump(mode="json")
    out["suite_keys"] = sorted(suite_dump)
    suite_again = SuiteResult.model_validate(suite_dump)
    out["suite_reloaded"] = [[r.scenario_name, r.status.value] for r in suite_again.results] + [
        suite_again.pass_rate,
        suite_again.passed_count,
    ]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
