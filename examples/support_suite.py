"""Example suite: scenario tests for the bundled demo support agent.

Run it with ``python examples/support_suite.py``. It works offline: the agent is the
deterministic ``scenarist.demo.support_agent``. One scenario fails on purpose (the agent
never states the fee of an international transfer) so you can see how a failure reads.
"""

from __future__ import annotations

from scenarist import (
    AllOf,
    Equals,
    FnCheck,
    JsonValid,
    Not,
    RegexMatching,
    Scenario,
    StringMatching,
    Suite,
)
from scenarist.demo import support_agent

BALANCE_SCHEMA = {
    "type": "object",
    "required": ["account", "balance_eur"],
    "properties": {"balance_eur": {"type": "number", "minimum": 0}},
}

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
    .check(JsonValid(schema=BALANCE_SCHEMA, name="balance_payload"))
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
    Scenario("international_transfer_fee")
    .with_tags(["topic:payments", "known-gap"])
    .interact("What does an international transfer cost?")
    .check(StringMatching(keyword="fee", name="states_the_fee"))
    .interact("And how long does it take?")
    .check(Equals(expected_value="2 working days", name="exact_timing"))
)


def main() -> int:
    result = suite.run_sync(parallel=True, max_concurrency=4)
    result.print_report(group_by="topic")
    print(
        "\nOne failure above is deliberate (international_transfer_fee). "
        "Edit examples/support_suite.py and run it again."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
