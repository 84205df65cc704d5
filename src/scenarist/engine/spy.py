"""``WithSpy``: record the calls an agent makes to a function while it answers.

``WithSpy(interaction_generator=Interact(...), target="myapp.tools.search")`` runs the
wrapped spec with ``myapp.tools.search`` replaced by a recording wrapper that still calls
the real function. Each interaction's ``metadata[target]`` then holds plain data::

    {"call_count": 2, "calls": [{"args": [...], "kwargs": {...}, "returned": ...}, ...]}

so checks address it like any other value (``trace.last.metadata['myapp.tools.search']
.call_count``). giskard-checks stores ``unittest.mock`` call objects there, which breaks
every path check on the trace; here the record is plain data and paths never serialise
the trace anyway.

The patch is installed once per target while any spy on it is active, and calls are
attributed through a context variable, so concurrent scenarios never see each other's
calls.
"""

from __future__ import annotations

import functools
import importlib
import threading
from contextvars import ContextVar
from typing import Any

from pydantic import Field

from scenarist.engine.interactions import InteractionContext, InteractionSpec
from scenarist.engine.scenario import AnySpec
from scenarist.model._construct import replace
from scenarist.model.trace import Interaction

__all__ = ["WithSpy"]

_active: ContextVar[dict[str, list[dict[str, Any]]] | None] = ContextVar(
    "scenarist_spy_calls", default=None
)
_lock = threading.Lock()
_installed: dict[str, tuple[Any, str, Any, int]] = {}  # target -> (owner, attr, original, users)


def _locate(target: str) -> tuple[Any, str]:
    """The object holding the attribute ``target`` names, and the attribute's name."""
    parts = target.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:-1]:
            owner = getattr(owner, name, None)
        if owner is not None and hasattr(owner, parts[-1]):
            return owner, parts[-1]
        break
    raise ValueError(
        f"WithSpy target {target!r} cannot be found; give the import path of a function, "
        "e.g. 'myapp.tools.search' or 'myapp.client.Client.send'"
    )


def _install(target: str) -> None:
    with _lock:
        if target in _installed:
            owner, attr, original, users = _installed[target]
            _installed[target] = (owner, attr, original, users + 1)
            return
        owner, attr = _locate(target)
        original = getattr(owner, attr)

        @functools.wraps(original)
        def spy(*args: Any, **kwargs: Any) -> Any:
            calls = _active.get()
            record: dict[str, Any] = {"args": list(args), "kwargs": dict(kwargs)}
            if calls is not None:
                calls.setdefault(target, []).append(record)
            result = original(*args, **kwargs)
            record["returned"] = result
            return result

        setattr(owner, attr, spy)
        _installed[target] = (owner, attr, original, 1)


def _uninstall(target: str) -> None:
    with _lock:
        owner, attr, original, users = _installed[target]
        if users > 1:
            _installed[target] = (owner, attr, original, users - 1)
            return
        setattr(owner, attr, original)
        del _installed[target]


class _SpyingContext(InteractionContext):
    """Forwards to the run's context, attaching the calls made since the last interaction."""

    __slots__ = ("_calls", "_parent", "_spy_target")

    def __init__(self, parent: InteractionContext, target: str, calls: dict[str, Any]) -> None:
        super().__init__(
            parent.trace,
            parent.target,
            timeout_s=parent.timeout_s,
            threads=parent.threads,
        )
        self._parent = parent
        self._spy_target = target
        self._calls = calls

    def add(self, interaction: Interaction[Any, Any]) -> None:
        made = self._calls.pop(self._spy_target, [])
        record = {"call_count": len(made), "calls": made}
        interaction = replace(
            interaction, metadata={**interaction.metadata, self._spy_target: record}
        )
        self._parent.add(interaction)
        self.trace = self._parent.trace


@InteractionSpec.register("with_spy")
class WithSpy(InteractionSpec):
    """Run ``interaction_generator`` while recording calls to the function at ``target``."""

    interaction_generator: AnySpec
    target: str = Field(min_length=3, pattern=r"^[A-Za-z_][\w.]*\.[A-Za-z_]\w*$")

    @property
    def needs_target(self) -> bool:
        return self.interaction_generator.needs_target

    async def run(self, context: InteractionContext) -> None:
        calls: dict[str, list[dict[str, Any]]] = {}
        outer = _active.get()
        token = _active.set(calls if outer is None else outer)
        _install(self.target)
        try:
            await self.interaction_generator.run(
                _SpyingContext(context, self.target, calls if outer is None else outer)
            )
        finally:
            _uninstall(self.target)
            _active.reset(token)
