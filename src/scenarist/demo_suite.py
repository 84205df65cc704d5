"""The example suite: scenario tests for the bundled demo support agent.

``scenarist demo`` and ``examples/support_suite.py`` both run :func:`build_demo_suite`,
so there is one definition. It works offline: the agent is the deterministic
:func:`scenarist.demo.support_agent`. One scenario, :data:`DELIBERATE_FAILURE`, fails on
purpose (the agent never states the fee of an international transfer) so that a first
run shows how a failure reads.
"""

from __future__ import annotations

from scenarist.checks import (
    AllOf,
    Equals,
    FnCheck,
    JsonValid,
    Not,
    RegexMatching,
    StringMatching,
)
from scenarist.demo import support_agent
from scenarist.engine.scenario import Scenario
from scenarist.engine.suite import Suite

__all__ = ["BALANCE_SCHEMA", "DELIBERATE_FAILURE", "build_demo_suite"]

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
