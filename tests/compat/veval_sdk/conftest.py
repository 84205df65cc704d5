"""The real veval-sdk 1.4.0 in a side venv (built once per machine: tests/helpers/side_venv)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.side_venv import side_venv_python

HERE = Path(__file__).parent
VEVAL_REQUIREMENT = "veval-sdk==1.4.0"


@pytest.fixture(scope="session")
def veval_python() -> Path:
    """The Python of a venv with the real veval-sdk installed (skips, naming why, if not)."""
    return side_venv_python(VEVAL_REQUIREMENT)


@pytest.fixture(scope="session")
def veval_surface(veval_python: Path) -> dict[str, Any]:
    """Veval's public names, parameters and fields, introspected in the side venv."""
    done = subprocess.run(
        [str(veval_python), str(HERE / "introspect.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    surface: dict[str, Any] = json.loads(done.stdout)
    return surface
