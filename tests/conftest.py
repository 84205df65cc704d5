"""Shared test configuration: async tests run on asyncio through anyio's pytest plugin;
``database_url`` gives each test a fresh SQLite file, then a fresh PostgreSQL database."""

from __future__ import annotations

import pytest
from tests.helpers.databases import database_url, pg_cluster  # noqa: F401  (fixtures)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
