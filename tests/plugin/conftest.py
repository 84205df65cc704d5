"""pytester's in-process runs unload every module first imported during a run. A
scenarist module imported lazily inside one run (a check class, the ``MISSING``
sentinel, the kind registry) would then be imported again by the next run beside the
copies the package still holds (``check kind 'fn' is already registered``, ``expected a
callable, got Missing``), so the results depended on which test file ran first. Every
public name is loaded here, before any run."""

from __future__ import annotations

import importlib

import scenarist

for _name in scenarist.__all__:
    getattr(scenarist, _name)
for _module in ("scenarist.testing", "scenarist.replay.cassette", "scenarist.formats.runlog"):
    importlib.import_module(_module)
