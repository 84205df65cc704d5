"""Where a step's error came from: which part of the scenario failed, and the user's line.

A :class:`~scenarist.model.results.StepError` keeps giskard-checks' fields (its
``phase`` is ``input_generation`` whatever raised, as giskard names it), so the part
and the frame are read back from the traceback it stores: the run log and the store
keep that text, so a result loaded from either says the same as a fresh one.

* ``what``: ``the agent call`` when the scenario's target raised (the traceback passes
  through the engine's ``call_target``), ``the outputs function`` for a step's own
  ``outputs=`` callable, ``the input generator`` for an ``inputs=`` callable or generator,
  ``a timeout`` for phase ``timeout``; ``None`` when the traceback does not say (a result
  built by hand, or with no traceback).
* ``location``: the innermost frame of the last exception's traceback that is the user's
  code: not scenarist's own files, not the standard library, not an installed package.
  ``None`` when there is no such frame (a traceback that is all library code).
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["ErrorOrigin", "origin_of_traceback"]

_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$', re.M)
_CHAIN = ("\nThe above exception was the direct cause", "\nDuring handling of the above")


@dataclass(frozen=True)
class ErrorOrigin:
    """The part of the scenario that raised, and the user's frame (if any)."""

    what: str | None
    file: str | None = None
    line: int | None = None
    function: str | None = None

    @property
    def location(self) -> str | None:
        """``path/to/agent.py:12 in lookup`` (relative to the working directory when
        under it), or ``None``."""
        if self.file is None:
            return None
        return f"{_shown(self.file)}:{self.line} in {self.function}"


@cache
def _not_users() -> tuple[str, ...]:
    """Folders whose files are not the user's code: scenarist's, the standard library's,
    installed packages'."""
    roots = {str(Path(__file__).resolve().parents[1])}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(str(Path(path).resolve()))
    roots.update(str(Path(p).resolve()) for p in sys.path if "-packages" in p)
    return tuple(root.rstrip(os.sep) + os.sep for root in roots)


def _is_users(file: str) -> bool:
    if file.startswith("<"):  # <frozen ...>, <string>
        return False
    resolved = str(Path(file).resolve()) if os.path.isabs(file) else file
    return "-packages" not in resolved and not resolved.startswith(_not_users())


def _shown(file: str) -> str:
    try:
        return str(Path(file).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return file


def origin_of_traceback(traceback: str | None, phase: str) -> ErrorOrigin:
    """The origin of an error from its ``traceback`` text and ``phase``."""
    text = traceback or ""
    last = text
    for marker in _CHAIN:  # the last exception's own traceback: after the last chain line
        at = last.rfind(marker)
        if at != -1:
            last = last[at + len(marker) :]
    frames = list(_FRAME.finditer(last))
    functions = {m["function"].strip() for m in frames}
    what: str | None = None
    if phase == "timeout":
        what = "a timeout"
    elif "call_target" in functions:
        what = "the agent call"
    elif "_exchange" in functions:
        what = "the outputs function"
    elif "run" in functions and "run_step" in functions:  # the engine ran the spec
        what = "the input generator"
    for frame in reversed(frames):
        if _is_users(frame["file"]):
            return ErrorOrigin(what, frame["file"], int(frame["line"]), frame["function"].strip())
    return ErrorOrigin(what)
