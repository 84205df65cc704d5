"""``scenarist run`` on files that hold items: a Python file whose module level runs
trace-backed items (``run_scenario(..., items=...)``), and an item list (YAML/JSON). The
CLI runs in a real process; the recording is made with a real client on the same store."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from scenarist.store import SqlStore
from scenarist.tracing import RunContext
from scenarist.veval.client import Client

SCRIPT = Path(sys.executable).parent / "scenarist"

AGENT = """
def lookup(order):
    return {"order": order, "status": "late"}

def agent(ctx):
    found = ctx.track_step("lookup", "A1", lambda: lookup("A1"))
    return f"order {found['order']} is {found['status']}"
"""


def _env(tmp_path: Path) -> dict[str, str]:
    drop = {"SCENARIST_RECORD_MODE", "SCENARIST_URL", "SCENARIST_DATABASE_URL", "NO_COLOR"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "SCENARIST_HOME": str(tmp_path / "home"), "COLUMNS": "200"}


def _record(tmp_path: Path) -> str:
    """A production-like trace in the store the CLI will use: its id."""
    namespace: dict[str, object] = {}
    exec(AGENT, namespace)  # the same agent code the files below run
    store = SqlStore(tmp_path / "home" / "scenarist.db")
    (tmp_path / "home").mkdir(parents=True, exist_ok=True)

    async def record() -> str:
        ctx = RunContext(input="where is A1?", agent_name="support")
        await Client(store=store)._execute(ctx, namespace["agent"])  # type: ignore[arg-type]
        return ctx.trace_id

    return asyncio.run(record())


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "run", *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
    )


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _cases(junit: Path) -> dict[str, str]:
    """Each test case's name and outcome (pass, failure, error)."""
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "pass"
        for kind in ("failure", "error"):
            if case.find(kind) is not None:
                outcome = kind
        outcomes[case.get("name", "")] = outcome
    return outcomes


def _python_items(trace_id: str, *, expected: str) -> str:
    return AGENT + textwrap.dedent(
        f"""
        from scenarist import ScenarioItem, TraceAssert, run_scenario

        result = run_scenario(
            "regressions",
            agent,
            [TraceAssert.no_errors()],
            items=[
                ScenarioItem(
                    name="late order",
                    trace_id={trace_id!r},
                    assertions=[TraceAssert.output_contains({expected!r}, where="final")],
                )
            ],
        )
        """
    )


def test_a_python_file_of_trace_backed_items_passes_exit_0(tmp_path: Path) -> None:
    trace_id = _record(tmp_path)
    _write(tmp_path, "replay_items.py", _python_items(trace_id, expected="is late"))
    run = _run(tmp_path, "replay_items.py", "--junit", "report.xml")
    assert run.returncode == 0, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("scenarist: PASSED (exit 0)"), last
    assert "1 passed" in last
    assert _cases(tmp_path / "report.xml") == {"regressions / late order": "pass"}


def test_a_python_file_whose_item_fails_exits_1_with_the_failure_in_junit(
    tmp_path: Path,
) -> None:
    trace_id = _record(tmp_path)
    _write(tmp_path, "replay_items.py", _python_items(trace_id, expected="refunded"))
    run = _run(tmp_path, "replay_items.py", "--junit", "report.xml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("scenarist: FAILED (exit 1)")
    assert _cases(tmp_path / "report.xml") == {"regressions / late order": "failure"}
    assert "refunded" in (tmp_path / "report.xml").read_text()


def test_a_python_file_whose_scenario_run_has_no_items_exits_2(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "empty_items.py",
        AGENT + "\nfrom scenarist import run_scenario\nrun_scenario('nothing', agent, items=[])\n",
    )
    run = _run(tmp_path, "empty_items.py")
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("scenarist: ERROR (exit 2)")
    assert "nothing was tested" in run.stdout


def test_scenarios_and_items_of_one_file_count_together(tmp_path: Path) -> None:
    trace_id = _record(tmp_path)
    text = _python_items(trace_id, expected="is late") + textwrap.dedent(
        """
        from scenarist import Scenario, StringMatching
        plain = (
            Scenario("plain").interact("x", outputs="y").check(StringMatching(keyword="z"))
        )
        """
    )
    _write(tmp_path, "mixed.py", text)
    run = _run(tmp_path, "mixed.py", "--junit", "report.xml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert _cases(tmp_path / "report.xml") == {
        "plain": "failure",
        "regressions / late order": "pass",
    }


ITEM_LIST = """
scenario_name: support-regressions
agent: support_agent:agent
assertions:
  - kind: trace_no_errors
items:
  - name: late order
    trace_id: {trace_id}
    assertions:
      - kind: trace_output_contains
        expected: "{expected}"
        where: final
  - name: live question
    input: where is A1?
"""


def test_an_item_list_file_runs_with_exit_codes_and_junit(tmp_path: Path) -> None:
    trace_id = _record(tmp_path)
    _write(tmp_path, "support_agent.py", AGENT)
    _write(tmp_path, "support.items.yaml", ITEM_LIST.format(trace_id=trace_id, expected="late"))
    run = _run(tmp_path, "support.items.yaml", "--junit", "report.xml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _cases(tmp_path / "report.xml") == {
        "support-regressions / late order": "pass",
        "support-regressions / live question": "pass",
    }
    bad = ITEM_LIST.format(trace_id=trace_id, expected="refunded")
    _write(tmp_path, "support.items.yaml", bad)
    failed = _run(tmp_path, "support.items.yaml", "--junit", "report.xml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert _cases(tmp_path / "report.xml")["support-regressions / late order"] == "failure"


def test_a_folder_finds_item_lists_by_name(tmp_path: Path) -> None:
    trace_id = _record(tmp_path)
    _write(tmp_path, "support_agent.py", AGENT)
    suite = tmp_path / "suite"
    suite.mkdir()
    _write(suite, "support.items.json", "")
    (suite / "support.items.json").write_text(
        '{"scenario_name": "json-items", "agent": "../support_agent.py:agent", '
        f'"items": [{{"trace_id": "{trace_id}"}}]}}'
    )
    run = _run(tmp_path, "suite")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "scenario_name: s\nagent: support_agent:agent\nitems:\n  - name: x\n",
            "items[0]: an item needs trace_id (a recorded trace) or input (a live run)",
        ),
        (
            "scenario_name: s\nagent: support_agent:agent\nitems:\n  - input: q\n"
            "    assertions:\n      - kind: trace_no_erors\n",
            "trace_no_errors",
        ),
        (
            "scenario_nme: s\nagent: support_agent:agent\nitems:\n  - input: q\n",
            "did you mean 'scenario_name'",
        ),
        ("scenario_name: s\nagent: nowhere:agent\nitems:\n  - input: q\n", "cannot import"),
    ],
)
def test_a_bad_item_list_names_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, "support_agent.py", AGENT)
    _write(tmp_path, "bad.items.yaml", text)
    run = _run(tmp_path, "bad.items.yaml")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "bad.items.yaml" in run.stderr and message in run.stderr, run.stderr


def test_a_module_that_asserts_its_failed_run_passed_exits_1_not_2(tmp_path: Path) -> None:
    trace_id = _record(tmp_path)
    text = _python_items(trace_id, expected="refunded") + "\nresult.assert_passed()\n"
    _write(tmp_path, "asserting.py", text)
    run = _run(tmp_path, "asserting.py", "--junit", "report.xml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert _cases(tmp_path / "report.xml") == {"regressions / late order": "failure"}
    passing = _python_items(trace_id, expected="is late") + "\nassert False, 'own check'\n"
    _write(tmp_path, "asserting.py", passing)
    broken = _run(tmp_path, "asserting.py")
    assert broken.returncode == 2, broken.stdout + broken.stderr  # the file's own error
    assert "AssertionError: own check" in broken.stderr


def test_trace_backed_items_certify_their_replay_without_replay_flag(tmp_path: Path) -> None:
    """A trace-backed item is a strict replay whatever the command line: the run's
    certificate (console and JUnit) comes from its items."""
    trace_id = _record(tmp_path)
    _write(tmp_path, "replay_items.py", _python_items(trace_id, expected="is late"))
    run = _run(tmp_path, "replay_items.py", "--junit", "report.xml")
    assert run.returncode == 0, run.stdout + run.stderr
    line = "replay certificate: 0 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)"
    assert line in run.stdout
    root = ET.parse(tmp_path / "report.xml").getroot()
    for element in (root, root.find("testcase")):
        assert element is not None
        names = {p.get("name"): p.get("value") for p in element.iter("property")}
        assert names["replay.guarantee"] == "in-process" and names["replay.live"] == "0"
