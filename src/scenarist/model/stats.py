"""Statistics for repeated runs: pass@k, pass^k, intervals, verdicts and regressions.

With ``repeat=k`` every scenario runs ``k`` times independently. For a scenario that
passed ``c`` of ``n`` runs (``n >= k``), using the unbiased estimators of the literature:

* ``pass@k`` = 1 - C(n-c, k) / C(n, k): the chance that at least one of ``k`` runs passes;
* ``pass^k`` = C(c, k) / C(n, k): the chance that all ``k`` runs pass (what a user who
  asks ``k`` times experiences);
* the **Wilson score interval** gives a 95% confidence interval for the pass rate ``c / n``
  that behaves well for small ``n`` and rates near 0 or 1 (where the textbook ``p ± 1.96
  sqrt(p(1-p)/n)`` interval leaves [0, 1] or shrinks to nothing).

Against a required pass rate ``r`` (``min_pass_rate``):

* :func:`interval_verdict` (a fixed number of runs): PASS when the interval's lower bound
  is at least ``r``, FAIL when its upper bound is below ``r``, INCONCLUSIVE when it
  straddles ``r``. A wrong verdict (PASS for a scenario whose true rate is below ``r``,
  or FAIL for one at or above it) needs the true rate outside the interval on one
  given side: about 2.5 % each way.
* :func:`sequential_verdict` (``repeat="auto"``, which looks after every run and stops as
  soon as it is decided): checking a fixed-``n`` interval after every run would inflate
  that error (the more looks, the more chances to cross by luck), so the sequential
  verdict uses an *anytime-valid* test instead: two mixture likelihood ratios against the
  boundary rate ``r``, one over alternatives above ``r`` (evidence for PASS) and one below
  (evidence for FAIL), each an equal-weight mixture over a grid of :data:`GRID` rates.
  For any true rate on the wrong side of ``r`` the ratio is a nonnegative supermartingale
  starting at 1, so by Ville's inequality the chance that it *ever* reaches ``1 / alpha``
  is at most ``alpha``: the wrong-verdict rate is at most ``alpha`` (5 %) however many
  runs are made, whenever the run stops, and whatever the cap. The price is runs: a
  scenario that always passes is shown to reach ``r = 0.9`` after 42 runs (a fixed-``n``
  Wilson interval needs 35); one that always fails is shown below it after 2.

Comparing with a baseline, :func:`fisher_less` is the one-sided Fisher exact test on the
two runs' pass counts (see ``docs/design/statistics.md`` for why not McNemar).
"""

from __future__ import annotations

import math

from scenarist.model.status import RateVerdict

__all__ = [
    "ALPHA",
    "GRID",
    "Z95",
    "fisher_less",
    "interval_verdict",
    "pass_at_k",
    "pass_hat_k",
    "sequential_verdict",
    "wilson_interval",
]

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""
ALPHA = 0.05
"""The default error rate of the sequential verdict and of the regression test."""
GRID = 20
"""How many alternative rates each side of the sequential test mixes over."""


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


def wilson_interval(n: int, c: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``c`` successes out of ``n`` (95% for the default ``z``)."""
    if n <= 0:
        return (0.0, 1.0)
    p = c / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def interval_verdict(n: int, c: int, required: float) -> RateVerdict:
    """PASS when the Wilson 95% interval of ``c`` of ``n`` lies at or above ``required``,
    FAIL when it lies below, INCONCLUSIVE when it straddles it (or nothing ran)."""
    _check_rate(required)
    if n <= 0:
        return RateVerdict.INCONCLUSIVE
    low, high = wilson_interval(n, c)
    if low >= required:
        return RateVerdict.PASS
    if high < required:
        return RateVerdict.FAIL
    return RateVerdict.INCONCLUSIVE


def _log_ratio(q: float, r: float, passed: int, failed: int) -> float:
    """log of the likelihood ratio of rate ``q`` against rate ``r`` for the counts."""
    total = 0.0
    if passed:
        if q <= 0.0:
            return -math.inf
        total += passed * (math.log(q) - math.log(r))
    if failed:
        if q >= 1.0:
            return -math.inf
        total += failed * (math.log1p(-q) - math.log1p(-r))
    return total


def _log_mixture(rates: list[float], r: float, passed: int, failed: int) -> float:
    logs = [_log_ratio(q, r, passed, failed) for q in rates]
    top = max(logs)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in logs)) - math.log(len(logs))


def sequential_verdict(n: int, c: int, required: float, alpha: float = ALPHA) -> RateVerdict:
    """The anytime-valid verdict on ``c`` passes of ``n`` runs against ``required``: PASS
    or FAIL once the evidence for that side reaches ``1 / alpha``, else INCONCLUSIVE.

    Valid whenever it is looked at (after every run, at a cap): the chance of a wrong
    verdict is at most ``alpha`` (see the module docstring).
    """
    _check_rate(required)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if required <= 0.0:
        return RateVerdict.PASS  # every rate is at least 0
    threshold = -math.log(alpha)
    failed = n - c
    if required < 1.0:
        above = [required + (1.0 - required) * j / GRID for j in range(1, GRID + 1)]
        if _log_mixture(above, required, c, failed) >= threshold:
            return RateVerdict.PASS
    elif failed == 0:  # a required rate of 1 is never shown from passes alone
        return RateVerdict.INCONCLUSIVE
    if failed and required >= 1.0:
        return RateVerdict.FAIL  # a rate of 1 never fails
    below = [required * j / GRID for j in range(GRID)]
    if _log_mixture(below, required, c, failed) >= threshold:
        return RateVerdict.FAIL
    return RateVerdict.INCONCLUSIVE


def fisher_less(base_runs: int, base_passed: int, runs: int, passed: int) -> float:
    """One-sided Fisher exact p-value that the current pass rate (``passed`` of ``runs``)
    is lower than the baseline's (``base_passed`` of ``base_runs``).

    Conditional on the total passes, the current passes follow a hypergeometric law under
    "no change"; the p-value is the chance of as few or fewer. Equals
    ``scipy.stats.fisher_exact([[base_passed, base_failed], [passed, failed]],
    alternative="greater").pvalue``. 1.0 when either side has no runs.
    """
    for name, total, good in (("baseline", base_runs, base_passed), ("current", runs, passed)):
        if not 0 <= good <= total:
            raise ValueError(f"{name}: need 0 <= passed <= runs, got runs={total}, passed={good}")
    if base_runs == 0 or runs == 0:
        return 1.0
    total = base_runs + runs
    successes = base_passed + passed
    low = max(0, runs - (total - successes))
    denominator = math.comb(total, runs)
    tail = sum(
        math.comb(successes, k) * math.comb(total - successes, runs - k)
        for k in range(low, passed + 1)
    )
    return min(1.0, tail / denominator)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def _check_rate(required: float) -> None:
    if not 0.0 <= required <= 1.0:
        raise ValueError(f"a required pass rate is between 0 and 1, got {required!r}")
