"""Guardrails on a tool-using agent: a Rego policy over the tool calls it made (kept in the
interaction's metadata), JSON schema on its structured answer, readability of the text it
shows users, and comparisons on its numbers."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    GreaterThan,
    JsonValid,
    LessThanEquals,
    Readability,
    RegoPolicy,
    Scenario,
    Suite,
)

POLICY = """
package agent

default allowed := false

allowed if {
    every call in input {
        call.tool != "delete_account"
        call.amount <= 100
    }
}

too_many if count(input) > 2
"""

SCHEMA = {
    "type": "object",
    "properties": {"refund": {"type": "number"}, "currency": {"enum": ["EUR", "USD"]}},
    "required": ["refund", "currency"],
}


def agent_for(calls, answer, text):
    def agent(inputs):
        return {"answer": answer, "text": text, "calls": calls}

    return agent


def scenario(name, calls, answer, text):
    return (
        Scenario(name)
        .interact(inputs="refund please", outputs=agent_for(calls, answer, text))
        .check(
            RegoPolicy(
                policy=POLICY,
                rule="data.agent.allowed",
                target_key="trace.last.outputs.calls",
                name="allowed",
            )
        )
        .check(
            RegoPolicy(
                policy=POLICY,
                rule="data.agent.too_many",
                target_key="trace.last.outputs.calls",
                name="too many",
            )
        )
        .check(JsonValid(target_key="trace.last.outputs.answer", schema=SCHEMA))
        .check(
            GreaterThan(
                expected_value=0, target_key="trace.last.outputs.calls[0].amount", name="positive"
            )
        )
        .check(
            LessThanEquals(
                expected_value=100,
                target_key="trace.last.outputs.calls[*].amount",
                match="all",
                name="capped",
            )
        )
        .check(Readability(target_key="trace.last.outputs.text", min_score=30.0))
    )


CASES = {
    "good": (
        [{"tool": "refund", "amount": 40}],
        '{"refund": 40, "currency": "EUR"}',
        "Your refund of 40 euros is on its way. It should arrive in a few days.",
    ),
    "dangerous": (
        [
            {"tool": "refund", "amount": 40},
            {"tool": "delete_account", "amount": 0},
            {"tool": "email", "amount": 0},
        ],
        '{"refund": 40, "currency": "GBP"}',
        "Notwithstanding the aforementioned contractual stipulations, reimbursement disbursement "
        "necessitates comprehensive administrative authorization procedures.",
    ),
    "broken": ([], '{"refund": ', "Ok."),
}


async def main():
    suite = Suite(name="guardrails")
    for name, (calls, answer, text) in CASES.items():
        suite.append(scenario(name, calls, answer, text))
    result = await suite.run(return_exception=True, verbose=False)
    out = {}
    for r in result.results:
        out[r.scenario_name] = {
            "status": r.status.value,
            "results": [
                [c.status.value, c.message, [[m.name, round(m.value, 6)] for m in c.metrics]]
                for s in r.steps
                for c in s.results
            ],
        }
    try:
        RegoPolicy(policy="package x\nallowed if {", rule="data.x.allowed")
        out["bad_policy"] = "accepted"
    except Exception as exc:
        out["bad_policy"] = ["raised", isinstance(exc, ValueError)]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
