"""The default client: made on first use, replaced with ``set_client``, which hands back the
previous one."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarist.store import MemoryStore
from scenarist.veval.client import Client
from scenarist.veval.default_client import get_client, set_client


def test_default_client_set_client_returns_the_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    monkeypatch.delenv("SCENARIST_URL", raising=False)
    mine = Client(store=MemoryStore())
    before = set_client(mine)
    try:
        assert get_client() is mine
        assert set_client(None) is mine
        fresh = get_client()
        assert fresh is not mine and fresh is get_client()
    finally:
        set_client(before)


def test_default_client_keeps_no_key_on_the_client() -> None:
    client = Client("secret-key", store=MemoryStore())
    assert not hasattr(client, "api_key") and not hasattr(client, "base_url")
    assert isinstance(client.store, MemoryStore)
