"""Shared test configuration: async tests run on asyncio through anyio's pytest plugin;
``database_url`` gives each test a fresh SQLite file, then a fresh PostgreSQL database;
no test sees the caller's model settings or provider keys (with giskard's built-in default
judge, ``openai/gpt-4o-mini``, a key in the environment would reach a real provider)."""

from __future__ import annotations

import functools
import signal
from collections.abc import Iterator
from typing import Any

import httpcore2
import httpx2._config as httpx2_config
import pytest
from hypothesis import HealthCheck, settings
from tests.helpers.databases import database_url, pg_cluster, sqlite_template  # noqa: F401

from scenarist.providers.defaults import reset_settings

# The machine running the suite may be busy: Hypothesis must judge inputs, never speed
# (no deadlines, no "generation too slow" failures).
settings.register_profile("scenarist", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("scenarist")

# httpx2's default timeout (5 s for connect, read, write and pool) is the only time limit
# on most of the tests' own HTTP calls to live servers; on a loaded machine the first
# request to a new app (its routes are built then) took longer than that. Speed is for
# the benchmarks: the tests' default is 60 s. A test about timeouts passes its own, and
# scenarist's clients always pass theirs, so neither is changed by this.
for _phase in ("connect", "read", "write", "pool"):
    setattr(httpx2_config.DEFAULT_TIMEOUT_CONFIG, _phase, 60.0)

# Every HTTP client built in a test (the tests' own, each SDK client an agent makes, the
# remote store's per request) loads the machine's CA bundle into a new SSL context: 60 ms
# of CPU each, a sizeable part of the suite's time. The tests speak plain HTTP on
# loopback only (they are offline), so one default context, built once, serves them all.
httpcore2.default_ssl_context = functools.cache(httpcore2.default_ssl_context)

# A suite started as a background job of a script (`make check &` where the shell has no
# job control) inherits SIGINT ignored, as does every process it starts: the Ctrl-C tests
# (SIGINT raised inside a run, in this process and in a `scenarist run` child) then waited
# for their 120 s timeout. The test processes take Python's default back (children start
# with the default action, and Python's own handler), as a terminal would have given them.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

OFFLINE_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SCENARIST_OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "SCENARIST_ANTHROPIC_BASE_URL",
    "SCENARIST_DEFAULT_MODEL",
    "SCENARIST_DEFAULT_JUDGE",
    "SCENARIST_EMBEDDING_MODEL",
    "GISKARD_CHECKS_DEFAULT_MODEL",
    "GISKARD_CHECKS_DEFAULT_JUDGE",
    "GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL",
    "SCENARIST_RATE_LIMITS",
)


# The longest modules, first (measured with ``tests/helpers/cpu_times.py``'s report: the
# wall time of each under load). Under ``--dist loadscope`` a module is one unit of work,
# handed out in collection order (``make test`` passes ``--no-loadscope-reorder``; xdist's
# own order, most tests first, put the one-test Ray session last, running alone for
# minutes at the end). Every other module keeps its place.
LONGEST_FIRST = (
    "tests/test_benchmarks.py",
    "tests/compat/differential/test_differential.py",
    "tests/test_ray_in_netns.py",
    "tests/cli/test_cli_faults.py",
    "tests/server/test_dashboard.py",
    "tests/cli/test_cli_process.py",
    "tests/server/test_sessions.py",
    "tests/server/test_api.py",
    "tests/dashboard/test_views_browser.py",
)


# The browser tests share one Chromium while they run in a row (tests/dashboard/conftest.py):
# under ``--dist loadscope`` this folder is one unit of work, run by one worker, instead of
# one unit per module (a Chromium launched per module, on whichever worker).
SHARED_BROWSER_FOLDER = "tests/dashboard/"


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class BrowserFolderAsOneScope(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(SHARED_BROWSER_FOLDER):
                return SHARED_BROWSER_FOLDER
            return str(super()._split_scope(nodeid))

    return BrowserFolderAsOneScope(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(autouse=True)
def _no_real_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in OFFLINE_ENV:
        monkeypatch.delenv(name, raising=False)
    reset_settings()  # the environment is read once and cached
    yield
    reset_settings()


@pytest.fixture(autouse=True)
def _private_spool_secret(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spool signs its files with a secret of the account (``~/.config``): the tests'
    is their own, never the user's."""
    folder = tmp_path_factory.getbasetemp() / "user-config"
    monkeypatch.setenv("SCENARIST_SPOOL_SECRET_FILE", str(folder / "spool-secret"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
