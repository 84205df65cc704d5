"""The run log: JSON Lines round-trip, appending, migration and the committed schema."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_factories import STARTED, outputs_raised, passing, suite_of, with_spans
from rich.console import Console

from scenarist.errors import UserError
from scenarist.formats.runlog import (
    FORMAT_VERSION,
    SCHEMA_PATH,
    RunEnvironment,
    RunLog,
    RunSettings,
    collect_environment,
    json_schema,
    read_jsonl,
    run_log_from_suite_result,
    write_jsonl,
)
from scenarist.model.results import ScenarioResult, SuiteResult, TestCaseResult
from scenarist.model.trace import Interaction, Trace

ENV = RunEnvironment(python_version="3.12.0", platform="test", hostname="ci", packages={})


def make_log(result: SuiteResult) -> RunLog:
    settings = RunSettings(concurrency=4, repeat=1)
    return run_log_from_suite_result(result, run_id="run-1", settings=settings, environment=ENV)


def plain(obj: object) -> str:
    console = Console(width=100, color_system=None, file=io.StringIO(), record=True)
    console.print(obj)
    return console.export_text()


def test_runlog_round_trip(tmp_path: Path, demo_suite: SuiteResult) -> None:
    demo_suite.results.extend([with_spans(), outputs_raised()])
    log = make_log(demo_suite)
    path = tmp_path / "runs" / "run-1.jsonl"
    write_jsonl(log, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 6 + 1
    assert [json.loads(line)["record_type"] for line in (lines[0], lines[1], lines[-1])] == [
        "header",
        "scenario",
        "footer",
    ]

    again = read_jsonl(path)
    assert again.model_dump(mode="json") == log.model_dump(mode="json")
    assert again.header.format_version == FORMAT_VERSION
    assert again.header.ended_at == STARTED.replace(microsecond=10_000)
    spans = again.scenarios[4].result.final_trace.spans
    assert [s.kind for s in spans] == ["agent", "llm", "tool"]
    assert again.scenarios[4].cost_usd == pytest.approx(0.0012)
    assert again.footer is not None
    assert again.footer.cost_usd == pytest.approx(0.0012)
    # a report re-rendered from the run log looks like the original
    assert plain(again.to_suite_result()) == plain(demo_suite)


def test_runlog_is_appendable_and_reads_without_footer(tmp_path: Path) -> None:
    log = make_log(suite_of(passing(), with_spans()))
    path = tmp_path / "run.jsonl"
    write_jsonl([log.header], path)
    for record in log.scenarios:
        write_jsonl([record], path, append=True)
    partial = read_jsonl(path)
    assert partial.footer is None
    assert [r.result.scenario_name for r in partial.scenarios] == ["passing", "agent_with_tools"]
    assert partial.to_suite_result().passed_count == 1


def test_runlog_writes_non_json_values_as_strings(tmp_path: Path) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "<opaque>"

    trace: Trace[Any, Any] = Trace(interactions=[Interaction(inputs="q", outputs=Opaque())])
    result = ScenarioResult(scenario_name="o", steps=[TestCaseResult()], final_trace=trace)
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(suite_of(result)), path)
    last = read_jsonl(path).scenarios[0].result.final_trace.last
    assert last is not None
    assert last.outputs == "<opaque>"


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("no str")

    def __repr__(self) -> str:
        raise ValueError("no repr")


def _nested(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        node.append([])
        node = node[0]
    return root


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth


def test_runlog_writes_values_json_cannot_hold_in_marked_forms(tmp_path: Path) -> None:
    """Issue 13: these stopped a run with "PydanticSerializationError ... scenarist bug"."""
    cycle: dict[str, Any] = {"k": 1}
    cycle["me"] = cycle
    outputs = {
        "bytes": b"\x00\xff\xfe",
        "cycle": cycle,
        "unprintable": _Unprintable(),
        "text": "a\ud800b",
        "deep": _nested(5000),
        "plain": "still here",
    }
    trace: Trace[Any, Any] = Trace(interactions=[Interaction(inputs="q", outputs=outputs)])
    result = ScenarioResult(scenario_name="odd", steps=[TestCaseResult()], final_trace=trace)
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(suite_of(result)), path)
    last = read_jsonl(path).scenarios[0].result.final_trace.last
    assert last is not None
    out = last.outputs
    assert out["bytes"] == {"__bytes__": "AP/+"}  # base64, lossless
    assert base64.b64decode(out["bytes"]["__bytes__"]) == b"\x00\xff\xfe"
    seen, node = 0, out["cycle"]
    while "__cycle__" not in node:  # marked where it recurs
        assert node["k"] == 1
        node, seen = node["me"], seen + 1
    assert node == {"__cycle__": "builtins.dict"} and seen <= 2
    assert out["unprintable"]["__repr__"] is None
    assert out["unprintable"]["__type__"].endswith("._Unprintable")
    assert out["unprintable"]["__error__"] == (
        "str() raised ValueError: no str; repr() raised ValueError: no repr"
    )
    assert out["text"] == {"__text__": "a\\ud800b"}
    assert 90 < _depth(out["deep"]) < 112  # cut below what the readers accept, then marked
    assert out["plain"] == "still here"


def test_to_json_value_marks_and_never_raises() -> None:
    from scenarist._jsonable import MAX_DEPTH, safe_repr, to_json_value

    cycle: list[Any] = [1]
    cycle.append(cycle)
    assert to_json_value(cycle) == [1, {"__cycle__": "builtins.list"}]
    shared = [1, 2]
    assert to_json_value({"a": shared, "b": shared}) == {"a": [1, 2], "b": [1, 2]}  # no cycle
    assert to_json_value(_Unprintable())["__error__"] == "repr() raised ValueError: no repr"
    bottom = to_json_value(_nested(MAX_DEPTH + 50))
    for _ in range(MAX_DEPTH):
        bottom = bottom[0]
    assert bottom == {"__truncated__": "builtins.list"}
    assert to_json_value({_Unprintable(): 1}) == {f"<{__name__}._Unprintable>": 1}
    assert safe_repr(_Unprintable()).endswith("._Unprintable: repr() raised ValueError: no repr>")


def test_runlog_migrates_format_v0(tmp_path: Path) -> None:
    header = {"format_version": 0, "run_id": "old", "suite_name": "legacy"}
    scenario = {"index": 0, "result": {"scenario_name": "s", "steps": []}}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(scenario) + "\n", encoding="utf-8")
    log = read_jsonl(path)
    assert (log.header.run_id, log.header.format_version) == ("old", FORMAT_VERSION)
    assert log.scenarios[0].result.scenario_name == "s"


def test_runlog_migrates_snapshot_change_kinds_of_format_v2(tmp_path: Path) -> None:
    """Snapshot checks stored before the change kinds became Veval's read as Veval's."""
    changes = [{"kind": "input_changed", "step_name": "a"}, {"kind": "added", "step_name": "b"}]
    snapshot_check = {
        "status": "fail",
        "kind": "trace_matches_snapshot",
        "details": {"snapshot": "base", "changes": changes},
    }
    other = {"status": "fail", "kind": "equals", "details": {"changes": [{"kind": "added"}]}}
    header = {"record_type": "header", "format_version": 2, "run_id": "r2"}
    scenario = {
        "record_type": "scenario",
        "index": 0,
        "result": {"scenario_name": "s", "steps": [{"results": [snapshot_check, other]}]},
    }
    path = tmp_path / "v2.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(scenario) + "\n", encoding="utf-8")
    log = read_jsonl(path)
    snapshot_result, other_result = log.scenarios[0].result.steps[0].results
    assert [c["kind"] for c in snapshot_result.details["changes"]] == ["InputChanged", "Added"]
    assert other_result.details["changes"] == [{"kind": "added"}]  # not a snapshot check's


def test_runlog_writes_the_trace_last_and_readers_ignore_it(tmp_path: Path) -> None:
    """``last`` is derived: written as giskard dumps a trace, ignored on read (so format 3
    logs written before it, and any ``last`` at all, read the same)."""
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(suite_of(passing())), path)
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    trace = record["result"]["final_trace"]
    assert trace["last"] == trace["interactions"][-1]
    assert read_jsonl(path).scenarios[0].result.final_trace.last.outputs == "hello"  # type: ignore[union-attr]

    header = {"record_type": "header", "format_version": FORMAT_VERSION, "run_id": "r"}
    for last in ("absent", {"inputs": "stale", "outputs": "stale"}):
        if last == "absent":
            del trace["last"]
        else:
            trace["last"] = last
        old = tmp_path / "old.jsonl"
        old.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
        final = read_jsonl(old).scenarios[0].result.final_trace
        assert final.last is not None and final.last.outputs == "hello"


def test_runlog_keeps_a_vacuous_check_verdict(tmp_path: Path) -> None:
    from scenarist import AllOf, Equals, Scenario, Suite

    suite = Suite(name="vacuous")
    scenario = Scenario("s").interact("q", "a").check(AllOf(checks=[]))
    suite.append(scenario.check(Equals(expected_value="a")))
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(suite.run_sync(verbose=False)), path)
    empty, equals = read_jsonl(path).scenarios[0].result.steps[0].results
    assert (empty.status, empty.vacuous, equals.vacuous) == ("pass", True, False)
    assert '"vacuous":true' in path.read_text(encoding="utf-8").splitlines()[1]


def test_runlog_rejects_newer_and_empty_files(tmp_path: Path) -> None:
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"record_type": "header", "format_version": 99}) + "\n")
    with pytest.raises(UserError, match="upgrade scenarist"):
        read_jsonl(newer)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserError, match="is empty"):
        read_jsonl(empty)


def test_runlog_committed_schema_is_current() -> None:
    committed = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert committed == json_schema(), (
        "src/scenarist/formats/schemas/runlog.schema.json is out of date with the run log models; "
        "regenerate it with `.venv/bin/python -m scenarist.formats.runlog` and review the diff"
    )


def test_runlog_lines_validate_against_the_schema(tmp_path: Path, demo_suite: SuiteResult) -> None:
    demo_suite.results.append(with_spans())
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(demo_suite), path)
    validator = jsonschema.Draft202012Validator(json_schema())
    for line in path.read_text(encoding="utf-8").splitlines():
        validator.validate(json.loads(line))


def test_runlog_collects_the_environment() -> None:
    env = collect_environment()
    assert env.python_version.count(".") == 2
    assert "scenarist" in env.packages
    assert env.hostname


def test_runlog_flags_passing_scenarios_that_checked_nothing() -> None:
    from scenarist import Equals, Scenario, Suite

    suite = Suite(name="flags")
    suite.append(Scenario("checked").interact("q", "a").check(Equals(expected_value="a")))
    suite.append(Scenario("unchecked").interact("q", "a"))
    log = make_log(suite.run_sync(verbose=False))
    flags = {r.result.scenario_name: (r.check_count, r.no_checks) for r in log.scenarios}
    assert flags == {"checked": (1, False), "unchecked": (0, True)}


def test_runlog_settings_ignore_the_retired_target_name() -> None:
    settings = RunSettings.model_validate({"target_name": "agent", "concurrency": 2})
    assert settings == RunSettings(concurrency=2)


def test_an_output_pydantic_writes_whole_but_too_deep_to_read_is_cut(tmp_path: Path) -> None:
    """pydantic dumps 150 levels without complaint; the readers refuse past 128, so the
    writer cuts and marks it rather than write a log nobody can read."""
    trace: Trace[Any, Any] = Trace(interactions=[Interaction(inputs="q", outputs=_nested(150))])
    result = ScenarioResult(scenario_name="deep", steps=[TestCaseResult()], final_trace=trace)
    path = tmp_path / "run.jsonl"
    write_jsonl(make_log(suite_of(result)), path)
    last = read_jsonl(path).scenarios[0].result.final_trace.last
    assert last is not None
    assert 90 < _depth(last.outputs) < 112


def test_collect_environment_records_the_merge_base_of_a_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feature branch's run log says where it left main (the dashboard's compare uses
    it as the baseline of the branch's first run); a run on main records none."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "one")
    base = git("rev-parse", "HEAD")
    monkeypatch.chdir(tmp_path)
    on_main = collect_environment()
    assert (on_main.git_branch, on_main.git_merge_base) == ("main", None)
    assert "git_merge_base" not in on_main.model_dump(mode="json")  # old logs unchanged
    git("checkout", "-q", "-b", "feature/x")
    git("commit", "-q", "--allow-empty", "-m", "two")
    git("checkout", "-q", "main")
    git("commit", "-q", "--allow-empty", "-m", "three")
    git("checkout", "-q", "feature/x")
    feature = collect_environment()
    assert (feature.git_branch, feature.git_merge_base) == ("feature/x", base)
