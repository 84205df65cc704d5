"""The server is optional: a missing extra says what to install; the core never loads it."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_missing_server_extra_names_the_pip_command() -> None:
    done = _run(
        "import sys; sys.modules['fastapi'] = None\n"
        "import scenarist.server.cli  # importable without the extra\n"
        "try:\n"
        "    import scenarist.server.app\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert "pip install 'scenarist[server]'" in done.stdout, done.stderr


def test_missing_postgres_driver_names_the_pip_command() -> None:
    done = _run(
        "import sys; sys.modules['asyncpg'] = None\n"
        "from scenarist.store.sql.engine import make_engine\n"
        "try:\n"
        "    make_engine('postgresql+asyncpg://u@127.0.0.1/d')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert "pip install 'scenarist[postgres]'" in done.stdout, done.stderr
