"""Known, deliberate differences from giskard-checks 1.0.6, keyed by case id.

Each entry is an improvement recorded in ``docs/decisions.md``; any other disagreement
fails the differential test. An entry whose case agrees also fails it (the list stays
small and true).
"""

from __future__ import annotations

DELIBERATE: dict[str, str] = {
    "AllOf:empty": (
        "an empty AllOf asserts nothing: scenarist yields SKIP, giskard-checks PASS "
        "(decisions.md: 'An empty composite never passes')"
    ),
}
