"""Amounts in US dollars as people read them, at their own scale.

LLM calls cost fractions of a cent: ``f"${cost:.4f}"`` shows ``$0.0000`` for a
$0.000032 call, and a chart axis shows ``3.5E-5``. :func:`format_usd` keeps two
significant digits below a cent (``$0.000032``), four decimals below a dollar
(``$0.0123``) and cents above (``$12.35``). The dashboard's script (``dashboard.js``,
``formatUsd``) applies the same rule to chart axes and tooltips.
"""

from __future__ import annotations

import math

__all__ = ["format_usd"]


def format_usd(usd: float | None, *, missing: str = "–") -> str:
    """``usd`` as ``$…`` at its scale; ``missing`` when there is no amount."""
    if usd is None or not math.isfinite(usd):
        return missing
    sign, size = ("-" if usd < 0 else ""), abs(usd)
    if size == 0:
        return "$0.00"
    if size >= 1:
        return f"{sign}${size:,.2f}"
    if size >= 0.01:
        decimals = len(f"{size:.4f}".rstrip("0").partition(".")[2])
        return f"{sign}${size:.{max(decimals, 2)}f}"
    decimals = 1 - math.floor(math.log10(size))  # two significant digits
    return f"{sign}${f'{size:.{decimals}f}'.rstrip('0')}"
