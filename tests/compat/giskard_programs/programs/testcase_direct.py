"""Checking a recorded conversation without a scenario: build the trace by hand (as from a
log file), run a TestCase over it, assert_passed in a pytest-like way, read the failures."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    FnCheck,
    Interaction,
    JsonValid,
    RegexMatching,
    StringMatching,
    TestCase,
    Trace,
)

LOG = [
    {"user": "hi", "bot": "Hello! How can I help?", "latency_ms": 120},
    {"user": "track order 123", "bot": '{"order": 123, "status": "shipped"}', "latency_ms": 340},
    {"user": "thanks", "bot": "You're welcome!", "latency_ms": 80},
]


def describe(result):
    return {
        "status": result.status.value,
        "passed": result.passed,
        "failed": result.failed,
        "errored": result.errored,
        "skipped": result.skipped,
        "results": [[r.status.value, r.message] for r in result.results],
        "failures": result.format_failures(),
        "failures_and_errors": [r.message for r in result.failures_and_errors],
        "last_interaction_index": result.last_interaction_index,
        "error": result.error,
    }


async def main():
    out = {}
    trace = Trace()
    for turn in LOG:
        trace = await trace.with_interaction(
            Interaction(
                inputs=turn["user"],
                outputs=turn["bot"],
                metadata={"latency_ms": turn["latency_ms"]},
            )
        )
    out["turns"] = len(trace.interactions)
    good = TestCase(
        name="log is fine",
        trace=trace,
        checks=[
            StringMatching(keyword="welcome"),
            JsonValid(target_key="trace.interactions[1].outputs"),
            FnCheck(
                fn=lambda t: all(i.metadata["latency_ms"] < 500 for i in t.interactions),
                name="fast",
            ),
        ],
    )
    result = await good.run()
    out["good"] = describe(result)
    try:
        result.assert_passed()
        out["good_assert"] = None
    except AssertionError as exc:
        out["good_assert"] = str(exc)

    bad = TestCase(
        trace=trace,
        checks=[
            Equals(expected_value="Bye"),
            RegexMatching(pattern=r"^\d+$", name="digits only"),
            FnCheck(fn=lambda t: t.interactions[9], name="index error"),
            StringMatching(keyword="welcome"),
        ],
    )
    result = await bad.run(return_exception=True)
    out["bad"] = describe(result)
    try:
        result.assert_passed()
        out["bad_assert"] = None
    except AssertionError as exc:
        out["bad_assert"] = str(exc)
    try:
        await bad.assert_passed()
        out["bad_assert_on_case"] = None
    except AssertionError as exc:
        out["bad_assert_on_case"] = str(exc)
    except Exception as exc:
        out["bad_assert_on_case"] = ["raised", type(exc).__name__]
    try:
        await bad.run()
        out["bad_without_return_exception"] = "returned"
    except Exception as exc:
        out["bad_without_return_exception"] = [type(exc).__name__, str(exc)]
    empty = await TestCase(trace=Trace(), checks=[]).run()
    out["empty"] = describe(empty)
    on_empty = await TestCase(trace=Trace(), checks=[StringMatching(keyword="x")]).run()
    out["on_empty_trace"] = describe(on_empty)
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
