"""The one run-log codec through ``scenarist report <file>``, and the typed check identity
(``CheckResult.kind``/``name``/``duration_ms``) with its giskard-checks compatibility. The
server and remote-upload entry points are in tests/server/test_runlog_ingest.py."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from scenarist import CheckResult, Equals, Scenario, Suite
from scenarist.cli.app import app
from scenarist.runlog import read_jsonl, run_log_from_suite_result, write_jsonl


def _log_lines(tmp_path: Path) -> list[str]:
    scenarios = [
        Scenario(name).interact("hi", lambda x: x).check(Equals(expected_value=want, name="eq"))
        for name, want in (("ok", "hi"), ("ko", "bye"))
    ]
    result = Suite(name="s", scenarios=scenarios).run_sync()
    path = tmp_path / "full.jsonl"
    write_jsonl(run_log_from_suite_result(result, run_id="r1"), path)
    return path.read_text(encoding="utf-8").splitlines()


def _report(path: Path) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, ["report", str(path)])
    return done.exit_code, done.stdout, done.stderr


def test_report_drops_a_cut_last_line_with_a_note(tmp_path: Path) -> None:
    lines = _log_lines(tmp_path)
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:30], encoding="utf-8")
    code, out, err = _report(path)
    assert code == 0, err
    assert "Summary: 2 total" in out
    assert f"line {len(lines)} was cut off mid-write" in err


def test_report_refuses_a_broken_line_that_is_not_the_last(tmp_path: Path) -> None:
    lines = _log_lines(tmp_path)
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join([lines[0], lines[1][:30], *lines[2:]]) + "\n", encoding="utf-8")
    code, _, err = _report(path)
    assert code != 0
    assert f"run log {str(path)!r} line 2 is not valid JSON" in " ".join(err.split())
    assert "fix or delete line 2" in err
    whole_last_broken = tmp_path / "last.jsonl"
    whole_last_broken.write_text("\n".join([*lines[:-1], "{oops"]) + "\n", encoding="utf-8")
    assert "is not valid JSON" in _report(whole_last_broken)[2]  # complete line: never dropped


def test_report_names_the_line_and_field_of_an_invalid_record(tmp_path: Path) -> None:
    lines = _log_lines(tmp_path)
    record = json.loads(lines[2])
    record["index"] = "second"
    path = tmp_path / "invalid.jsonl"
    path.write_text("\n".join([*lines[:2], json.dumps(record), *lines[3:]]) + "\n")
    code, _, err = _report(path)
    assert code != 0
    assert "line 3: field scenarios.1.index: Input should be a valid integer" in " ".join(
        err.split()
    )


def test_read_migrates_v1_check_identity_from_details(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in _log_lines(tmp_path)]
    lines[0]["format_version"] = 1
    for record in lines[1:-1]:
        for step in record["result"]["steps"]:
            for check in step["results"]:
                del check["kind"], check["name"], check["duration_ms"]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    log = read_jsonl(path)
    checks = [c for s in log.scenarios for step in s.result.steps for c in step.results]
    assert [(c.kind, c.name, c.duration_ms is not None) for c in checks] == [
        ("equals", "eq", True)
    ] * 2
    code, out, _ = _report(path)
    assert code == 0 and "1 passed" in out


def test_check_result_identity_is_typed_and_mirrored_in_details() -> None:
    scenario = Scenario("s").interact("hi", lambda x: x).check(Equals(expected_value="hi"))
    verdict = scenario.run_sync().steps[0].results[0]
    assert (verdict.kind, verdict.name) == ("equals", None)
    assert verdict.duration_ms is not None
    # giskard-checks 1.0.6 puts these in details; code reading them there still works
    assert verdict.details["check_kind"] == "equals"
    assert verdict.details["duration_ms"] == verdict.duration_ms
    assert verdict.label == "equals"


def test_check_result_built_by_hand_dumps_as_in_giskard() -> None:
    made = CheckResult(status="pass", message="ok")
    assert made.model_dump() == {
        "status": "pass",
        "message": "ok",
        "metrics": [],
        "details": {},
    }
    assert CheckResult.failure("no").model_dump().keys() == {
        "status",
        "message",
        "metrics",
        "details",
    }
    named = CheckResult(status="fail", kind="mine", name="m")
    assert named.model_dump()["kind"] == "mine"
    assert named.label == "m"


def test_console_report_and_cli_line_agree_on_the_pass_rate(tmp_path: Path) -> None:
    from scenarist.cli.run import verdict

    _log_lines(tmp_path)
    result = read_jsonl(tmp_path / "full.jsonl").to_suite_result()
    console = Console(width=200, no_color=True, record=True)
    result.print_report(console=console)
    text = console.export_text()
    assert "Summary: 2 total, 1 failed, 1 passed | Pass Rate: 50.0%" in text
    assert "2 scenarios: 1 passed, 1 failed, 0 errored, 0 skipped | pass rate 50.0%" in (
        verdict(result).line
    )
