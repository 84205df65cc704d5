"""The pytest plugin shows repeats' pass rates and rate verdicts, and ``assert_passed``
follows a required rate (``pytester`` sessions)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def home(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCENARIST_HOME", str(pytester.path / "home"))
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)
    return pytester.path / "home"


def test_plugin_summary_shows_rates_and_assert_passed_follows_the_verdict(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(
        test_rates="""
        import itertools
        from scenarist import Equals, Scenario, Suite

        def _suite(pattern, rate):
            answers = itertools.cycle(pattern)
            return Suite(name="rates", min_pass_rate=rate).extend(
                Scenario("mostly").interact("q", lambda inputs: next(answers))
                .check(Equals(expected_value="ok")))

        def test_rate_shown(scenarist_run):
            # one repeat in 20 fails, yet 95% is shown to be at least 70%
            scenarist_run(_suite(["ok"] * 19 + ["bad"], 0.7), repeat=40).assert_passed()

        def test_rate_not_shown(scenarist_run):
            scenarist_run(_suite(["ok"] * 19 + ["bad"], 0.95), repeat=40).assert_passed()
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert (
        "- mostly [rate 38/40 passed, 95.0% (95% CI 83.5%–98.6%) | min 95.0%: INCONCLUSIVE" in text
    )
    assert "pass rates over repeats (95% Wilson interval):" in text
    assert "  mostly: 38/40 passed, 95.0% (95% CI 83.5%–98.6%) | min 70.0%: PASS | FLAKY" in text
    assert "min pass rate verdicts: 1 pass, 0 fail, 1 inconclusive" in text
