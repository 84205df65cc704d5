"""Follows the checks documentation page "Checks" (oss/checks/reference/checks), its check
composition section: `AllOf` (every check passes; stops at the first failure; skips are
ignored), `AnyOf` (one check passes), `Not` (inverts a pass or a failure), nested
composites, composites run directly with `await check.run(trace)` and inside a scenario,
the empty composites, and their dumps."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    AllOf,
    AnyOf,
    CheckResult,
    Equals,
    FnCheck,
    Interaction,
    Not,
    Scenario,
    StringMatching,
    Trace,
)


def skipping(trace) -> CheckResult:
    return CheckResult.skip(message="not applicable here")


def outcome(result) -> list:
    return [result.status.value, result.message, sorted(result.details)]


async def main() -> None:
    out: dict = {}
    trace = Trace(interactions=[Interaction(inputs="refund?", outputs="Refunds take 5 days.")])
    says_refund = StringMatching(keyword="Refund", target_key="trace.last.outputs")
    says_days = StringMatching(keyword="days")
    says_never = StringMatching(keyword="never")
    skip = FnCheck(fn=skipping, name="skipper")
    checks = {
        "all_pass": AllOf(checks=[says_refund, says_days]),
        "all_first_fails": AllOf(checks=[says_never, says_days]),
        "all_with_skip": AllOf(checks=[skip, says_days]),
        "all_skipped": AllOf(checks=[skip, skip]),
        "all_empty": AllOf(checks=[]),
        "any_one_passes": AnyOf(checks=[says_never, says_days]),
        "any_none_pass": AnyOf(checks=[says_never, Equals(expected_value="no")]),
        "any_all_skipped": AnyOf(checks=[skip]),
        "any_empty": AnyOf(checks=[]),
        "not_pass": Not(check=says_days),
        "not_fail": Not(check=says_never),
        "not_skip": Not(check=skip),
        "nested": AllOf(checks=[AnyOf(checks=[says_never, says_refund]), Not(check=says_never)]),
        "nested_empty": AnyOf(checks=[AllOf(checks=[]), says_never]),
    }
    for name, check in checks.items():
        out[f"direct:{name}"] = outcome(await check.run(trace))
    scenario = Scenario("composites").interact(inputs="refund?", outputs="Refunds take 5 days.")
    for check in checks.values():
        scenario = scenario.check(check)
    result = await scenario.run()
    out["scenario_status"] = result.status.value
    out["scenario_statuses"] = [r.status.value for r in result.steps[0].results]
    out["scenario_messages"] = [r.message for r in result.steps[0].results]
    out["scenario_failures"] = result.steps[0].format_failures()
    empty_only = (
        await Scenario("empty all_of")
        .interact(inputs="a", outputs="b")
        .check(AllOf(checks=[]))
        .run()
    )
    out["empty_only"] = [empty_only.status.value, empty_only.passed]
    out["empty_dump"] = (await AllOf(checks=[]).run(trace)).model_dump(mode="json")
    for name in ("all_pass", "nested", "all_empty", "not_fail"):
        out[f"dump:{name}"] = checks[name].model_dump(mode="json")
    print(json.dumps(out, sort_keys=True, ensure_ascii=False))


asyncio.run(main())
