"""Degenerate judges are noticed: constant verdicts and bad calibrations are warned about in
the reports, ``scenarist judges calibrate`` is reachable from the CLI, and a judge's reasons
for its passes are visible in the HTML report (the dashboard: tests/server)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from scenarist import Conformity, Scenario, Suite
from scenarist.checks.base import Check
from scenarist.cli.app import app
from scenarist.judges.base import BaseLLMCheck
from scenarist.judges.health import (
    JUDGE_KINDS,
    judge_warnings,
    load_calibrations,
)
from scenarist.model.results import SuiteResult
from scenarist.report.html import to_html
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

from .conftest import FakeProvider, verdict


def constant_judge(n: int) -> FakeProvider:
    return FakeProvider(
        *[verdict(True, "The reply looks fine to me.", 0.5) for _ in range(n)], name="tiny/judge"
    )


def suite_with(judge: Any, n: int = 3) -> SuiteResult:
    scenarios = [
        Scenario(f"s{i}").interact("q", outputs=f"a{i}").check(Conformity(rule="r", judge=judge))
        for i in range(n)
    ]
    return Suite(name="judged", scenarios=scenarios).run_sync(verbose=False)


def report_text(result: SuiteResult) -> str:
    out = io.StringIO()
    result.print_report(console=Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_a_judge_that_always_passes_is_warned_about_in_the_console(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    result = suite_with(constant_judge(3))
    assert result.passed_count == 3
    (warning,) = judge_warnings(result.results)
    assert warning.startswith(
        "judge tiny/judge gave the same verdict (pass) and the same score 0.5 to all 3 of its "
        "checks in this run: it may not be judging"
    )
    assert "scenarist judges calibrate LABELS --judge tiny/judge" in warning
    assert f"Judge warning: {warning}" in " ".join(report_text(result).split())


def test_varied_verdicts_or_too_few_raise_no_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    assert judge_warnings(suite_with(constant_judge(2), n=2).results) == []
    mixed = FakeProvider(
        verdict(True, "The reply is polite enough."),
        verdict(False, "The reply insults the user."),
        verdict(True, "The reply thanks the user."),
        name="good/judge",
    )
    assert judge_warnings(suite_with(mixed).results) == []


def test_a_saved_calibration_below_the_threshold_is_warned_about(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    (tmp_path / "calibrations.json").write_text(
        json.dumps({"good/judge": {"kappa": 0.1, "judged": 8, "calibrated_at": "today"}})
    )
    mixed = FakeProvider(
        verdict(True, "The reply is polite enough."),
        verdict(False, "The reply insults the user."),
        name="good/judge",
    )
    (warning,) = judge_warnings(suite_with(mixed, n=2).results)
    assert "calibration κ 0.10 < 0.40 over 8 labelled case(s) (today)" in warning
    monkeypatch.setenv("SCENARIST_MIN_JUDGE_KAPPA", "0.05")
    assert judge_warnings(suite_with(mixed_again(), n=2).results) == []


def mixed_again() -> FakeProvider:
    return FakeProvider(
        verdict(True, "The reply is polite enough."),
        verdict(False, "The reply insults the user."),
        name="good/judge",
    )


def test_the_html_report_shows_a_judges_reasons_for_passes_and_the_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    page = to_html(suite_with(constant_judge(3)))
    assert page.count('<li class="judge-reason">') == 3
    assert "The reply looks fine to me." in page
    assert "<strong>Judge warning</strong>: judge tiny/judge gave the same verdict" in page
    # outside the collapsed details body: in the summary line of each passing scenario
    summary = page.split("<summary>", 1)[1].split("</summary>", 1)[0]
    assert "judge-reason" in summary


def test_the_built_in_judge_kinds_are_every_registered_judge_check() -> None:
    kinds = set()
    for kind in Check.kinds():
        cls = Check.kind_class(kind) if hasattr(Check, "kind_class") else None
        if cls is None:
            cls = type(Check.model_validate({"kind": kind, **_minimal(kind)}))
        if issubclass(cls, BaseLLMCheck):
            kinds.add(kind)
    assert kinds == set(JUDGE_KINDS)


def _minimal(kind: str) -> dict[str, Any]:
    return {
        "llm_judge": {"prompt": "x"},
        "conformity": {"rule": "r"},
        "trace_judge": {"criteria": "c"},
    }.get(kind, {})


# -- scenarist judges calibrate ------------------------------------------------------------

LABELS = {
    "check": {"kind": "conformity", "rule": "Be polite."},
    "cases": [
        {"name": "thanks", "inputs": "q", "outputs": "Thank you kindly!", "expected": True},
        {"name": "please", "inputs": "q", "outputs": "Please wait a moment.", "expected": True},
        {"name": "rude", "inputs": "q", "outputs": "Go away, idiot.", "expected": False},
        {
            "name": "two turns",
            "trace": [
                {"inputs": "hi", "outputs": "Hello there."},
                {"inputs": "refund?", "outputs": "No. Stop asking, idiot."},
            ],
            "expected": False,
        },
    ],
}


def keyword_judge(request: FakeRequest) -> Reply:
    rude = "idiot" in request.body["messages"][-1]["content"]
    reason = "The reply insults the user." if rude else "The reply is courteous throughout."
    return Reply(json.dumps({"passed": not rude, "reason": reason}))


def always_pass(request: FakeRequest) -> Reply:
    return Reply(json.dumps({"passed": True, "reason": "The reply looks fine to me."}))


Run = Callable[..., Any]


@pytest.fixture
def calibrate_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[Callable[[FakeRequest], Reply], dict[str, Any]], Any]:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))

    def run(script: Callable[[FakeRequest], Reply], labels: dict[str, Any], *extra: str) -> Any:
        path = tmp_path / "labels.yaml"
        import yaml

        path.write_text(yaml.safe_dump(labels), encoding="utf-8")
        with FakeLLMServer(ScriptedLLM(script)) as server:
            monkeypatch.setenv("SCENARIST_LLAMACPP_BASE_URL", server.openai_url)
            result = CliRunner().invoke(
                app, ["judges", "calibrate", str(path), "--judge", "llamacpp/smollm2", *extra]
            )
            result.requests = len(server.requests)  # type: ignore[attr-defined]
        return result

    return run


def test_calibrate_a_good_judge_from_the_cli_exits_0_and_keeps_it(
    calibrate_cli: Any, tmp_path: Path
) -> None:
    result = calibrate_cli(keyword_judge, LABELS)
    assert result.exit_code == 0, result.output
    assert result.requests == 4
    text = " ".join(result.stdout.split())
    assert "Judge llamacpp/smollm2, check conformity, 4 labelled case(s)" in text
    assert "Cohen's κ │ 1.000" in text
    assert "scenarist: judge llamacpp/smollm2 agrees with the labels: κ 1.000 ≥ 0.40" in text
    saved = load_calibrations(tmp_path / "home" / "calibrations.json")
    assert saved["llamacpp/smollm2"]["kappa"] == 1.0
    assert saved["llamacpp/smollm2"]["judged"] == 4


def test_calibrate_a_constant_judge_exits_1_and_later_runs_warn(
    calibrate_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = calibrate_cli(always_pass, LABELS)
    assert result.exit_code == 1
    text = " ".join(result.stdout.split())
    assert "TNR (fail recall) │ 0.0%" in text
    assert "scenarist: judge llamacpp/smollm2 is not reliable: κ 0.000 < 0.40" in text
    assert "rude: labelled fail, judge pass" in text
    # the saved calibration now flags the judge in a run's report
    with FakeLLMServer(ScriptedLLM(keyword_judge)) as server:
        monkeypatch.setenv("SCENARIST_LLAMACPP_BASE_URL", server.openai_url)
        run = suite_with("llamacpp/smollm2", n=1)
    (warning,) = judge_warnings(run.results)
    assert "judge llamacpp/smollm2 agreed with human labels no better than chance" in warning


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"cases": []}, "no labelled cases"),
        ({"cases": [{"inputs": "q", "outputs": "a"}]}, "cases[0].expected must be true or false"),
        ({"cases": [{"inputs": "q", "expected": True}]}, "cases[0] needs 'inputs' and 'outputs'"),
        (
            {
                "check": {"kind": "equals", "expected_value": "a"},
                "cases": [{"outputs": "a", "expected": True}],
            },
            "'check' must be a judge check (kind 'equals' is not)",
        ),
    ],
)
def test_calibrate_bad_labels_name_the_file_and_case(
    calibrate_cli: Any, labels: dict[str, Any], message: str
) -> None:
    result = calibrate_cli(always_pass, labels, "--no-save")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "labels.yaml" in result.stderr
