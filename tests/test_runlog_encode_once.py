"""A scenario record is encoded once: the streamed run log, the final one and the
database document share its line, which is never stale (issue 30 item 4)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from scenarist import Scenario, StringMatching, Suite
from scenarist.formats.runlog import (
    ScenarioRecord,
    read_jsonl,
    record_json,
    run_log_from_suite_result,
)


def _result(name: str = "a") -> object:
    suite = Suite(name="s", target=lambda x: x)
    suite.append(Scenario(name).interact("hi").check(StringMatching(keyword="hi")))
    return suite.run_sync(verbose=False)


def test_a_record_line_is_reused_and_dropped_when_the_record_changes() -> None:
    result = _result().results[0]  # type: ignore[attr-defined]
    record = ScenarioRecord.from_result(0, result)
    line = record_json(record)
    assert record_json(record) is line  # encoded once
    assert json.loads(line)["index"] == 0
    record.index = 7
    assert json.loads(record_json(record))["index"] == 7
    copied = record.model_copy(update={"index": 9})
    assert json.loads(record_json(copied))["index"] == 9
    assert json.loads(record_json(record))["index"] == 7


def test_the_final_log_reuses_the_streamed_records_of_the_same_results() -> None:
    suite_result = _result()
    results = suite_result.results  # type: ignore[attr-defined]
    streamed = [ScenarioRecord.from_result(0, results[0], "in-process")]
    from scenarist.model.certificate import ReplayCertificate

    certificate = ReplayCertificate.combine([], "in-process")
    log = run_log_from_suite_result(suite_result, certificate=certificate, records=streamed)  # type: ignore[arg-type]
    assert log.scenarios[0] is streamed[0]
    other = run_log_from_suite_result(suite_result, records=streamed)  # type: ignore[arg-type]
    assert other.scenarios[0] is not streamed[0]  # another guarantee: made again
    assert other.scenarios[0].certificate is None


SCENARIOS = """
from scenarist import Scenario, StringMatching, Suite

suite = Suite(name="enc", target=lambda x: x.upper())
for i in range(5):
    suite.append(Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"Q{i}")))
"""


def test_cli_run_log_file_and_database_hold_the_same_record_lines(tmp_path: Path) -> None:
    (tmp_path / "enc_scenarios.py").write_text(SCENARIOS)
    home = tmp_path / "home"
    env = {**os.environ, "SCENARIST_HOME": str(home)}
    env.pop("SCENARIST_URL", None)
    env.pop("SCENARIST_DATABASE_URL", None)
    cmd = [sys.executable, "-m", "scenarist", "run", "enc_scenarios.py", "-q", "--parallel", "3"]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (log_file,) = (home / "runs").glob("*.jsonl")
    lines = log_file.read_text().splitlines()
    log = read_jsonl(log_file)
    assert log.footer is not None and len(log.scenarios) == 5
    by_index = {json.loads(line)["index"]: line for line in lines[1:-1]}
    assert sorted(by_index) == [0, 1, 2, 3, 4]
    (database,) = home.glob("*.db")
    with sqlite3.connect(database) as connection:
        rows = connection.execute(
            "select position, document from scenario_results where run_id = ?",
            (log.header.run_id,),
        ).fetchall()
    assert dict(rows) == by_index
