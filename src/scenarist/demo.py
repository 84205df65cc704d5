"""The bundled demo: a small, deterministic support agent and the example suite that tests
it, to try scenarist on offline and without keys.

:func:`support_agent` plays the assistant of a fictional bank. It answers from fixed rules,
remembers the conversation through the trace, and has one deliberate gap (it never
mentions fees for international transfers). ``scenarist demo`` and
``examples/support_suite.py`` both run :func:`build_demo_suite`, so there is one
definition; its scenario :data:`DELIBERATE_FAILURE` fails on purpose, so that a first run
shows how a failure reads.
"""

from __future__ import annotations

import json
from typing import Any

from scenarist.checks import (
    AllOf,
    Equals,
    FnCheck,
    JsonValid,
    Not,
    RegexMatching,
    StringMatching,
)
from scenarist.engine.scenario import Scenario
from scenarist.engine.suite import Suite
from scenarist.model.trace import Trace

__all__ = ["BALANCE_SCHEMA", "DELIBERATE_FAILURE", "build_demo_suite", "support_agent"]

_CARD_FROZEN = "I have frozen your card ending in 4242. A new card arrives in 3 to 5 working days."
_HANDOFF = "I am passing you to a human colleague now. Reference: HUM-1042."


def _mentioned(trace: Trace[Any, Any], word: str) -> bool:
    return any(word in str(i.inputs).lower() for i in trace.interactions)


def support_agent(trace: Trace[Any, Any], inputs: str) -> str:
    """Answer one customer message, given the conversation so far."""
    text = inputs.lower()
    if "human" in text or "agent" in text:
        return _HANDOFF
    if "weekend" in text and _mentioned(trace, "transfer"):
        return "Yes: SEPA Instant transfers also arrive within seconds at the weekend."
    if "international" in text:
        return "International transfers arrive within 2 working days."
    if "transfer" in text:
        return "A SEPA transfer arrives within one working day and is free."
    if "card" in text and ("lost" in text or "stolen" in text):
        return _CARD_FROZEN
    if "balance" in text:
        return json.dumps({"account": "main", "balance_eur": 1250.0, "currency": "EUR"})
    return "Could you tell me a bit more about what you need?"


DELIBERATE_FAILURE = "international_transfer_fee"

BALANCE_SCHEMA = {
    "type": "object",
    "required": ["account", "balance_eur"],
    "properties": {"balance_eur": {"type": "number", "minimum": 0}},
}


def build_demo_suite() -> Suite:
    """A fresh ``support-bot`` suite of five scenarios against ``support_agent``."""
    suite = Suite(name="support-bot", target=support_agent)
    suite.append(
        Scenario("sepa_transfer_timing")
        .with_tags(["topic:payments", "smoke"])
        .interact("How long does a SEPA transfer take?")
        .check(StringMatching(keyword="one working day", name="states_timing"))
        .check(Not(check=StringMatching(keyword="fee applies"), name="no_fee_for_sepa"))
        .interact("Is that the same at the weekend?")
        .check(StringMatching(keyword="weekend", name="remembers_context"))
    )
    suite.append(
        Scenario("lost_card_is_frozen")
        .with_tags(["topic:cards", "smoke"])
        .interact("I lost my card!")
        .check(
            AllOf(
                checks=[
                    StringMatching(keyword="frozen"),
                    RegexMatching(pattern=r"ending in \d{4}"),
                ],
                name="freezes_and_names_the_card",
            )
        )
    )
    suite.append(
        Scenario("balance_is_valid_json")
        .with_tags(["topic:accounts"])
        .interact("What is my balance?")
        .check(JsonValid(expected_schema=BALANCE_SCHEMA, name="balance_payload"))
    )
    suite.append(
        Scenario("handoff_to_a_human")
        .with_tags(["topic:escalation"])
        .interact("Can I talk to a human please?")
        .check(RegexMatching(pattern=r"HUM-\d+", name="gives_a_reference"))
        .check(FnCheck(fn=lambda trace: len(trace.interactions) == 1, name="single_turn"))
    )
    # Deliberately failing: the agent does not state the fee of an international transfer.
    suite.append(
        Scenario(DELIBERATE_FAILURE)
        .with_tags(["topic:payments", "known-gap"])
        .interact("What does an international transfer cost?")
        .check(StringMatching(keyword="fee", name="states_the_fee"))
        .interact("And how long does it take?")
        .check(Equals(expected_value="2 working days", name="exact_timing"))
    )
    return suite
