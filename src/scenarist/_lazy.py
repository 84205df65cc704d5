"""Lazy package attributes: a name loads its module the first time it is used.

``import scenarist`` has a budget (0.2 s). Every name backed by a pydantic model (the
scenario engine, the checks, the results, the Veval half) loads when it is first touched,
so ``import scenarist`` itself costs a few standard-library modules and pydantic is paid
by the first ``from scenarist import Scenario``. Type checkers and IDEs still see every
name: packages import them under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``table`` comes from the
    module ``table[name]`` on first access, then stays in the package namespace.

    ``submodules`` are names of the package's own modules that read as attributes
    (``scenarist.model.results`` after a bare ``import scenarist``), as they did when the
    package imported them eagerly; each loads on first access too. Other submodules stay
    unreachable until imported, so touching an attribute never drags in, say, the server.
    """
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if name in modules:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table) | modules)

    return __getattr__, __dir__
