"""Stores: where agent runs, scenario runs and scenario items are kept."""

from scenarist.store.base import Store
from scenarist.store.memory import MemoryStore
from scenarist.store.sqlite import LocalStore, default_store_path

__all__ = ["LocalStore", "MemoryStore", "Store", "default_store_path"]
