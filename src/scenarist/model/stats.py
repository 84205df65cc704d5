"""Statistics for repeated runs: pass@k, pass^k and the Wilson score interval.

With ``repeat=k`` every scenario runs ``k`` times independently. For a scenario that
passed ``c`` of ``n`` runs (``n >= k``), using the unbiased estimators of the literature:

* ``pass@k`` = 1 - C(n-c, k) / C(n, k): the chance that at least one of ``k`` runs passes;
* ``pass^k`` = C(c, k) / C(n, k): the chance that all ``k`` runs pass (what a user who
  asks ``k`` times experiences);
* the Wilson score interval gives a 95% confidence interval for the pass rate ``c / n``
  that behaves well for small ``n`` and rates near 0 or 1.
"""

from __future__ import annotations

import math

__all__ = ["pass_at_k", "pass_hat_k", "wilson_interval"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` runs drawn from ``n`` (``c`` passed) passes."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that ``k`` runs drawn from ``n`` (``c`` passed) all pass."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def wilson_interval(n: int, c: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for ``c`` successes out of ``n`` (95% for ``z=1.96``)."""
    if n <= 0:
        return (0.0, 1.0)
    p = c / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
