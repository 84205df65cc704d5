"""``pip install scenarist`` (no extras) gives a working CLI and ``scenarist serve``.

There is no index here to install from, so the test takes the installed environment and
hides from a child Python every module no base requirement brings: the closure of
``[project].dependencies`` in ``pyproject.toml`` over the installed distributions' own
requirements (their extras left out, as pip leaves them out). What stays importable is
what a plain ``pip install scenarist`` would give; the CLI and the server must work with
just that.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from scenarist.server.threaded import free_port

ROOT = Path(__file__).parents[1]


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _base_closure() -> set[str]:
    """The distributions a plain ``pip install scenarist`` installs (normalised names)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [Requirement(line) for line in project["dependencies"]]
    done: set[tuple[str, str]] = set()  # (distribution, extra or "")
    for requirement in todo:  # grows as it goes
        name = _name(requirement.name)
        for extra in {"", *requirement.extras}:
            if (name, extra) in done:
                continue
            done.add((name, extra))
            for line in metadata.requires(requirement.name) or []:
                nested = Requirement(line)
                if nested.marker is None or nested.marker.evaluate({"extra": extra}):
                    nested.marker = None
                    todo.append(nested)
    return {name for name, _ in done} | {"scenarist"}


def _hidden_modules() -> list[str]:
    """Top-level modules of installed distributions outside the base closure."""
    base = _base_closure()
    hidden = set()
    for module, distributions in metadata.packages_distributions().items():
        if not any(_name(d) in base for d in distributions):
            hidden.add(module)
    return sorted(hidden - set(sys.stdlib_module_names) - {"scenarist", "_pytest", "pytest"})


def _child(code: str, *, hidden: list[str]) -> str:
    """A program that runs ``code`` with ``hidden`` unimportable, as if not installed."""
    return textwrap.dedent(
        f"""
        import importlib.abc, sys

        HIDDEN = set({hidden!r})

        class NotInstalled(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in HIDDEN:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, NotInstalled())
        """
    ) + textwrap.dedent(code)


@pytest.fixture(scope="module")
def hidden() -> list[str]:
    names = _hidden_modules()
    assert "ray" in names or "asyncpg" in names, "the extras' modules should be hidden"
    return names


def _run(code: str, hidden: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", _child(code, hidden=hidden)],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip


def test_the_base_install_has_a_working_cli(hidden: list[str], tmp_path: Path) -> None:
    done = _run(
        """
        import sys
        from scenarist.cli import main
        sys.exit(main(["demo"]))
        """,
        hidden,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pip install" not in done.stdout + done.stderr
    assert "demo PASSED" in done.stdout + done.stderr


def test_the_base_install_serves_the_dashboard(hidden: list[str], tmp_path: Path) -> None:
    port = free_port()
    code = f"""
        import sys
        from scenarist.cli import main
        sys.exit(main(["serve", "--port", "{port}"]))
        """
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path / "home")}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-c", _child(code, hidden=hidden)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        health = None
        while health is None:  # until it answers, or the process ends
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health") as response:
                    health = json.loads(response.read())
            except OSError:
                time.sleep(0.1)
        assert health["status"] == "ok", health
    finally:
        server.terminate()
        server.wait()
        log.close()
