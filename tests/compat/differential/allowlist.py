"""Known, deliberate differences from giskard-checks 1.0.6, keyed by case id.

Each entry is an improvement recorded in ``docs/design/``; any other disagreement
fails the differential test. An entry whose case agrees also fails it (the list stays
small and true).
"""

from __future__ import annotations

DELIBERATE: dict[str, str] = {}

#: What scenarist's JUnit adds to giskard-checks' structure on purpose (spec 03 §2,
#: design/giskard-compat.md "JUnit in giskard's structure"); the driver leaves these out
#: of both sides and the test checks that scenarist does write them.
JUNIT_EXTRAS: dict[str, frozenset[str]] = {
    # classname = the suite (CI groups cases by it); hostname of the run
    "attributes": frozenset({"classname", "hostname"}),
    # our properties: tags, runs executed, cost, no checks, repeats, flaky
    "properties": frozenset(
        {"tag", "runs_executed", "cost_usd", "no_checks", "repeats_passed", "flaky"}
    ),
}
