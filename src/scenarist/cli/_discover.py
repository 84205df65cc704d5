"""Finding scenarios to run: ``Suite`` and ``Scenario`` objects in Python files, and
scenario files (YAML/JSON).

Rules (also in ``docs/design/cli.md``):

* A path given explicitly is always read: ``.py`` files are imported, ``.yaml``/``.yml``/
  ``.json`` files are loaded as a suite (a mapping with ``scenarios``, or a file named
  ``*.suite.*``) or a scenario.
  One that holds no scenario is a usage error.
* A folder is walked recursively, skipping hidden folders, ``__pycache__``, virtual
  environments, ``node_modules`` and ``.cassettes``. In it, ``*.py`` files are imported
  except ``conftest.py``, ``setup.py`` and names starting with ``_``; data files are read
  only when named ``*.scenario.yaml|yml|json`` or ``*.suite.yaml|yml|json`` (any other
  JSON in a project is more likely configuration than a scenario). Files with no
  scenario are skipped quietly.
* A file reached twice (given twice, or given and inside a folder given) is read once.
* In a module, every module-level ``Suite`` and ``Scenario`` counts, in definition
  order. A scenario that is also in a suite found in the same run, or the same object
  seen twice (imported by two files), runs once. A scenario without a target inherits
  its suite's target.
* A file that fails to import or load is reported with its path and the error; the
  other files still run, and the run exits 2.
* Items count as scenarios do. The ``run_scenario(...)`` calls a Python file's module
  level makes (on the default client or a ``Client``) run while it is imported; their
  results are kept with the file (also when the module then raises ``AssertionError``
  and a run failed: ``run_scenario(...).assert_passed()`` at module level is a failed
  run, exit 1, not a file that failed to load). A data file whose mapping has ``items``
  (and no ``steps`` or ``scenarios``) is an item list
  (:mod:`scenarist.formats.item_list`), run after the scenarios; in a folder, item lists
  are read when named ``*.items.yaml|yml|json``.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import sys
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from scenarist.engine.scenario import Scenario
from scenarist.engine.suite import Suite
from scenarist.errors import UserError
from scenarist.formats.files import read_data
from scenarist.formats.item_list import ItemList, is_item_list, load_item_list
from scenarist.model._construct import replace
from scenarist.model._missing import is_missing

if TYPE_CHECKING:
    from scenarist.veval.results import ScenarioRunResult

__all__ = ["Discovery", "LoadError", "SourceFile", "discover"]

_SKIP_DIRS = {"__pycache__", "node_modules", ".cassettes", "venv", "site-packages"}
_DATA_SUFFIXES = (".yaml", ".yml", ".json")
_NAMED_DATA = tuple(
    f".{kind}{ext}" for kind in ("scenario", "suite", "items") for ext in _DATA_SUFFIXES
)


@dataclass
class SourceFile:
    """The scenarios found in one file, and the suite names they came from; the
    scenario runs its module-level code made (``item_runs``), or the item list it holds."""

    path: Path
    scenarios: list[Scenario] = field(default_factory=list)
    suite_names: list[str] = field(default_factory=list)
    item_runs: list[ScenarioRunResult] = field(default_factory=list)
    item_list: tuple[ItemList, Any] | None = None

    @property
    def has_work(self) -> bool:
        return bool(self.scenarios or self.item_runs or self.item_list)


@dataclass(frozen=True)
class LoadError:
    """A file that could not be loaded: the path, a one-line message, the traceback."""

    path: Path
    message: str
    details: str = ""


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)

    @property
    def scenario_count(self) -> int:
        return sum(len(f.scenarios) for f in self.files)

    @property
    def has_items(self) -> bool:
        """Whether a file ran items at import or holds an item list."""
        return any(f.item_runs or f.item_list for f in self.files)


def discover(paths: list[Path]) -> Discovery:
    """Every scenario under ``paths``; ``UserError`` for a missing path or an explicit
    file without scenarios (load errors of single files are collected instead)."""
    found = Discovery()
    seen: dict[int, object] = {}  # by id, holding the object: a freed one's id is reused
    read: set[Path] = set()  # a file given twice (or also inside a folder given) loads once
    for path in paths:
        if not path.exists():
            raise UserError(f"{path}: no such file or folder; check the path")
        explicit = path.is_file()
        if explicit and not _readable(path, explicit=True):
            raise UserError(
                f"{path}: not a scenario file; give .py, .yaml, .yml or .json files or folders"
            )
        for file in [path] if explicit else _walk(path):
            real = file.resolve()
            if real in read:
                continue
            read.add(real)
            source = SourceFile(file)
            try:
                _load(file, source, seen)
            except UserError as exc:
                found.errors.append(LoadError(file, str(exc)))
                continue
            except ValidationError as exc:  # a check or spec built with a wrong argument
                found.errors.append(
                    LoadError(file, construction_message(file, exc), traceback.format_exc())
                )
                continue
            except AssertionError as exc:
                if source.item_runs and not all(r.passed for r in source.item_runs):
                    # `run_scenario(...).assert_passed()` at module level: the items' own
                    # failures are the verdict (exit 1), not a file that failed to load
                    found.files.append(source)
                    continue
                found.errors.append(
                    LoadError(file, f"{file}: {_one_line(exc)}", traceback.format_exc())
                )
                continue
            except (Exception, SystemExit) as exc:  # user code: report it, run the rest
                found.errors.append(
                    LoadError(file, f"{file}: {_one_line(exc)}", traceback.format_exc())
                )
                continue
            if source.has_work:
                found.files.append(source)
            elif explicit:
                raise UserError(
                    f"{file}: no scenarios found; define a module-level Suite or Scenario "
                    "or call run_scenario(..., items=...) (Python), or write a scenario, a "
                    "suite or an item list (YAML/JSON)"
                )
    return found


def construction_message(file: Path, exc: ValidationError) -> str:
    """``suite.py:12: StringMatching(...): unknown argument 'keywrd'; did you mean
    'keyword'?``: where in the file the object was built, which argument, the fix (the
    treatment scenario files get, never pydantic's text)."""
    line = None
    model = exc.title
    fields: list[str] = []
    frame = exc.__traceback__
    while frame is not None:
        if _same_file(frame.tb_frame.f_code.co_filename, file):
            line = frame.tb_lineno
        built = frame.tb_frame.f_locals.get("self")  # pydantic's __init__: the model
        if isinstance(built, BaseModel) and type(built).__name__ == model:
            fields = [name for name in type(built).model_fields if not name.startswith("_")]
        frame = frame.tb_next
    where = f"{file}:{line}" if line is not None else str(file)
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        kind = error["type"]
        if kind == "extra_forbidden":
            close = difflib.get_close_matches(name, fields, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "remove it or fix its spelling"
            if not close and fields:
                hint = f"its arguments are {', '.join(fields)}"
            problems.append(f"unknown argument {name!r}; {hint}")
        elif kind == "missing":
            problems.append(f"required argument {name!r} missing; add it")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(f"argument {name!r}: {message}")
    return f"{where}: {model}(...): " + "; ".join(problems)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _readable(path: Path, *, explicit: bool) -> bool:
    name = path.name.lower()
    if name.endswith(".py"):
        return explicit or not (name.startswith("_") or name in {"conftest.py", "setup.py"})
    if explicit:
        return name.endswith(_DATA_SUFFIXES)
    return name.endswith(_NAMED_DATA)


def _walk(folder: Path, visited: set[Path] | None = None) -> list[Path]:
    """The readable files under ``folder``; each real folder once (a symlink back to a
    parent is not walked again: two of them made the walk exponential)."""
    visited = set() if visited is None else visited
    visited.add(folder.resolve())
    files: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                continue
            if (entry / "pyvenv.cfg").exists() or entry.resolve() in visited:
                continue
            files.extend(_walk(entry, visited))
        elif _readable(entry, explicit=False):
            files.append(entry)
    return files


def _load(file: Path, source: SourceFile, seen: dict[int, object]) -> None:
    if file.suffix == ".py":
        from scenarist.veval._watch import watching

        with watching() as runs:
            try:
                module = _import(file)
            finally:  # kept when the module then raised (its own `assert run.passed`)
                source.item_runs.extend(runs)
        objects = list(vars(module).values())
    else:
        data = read_data(file)
        if is_item_list(data):
            source.item_list = load_item_list(file)
            return
        suite = ".suite." in file.name.lower() or (isinstance(data, dict) and "scenarios" in data)
        model = Suite if suite else Scenario
        objects = [model.from_file(file)]
    suites = [o for o in objects if isinstance(o, Suite)]
    in_suites = {id(s) for suite in suites for s in suite.scenarios}
    for obj in objects:
        if isinstance(obj, Suite) and id(obj) not in seen:
            seen[id(obj)] = obj
            source.suite_names.append(obj.name)
            for scenario in obj.scenarios:
                if id(scenario) in seen:
                    continue
                seen[id(scenario)] = scenario
                source.scenarios.append(_with_target(scenario, obj))
        elif isinstance(obj, Scenario) and id(obj) not in seen and id(obj) not in in_suites:
            seen[id(obj)] = obj
            source.scenarios.append(obj)


def _with_target(scenario: Scenario, suite: Suite) -> Scenario:
    """The scenario with its suite's target and required pass rate where it has none."""
    if is_missing(scenario.target) and not is_missing(suite.target):
        if callable(suite.target):  # what the field's validator asks: no copy of the steps
            scenario = replace(scenario, target=suite.target)  # (a run changes none)
        else:  # refused as an assignment refuses it
            scenario = scenario.copy().with_target(suite.target)
    if scenario.min_pass_rate is None and suite.min_pass_rate is not None:
        scenario = scenario.model_copy(update={"min_pass_rate": suite.min_pass_rate})
    return scenario


def _import(file: Path) -> ModuleType:
    """Import ``file`` as ``python file.py`` would see it: its folder first on
    ``sys.path``, under its own name, so a sibling that imports it gets the same objects
    (and they run once). A name already taken by another module, or that names an
    installed module (``yaml.py``), gets a private name."""
    existing = sys.modules.get(file.stem)
    if existing is not None and _same_file(getattr(existing, "__file__", None), file):
        return existing
    name = file.stem
    if existing is not None or not name.isidentifier() or _installed_elsewhere(name, file):
        name = f"_scenarist_run_{uuid.uuid4().hex[:8]}_{name}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise UserError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


def _installed_elsewhere(name: str, file: Path) -> bool:
    """Whether ``import name`` finds a module outside ``file``'s folder (``yaml.py`` next to
    the scenarios): registered under that name, the file would stand in for it when
    scenarist (or the agent) imports it later in the run."""
    import importlib.machinery

    folder = file.resolve().parent
    elsewhere = [p for p in sys.path if Path(p or ".").resolve() != folder]
    return (
        name in sys.builtin_module_names
        or importlib.machinery.FrozenImporter.find_spec(name) is not None
        or importlib.machinery.PathFinder.find_spec(name, elsewhere) is not None
    )


def _same_file(loaded: str | None, file: Path) -> bool:
    return loaded is not None and Path(loaded).resolve() == file.resolve()
