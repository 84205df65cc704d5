"""Subset runs: a run that ran part of its suite is no suite-wide point on a trend.

A run is a subset when its log says a selection was made (``-k``, ``--tag``, a pytest
``-k``/``-m``: ``RunLogHeader.selection``), or when it ran fewer scenarios than the
suite's usual set: the most common scenario count among the suite's newest 10 earlier
runs that were not subsets themselves (a tie goes to the larger count). Earlier runs
only, so a suite that grows does not turn its older runs into subsets; a suite that
shrinks marks its first few smaller runs until the smaller count is the usual one.
Migration 0010 applies the same rule to the runs stored before it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["USUAL_WINDOW", "is_subset", "usual_count"]

USUAL_WINDOW = 10


def usual_count(earlier: Sequence[int]) -> int | None:
    """The suite's usual scenario count from its earlier full runs' counts, newest
    first (``None``: no earlier run)."""
    recent = list(earlier[:USUAL_WINDOW])
    if not recent:
        return None
    return max(recent, key=lambda n: (recent.count(n), n))


def is_subset(total: int, earlier: Sequence[int], *, selected: bool = False) -> bool:
    """Whether a run of ``total`` scenarios is a subset of its suite."""
    usual = usual_count(earlier)
    return selected or (usual is not None and total < usual)
