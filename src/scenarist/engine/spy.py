"""``WithSpy``: record the calls an agent makes to a function while it answers.

``WithSpy(interaction_generator=Interact(...), target="myapp.tools.search")`` runs the
wrapped spec with ``myapp.tools.search`` replaced by a ``MagicMock``, as giskard-checks
does (and documents): the real function does not run and callers get the mock's return
value. ``call_through=True`` (ours) runs the real function and returns what it returns,
recording the same calls. After each interaction, its ``metadata[target]`` holds the
mock's history under giskard's keys, and the mock is reset for the next one::

    {"call_args_list": [call('CUST-001', status='shipped')], "call_count": 1,
     "call_args": call('CUST-001', status='shipped'),
     "mock_calls": [call('CUST-001', status='shipped'), call().__len__()]}

Each call is a :class:`SpyCall`: it reads as ``unittest.mock.call`` objects do
(``.args``, ``.kwargs``, ``call_args[0]``, ``== call(...)``, the same ``repr``) but is a
plain tuple. giskard-checks stores mock ``_call`` objects, whose catch-all attribute
lookup makes pydantic fail on every dump of the trace, so every path check errors after
a spy (a giskard bug the compatibility contract lists); here paths, dumps and the run log
work.

The patch is installed once per target while any spy on it is active, and calls are
attributed through a context variable, so concurrent scenarios never see each other's
calls (a call from a thread started without the caller's context reaches the real
function, unrecorded).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import threading
from contextvars import ContextVar
from types import FunctionType
from typing import Any
from unittest.mock import MagicMock

from pydantic import Field

from scenarist.engine.interactions import InteractionContext, InteractionSpec
from scenarist.engine.scenario import AnySpec
from scenarist.model._construct import replace
from scenarist.model.trace import Interaction

__all__ = ["SpyCall", "WithSpy"]


class SpyCall(tuple[Any, ...]):
    """One recorded call, read as a ``unittest.mock.call``: ``(args, kwargs)`` (an entry
    of ``call_args_list``, ``call_args``) or ``(name, args, kwargs)`` (an entry of
    ``mock_calls``: ``name`` is ``""`` for the call itself, ``"().__len__"`` for a call on
    its return value).

    ``.args`` and ``.kwargs`` work on both forms; it compares equal to the ``call(...)``
    that describes it and prints as one. Unlike mock's ``_Call`` it is plain data: it
    dumps as a list and has no attribute that answers every name.
    """

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # it holds a dict, as mock's calls do

    def __new__(cls, args: Any, kwargs: Any, name: str | None = None) -> SpyCall:
        items = (tuple(args), dict(kwargs))
        return super().__new__(cls, items if name is None else (name, *items))

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle rebuild the same form
        return (self[-2], self[-1]) if len(self) == 2 else (self[1], self[2], self[0])

    @property
    def args(self) -> tuple[Any, ...]:
        """The positional arguments."""
        return self[-2]  # type: ignore[no-any-return]

    @property
    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments."""
        return self[-1]  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpyCall):
            named = len(self) == 3 and len(other) == 3
            if named and self[0] != other[0]:
                return False
            return self.args == other.args and self.kwargs == other.kwargs
        if isinstance(other, tuple) and type(other) is not tuple:
            return NotImplemented  # mock's ``call(...)``: its __eq__ reads our tuple form
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __repr__(self) -> str:
        name = self[0] if len(self) == 3 else ""
        shown = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        head = "call" if not name else f"call{name}" if name.startswith("()") else f"call.{name}"
        return f"{head}({', '.join(shown)})"


def _recorded(stand_in: MagicMock) -> dict[str, Any]:
    """The stand-in's history under giskard-checks' keys, as :class:`SpyCall` objects."""
    last = stand_in.call_args
    return {
        "call_args_list": [SpyCall(c.args, c.kwargs) for c in stand_in.call_args_list],
        "call_count": stand_in.call_count,
        "call_args": None if last is None else SpyCall(last.args, last.kwargs),
        "mock_calls": [SpyCall(a, k, name) for name, a, k in stand_in.mock_calls],
    }


# target -> (the stand-in mock, whether the real function runs too), for this context
_active: ContextVar[dict[str, tuple[MagicMock, bool]] | None] = ContextVar(
    "scenarist_spy_stand_ins", default=None
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
        # A method patched on its class: the wrapper is bound, the mock giskard puts there
        # is not, so its calls carry no ``self``; neither does the record.
        bound = isinstance(owner, type) and isinstance(
            inspect.getattr_static(owner, attr), FunctionType
        )

        @functools.wraps(original)
        def spy(*args: Any, **kwargs: Any) -> Any:
            stand_ins = _active.get()
            found = None if stand_ins is None else stand_ins.get(target)
            if found is None:
                return original(*args, **kwargs)
            stand_in, call_through = found
            returned = stand_in(*(args[1:] if bound else args), **kwargs)
            return original(*args, **kwargs) if call_through else returned

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

    __slots__ = ("_parent", "_spy_target", "_stand_in")

    def __init__(self, parent: InteractionContext, target: str, stand_in: MagicMock) -> None:
        super().__init__(
            parent.trace,
            parent.target,
            timeout_s=parent.timeout_s,
            threads=parent.threads,
        )
        self._parent = parent
        self._spy_target = target
        self._stand_in = stand_in

    def add(self, interaction: Interaction[Any, Any]) -> None:
        record = _recorded(self._stand_in)
        self._stand_in.reset_mock()
        interaction = replace(
            interaction, metadata={**interaction.metadata, self._spy_target: record}
        )
        self._parent.add(interaction)
        self.trace = self._parent.trace


def _not_set(value: object) -> bool:
    return value is False


@InteractionSpec.register("with_spy")
class WithSpy(InteractionSpec):
    """Run ``interaction_generator`` with the function at ``target`` replaced by a mock
    (``call_through=True``: still called), recording its calls in each interaction's
    ``metadata[target]``."""

    interaction_generator: AnySpec
    target: str = Field(min_length=3, pattern=r"^[A-Za-z_][\w.]*\.[A-Za-z_]\w*$")
    call_through: bool = Field(default=False, exclude_if=_not_set)
    """Run the real function and return its value (giskard-checks never runs it); the
    record is the same. Left out of dumps while ``False``."""

    @property
    def needs_target(self) -> bool:
        return self.interaction_generator.needs_target

    async def run(self, context: InteractionContext) -> None:
        stand_in = MagicMock()
        token = _active.set({**(_active.get() or {}), self.target: (stand_in, self.call_through)})
        _install(self.target)
        try:
            await self.interaction_generator.run(_SpyingContext(context, self.target, stand_in))
        finally:
            _uninstall(self.target)
            _active.reset(token)
