"""Known, deliberate differences from giskard-checks 1.0.6, keyed by case id.

Each entry is an improvement recorded in ``docs/design/``; any other disagreement
fails the differential test. An entry whose case agrees also fails it (the list stays
small and true).
"""

from __future__ import annotations

DELIBERATE: dict[str, str] = {
    **{
        f"readability:no_words:{text}": (
            "a text with no words (empty, blank, punctuation only) has no readability: "
            "scenarist ERRORs where giskard-checks scores it 0.0, which passes any max_score "
            "(design/checks.md: 'Readability')"
        )
        for text in ("empty", "dots")
    },
    "defaults:unset:embedding": (
        "the built-in default embedding model is named with its provider, "
        "'openai/text-embedding-3-small' (every scenarist model name is 'provider/model'), "
        "giskard-checks names it 'text-embedding-3-small' (design/providers.md: 'Default models')"
    ),
    **{
        f"suite:{index}:steps-boom-nochecks:{mode}": (
            "JUnit <error> of a scenario whose step raised: scenarist's message and type are "
            "the exception's ('target failed on ...', 'ValueError'), giskard-checks writes "
            "'Scenario errored.' / 'error' "
            "(design/giskard-compat.md: 'JUnit in giskard's structure')"
        )
        for index, mode in ((12, "ser"), (13, "par"))
    },
}

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
    # the plain-text report: giskard writes one per case, scenarist only for failing ones
    "elements": frozenset({"system-out"}),
}
