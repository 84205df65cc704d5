"""giskard-checks' module paths, after the one rewrite ``giskard.checks`` -> ``scenarist``.

giskard's documentation imports from deep paths (``from giskard.checks.core.extraction
import NoMatch``, ``from giskard.checks.generators.user import UserSimulator``...). Ported,
they read ``scenarist.core.extraction``, ``scenarist.generators.user``: paths our tree
does not have. One meta-path finder serves them all from :data:`PATHS`, a table of each
path of giskard-checks 1.0.6's public modules (every non-underscore module of the package,
the ones its documentation uses included) and the names it holds, each taken from the
scenarist module that defines it.

- A path our tree lacks (``scenarist.core.scenario``) becomes a small module whose names
  load on first use (a lazy ``__getattr__``, as the top level's): importing it costs a
  dictionary, not the engine, and ``scenarist.core.scenario.Scenario is scenarist.Scenario``.
- A path that is one of our real modules (``scenarist.generators.base``, ``scenarist.
  judges.judge``, ``scenarist.testing``) is loaded as always, then given the giskard names
  it lacks, lazily too (``LLMGenerator`` from ``generators.base``, ``WithSpy`` from
  ``testing``).

:func:`install` puts the finder first on ``sys.meta_path`` (``scenarist/__init__`` calls
it). It answers only the paths of the table: for any other import it is one dictionary
lookup. This module imports the standard library only, so ``import scenarist`` stays light.

Not served: giskard's internal helpers with no counterpart here (``giskard.checks.utils``,
``core.protocols``, ``core.types``' type aliases, ``JudgeInput``, ``SOMJudge``,
``MatchCollection``, ``TextBasedCheck``, ``BaseResult``, ``GiskardChecksSettings``,
``generators.dataset``'s template helpers); importing one is an ``ImportError`` naming it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when a path is first served, not by ``import scenarist``
    from importlib.machinery import ModuleSpec

__all__ = ["PATHS", "GiskardPathFinder", "install"]

_TOP = "scenarist"


def _top(*names: str) -> dict[str, str]:
    """Names taken from the top level (``scenarist.X``, itself lazy)."""
    return dict.fromkeys(names, _TOP)


_BUILTIN = (
    "AllOf AnyOf Equals FnCheck GreaterThan GreaterThanEquals JsonValid LessThan "
    "LessThanEquals Not NotEquals Readability RegexMatching RegoPolicy SemanticSimilarity "
    "StringMatching from_fn"
).split()
_COMPARISON = "Equals GreaterThan GreaterThanEquals LessThan LessThanEquals NotEquals".split()
_RESULTS = (
    "CheckResult CheckStatus GroupStats GroupedSuiteResult Metric ScenarioResult "
    "ScenarioStatus SuiteResult TestCaseError TestCaseResult TestCaseStatus"
).split()
_DEFAULTS = (
    "get_default_embedding_model get_default_generator get_default_judge "
    "set_default_embedding_model set_default_generator set_default_judge"
).split()

#: Each giskard-checks 1.0.6 public module path (rewritten) -> ``{name: source}``, where
#: source is a module (the attribute of the same name) or ``"module:attribute"``.
PATHS: dict[str, dict[str, str]] = {
    "scenarist.builtin": _top(*_BUILTIN),
    "scenarist.builtin.comparison": {
        **_top(*_COMPARISON),
        "ComparisonCheck": "scenarist.checks.comparison",
    },
    "scenarist.builtin.composition": _top("AllOf", "AnyOf", "Not"),
    "scenarist.builtin.fn": _top("FnCheck", "from_fn"),
    "scenarist.builtin.json_valid": _top("JsonValid"),
    "scenarist.builtin.nlp_metrics": _top("Readability"),
    "scenarist.builtin.rego_policy": _top("RegoPolicy"),
    "scenarist.builtin.semantic_similarity": {
        **_top("SemanticSimilarity"),
        "cosine_similarity": "scenarist.checks.similarity",
    },
    "scenarist.builtin.text_matching": _top("RegexMatching", "StringMatching"),
    "scenarist.core": _top(
        *_RESULTS,
        *"BaseJudge Check InputGenerationException Interact Interaction".split(),
        *"InteractionGenerationError InteractionSpec LLMChatJudge Scenario Step".split(),
        *"Target TestCase Trace resolve".split(),
    ),
    "scenarist.core.check": _top("Check"),
    "scenarist.core.exceptions": _top("InputGenerationException", "InteractionGenerationError"),
    "scenarist.core.extraction": _top("NoMatch", "resolve"),
    "scenarist.core.input_generator": {"InputGenerator": "scenarist.generators.base"},
    "scenarist.core.interaction": _top("Interact", "Interaction", "InteractionSpec", "Trace"),
    "scenarist.core.interaction.base": _top("InteractionSpec"),
    "scenarist.core.interaction.interact": _top("Interact"),
    "scenarist.core.interaction.interaction": _top("Interaction"),
    "scenarist.core.interaction.trace": _top("Trace"),
    "scenarist.core.judge": _top("BaseJudge", "LLMChatJudge"),
    "scenarist.core.mixin": _top("WithEmbeddingMixin", "WithGeneratorMixin", "WithJudgeMixin"),
    "scenarist.core.result": _top(*_RESULTS),
    "scenarist.core.scenario": _top("Scenario", "Step"),
    "scenarist.core.testcase": _top("TestCase"),
    "scenarist.core.types": _top("Target"),
    "scenarist.export": {
        "to_hub_format": "scenarist.report.hub",
        "to_junit_xml": "scenarist.report.junit",
    },
    "scenarist.export.hub": {"to_hub_format": "scenarist.report.hub"},
    "scenarist.export.junit": {"to_junit_xml": "scenarist.report.junit"},
    # real modules of ours: given what giskard's modules of that path hold and they lack
    "scenarist.generators": _top(
        "BaseLLMGenerator", "DatasetInputGenerator", "LLMGenerator", "UserSimulator"
    ),
    "scenarist.generators.base": {
        "BaseLLMGenerator": "scenarist.generators.base",
        "LLMGenerator": "scenarist.generators.llm_generator",
        "LLMGeneratorOutput": "scenarist.generators.base",
    },
    "scenarist.generators.dataset": {"DatasetInputGenerator": "scenarist.generators.dataset"},
    "scenarist.generators.user": {
        "UserSimulator": "scenarist.generators.user_simulator",
        # the name giskard's generators reference page gives the simulator's turn
        "UserSimulatorOutput": "scenarist.generators.base:LLMGeneratorOutput",
    },
    "scenarist.judges": _top(
        *"AnswerRelevance BaseLLMCheck Conformity Contradiction Groundedness".split(),
        *"LLMCheckResult LLMJudge Toxicity".split(),
    ),
    "scenarist.judges.answer_relevance": _top("AnswerRelevance"),
    "scenarist.judges.base": _top("BaseLLMCheck"),
    "scenarist.judges.conformity": _top("Conformity"),
    "scenarist.judges.contradiction": _top("Contradiction"),
    "scenarist.judges.groundedness": _top("Groundedness"),
    "scenarist.judges.judge": _top("LLMJudge"),
    "scenarist.judges.toxicity": _top("Toxicity"),
    "scenarist.scenarios": _top("Suite", "TestCase"),
    "scenarist.scenarios.runner": _top("ScenarioRunner", "get_runner"),
    "scenarist.scenarios.suite": _top("Suite"),
    "scenarist.settings": _top(*_DEFAULTS),
    "scenarist.testing": _top("WithSpy"),
    "scenarist.testing.runner": {
        **_top("TestCaseRunner"),
        "get_runner": "scenarist.engine.runner:get_test_case_runner",
    },
    "scenarist.testing.spy": _top("WithSpy"),
}

_PACKAGES = frozenset(path.rpartition(".")[0] for path in PATHS)


def _lazy_getattr(
    module: ModuleType, names: Mapping[str, str], fallback: Callable[[str], Any] | None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` loading ``names`` on first use, then ``fallback``'s."""

    def __getattr__(name: str) -> Any:
        source = names.get(name)
        if source is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        where, _, attribute = source.partition(":")
        value = getattr(importlib.import_module(where), attribute or name)
        setattr(module, name, value)
        return value

    return __getattr__


class _AliasLoader:
    """Makes the module of a path our tree lacks: its names, loaded on first use."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        module.__doc__ = (
            f"giskard-checks' ``{module.__name__.replace(_TOP, 'giskard.checks', 1)}``, "
            "ported (see :mod:`scenarist._giskard_paths`)."
        )
        module.__all__ = sorted(self.names)  # type: ignore[attr-defined]
        module.__getattr__ = _lazy_getattr(module, self.names, None)  # type: ignore[method-assign]
        module.__dir__ = lambda: sorted({*vars(module), *self.names})  # type: ignore[method-assign]


class _SupplementLoader:
    """Loads one of our real modules as usual, then adds the giskard names it lacks."""

    def __init__(self, loader: Any, names: Mapping[str, str]) -> None:
        self.loader = loader
        self.names = names

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_source...
        return getattr(self.loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the real loader again while the module runs (importlib.resources reads it)
        module.__spec__.loader = module.__loader__ = self.loader  # type: ignore[union-attr]
        self.loader.exec_module(module)
        own = vars(module)
        missing = {name: source for name, source in self.names.items() if name not in own}
        if missing:
            previous = own.get("__getattr__")
            module.__getattr__ = _lazy_getattr(module, missing, previous)  # type: ignore[method-assign]
            listed = own.get("__dir__")
            module.__dir__ = lambda: sorted(  # type: ignore[method-assign]
                {*(listed() if listed is not None else vars(module)), *missing}
            )


class GiskardPathFinder:
    """The meta-path finder serving :data:`PATHS` (see the module docstring)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        names = PATHS.get(fullname)
        if names is None:
            return None
        from importlib.machinery import ModuleSpec

        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:  # one of our modules: loaded as it is, then supplemented
                if spec.loader is not None:
                    spec.loader = _SupplementLoader(spec.loader, names)  # type: ignore[assignment]
                return spec
        return ModuleSpec(fullname, _AliasLoader(names), is_package=fullname in _PACKAGES)  # type: ignore[arg-type]


_FINDER = GiskardPathFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
