"""giskard-checks' module paths after the one rewrite ``giskard.checks`` -> ``scenarist``
(``scenarist.core.scenario``, ``scenarist.generators.user``, ``scenarist.builtin.*``...),
served by one meta-path finder (:mod:`scenarist._giskard_paths`): every path of the table
imports, each name is the object scenarist defines, nothing loads before it is used, our
own modules at those paths keep working, and the table covers giskard-checks 1.0.6's
public modules (read from the real package in its side venv)."""

from __future__ import annotations

import importlib
import importlib.resources
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scenarist._giskard_paths import PATHS

ROOT = Path(__file__).resolve().parents[2]

#: giskard-checks' public modules with no counterpart here, and why.
NOT_SERVED_MODULES = {
    "utils": "giskard's internal helpers (injection, normalisation, optional imports)",
    "core.protocols": "typing protocols of giskard's own rendering",
}
#: Public names of served modules left out, and why.
NOT_SERVED_NAMES = {
    "JudgeInput": "a type alias of giskard's judge parsing",
    "SOMJudge": "optional in the compat contract (spec 10), not built",
    "MissingJudgeEvidenceError": "SOMJudge's error",
    "MatchCollection": "a type alias of giskard's comparison internals",
    "TextBasedCheck": "giskard's base class of its text checks, not a documented extension point",
    "BaseResult": "giskard's base class of its result models",
    "format_status_count_parts": "giskard's report-rendering helper",
    "format_status_count_text": "giskard's report-rendering helper",
    "provided_or_resolve": "giskard's internal helper of its built-in checks",
    "GeneratorProvider": "typing alias",
    "GeneratorType": "typing alias",
    "ProviderType": "typing alias",
    "SyncOrAsync": "typing alias",
    "SyncOrAsyncCallable": "typing alias",
    "SyncOrAsyncGenerator": "typing alias",
    "MappingTemplate": "giskard's dataset-templating helper",
    "schema_cache_key": "giskard's dataset-templating helper",
    "substitute_prompt": "giskard's dataset-templating helper",
    "format_prompt_text": "giskard's prompt-rendering helper",
    "trace_with_current_turn": "giskard's prompt-rendering helper",
    "InputType": "a TypeVar",
    "OutputType": "a TypeVar",
    "GiskardChecksSettings": "giskard's pydantic-settings model (ours: providers.defaults)",
    "get_settings": "returns giskard's settings model",
}

#: Lists each public module of the installed giskard-checks and the public names it
#: defines (its ``__all__``, else what it defines itself).
LIST_GISKARD = """
import importlib, json, pkgutil
import giskard.checks as gc
out = {}
for info in pkgutil.walk_packages(gc.__path__, "giskard.checks."):
    if any(part.startswith("_") for part in info.name.split(".")):
        continue
    module = importlib.import_module(info.name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", None) == info.name]
    out[info.name.removeprefix("giskard.checks.")] = sorted(names)
print(json.dumps(out))
"""


def source_of(source: str, name: str) -> object:
    module, _, attribute = source.partition(":")
    return getattr(importlib.import_module(module), attribute or name)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_giskard_path_imports_and_holds_scenarists_objects(path: str) -> None:
    module = importlib.import_module(path)
    for name, source in PATHS[path].items():
        assert getattr(module, name) is source_of(source, name), f"{path}.{name}"
        exec(f"from {path} import {name}", {})  # the form the documentation uses


def test_deep_paths_are_the_top_level_objects_and_the_seed_paths_resolve() -> None:
    from scenarist.core.result import CheckResult, ScenarioResult
    from scenarist.core.scenario import Scenario, Step
    from scenarist.scenarios.runner import ScenarioRunner, get_runner
    from scenarist.scenarios.suite import Suite

    import scenarist

    assert (Scenario, Step, CheckResult, ScenarioResult, Suite, ScenarioRunner) == (
        scenarist.Scenario,
        scenarist.Step,
        scenarist.CheckResult,
        scenarist.ScenarioResult,
        scenarist.Suite,
        scenarist.ScenarioRunner,
    )
    assert get_runner() is scenarist.get_runner()
    from scenarist.testing.runner import TestCaseRunner
    from scenarist.testing.runner import get_runner as get_test_case_runner

    assert isinstance(get_test_case_runner(), TestCaseRunner)
    assert get_test_case_runner() is get_test_case_runner()


def run_fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return done.stdout


def test_a_path_loads_nothing_until_a_name_is_used() -> None:
    out = run_fresh(
        "import sys\n"
        "import scenarist.core.scenario as core_scenario, scenarist.builtin\n"
        "print('scenarist.engine.scenario' in sys.modules, 'pydantic' in sys.modules)\n"
        "from scenarist.core.scenario import Scenario\n"
        "print('scenarist.engine.scenario' in sys.modules, core_scenario.Scenario is Scenario)\n"
        "print(sorted(core_scenario.__all__), 'Scenario' in dir(core_scenario))\n"
    )
    assert out.splitlines() == [
        "False False",
        "True True",
        "['Scenario', 'Step'] True",
    ]


def test_our_modules_at_giskard_paths_keep_their_own_names_and_files() -> None:
    import scenarist.generators.base as base
    import scenarist.judges.judge as judge
    import scenarist.testing as testing

    assert base.LLMGenerator is importlib.import_module("scenarist").LLMGenerator
    assert judge.LLMJudge is importlib.import_module("scenarist").LLMJudge
    assert testing.WithSpy is importlib.import_module("scenarist").WithSpy
    assert testing.TestClient.__name__ == "TestClient"  # its own lazy names still load
    assert {"WithSpy", "TestClient", "FakeLLMServer"} <= set(dir(testing))
    assert {"LLMGenerator", "LLMGeneratorOutput", "InputGenerator"} <= set(dir(base))
    assert base.InputGenerator.__module__ == "scenarist.generators.base"
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = testing.Nope
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = base.Nope
    # the real loader is kept: package data still reads (the simulator's templates)
    templates = importlib.resources.files("scenarist.generators") / "templates"
    assert (templates / "user_simulator.j2").is_file()
    assert base.__spec__.loader is base.__loader__
    assert type(base.__loader__).__name__ != "_SupplementLoader"


def test_unknown_names_and_paths_fail_as_imports_do() -> None:
    with pytest.raises(ImportError, match="cannot import name 'Nope'"):
        exec("from scenarist.core.scenario import Nope", {})
    with pytest.raises(ModuleNotFoundError, match=r"scenarist\.core\.protocols"):
        importlib.import_module("scenarist.core.protocols")
    core = importlib.import_module("scenarist.core")
    with pytest.raises(AttributeError, match=r"module 'scenarist\.core' has no attribute 'x'"):
        _ = core.x


def test_the_table_covers_every_public_module_of_giskard_checks(giskard_python: str) -> None:
    done = subprocess.run(
        [giskard_python, "-c", LIST_GISKARD],
        capture_output=True,
        text=True,
        check=True,
        env={"GISKARD_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1", "PATH": "/usr/bin:/bin"},
    )
    theirs: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    missing_modules, missing_names = [], []
    for module, names in sorted(theirs.items()):
        if any(module == m or module.startswith(m + ".") for m in NOT_SERVED_MODULES):
            continue
        ours = PATHS.get(f"scenarist.{module}")
        if ours is None:
            missing_modules.append(module)
            continue
        missing_names += [
            f"{module}.{n}" for n in names if n not in ours and n not in NOT_SERVED_NAMES
        ]
    assert (missing_modules, missing_names) == ([], [])
    unknown = [p for p in PATHS if p.removeprefix("scenarist.") not in theirs]
    assert unknown == [], "paths giskard-checks 1.0.6 does not have"
