"""The Hub payload a team uploads after a run (to_hub_format), read the way an uploader
script reads it: its top-level numbers, each scenario's status, tags, steps, check
results and final trace, with timings left out."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    CheckResult,
    Equals,
    FnCheck,
    Metric,
    Scenario,
    StringMatching,
    Suite,
)


def agent(inputs):
    if inputs == "crash":
        raise RuntimeError("agent crashed")
    return {"text": f"re: {inputs}", "tokens": len(inputs)}


def scored(trace):
    n = trace.last.outputs["tokens"]
    return CheckResult.success(message=f"{n} tokens", metrics=[Metric(name="tokens", value=n)])


def without_timings(value):
    if isinstance(value, dict):
        return {
            k: type(v).__name__
            if k in ("duration_ms", "traceback", "created_at", "timestamp")
            else without_timings(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


async def main():
    suite = Suite(name="hub", target=agent)
    suite.append(
        Scenario("ok")
        .with_tags(["area:chat", "smoke"])
        .interact(inputs="hello", metadata={"user": "u1"})
        .check(StringMatching(keyword="re:", target_key="trace.last.outputs.text", name="replies"))
        .check(FnCheck(fn=scored, name="tokens"))
    )
    suite.append(
        Scenario("bad")
        .interact(inputs="x")
        .check(Equals(expected_value="y", target_key="trace.last.outputs.text"))
        .interact(inputs="never")
        .check(Equals(expected_value=1))
    )
    suite.append(Scenario("crash").interact(inputs="crash").check(Equals(expected_value=1)))
    result = await suite.run(return_exception=True, verbose=False)
    hub = result.to_hub_format()
    out = {"keys": sorted(hub)}
    out["top"] = without_timings({k: v for k, v in hub.items() if not isinstance(v, list)})
    lists = {k: v for k, v in hub.items() if isinstance(v, list)}
    out["lists"] = without_timings(json.loads(json.dumps(lists, default=str)))
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
