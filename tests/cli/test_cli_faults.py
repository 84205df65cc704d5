"""``scenarist run`` when things go wrong: user code that cancels itself, exits, blocks or
returns values JSON cannot hold; a full disk, a read-only home, a locked database, Ctrl-C.
Every run counts every scenario collected, prints at most one line per problem (naming
the file and the fix, never "scenarist bug", never SQL), exits with a documented code, and
ends with the verdict line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.databases import short_busy_timeout, write_locked  # noqa: F401  (fixture)
from tests.helpers.limits import HANG_S
from typer.testing import Result

from scenarist.formats.runlog import read_jsonl

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

SCRIPT = Path(sys.executable).parent / "scenarist"

CANCELS = """
import asyncio
from scenarist import Equals, Scenario, Suite

async def good(inputs):
    return "good"

async def bad(inputs):
    return "bad"

async def cancels(inputs):
    task = asyncio.ensure_future(asyncio.sleep(3600))
    task.cancel()
    return await task

def scenario(name, target):
    return Scenario(name, target=target).interact("q").check(Equals(expected_value="good"))

suite = Suite(name="cancels", scenarios=[
    scenario("ok_1", good), scenario("cancelled", cancels),
    scenario("fails", bad), scenario("ok_2", good),
])
"""

EXITS = """
from scenarist import Equals, Scenario

def exits(inputs):
    raise SystemExit(3)

first = Scenario("exits", target=exits).interact("q").check(Equals(expected_value="good"))
second = Scenario("after", target=lambda i: "good").interact("q").check(
    Equals(expected_value="good"))
"""

BLOCKS = """
import threading
from scenarist import Equals, Scenario

def blocks(inputs):
    threading.Event().wait()  # never set: this call never returns
    return "good"

first = Scenario("blocks", target=blocks, timeout_s=0.2).interact("q").check(
    Equals(expected_value="good"))
second = Scenario("after", target=lambda i: "good").interact("q").check(
    Equals(expected_value="good"))
"""

BLOCKS_LOOP = """
import time
from scenarist import Equals, Scenario

async def blocks_loop(inputs):
    time.sleep(2)  # blocks the event loop: the deadline cannot cancel this call
    return "good"

first = Scenario("blocks_loop", target=blocks_loop, timeout_s=0.2).interact("q").check(
    Equals(expected_value="good"))
second = Scenario("after", target=lambda i: "good").interact("q").check(
    Equals(expected_value="good"))
"""

HOSTILE = r"""
from scenarist import Equals, Scenario, Suite

class Unprintable:
    def __str__(self):
        raise ValueError("no str for you")

    def __repr__(self):
        raise ValueError("no repr for you")

cycle = {"a": 1}
cycle["self"] = cycle

def answer(value):
    return lambda inputs: value

outputs = {
    "ok_1": "good", "bytes": b"\xff\xfe", "ok_2": "good", "cycle": cycle,
    "unprintable": Unprintable(), "surrogate": "bad \ud800", "ok_3": "good",
}
suite = Suite(name="hostile", scenarios=[
    Scenario(name, target=answer(value)).interact("q").check(Equals(expected_value="good"))
    for name, value in outputs.items()
])
"""

NOT_JSON = r"""
from scenarist import FnCheck, Scenario, Suite

class Unprintable:
    def __str__(self):
        raise ValueError("no str for you")

    def __repr__(self):
        raise ValueError("no repr for you")

def nested(levels):
    value = "bottom"
    for _ in range(levels):
        value = [value]
    return value

def answer(value):
    return lambda inputs: value

huge = 10**5000
outputs = {
    "huge_int": huge,
    "huge_in_dict": {"n": -huge, "unprintable": Unprintable(), "b": b"\x00"},
    "huge_key": {huge: "value"},
    "nan": float("nan"),
    "inf": [float("inf"), float("-inf")],
    "set": {3, 1, 2},
    "deep": nested(300),
}
always = FnCheck(fn=lambda trace: True, name="always")
scenarios = [
    Scenario(name, target=answer(value)).interact("q").check(always)
    for name, value in outputs.items()
]
scenarios.append(  # a failing one: the report prints its output
    Scenario("huge_fails", target=answer(huge)).interact("q").check(
        FnCheck(fn=lambda trace: trace.last.outputs == 1, name="is_one"))
)
suite = Suite(name="not_json", scenarios=scenarios)
"""

PASSES = """
from scenarist import Equals, Scenario

ok = Scenario("ok", target=lambda i: "good").interact("q").check(Equals(expected_value="good"))
"""

FIRST = """
from scenarist import Equals, Scenario

ok = Scenario("ok_1", target=lambda i: "good").interact("q").check(Equals(expected_value="good"))
"""

INTERRUPTS = """
import asyncio, os, signal
from scenarist import Equals, Scenario, Suite

async def interrupts(inputs):
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
    await asyncio.Event().wait()
    return "never"

suite = Suite(name="interrupted", scenarios=[
    Scenario("interrupts", target=interrupts).interact("q").check(Equals(expected_value="x")),
    Scenario("never", target=lambda i: "x").interact("q").check(Equals(expected_value="x")),
])
"""


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def _outputs(log_path: Path) -> dict[str, Any]:
    """Each scenario's stored output, as JSON data (what every reader gets)."""
    log = read_jsonl(log_path)
    return {
        record.result.scenario_name: json.loads(record.result.final_trace.model_dump_json())[
            "interactions"
        ][0]["outputs"]
        for record in log.scenarios
    }


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCENARIST_")}
    return {**env, "SCENARIST_HOME": str(home), "COLUMNS": "200"}


def _scenarist(cwd: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a real process; stderr merged into stdout in the order
    the process wrote them, so "the verdict is the last line" is what a terminal shows.
    The timeout is only a safety net against a hang."""
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=_env(home or cwd / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
    )


# --- user code ----------------------------------------------------------------------------


@pytest.mark.parametrize("parallel", ["1", "4"])
def test_run_counts_a_target_that_cancels_itself_as_errored(
    cli: Cli, write: Write, home: Path, parallel: str
) -> None:
    result = cli("run", str(write("cancels.py", CANCELS)), "--parallel", parallel)
    assert result.exit_code == 2, result.output
    line = last_line(result.output)
    assert line.startswith("scenarist: ERROR (exit 2): 1 scenario(s) errored")
    assert "4 scenarios: 2 passed, 1 failed, 1 errored" in line
    (stored,) = (home / "home" / "runs").glob("*.jsonl")
    log = read_jsonl(stored)
    statuses = {r.result.scenario_name: r.result.status for r in log.scenarios}
    assert statuses == {"ok_1": "pass", "cancelled": "error", "fails": "fail", "ok_2": "pass"}
    assert log.footer is not None and log.footer.errored_count == 1


def test_run_system_exit_in_a_target_is_that_scenarios_error(cli: Cli, write: Write) -> None:
    result = cli("run", str(write("exits.py", EXITS)))
    assert result.exit_code == 2, result.output
    line = last_line(result.output)
    assert line.startswith("scenarist: ERROR (exit 2)")
    assert "2 scenarios: 1 passed, 0 failed, 1 errored" in line
    assert "SystemExit(3)" in result.output  # the report says what the target did


@pytest.mark.parametrize("parallel", ["1", "2"])
def test_run_timeout_stops_a_target_that_blocks_forever_and_the_process_exits(
    tmp_path: Path, parallel: str
) -> None:
    (tmp_path / "blocks.py").write_text(textwrap.dedent(BLOCKS), encoding="utf-8")
    done = _scenarist(tmp_path, "run", "blocks.py", "--parallel", parallel)
    assert done.returncode == 2, done.stdout
    line = last_line(done.stdout)
    assert line.startswith("scenarist: ERROR (exit 2): 1 scenario(s) errored"), done.stdout
    assert "2 scenarios: 1 passed, 0 failed, 1 errored" in line
    assert "did not finish within timeout_s=0.2" in done.stdout


def test_run_records_an_async_target_that_blocks_the_loop_past_its_timeout_as_errored(
    tmp_path: Path,
) -> None:
    (tmp_path / "blocks_loop.py").write_text(textwrap.dedent(BLOCKS_LOOP), encoding="utf-8")
    done = _scenarist(tmp_path, "run", "blocks_loop.py", "--junit", "j.xml")
    assert done.returncode == 2, done.stdout
    line = last_line(done.stdout)
    assert line.startswith("scenarist: ERROR (exit 2): 1 scenario(s) errored"), done.stdout
    assert "2 scenarios: 1 passed, 0 failed, 1 errored" in line
    assert "did not finish within timeout_s=0.2" in done.stdout
    (case, _) = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert case.find("error") is not None and case.find("failure") is None
    assert "timeout_s=0.2" in (case.findtext("system-out") or "")


def test_run_writes_unserialisable_outputs_marked_and_runs_every_scenario(
    cli: Cli, write: Write, home: Path
) -> None:
    result = cli(
        "run", str(write("hostile.py", HOSTILE)), "--json", "out/run.jsonl", "--junit", "j.xml"
    )
    assert result.exit_code == 2, result.output
    assert "scenarist bug" not in result.output
    line = last_line(result.output)
    # the cycle is an ERROR of the check (Equals recursed into it), not of the run
    assert "7 scenarios: 3 passed, 2 failed, 2 errored" in line, result.output
    outputs = _outputs(home / "out/run.jsonl")
    assert list(outputs) == [
        "ok_1", "bytes", "ok_2", "cycle", "unprintable", "surrogate", "ok_3"
    ]  # fmt: skip
    assert outputs["bytes"] == {"__bytes__": "//4="}  # base64: lossless
    # marked where it recurs (pydantic's dump copied the outer dict once)
    assert outputs["cycle"] == {"a": 1, "self": {"a": 1, "self": {"__cycle__": "builtins.dict"}}}
    assert outputs["unprintable"] == {
        "__repr__": None,
        "__type__": "hostile.Unprintable",
        "__error__": "str() raised ValueError: no str for you; "
        "repr() raised ValueError: no repr for you",
    }
    assert outputs["surrogate"] == {"__text__": "bad \\ud800"}
    (stored,) = (home / "home" / "runs").glob("*.jsonl")
    assert _outputs(stored) == outputs
    cases = ET.parse(home / "j.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == list(outputs)
    for format in ("console", "junit", "html", "json"):
        again = cli("report", str(stored), "--format", format)
        assert again.exit_code == 0, (format, again.output)
    assert "Summary: 7 total" in cli("report", str(stored)).stdout


_HUGE_HEX = hex(10**5000)


def test_run_writes_values_json_cannot_hold_marked_and_keeps_the_verdict(tmp_path: Path) -> None:
    """Ints too long for ``str()`` (Python's 4,300-digit limit), NaN, infinities, sets,
    unprintable objects, deep nesting: the verdict, the JUnit file, the run log and every
    report of it hold, with each value in its marked form."""
    (tmp_path / "not_json.py").write_text(textwrap.dedent(NOT_JSON), encoding="utf-8")
    done = _scenarist(
        tmp_path, "run", "not_json.py", "--junit", "j.xml", "--junit-full", "--json", "run.jsonl"
    )  # the full JUnit form: its trace properties hold the marked values
    assert "scenarist bug" not in done.stdout and "Traceback" not in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout
    line = last_line(done.stdout)
    assert line.startswith("scenarist: FAILED (exit 1)"), done.stdout
    assert "8 scenarios: 7 passed, 1 failed, 0 errored" in line
    assert "huge_fails" in done.stdout  # the report of the failure printed
    assert 'Outputs: {"__int__":"0x31e2' in done.stdout  # its output, marked
    outputs = _outputs(tmp_path / "run.jsonl")
    assert outputs["huge_int"] == {"__int__": _HUGE_HEX}  # lossless: int(text, 16)
    assert int(outputs["huge_int"]["__int__"], 16) == 10**5000
    assert outputs["huge_in_dict"]["n"] == {"__int__": "-" + _HUGE_HEX}
    assert outputs["huge_in_dict"]["b"] == {"__bytes__": "AA=="}
    assert outputs["huge_in_dict"]["unprintable"]["__repr__"] is None
    assert list(outputs["huge_key"]) == [_HUGE_HEX]
    assert outputs["set"] == [1, 2, 3]
    assert outputs["huge_fails"] == {"__int__": _HUGE_HEX}
    (stored,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    assert _outputs(stored) == outputs
    cases = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == [*NOT_JSON_NAMES, "huge_fails"]
    traces = [p.get("value") or "" for p in ET.parse(tmp_path / "j.xml").iter("property")]
    assert any(json.dumps({"__int__": _HUGE_HEX}) in trace for trace in traces)
    for format in ("console", "junit", "html", "json"):
        again = _scenarist(tmp_path, "report", "last", "--format", format)
        assert again.returncode == 0, (format, again.stdout)
        assert "damaged" not in again.stdout and "Traceback" not in again.stdout
    assert "Summary: 8 total, 1 failed, 7 passed" in _scenarist(tmp_path, "report", "last").stdout


NOT_JSON_NAMES = ["huge_int", "huge_in_dict", "huge_key", "nan", "inf", "set", "deep"]


class _Unprintable:
    def __repr__(self) -> str:
        raise ValueError("no repr for you")


def test_console_report_of_live_results_survives_an_unprintable_output() -> None:
    from rich.console import Console

    from scenarist import Equals, Scenario

    result = (
        Scenario("odd", target=lambda inputs: _Unprintable())
        .interact("q")
        .check(Equals(expected_value="good"))
        .run_sync(return_exception=True)
    )
    console = Console(width=200, no_color=True, record=True)
    result.print_report(console=console)
    text = console.export_text()
    assert "Outputs: <" in text
    assert "_Unprintable: repr() raised ValueError: no repr for you>" in text


# --- the disk and the database -----------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_run_on_a_full_disk_says_so_in_one_line_and_exits_2(
    cli: Cli, write: Write, home: Path, option: str
) -> None:
    result = cli("run", str(write("ok.py", PASSES)), option, "/dev/full")
    assert result.exit_code == 2, result.output
    assert "scenarist bug" not in result.output and "Traceback" not in result.output
    problems = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(problems) == 1, result.output
    assert "/dev/full" in problems[0] and "No space left on device" in problems[0]
    assert f"choose another {option} file" in problems[0]
    line = last_line(result.output)
    assert line.startswith("scenarist: ERROR (exit 2): the results could not all be saved")
    assert "1 scenario: 1 passed" in line
    (stored,) = (home / "home" / "runs").glob("*.jsonl")  # the rest was still written
    assert read_jsonl(stored).footer is not None


@pytest.mark.usefixtures("short_busy_timeout")
def test_run_with_a_locked_database_names_the_file_and_keeps_the_run_log(
    cli: Cli, write: Write, home: Path
) -> None:
    path = write("ok.py", PASSES)
    assert cli("run", str(path)).exit_code == 0  # creates the database
    database = home / "home" / "scenarist.db"
    with write_locked(database):
        result = cli("run", str(path))
    assert result.exit_code == 2, result.output
    problems = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(problems) == 1, result.output
    problem = problems[0]
    assert str(database) in problem and "database is locked" in problem
    assert "another program holds a write lock" in problem
    for raw in ("INSERT", "SELECT", "[SQL", "parameters"):
        assert raw not in result.output
    runs = sorted((home / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    assert str(runs[-1]) in problem  # the run log is kept, and it says where
    assert last_line(result.output).startswith(
        "scenarist: ERROR (exit 2): the results could not all be saved"
    )


def _read_only_prefix(folder: Path) -> list[str]:
    """A command prefix that makes ``folder`` read-only for the command: permissions for a
    normal user; a read-only bind mount in a private mount namespace for root, which
    permissions do not stop."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: cannot make a read-only folder")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.decode().strip()}")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(folder)]


def test_run_with_a_read_only_home_says_which_file_and_how_to_fix_it(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text(textwrap.dedent(PASSES), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    prefix = _read_only_prefix(home)
    done = subprocess.run(
        [*prefix, str(SCRIPT), "run", "ok.py"],
        cwd=tmp_path,
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
    )
    home.chmod(0o755)
    assert done.returncode == 2, done.stdout
    assert "scenarist bug" not in done.stdout and "Traceback" not in done.stdout
    (line,) = done.stdout.strip().splitlines()
    assert line.startswith(f"error: cannot write the run log in {home / 'runs'}")
    assert "Read-only file system" in line or "Permission denied" in line
    assert "set SCENARIST_HOME to a writable folder" in line


def test_run_on_a_disk_that_fills_up_mid_run_still_ends_with_the_verdict(
    tmp_path: Path,
) -> None:
    """A tiny tmpfs as ``SCENARIST_HOME`` (root only, in a private mount namespace): the
    header fits, the scenario records and the database do not."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare to mount a tiny tmpfs")
    suite = "\n".join(
        [
            "from scenarist import Equals, Scenario, Suite",
            "big = 'x' * 40_000",
            "suite = Suite(name='big', scenarios=[",
            "    Scenario(f's{i}', target=lambda i: big).interact('q')",
            "    .check(Equals(expected_value=big)) for i in range(6)])",
        ]
    )
    (tmp_path / "big.py").write_text(suite + "\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    script = 'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(home), str(SCRIPT), "run", "big.py"],
        cwd=tmp_path,
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
    )
    if "mount:" in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stdout.strip()}")
    assert done.returncode == 2, done.stdout
    assert "scenarist bug" not in done.stdout and "Traceback" not in done.stdout
    problems = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    assert problems, done.stdout
    assert any("No space left on device" in p or "full" in p for p in problems), problems
    line = last_line(done.stdout)
    assert line.startswith("scenarist: ERROR (exit 2): the results could not all be saved")
    assert "6 scenarios: 6 passed" in line


def test_ctrl_c_stops_the_run_with_a_verdict_and_an_incomplete_run_log(tmp_path: Path) -> None:
    (tmp_path / "a_first.py").write_text(textwrap.dedent(FIRST), encoding="utf-8")
    (tmp_path / "b_interrupts.py").write_text(textwrap.dedent(INTERRUPTS), encoding="utf-8")
    done = _scenarist(tmp_path, "run", "a_first.py", "b_interrupts.py")
    assert done.returncode == 130, done.stdout
    assert "Traceback" not in done.stdout
    line = last_line(done.stdout)
    assert line.startswith("scenarist: INTERRUPTED (exit 130): stopped by Ctrl-C"), done.stdout
    assert "1 of 3 scenarios finished" in line
    (stored,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    assert f"Run log (incomplete): {stored}" in done.stdout
    log = read_jsonl(stored)
    assert log.footer is None
    assert [r.result.scenario_name for r in log.scenarios] == ["ok_1"]
    report = _scenarist(tmp_path, "report", str(stored))
    assert report.returncode == 0, report.stdout
    assert "INCOMPLETE" in report.stdout
