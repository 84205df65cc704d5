"""The one run-log codec through the server's ingest (``POST /api/runs``) and the remote
upload (``RemoteStore.upload_run_log`` against a real server): the same logs are accepted
and refused, with the same messages, as ``scenarist report`` (tests/test_runlog_codec.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.server.conftest import LiveServer, make_run_log, run_log_json

from scenarist import Equals, Scenario, Suite
from scenarist._sync import run_sync
from scenarist.errors import RunLogError
from scenarist.formats.runlog import run_log_from_suite_result, write_jsonl
from scenarist.store.remote import RemoteStore

pytestmark = pytest.mark.anyio


def _lines(log_json: dict[str, Any]) -> list[str]:
    return [json.dumps(r) for r in (log_json["header"], *log_json["scenarios"], log_json["footer"])]


def _v1(log_json: dict[str, Any]) -> dict[str, Any]:
    """The log as scenarist wrote it before format 2: check identity in ``details`` only."""
    old = json.loads(json.dumps(log_json))
    old["header"]["format_version"] = 1
    for scenario in old["scenarios"]:
        for step in scenario["result"]["steps"]:
            for check in step["results"]:
                for typed in ("kind", "name", "duration_ms"):
                    check.pop(typed, None)
    return old


async def test_ingest_takes_a_cut_last_line_and_refuses_a_broken_middle_one(
    app_client: httpx2.AsyncClient,
) -> None:
    lines = _lines(run_log_json(make_run_log("cut")))
    ndjson = {"content-type": "application/x-ndjson"}
    cut = "\n".join(lines[:-1]) + "\n" + lines[-1][:20]
    taken = await app_client.post("/api/runs", content=cut.encode(), headers=ndjson)
    assert taken.status_code == 201, taken.text
    assert taken.json()["scenario_count"] == 2
    assert (await app_client.get("/api/runs/cut")).json()["complete"] is False
    broken = "\n".join([lines[0], lines[1][:20], *lines[2:]]) + "\n"
    refused = await app_client.post(
        "/api/runs", content=broken.replace('"cut"', '"broken"').encode(), headers=ndjson
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_json")
    assert refused.json()["error"]["message"].startswith("request body line 2 is not valid JSON")
    assert "fix or delete line 2" in refused.json()["error"]["message"]


async def test_ingest_migrates_v1_verdicts_and_stores_them_typed(
    app_client: httpx2.AsyncClient,
) -> None:
    old = _v1(run_log_json(make_run_log("old")))
    assert (await app_client.post("/api/runs", json=old)).status_code == 201
    run = (await app_client.get("/api/runs/old")).json()
    checks = [c for s in run["scenarios"] for c in s["checks"]]
    assert {(c["check_kind"], c["check_name"]) for c in checks} == {("equals", None)}


async def test_ingest_names_the_invalid_field_and_the_fix(app_client: httpx2.AsyncClient) -> None:
    body = run_log_json(make_run_log("bad"))
    body["scenarios"][1]["result"]["scenario_name"] = 7
    answer = await app_client.post("/api/runs", json=body)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["fields"][0]["field"] == "scenarios.1.result.scenario_name"
    assert error["message"].startswith(
        "request body record 2: field scenarios.1.result.scenario_name: Input should be a "
        "valid string; fix the record"
    )


def test_remote_upload_reads_through_the_codec(live_server: LiveServer, tmp_path: Path) -> None:
    store = RemoteStore(live_server.url, retries=0)
    lines = _lines(_v1(run_log_json(make_run_log("remote-old"))))
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:15], encoding="utf-8")
    uploaded = run_sync(store.upload_run_log, cut)
    assert (uploaded.created, uploaded.complete, uploaded.scenario_count) == (True, False, 2)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], "{oops", *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(RunLogError, match=r"'.*broken.jsonl' line 2 is not valid JSON"):
        run_sync(store.upload_run_log, broken)
    invalid = tmp_path / "invalid.jsonl"
    body = run_log_json(make_run_log("remote-bad"))
    body["scenarios"][0]["index"] = "first"
    invalid.write_text("\n".join(_lines(body)) + "\n", encoding="utf-8")
    with pytest.raises(RunLogError, match=r"line 2: field scenarios\.0\.index: Input should be"):
        run_sync(store.upload_run_log, invalid)


async def test_dashboard_summary_is_the_cli_and_plugin_line(app_client: httpx2.AsyncClient) -> None:
    from scenarist.cli.run import verdict
    from scenarist.pytest_plugin import SessionState, summary_lines

    log = make_run_log("same", outcomes={"a": True, "b": False, "c": True})
    assert (await app_client.post("/api/runs", json=run_log_json(log))).status_code == 201
    page = (await app_client.get("/runs/same.json")).json()
    result = log.to_suite_result()
    line = "3 scenarios: 2 passed, 1 failed, 0 errored, 0 skipped | pass rate 66.7%"
    assert result.summary_line() == line
    assert page["summary"].startswith(line + " | ")
    assert page["run"]["pass_rate"] == result.pass_rate
    assert verdict(result).line.endswith(" | " + line)
    assert summary_lines(SessionState(results=result.results))[0].startswith(line + " | cost ")


# --- U+2028, U+2029, U+0085: JSON Lines split at \n alone (issue 13) ----------------------

SEPARATORS = "line\u2028sep\u2029para\x85next\x0bvt\x0cff\x1crs end"


def _separator_log(run_id: str, tmp_path: Path) -> Path:
    """A run log file that ``scenarist`` wrote for an agent answering ``SEPARATORS``."""
    scenario = (
        Scenario("seps")
        .interact("q", lambda inputs: SEPARATORS)
        .check(Equals(expected_value=SEPARATORS, target_key="trace.last.outputs"))
    )
    result = Suite(name="seps", scenarios=[scenario]).run_sync()
    path = tmp_path / f"{run_id}.jsonl"
    write_jsonl(run_log_from_suite_result(result, run_id=run_id), path)
    assert "\u2028" in path.read_text(encoding="utf-8")  # written raw, as JSON allows
    return path


async def test_ingest_ndjson_keeps_line_separators_inside_records(
    app_client: httpx2.AsyncClient, tmp_path: Path
) -> None:
    body = _separator_log("seps-ndjson", tmp_path).read_bytes()
    answer = await app_client.post(
        "/api/runs", content=body, headers={"content-type": "application/x-ndjson"}
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["scenario_count"] == 1
    run = (await app_client.get("/api/runs/seps-ndjson")).json()
    assert run["complete"] is True and run["scenarios"][0]["status"] == "pass"
    page = (await app_client.get("/runs/seps-ndjson/scenarios/0.json")).json()
    assert page["interactions"][0]["outputs"] == SEPARATORS


def test_remote_upload_keeps_line_separators(live_server: LiveServer, tmp_path: Path) -> None:
    store = RemoteStore(live_server.url, retries=0)
    uploaded = run_sync(store.upload_run_log, _separator_log("seps-remote", tmp_path))
    assert (uploaded.created, uploaded.complete, uploaded.scenario_count) == (True, True, 1)
    page = httpx2.get(f"{live_server.url}/runs/seps-remote/scenarios/0.json", timeout=60)
    assert page.status_code == 200, page.text
    assert page.json()["interactions"][0]["outputs"] == SEPARATORS


def test_remote_upload_of_a_log_cut_inside_a_character_is_an_incomplete_run(
    live_server: LiveServer, tmp_path: Path
) -> None:
    log = make_run_log("cut-char", outcomes={"one": True, "caf\u00e9 \u65e5\u672c": True})
    path = tmp_path / "cut-char.jsonl"
    write_jsonl(log, path)
    data = path.read_bytes()
    second_record = data.index(b"\n", data.index(b"\n") + 1) + 1
    inside = data.index("\u65e5".encode(), second_record) + 1  # between a character's bytes
    path.write_bytes(data[:inside])
    uploaded = run_sync(RemoteStore(live_server.url, retries=0).upload_run_log, path)
    assert (uploaded.created, uploaded.complete, uploaded.scenario_count) == (True, False, 1)
