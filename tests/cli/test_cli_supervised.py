"""``scenarist run`` watched from a parent process: user code that ends the process behind
the CLI's back (``os._exit``, a kill) gives exit 3, a verdict line naming the scenario
and the run log, and a JUnit file; signals reach the run as before."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.helpers.limits import HANG_S

from scenarist.formats.runlog import read_jsonl

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not hasattr(signal, "sigtimedwait"),
    reason="supervision needs os.fork and signal.sigtimedwait",
)

SRC = str(Path(__file__).resolve().parents[2] / "src")

EXITS = """
import os
from scenarist import Equals, Scenario, Suite

def bad(inputs):
    return "bad"

def exits(inputs):
    os._exit(0)  # ends the process: no exception, no atexit, no finally

suite = Suite(name="exits", scenarios=[
    Scenario("fails", target=bad).interact("q").check(Equals(expected_value="good")),
    Scenario("exits", target=exits).interact("q").check(Equals(expected_value="good")),
    Scenario("never", target=bad).interact("q").check(Equals(expected_value="good")),
])
"""

KILLED = """
import os, signal
from scenarist import Equals, Scenario

def killed(inputs):
    os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer does

one = Scenario("killed", target=killed).interact("q").check(Equals(expected_value="x"))
"""

EXITS_ON_IMPORT = """
import os
os._exit(0)
"""

EXITS_AT_EXIT = """
import atexit, os
from scenarist import Equals, Scenario

atexit.register(os._exit, 0)  # after the verdict: the verdict's exit code stands
bad = Scenario("bad", target=lambda i: "bad").interact("q").check(Equals(expected_value="x"))
"""

BLOCKS = """
import time
from pathlib import Path
from scenarist import Equals, Scenario, Suite

def agent(inputs):
    if inputs == "block":
        Path("blocking").touch()
        while True:  # stuck in a call until a signal ends the run
            time.sleep(0.05)
    return "ok"

suite = Suite(name="sig", target=agent, scenarios=[
    Scenario("first").interact("a").check(Equals(expected_value="ok")),
    Scenario("blocks").interact("block").check(Equals(expected_value="ok")),
])
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCENARIST_")}
    return {**env, "PYTHONPATH": SRC, "SCENARIST_HOME": str(tmp_path / "home"), "COLUMNS": "300"}


def _run(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "suite.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "scenarist", "run", "suite.py", *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
    )


def _last(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_os_exit_in_an_agent_after_a_failure_is_exit_3_with_junit_and_verdict(
    tmp_path: Path,
) -> None:
    done = _run(tmp_path, EXITS, "--junit", "out/j.xml")
    assert done.returncode == 3, done.stdout
    line = _last(done.stdout)
    assert line.startswith("scenarist: ERROR (exit 3): the run ended without its verdict"), line
    assert "its process exited with code 0 while running 'exits'" in line
    (stored,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    assert f"the run log {stored} is incomplete: 1 of 3 scenarios finished" in line
    log = read_jsonl(stored)
    assert log.footer is None and [r.result.scenario_name for r in log.scenarios] == ["fails"]
    suite = ET.parse(tmp_path / "out" / "j.xml").getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["fails", "exits"]
    assert cases["fails"].find("failure") is not None
    error = cases["exits"].find("error")
    assert error is not None
    assert "exited with code 0 while this scenario was running" in ET.tostring(
        cases["exits"], encoding="unicode"
    )
    assert suite.find("properties/property[@name='incomplete']") is not None
    report = subprocess.run(
        [sys.executable, "-m", "scenarist", "report", "last"],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert report.returncode == 0 and "INCOMPLETE" in report.stdout, report.stdout


def test_a_run_killed_by_a_signal_it_was_not_sent_is_exit_3_naming_the_signal(
    tmp_path: Path,
) -> None:
    done = _run(tmp_path, KILLED)
    assert done.returncode == 3, done.stdout
    line = _last(done.stdout)
    assert "its process was killed by SIGKILL while running 'killed'" in line, line
    assert "is incomplete: 0 of 1 scenarios finished" in line


def test_os_exit_while_loading_the_files_is_exit_3(tmp_path: Path) -> None:
    done = _run(tmp_path, EXITS_ON_IMPORT, "--junit", "j.xml")
    assert done.returncode == 3, done.stdout
    assert "exited with code 0 before any scenario started" in _last(done.stdout)


def test_os_exit_after_the_verdict_keeps_the_verdicts_exit_code(tmp_path: Path) -> None:
    done = _run(tmp_path, EXITS_AT_EXIT)
    assert done.returncode == 1, done.stdout
    assert _last(done.stdout).startswith("scenarist: FAILED (exit 1)")


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + HANG_S  # polling for the marker, not timing anything
    while time.monotonic() < deadline and not path.exists() and process.poll() is None:
        time.sleep(0.05)
    assert path.exists()


def test_sigterm_sent_to_scenarist_run_ends_the_run_by_sigterm_as_before(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(textwrap.dedent(BLOCKS), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "scenarist", "run", "suite.py"],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(tmp_path / "blocking", process)
        process.send_signal(signal.SIGTERM)  # to the parent alone: forwarded to the run
        out, _ = process.communicate(timeout=HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == -signal.SIGTERM, out
    assert "exit 3" not in out


@pytest.mark.skipif(sys.platform != "linux", reason="a controlling terminal through a pty")
def test_ctrl_c_on_a_terminal_reaches_the_run_once(tmp_path: Path) -> None:
    """The terminal sends SIGINT to the whole foreground process group (parent and child);
    the parent does not forward it again, so the run stops as one Ctrl-C stops it."""
    import fcntl
    import pty
    import select
    import termios

    (tmp_path / "suite.py").write_text(textwrap.dedent(BLOCKS), encoding="utf-8")
    primary, secondary = pty.openpty()

    def controlling_terminal() -> None:  # in the new session: the pty becomes its terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [sys.executable, "-m", "scenarist", "run", "suite.py"],
        cwd=tmp_path,
        env={**_env(tmp_path), "TERM": "dumb"},
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    try:
        _wait_for(tmp_path / "blocking", process)  # type: ignore[arg-type]
        os.write(primary, b"\x03")  # Ctrl-C typed on the terminal
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                try:
                    data = os.read(primary, 65536)
                except OSError:  # the terminal closed: the run has ended
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        process.wait(timeout=HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(primary)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert process.returncode == 130, shown
    assert "Traceback" not in shown and "INTERRUPTED (exit 130)" in shown, shown
