"""The installed ``scenarist`` entry point in real processes, and the progress display on
a pseudo-terminal versus a pipe."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.helpers.limits import HANG_S

SCRIPT = Path(sys.executable).parent / "scenarist"

SLOW = """
import time
from scenarist import Scenario, StringMatching

def agent(inputs):
    time.sleep(0.3)
    return "slow " + inputs

one = Scenario("slow_one").interact("a").check(StringMatching(keyword="slow")).with_target(agent)
two = Scenario("slow_two").interact("b").check(StringMatching(keyword="slow")).with_target(agent)
"""

FAILING = """
from scenarist import Scenario, StringMatching
bad = Scenario("bad").interact("x", outputs="y").check(StringMatching(keyword="z"))
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"SCENARIST_RECORD_MODE", "NO_COLOR"}}
    return {**env, "SCENARIST_HOME": str(tmp_path / "home"), "TERM": "xterm", "COLUMNS": "100"}


def test_installed_entry_point_demo_and_run_exit_codes(tmp_path: Path) -> None:
    assert SCRIPT.exists(), "pip install -e '.[dev]' installs the scenarist console script"
    demo = subprocess.run(
        [str(SCRIPT), "demo"], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True
    )
    assert demo.returncode == 0, demo.stderr
    assert "One failure is deliberate" in demo.stdout
    (tmp_path / "failing.py").write_text(FAILING)
    run = subprocess.run(
        [str(SCRIPT), "run", "failing.py"],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("scenarist: FAILED (exit 1)")


@pytest.mark.skipif(sys.platform == "win32", reason="pty is POSIX-only")
def test_progress_shows_on_a_terminal_and_not_in_a_pipe(tmp_path: Path) -> None:
    (tmp_path / "slow_suite.py").write_text(textwrap.dedent(SLOW))
    command = [sys.executable, "-m", "scenarist.cli", "run", "slow_suite.py"]
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        command, cwd=tmp_path, env=_env(tmp_path), stdout=secondary, stderr=secondary
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + HANG_S  # a limit for a loaded machine, not the verdict
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.5)
        if ready:
            try:
                data = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=HANG_S)
    os.close(primary)
    on_tty = b"".join(chunks).decode("utf-8", "replace")
    assert process.returncode == 0, on_tty
    assert "Running: slow_" in on_tty and "ETA" in on_tty

    piped = subprocess.run(
        command, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True
    )
    assert piped.returncode == 0
    assert "Running:" not in piped.stdout + piped.stderr
    assert "\x1b[" not in piped.stdout + piped.stderr
    assert "[1/2] 50% · so far: 1 pass" in piped.stderr
    assert "[2/2] 100% · so far: 2 pass" in piped.stderr
