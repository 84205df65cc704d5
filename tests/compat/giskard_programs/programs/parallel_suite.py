"""A larger suite run in parallel against an async agent with uneven latency: results keep
the suite's order, the counts add up, max_concurrency bounds the agent's concurrent calls,
a run-time target overrides the suite's, and scenarios that raise do not stop the others."""

import asyncio
import json

from giskard.checks import Equals, FnCheck, Scenario, StringMatching, Suite  # IMPORT


class Agent:
    def __init__(self):
        self.active = 0
        self.peak = 0
        self.calls = 0

    async def __call__(self, inputs):
        self.active += 1
        self.calls += 1
        self.peak = max(self.peak, self.active)
        try:
            n = int(inputs.split()[-1])
            await asyncio.sleep(0.001 * (n % 4))
            if n % 10 == 7:
                raise RuntimeError(f"agent failed on {n}")
            return f"answer {n * 2}"
        finally:
            self.active -= 1


def build(name, target=None):
    suite = Suite(name=name, target=target) if target is not None else Suite(name=name)
    for n in range(24):
        scenario = (
            Scenario(f"case {n:02d}")
            .with_tags([f"parity:{'even' if n % 2 == 0 else 'odd'}", f"bucket:{n % 3}"])
            .interact(inputs=f"double {n}")
        )
        if n % 5 == 0:
            scenario = scenario.check(Equals(expected_value=f"answer {n * 2 + 1}"))
        else:
            scenario = scenario.check(StringMatching(keyword=f"answer {n * 2}"))
        scenario = scenario.check(FnCheck(fn=lambda t: len(t.interactions) == 1, name="one turn"))
        suite.append(scenario)
    return suite


def summary(result):
    return {
        "order": [r.scenario_name for r in result.results],
        "statuses": [r.status.value for r in result.results],
        "counts": [
            result.passed_count,
            result.failed_count,
            result.errored_count,
            result.skipped_count,
        ],
        "pass_rate": result.pass_rate,
        "by_parity": {
            str(k): [g.passed, g.failed, g.errored, g.pass_rate]
            for k, g in sorted(result.group_by("parity").groups.items(), key=lambda kv: str(kv[0]))
        },
        "by_bucket": {
            str(k): [g.passed, g.failed, g.errored, g.pass_rate]
            for k, g in sorted(result.group_by("bucket").groups.items(), key=lambda kv: str(kv[0]))
        },
    }


async def main():
    out = {}
    agent = Agent()
    result = await build("parallel", agent).run(
        return_exception=True, parallel=True, max_concurrency=3, verbose=False
    )
    out["parallel"] = summary(result)
    out["parallel_calls"] = agent.calls
    out["peak_within_bound"] = 1 <= agent.peak <= 3
    serial_agent = Agent()
    serial = await build("serial", serial_agent).run(return_exception=True, verbose=False)
    out["serial_same"] = summary(serial) == summary(result)
    out["serial_peak"] = serial_agent.peak
    override = Agent()
    overridden = await build("override", Agent()).run(
        target=override, return_exception=True, parallel=True, verbose=False
    )
    out["override_calls"] = override.calls
    out["override_same"] = summary(overridden) == summary(result)
    unbounded = Agent()
    await build("unbounded", unbounded).run(return_exception=True, parallel=True, verbose=False)
    out["unbounded_calls"] = unbounded.calls
    out["suite_size"] = len(build("size").scenarios)
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
