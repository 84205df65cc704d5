"""The Ray tests: one local Ray per session, kept on loopback.

They run only inside a private network namespace (``unshare -n``, only ``lo`` up): Ray
binds the machine's interface address even when told 127.0.0.1, and a test must never
reach the network. ``tests/test_ray_in_netns.py`` starts that session from the normal
suite (``SCENARIST_RAY_NETNS=1`` marks it); run alone, they are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import scenarist

ROOT = Path(__file__).resolve().parents[2]
# The scenarist under test (a worktree's ``src`` when PYTHONPATH names one): the workers'
# PYTHONPATH is the runtime_env's, so without it they import the editable install's.
SCENARIST_SRC = str(Path(scenarist.__file__).resolve().parents[1])
IN_NETNS = os.environ.get("SCENARIST_RAY_NETNS") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_NETNS:
        return
    skip = pytest.mark.skip(
        reason="Ray tests run inside `unshare -n` (tests/test_ray_in_netns.py starts them)"
    )
    for item in items:
        if "ray" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """One local Ray for the session, in its own temp folder (no other session's
    ``ray_current_cluster`` file is ever read), removed afterwards."""
    ray = pytest.importorskip("ray")
    folder = tempfile.mkdtemp(prefix="scn-ray-", dir="/tmp")  # short: Ray's socket paths
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=folder,
        # bench/ too: the Ray benchmark's smoke test runs on this Ray (its targets are
        # imported by module name, ``ray_executor``, on the workers)
        runtime_env={
            "env_vars": {
                "PYTHONPATH": os.pathsep.join([SCENARIST_SRC, str(ROOT), str(ROOT / "bench")]),
                "RAY_AUTH_MODE": "disabled",
            }
        },
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
