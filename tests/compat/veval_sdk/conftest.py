"""The real veval-sdk 1.4.0 in a side venv (built once per machine: tests/helpers/side_venv)."""

from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.limits import HANG_S
from tests.helpers.side_venv import side_venv_python

HERE = Path(__file__).parent
VEVAL_REQUIREMENT = "veval-sdk==1.4.0"


@pytest.fixture(scope="session")
def veval_python() -> Path:
    """The Python of a venv with the real veval-sdk installed (skips, naming why, if not)."""
    return side_venv_python(VEVAL_REQUIREMENT)


@pytest.fixture(scope="session")
def veval_sdks_python() -> Path:
    """The Python of a venv with the real veval-sdk and the official ``openai`` and
    ``anthropic`` SDKs at the versions installed here, so a program whose agent calls an
    SDK runs the same SDK code on both sides."""
    pins = []
    for sdk in ("openai", "anthropic"):
        try:
            pins.append(f"{sdk}=={metadata.version(sdk)}")
        except metadata.PackageNotFoundError:
            pytest.skip(f"the {sdk} SDK is not installed here (pip install 'scenarist[{sdk}]')")
    return side_venv_python(VEVAL_REQUIREMENT, *pins)


@pytest.fixture(scope="session")
def veval_surface(veval_python: Path) -> dict[str, Any]:
    """Veval's public names, parameters and fields, introspected in the side venv."""
    done = subprocess.run(
        [str(veval_python), str(HERE / "introspect.py")],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=True,
    )
    surface: dict[str, Any] = json.loads(done.stdout)
    return surface
