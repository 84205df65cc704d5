"""A module imported on first use, for test files whose SDK is heavy to import.

Every xdist worker collects (imports) every test file, but runs only the modules handed to
it: ``import anthropic`` at the top of a test file cost each worker about 3 s of CPU at
collection, mostly in workers that never ran an Anthropic test. ``anthropic =
lazy_module("anthropic")`` keeps the spelling of the test (``anthropic.Anthropic(...)``,
``pytest.raises(anthropic.RateLimitError)``) and imports the SDK the first time a name is
read from it, in the worker that runs the test. Private names (pytest probes each object
of a test file for ``__test__``, ``__wrapped__``...) do not import it, and nothing is put
in ``sys.modules`` before the first real use.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):  # pytest probes what it collects (`__test__`, ...)
            raise AttributeError(attribute)
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """``name`` imported on first use (typed ``Any``: the test reads names from it)."""
    return LazyModule(name)
