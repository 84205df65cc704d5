"""The HTML report says what the console says about our verdicts: the repeats' rate and
interval with its verdict, a calibrated judge's badge, an error's origin."""

from __future__ import annotations

import itertools

from scenarist import Scenario, StringMatching, Suite
from scenarist.model.results import CheckResult
from scenarist.report.html import to_html


def test_repeats_show_their_rate_interval_and_verdict() -> None:
    answers = itertools.cycle(["yes", "yes", "yes", "no"])
    suite = Suite(name="s", target=lambda q: next(answers))
    suite.append(Scenario("mostly").interact("q").check(StringMatching(keyword="yes")))
    result = suite.run_sync(repeat=8, min_pass_rate=0.5)
    stats = result.results[0].repeat_stats
    assert stats is not None
    html = to_html(result)
    assert f'<small class="rate">{stats.describe()}</small>' in html.replace("&#x27;", "'")


def test_a_calibrated_verdict_carries_its_badge_and_an_error_its_origin() -> None:
    def lookup(question: str) -> str:
        raise ConnectionError("upstream CRM returned 503")

    suite = Suite(name="s", target=lookup)
    suite.append(Scenario("crashes").interact("q").check(StringMatching(keyword="x")))
    suite.append(
        Scenario("judged").interact("q", outputs="yes").check(StringMatching(keyword="yes"))
    )
    result = suite.run_sync(return_exception=True)
    badge = {"kappa": 0.5833, "agreement": 0.8, "n": 10, "date": "2026-12-05"}
    judged = result.results[1].steps[0]
    judged.results[0] = CheckResult.success("Matches.", details={"calibration": badge})
    html = to_html(result)
    assert "calibrated κ 0.58, agreement 80.0%, n=10, 2026-12-05" in html
    assert "ConnectionError in the agent call: upstream CRM returned 503" in html
    assert "in lookup" in html
