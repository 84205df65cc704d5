"""A regression suite over a small FAQ bot: several tagged scenarios, run serially and in
parallel, then the numbers a CI job prints (counts, pass rate, failures), grouped by tag."""

import asyncio
import json

from giskard.checks import Equals, FnCheck, RegexMatching, Scenario, StringMatching, Suite  # IMPORT

FAQ = {
    "opening hours": "We open 9:00-17:00, Monday to Friday.",
    "refund": "Refunds take 5 business days.",
    "shipping": "Shipping is free above 50 EUR.",
}


def bot(inputs):
    for key, answer in FAQ.items():
        if key in inputs.lower():
            return answer
    if "crash" in inputs:
        raise RuntimeError("bot crashed")
    return "I don't know."


def build_suite(name):
    suite = Suite(name=name, target=bot)
    suite.append(
        Scenario("hours")
        .with_tags(["area:store", "priority:high"])
        .interact(inputs="What are your opening hours?")
        .check(RegexMatching(pattern=r"\d{1,2}:\d{2}"))
    )
    suite.append(
        Scenario("refund")
        .with_tags(["area:billing", "priority:high"])
        .interact(inputs="How long does a refund take?")
        .check(StringMatching(keyword="5 business days"))
    )
    suite.append(
        Scenario("shipping wrong expectation")
        .with_tags(["area:billing", "priority:low"])
        .interact(inputs="shipping costs?")
        .check(Equals(expected_value="Shipping is always free."))
    )
    suite.append(
        Scenario("unknown")
        .with_tags(["area:store", "smoke"])
        .interact(inputs="Do you sell boats?")
        .check(StringMatching(keyword="don't know"))
    )
    suite.append(
        Scenario("crash")
        .with_tags(["area:store", "priority:low"])
        .interact(inputs="please crash")
        .check(FnCheck(fn=lambda t: True, name="never"))
    )
    suite.append(Scenario("untagged").interact(inputs="refund?", outputs="n/a"))
    return suite


def summary(result):
    return {
        "statuses": {r.scenario_name: r.status.value for r in result.results},
        "order": [r.scenario_name for r in result.results],
        "tags": {r.scenario_name: r.tags for r in result.results},
        "counts": [
            result.passed_count,
            result.failed_count,
            result.errored_count,
            result.skipped_count,
        ],
        "pass_rate": result.pass_rate,
        "failures_and_errors": [r.scenario_name for r in result.failures_and_errors],
        "recommendation": result.recommendation,
    }


def groups(result, key):
    grouped = result.group_by(key)
    return {
        str(name): {
            "name": stats.name,
            "counts": [stats.passed, stats.failed, stats.errored, stats.skipped],
            "total": stats.total,
            "non_skipped": stats.non_skipped,
            "pass_rate": stats.pass_rate,
        }
        for name, stats in sorted(grouped.groups.items(), key=lambda kv: str(kv[0]))
    }


async def main():
    out = {}
    serial = await build_suite("faq").run(return_exception=True, verbose=False)
    parallel = await build_suite("faq").run(
        return_exception=True, parallel=True, max_concurrency=2, verbose=False
    )
    out["serial"] = summary(serial)
    out["parallel"] = summary(parallel)
    for key in ("area", "priority", "smoke", "missing"):
        out[f"group:{key}"] = groups(serial, key)
    try:
        await build_suite("faq").run(verbose=False)
        out["without_return_exception"] = "returned"
    except Exception as exc:
        out["without_return_exception"] = [type(exc).__name__, str(exc)]
    empty = await Suite(name="empty").run(verbose=False)
    out["empty"] = summary(empty)
    other = Suite(name="other target", target=lambda inputs: "refund in 5 business days")
    other.append(build_suite("x").scenarios[1])
    out["other_target"] = summary(await other.run(verbose=False))
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
