"""Lazy package attributes: a name loads its module the first time it is used.

``import scenarist`` has a budget (0.2 s, most of it pydantic's own import). The Veval
half of the API (the client, scenario items, tracing, trace assertions) is used by fewer
programs than the scenario engine, so its modules load when one of its names is first
touched. Type checkers and IDEs still see every name: packages import them under
``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``table`` comes from the
    module ``table[name]`` on first access, then stays in the package namespace."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
