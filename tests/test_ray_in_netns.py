"""Starts the Ray tests (``tests/distributed``) in a private network namespace.

Ray binds the machine's interface address even when told 127.0.0.1, so its tests run
inside ``unshare -n`` with only loopback up, in one child pytest session (one Ray for
all of them). Skipped, with the reason, where ``unshare`` cannot make a namespace or
Ray is not installed (``pip install -e '.[ray]'``; ``.ci/run`` installs it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def namespace_problem() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed: pip install -e '.[ray]'"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "`unshare` or `ip` is missing: the Ray tests need a private network namespace"
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return f"`unshare -n` is not allowed here ({probe.stderr.strip() or probe.returncode})"
    return None


@pytest.mark.timeout(900)
def test_ray_executor_suite_in_a_private_network_namespace() -> None:
    problem = namespace_problem()
    if problem is not None:
        pytest.skip(problem)
    env = dict(os.environ, SCENARIST_RAY_NETNS="1", RAY_AUTH_MODE="disabled")
    command = (
        f"ip link set lo up && exec {sys.executable} -m pytest -m ray tests/distributed "
        "-q -p no:cacheprovider -o addopts='' --strict-markers -ra"
    )
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert " passed" in output and "skipped" not in output.splitlines()[-1], output[-2000:]
