"""Run under the veval-sdk side venv by ``test_tenant_matrix.py``: the real SDK with
alpha's key (``VEVAL_INTERNAL_ENDPOINT`` points it at the server) tries to read beta's
traces and snapshot, records a run, runs the scenario ``support`` (both projects have one),
sends a trace with the id of beta's trace and saves a snapshot under beta's snapshot name.
Prints one JSON line of what it saw.

Arguments: alpha's API key, beta's trace id, beta's OTLP trace id, beta's snapshot name.
"""

import asyncio
import dataclasses
import json
import sys

from veval import TraceAssert, VevalOptions, VevalSdk

key, beta_trace, beta_otlp_trace, beta_snapshot = sys.argv[1:5]
sdk = VevalSdk(VevalOptions(api_key=key, raise_on_send_failure=True))


async def agent(ctx):
    async def classify():
        return "refund"

    label = await ctx.track_step_async("classify", ctx.input, classify)
    return f"about {label}"


async def main():
    seen = {}

    async def remember(ctx):
        seen["ctx"] = ctx
        return await agent(ctx)

    await sdk.run_async("support", remember, input="where is my refund? alpha-content")
    trace_id = seen["ctx"].trace_id
    beta = await sdk.get_trace_async(beta_trace)
    beta_otlp = await sdk.get_trace_async(beta_otlp_trace)
    snapshot = await sdk.get_snapshot_async(beta_snapshot)
    common = await sdk.get_snapshot_async("baseline")
    run = await sdk.run_scenario_async(
        "support", agent, [TraceAssert.max_steps(5)], mock_model_steps=True
    )
    mine = await sdk.get_trace_async(trace_id)
    payload = {**_as_dict(mine), "trace_id": beta_trace}
    sdk._client.send_trace(payload, raise_on_failure=True)  # the SDK's own sender, any id
    saved = await sdk.save_snapshot_async(beta_snapshot, trace_id)
    return {
        "trace_id": trace_id,
        "beta_trace": None if beta is None else _as_dict(beta),
        "beta_otlp_trace": None if beta_otlp is None else _as_dict(beta_otlp),
        "beta_snapshot": None if snapshot is None else snapshot.name,
        "common_snapshot_steps": None if common is None else [s.name for s in common.steps],
        "scenario_items": [r.item.name for r in run.results],
        "scenario_passed": run.passed,
        "scenario_failures": [r.failures for r in run.results],
        "saved_snapshot_steps": [s.name for s in saved.steps],
    }


def _as_dict(trace):
    return json.loads(json.dumps(dataclasses.asdict(trace), default=str))


print(json.dumps(asyncio.run(main()), default=str))
