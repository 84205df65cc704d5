"""The package's layers, held by a test: imports run down, circles stay inside a folder.

Every import counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``): a late import hides a dependency, it does not remove it. The few
imports that run up are named in :data:`UPWARD`, each with its reason; each must stay a
function-level import (so it costs nothing until used) and must still exist (a stale entry
fails). ``docs/design/layers.md`` explains the order.
"""

from __future__ import annotations

from collections import defaultdict

from tests.helpers.imports import Import, imports, modules, strongly_connected

LAYERS: list[tuple[str, ...]] = [
    # shared leaves: nothing of scenarist below them
    (
        "scenarist.errors",
        "scenarist._version",
        "scenarist._lazy",
        "scenarist._extras",
        "scenarist._json_limits",
        "scenarist._jsonable",
        "scenarist._sync",
        "scenarist._home",
        "scenarist.redaction",
    ),
    ("scenarist.model",),
    ("scenarist.providers",),
    ("scenarist.tracing",),
    ("scenarist.tracing.http",),
    ("scenarist.checks",),
    ("scenarist.generators",),
    ("scenarist.engine",),
    ("scenarist.judges",),
    ("scenarist.formats",),
    ("scenarist.replay",),
    ("scenarist.store",),
    ("scenarist.otel",),
    ("scenarist.veval",),
    ("scenarist.report",),
    ("scenarist.distributed",),
    ("scenarist.testing",),
    ("scenarist.demo",),
    ("scenarist.server",),
    ("scenarist.cli",),
    # public faces: what users import and run
    ("scenarist", "scenarist._giskard_paths", "scenarist.pytest_plugin", "scenarist.__main__"),
]
"""Bottom to top; a module may import its own layer and the layers below it."""

UPWARD: dict[tuple[str, str], str] = {
    ("scenarist.model.results", "scenarist.report"): (
        "giskard-checks' results render themselves (print_report, to_junit_xml, "
        "to_hub_format, Rich); the one renderer lives in report/"
    ),
    ("scenarist.tracing.context", "scenarist.replay.step_replay"): (
        "Veval's RunContext.load_mock_outputs builds the step replayer itself; every other "
        "use of replay by tracing goes through the StepSource protocol"
    ),
    ("scenarist.engine.scenario", "scenarist.formats.files"): (
        "Scenario.from_file (spec 03): the scenario file format builds on the engine"
    ),
    ("scenarist.engine.suite", "scenarist.formats.files"): (
        "Suite.from_file (spec 03): the scenario file format builds on the engine"
    ),
    ("scenarist.judges.labels", "scenarist.formats.files"): (
        "a labelled set is a data file read as scenario files are (one safe JSON/YAML "
        "reader, with its limits)"
    ),
}
"""The imports allowed to run up the layers, and why."""

MAX_UPWARD = 10
MAX_CIRCLE = 8
MAX_TOP_LEVEL = 15


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix naming ``module``'s layer."""
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (
                best is None or len(name) > best[1]
            ):
                best = (index, len(name))
    assert best is not None, f"{module} is in no layer: add its folder to LAYERS"
    return best[0]


def folder_of(module: str) -> str:
    """The package folder ``module`` lives in (a package is in its own folder)."""
    path = modules()[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _upward(found: tuple[Import, ...]) -> list[Import]:
    return [i for i in found if layer_of(i.target) > layer_of(i.importer)]


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_imports_run_down_but_for_the_named_exceptions() -> None:
    found = imports()
    unexpected = sorted(
        f"{i.importer} -> {i.target} ({i.where} import, line {i.line})"
        for i in _upward(found)
        if (i.importer, i.target) not in UPWARD
    )
    assert unexpected == [], "imports running up the layers:\n" + "\n".join(unexpected)


def test_each_named_exception_exists_and_waits_for_its_first_use() -> None:
    up = _upward(imports())
    for pair in UPWARD:
        used = [i for i in up if (i.importer, i.target) == pair]
        assert used, f"{pair} no longer imports up: remove it from UPWARD"
        assert {i.where for i in used} == {"function"}, f"{pair} must stay a late import"
    assert len(UPWARD) <= MAX_UPWARD


def test_no_import_circle_crosses_a_folder() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for i in imports():
        if (i.importer, i.target) not in UPWARD:
            edges[i.importer].add(i.target)
    circles = strongly_connected(edges)
    crossing = [sorted(c) for c in circles if len({folder_of(m) for m in c}) > 1]
    assert crossing == []
    assert max(map(len, circles), default=0) <= MAX_CIRCLE, sorted(circles, key=len)[-1]


def test_the_top_of_the_package_holds_faces_and_leaves_only() -> None:
    top = [m for m in modules() if m.count(".") == 1 and modules()[m].name != "__init__.py"]
    named = {name for names in (LAYERS[0], LAYERS[-1]) for name in names}
    assert len(top) + 1 <= MAX_TOP_LEVEL  # and scenarist/__init__.py
    assert sorted(set(top) - named - {"scenarist.demo"}) == []


def test_the_layer_check_sees_every_kind_of_import() -> None:
    # The counter must not be fooled by a late or a type-only import: check it on the
    # imports we know are of each kind.
    found = {(i.importer, i.target, i.where) for i in imports()}
    assert ("scenarist.model.results", "scenarist.report", "function") in found
    assert ("scenarist.veval.results", "scenarist.tracing.context", "type-checking") in found
    assert ("scenarist.engine.runner", "scenarist.checks.base", "module") in found
