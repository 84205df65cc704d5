"""Side virtualenvs holding the real upstream packages (black-box oracles for compat tests).

``side_venv_python("veval-sdk==1.4.0")`` (or several requirements, installed together:
``side_venv_python("veval-sdk==1.4.0", "openai==3.57.0")``) creates ``<VENVS>/<name>/`` once (a file
lock keeps parallel sessions from building it twice; a ``.ok`` marker is written only
after ``pip install`` succeeded, so a half-built venv is rebuilt) and returns its Python.
When the package cannot be installed (no network, no index) it calls ``pytest.skip``
with pip's last lines, so the reason is visible in the summary.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["VENVS", "side_venv_python"]


def _default_venvs() -> Path:
    """Where side venvs live: ``$SCENARIST_TEST_VENVS``, else the user's cache
    (``$XDG_CACHE_HOME`` or ``~/.cache``, under ``scenarist/test-venvs``), shared by every
    clone of the project on the machine as pip shares its wheels: a clean clone's first
    ``make check`` does not install giskard-checks and veval-sdk again (a minute or two
    of a loaded 2-core machine). Each venv is named after its requirement and the Python
    it was built from, and used only once it has proved itself (a marker, a probe)."""
    explicit = os.environ.get("SCENARIST_TEST_VENVS")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "scenarist" / "test-venvs"


VENVS = _default_venvs()


def _venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def side_venv_python(*requirements: str, python: str = sys.executable) -> Path:
    """The Python of a side venv with ``requirements`` installed (built on first use)."""
    requirement = " ".join(requirements)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if python != sys.executable:  # another interpreter: ask it
        version = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    folder = VENVS / f"{re.sub(r'[^A-Za-z0-9.]+', '-', requirement)}-py{version}"
    marker = folder / ".ok"
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if marker.exists() and _venv_python(folder).exists():
                return _venv_python(folder)
            shutil.rmtree(folder, ignore_errors=True)
            steps = [
                [python, "-m", "venv", str(folder)],
                [str(_venv_python(folder)), "-m", "pip", "install", "-q", *requirements],
            ]
            for command in steps:
                done = subprocess.run(command, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-3:])
                    pytest.skip(f"cannot install {requirement} into a side venv: {tail}")
            marker.write_text(requirement + "\n")
            return _venv_python(folder)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
