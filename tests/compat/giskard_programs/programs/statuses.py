"""Statuses the way user code handles them: comparing with strings and enums, printing,
using them as dict keys, JSON; and how SKIP and ERROR verdicts roll up through steps,
scenarios (early stop, multiple_runs) and suites."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    CheckResult,
    CheckStatus,
    FnCheck,
    Scenario,
    ScenarioStatus,
    Suite,
    TestCaseStatus,
)


def verdict(status):
    return FnCheck(
        fn=lambda trace: CheckResult(status=status, message=f"forced {status}"),
        name=f"forced {status}",
    )


def scenario(name, *steps):
    s = Scenario(name)
    for i, statuses in enumerate(steps):
        s = s.interact(inputs=f"q{i}", outputs=f"a{i}")
        for status in statuses:
            s = s.check(verdict(status))
    return s


def describe(result):
    return {
        "status": result.status.value,
        "flags": [result.passed, result.failed, result.errored, result.skipped],
        "steps": [[s.status.value, [r.status.value for r in s.results]] for s in result.steps],
        "runs_executed": result.runs_executed,
        "failures_and_errors": [
            [r.status.value, r.message] for s in result.steps for r in s.failures_and_errors
        ],
    }


async def main():
    out = {}
    status = CheckStatus.PASS
    out["compare"] = [
        status == "pass",
        status == CheckStatus("pass"),
        status in {"pass", "fail"},
        "pass" == status,  # noqa: SIM300 (the reflected comparison, on purpose)
        ScenarioStatus.FAIL == "fail",
        TestCaseStatus.ERROR == "error",
    ]
    out["printed"] = [str(status), f"{status}", format(status), repr(status), status.value]
    out["json"] = json.dumps({"s": status, "list": [ScenarioStatus.SKIP]})
    out["as_key"] = {CheckStatus.FAIL: 1}.get("fail")
    out["members"] = [s.value for s in CheckStatus]
    try:
        CheckStatus("passed")
        out["bad_value"] = "accepted"
    except ValueError as exc:
        out["bad_value"] = type(exc).__name__
    out["result_from_string"] = CheckResult(status="skip").status.value

    cases = {
        "all_pass": [["pass", "pass"], ["pass"]],
        "skip_only": [["skip"], ["pass"]],
        "pass_and_skip": [["pass", "skip"], ["pass"]],
        "fail_then": [["pass", "fail"], ["pass"]],
        "error_then": [["error", "pass"], ["pass"]],
        "fail_and_error": [["fail", "error"], ["pass"]],
        "skip_then_fail": [["skip"], ["fail"]],
        "no_checks": [[], []],
    }
    for name, steps in cases.items():
        out[name] = describe(await scenario(name, *steps).run())
        out[f"{name}:runs3"] = describe(await scenario(name, *steps).run(multiple_runs=3))
    suite = Suite(name="statuses")
    for name, steps in cases.items():
        suite.append(scenario(name, *steps))
    result = await suite.run(verbose=False)
    out["suite"] = [
        result.passed_count,
        result.failed_count,
        result.errored_count,
        result.skipped_count,
        result.pass_rate,
        [r.scenario_name for r in result.failures_and_errors],
    ]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
