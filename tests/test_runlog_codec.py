"""The one run-log codec through ``scenarist report <file>``, and the typed check identity
(``CheckResult.kind``/``name``/``duration_ms``) with its giskard-checks compatibility. The
server and remote-upload entry points are in tests/server/test_runlog_ingest.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from scenarist import CheckResult, Equals, Scenario, Suite
from scenarist.cli.app import app
from scenarist.formats.runlog import read_jsonl, run_log_from_suite_result, write_jsonl


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
    assert "Summary: INCOMPLETE | 2 total" in out  # the torn line was the end record
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


# --- interrupted logs and the characters str.splitlines breaks at (issue 13) ------------

SEPARATORS = "line\u2028sep\u2029para\x85next\x0bvt\x0cff\x1cfs\x1dgs\x1ers end"


def _logged(tmp_path: Path, output: str, *, footer: bool = True) -> Path:
    scenarios = [
        Scenario(name).interact("hi", lambda x, out=out: out).check(Equals(expected_value=out))
        for name, out in (("first", output), ("second", output), ("third", output))
    ]
    log = run_log_from_suite_result(Suite(name="s", scenarios=scenarios).run_sync(), run_id="r1")
    if not footer:
        log.footer = None
    path = tmp_path / "run.jsonl"
    write_jsonl(log, path)
    return path


def test_report_re_renders_a_log_cut_inside_a_multibyte_character(tmp_path: Path) -> None:
    data = _logged(tmp_path, "caf\u00e9 \u65e5\u672c", footer=False).read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    inside = data.index("\u65e5".encode(), last_start) + 1  # between a character's bytes
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data[:inside])
    code, out, err = _report(path)
    assert code == 0, err
    assert "line 4 was cut off mid-write (the run was interrupted) and is left out" in err
    assert "Summary: INCOMPLETE" in out and "2 total, 2 passed" in out


def test_report_of_a_log_without_its_end_record_says_incomplete(tmp_path: Path) -> None:
    path = _logged(tmp_path, "hi", footer=False)
    log = read_jsonl(path)
    result = log.to_suite_result()
    assert result.incomplete
    code, out, err = _report(path)
    assert code == 0, err
    assert "INCOMPLETE: this run log has no end record (the run was interrupted)" in out
    summary = next(line for line in out.splitlines() if line.startswith("Summary:"))
    assert summary.startswith("Summary: INCOMPLETE | 3 total, 3 passed | Pass Rate: 100.0%")
    assert result.summary_line().startswith("INCOMPLETE run (no end record): 3 scenarios: 3 passed")
    for fmt, marker in (
        ("junit", '<property name="incomplete" value="true"'),
        ("html", "INCOMPLETE"),
    ):
        done = CliRunner().invoke(app, ["report", str(path), "--format", fmt])
        assert done.exit_code == 0 and marker in done.stdout, (fmt, done.stdout[:500])
    complete = _logged(tmp_path, "hi")
    assert not read_jsonl(complete).to_suite_result().incomplete
    assert "INCOMPLETE" not in _report(complete)[1]


def test_json_lines_split_at_newline_only(tmp_path: Path) -> None:
    """U+2028, U+2029, U+0085 and the other characters ``str.splitlines`` breaks at are
    written raw inside JSON strings; a record containing them is still one line."""
    path = _logged(tmp_path, SEPARATORS)
    assert "\u2028" in path.read_text(encoding="utf-8")  # raw, as JSON writers leave it
    log = read_jsonl(path)
    outputs = [r.result.final_trace.interactions[0].outputs for r in log.scenarios]
    assert outputs == [SEPARATORS] * 3
    assert log.footer is not None and log.footer.passed_count == 3
    done = CliRunner().invoke(app, ["report", str(path), "--format", "json"])
    assert done.exit_code == 0, done.stderr
    dumped = json.loads(done.stdout)
    assert dumped["scenarios"][0]["result"]["final_trace"]["interactions"][0]["outputs"] == (
        SEPARATORS
    )


def test_run_then_report_keeps_line_separators_in_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    (tmp_path / "seps.py").write_text(
        "from scenarist import Equals, Scenario\n"
        f"OUT = {SEPARATORS!r}\n"
        "s = Scenario('seps', target=lambda i: OUT).interact('q')"
        ".check(Equals(expected_value=OUT))\n",
        encoding="utf-8",
    )
    ran = CliRunner().invoke(app, ["run", "seps.py"])
    assert ran.exit_code == 0, ran.output
    (stored,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    again = CliRunner().invoke(app, ["report", str(stored), "--format", "json"])
    assert again.exit_code == 0, again.stderr
    interactions = json.loads(again.stdout)["scenarios"][0]["result"]["final_trace"]["interactions"]
    assert interactions[0]["outputs"] == SEPARATORS


def test_split_jsonl_is_the_one_line_splitting() -> None:
    from scenarist._jsonable import split_jsonl

    text = '{"a": "x\u2028y"}\n\n{"b": 1}\n{"c": "torn'
    assert split_jsonl(text) == ([(1, '{"a": "x\u2028y"}'), (3, '{"b": 1}')], '{"c": "torn')
    assert split_jsonl(text.encode()) == (
        [(1, '{"a": "x\u2028y"}'.encode()), (3, b'{"b": 1}')],
        b'{"c": "torn',
    )
    assert split_jsonl("one\n") == ([(1, "one")], "")
