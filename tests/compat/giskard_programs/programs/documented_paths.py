"""The module paths the checks documentation imports from, and every public module of the
package, used as the pages use them. Pages followed: the seed document (core.scenario,
core.result, scenarios.suite, scenarios.runner); the "JSONPath in Checks" explanation
(oss/checks/explanation: ``resolve`` and ``NoMatch`` from core.extraction in a custom
check); the "Generators" reference (generators.user, core.input_generator); the "Built-in
Checks" and "Judges" references (builtin.*, judges.*); the "Testing" reference (testing)."""

import asyncio
import json

import giskard.checks as top  # IMPORT
import giskard.checks.builtin.nlp_metrics as nlp_metrics  # IMPORT
from giskard.checks.builtin import Equals, FnCheck, StringMatching  # IMPORT
from giskard.checks.builtin.comparison import GreaterThan, LessThanEquals  # IMPORT
from giskard.checks.builtin.composition import AllOf, AnyOf, Not  # IMPORT
from giskard.checks.builtin.fn import from_fn  # IMPORT
from giskard.checks.builtin.json_valid import JsonValid  # IMPORT
from giskard.checks.builtin.rego_policy import RegoPolicy  # IMPORT
from giskard.checks.builtin.semantic_similarity import (  # IMPORT
    SemanticSimilarity,
    cosine_similarity,
)
from giskard.checks.builtin.text_matching import RegexMatching  # IMPORT
from giskard.checks.core import Interact as CoreInteract  # IMPORT
from giskard.checks.core.check import Check  # IMPORT
from giskard.checks.core.exceptions import InputGenerationException  # IMPORT
from giskard.checks.core.extraction import NoMatch, resolve  # IMPORT
from giskard.checks.core.input_generator import InputGenerator  # IMPORT
from giskard.checks.core.interaction import Interaction, Trace  # IMPORT
from giskard.checks.core.interaction.base import InteractionSpec  # IMPORT
from giskard.checks.core.interaction.interact import Interact  # IMPORT
from giskard.checks.core.judge import BaseJudge, LLMChatJudge  # IMPORT
from giskard.checks.core.mixin import WithGeneratorMixin, WithJudgeMixin  # IMPORT
from giskard.checks.core.result import (  # IMPORT
    CheckResult,
    CheckStatus,
    Metric,
    ScenarioResult,
    SuiteResult,
    TestCaseResult,
)
from giskard.checks.core.scenario import Scenario, Step  # IMPORT
from giskard.checks.core.testcase import TestCase  # IMPORT
from giskard.checks.core.types import Target  # IMPORT
from giskard.checks.export import to_hub_format, to_junit_xml  # IMPORT
from giskard.checks.generators import DatasetInputGenerator  # IMPORT
from giskard.checks.generators.base import BaseLLMGenerator, LLMGenerator  # IMPORT
from giskard.checks.generators.user import UserSimulator  # IMPORT
from giskard.checks.judges import Groundedness  # IMPORT
from giskard.checks.judges.base import BaseLLMCheck  # IMPORT
from giskard.checks.judges.conformity import Conformity  # IMPORT
from giskard.checks.judges.judge import LLMJudge  # IMPORT
from giskard.checks.judges.toxicity import Toxicity  # IMPORT
from giskard.checks.scenarios import Suite as ScenariosSuite  # IMPORT
from giskard.checks.scenarios.runner import ScenarioRunner, get_runner  # IMPORT
from giskard.checks.scenarios.suite import Suite  # IMPORT
from giskard.checks.settings import get_default_generator, set_default_judge  # IMPORT
from giskard.checks.testing import WithSpy  # IMPORT
from giskard.checks.testing.runner import TestCaseRunner  # IMPORT
from giskard.checks.testing.runner import get_runner as get_test_case_runner  # IMPORT
from giskard.checks.testing.spy import WithSpy as SpyFromModule  # IMPORT

DEEP = {
    "AllOf": AllOf, "AnyOf": AnyOf, "BaseJudge": BaseJudge, "BaseLLMCheck": BaseLLMCheck,
    "BaseLLMGenerator": BaseLLMGenerator, "Check": Check, "CheckResult": CheckResult,
    "CheckStatus": CheckStatus, "Conformity": Conformity,
    "DatasetInputGenerator": DatasetInputGenerator, "Equals": Equals, "FnCheck": FnCheck,
    "GreaterThan": GreaterThan, "Groundedness": Groundedness,
    "InputGenerationException": InputGenerationException, "Interact": Interact,
    "Interaction": Interaction, "InteractionSpec": InteractionSpec, "JsonValid": JsonValid,
    "LLMChatJudge": LLMChatJudge, "LLMGenerator": LLMGenerator, "LLMJudge": LLMJudge,
    "LessThanEquals": LessThanEquals, "Metric": Metric, "Not": Not,
    "Readability": nlp_metrics.Readability, "RegexMatching": RegexMatching,
    "RegoPolicy": RegoPolicy, "Scenario": Scenario, "ScenarioResult": ScenarioResult,
    "ScenarioRunner": ScenarioRunner, "SemanticSimilarity": SemanticSimilarity,
    "Step": Step, "StringMatching": StringMatching, "Suite": Suite, "SuiteResult": SuiteResult,
    "Target": Target, "TestCase": TestCase, "TestCaseResult": TestCaseResult,
    "TestCaseRunner": TestCaseRunner, "Toxicity": Toxicity, "Trace": Trace,
    "UserSimulator": UserSimulator, "WithGeneratorMixin": WithGeneratorMixin,
    "WithJudgeMixin": WithJudgeMixin, "WithSpy": WithSpy, "from_fn": from_fn,
    "get_default_generator": get_default_generator, "resolve": resolve,
    "set_default_judge": set_default_judge,
}  # fmt: skip


@Check.register("city_is")
class CityIs(Check):
    """A custom check as the JSONPath page writes one: resolve a path, NoMatch is an error."""

    field_path: str
    city: str

    async def run(self, trace):
        value = resolve(trace, self.field_path)
        if isinstance(value, NoMatch):
            return CheckResult.error(message=f"No value at '{self.field_path}'")
        if value == self.city:
            return CheckResult.success(message=f"city is {value}")
        return CheckResult.failure(message=f"city is {value}, not {self.city}")


def contact(inputs):
    return {
        "name": "Jane",
        "score": 3,
        "address": {"city": "Lyon", "country": "France"},
        "tags": ["vip"],
    }


async def main():
    out = {}
    out["same_as_top_level"] = {name: obj is getattr(top, name) for name, obj in DEEP.items()}
    out["aliases"] = [
        CoreInteract is Interact,
        ScenariosSuite is Suite,
        SpyFromModule is WithSpy,
        isinstance(get_runner(), ScenarioRunner),
        isinstance(get_test_case_runner(), TestCaseRunner),
        get_runner() is get_runner(),
        callable(to_junit_xml) and callable(to_hub_format),
        issubclass(UserSimulator, InputGenerator),
        issubclass(LLMJudge, BaseLLMCheck),
    ]
    out["cosine"] = [cosine_similarity([1.0, 0.0], [0.0, 1.0]), cosine_similarity([3.0], [6.0])]

    trace = await Trace.from_interactions(Interaction(inputs="who?", outputs=contact("who?")))
    out["resolve"] = {
        path: (lambda v: "NoMatch" if isinstance(v, NoMatch) else v)(resolve(trace, path))
        for path in (
            "trace.last.outputs.address.city",
            "trace.last.outputs.tags[0]",
            "trace.last.outputs.phone",
        )
    }

    scenario = (
        Scenario("contact_lookup")
        .interact(inputs="Find Jane", outputs=contact)
        .check(CityIs(name="lyon", field_path="trace.last.outputs.address.city", city="Lyon"))
        .check(CityIs(name="missing", field_path="trace.last.outputs.phone", city="Lyon"))
        .check(Equals(name="name", expected_value="Jane", target_key="trace.last.outputs.name"))
        .check(
            StringMatching(
                name="country", keyword="france", target_key="trace.last.outputs.address.country"
            )
        )
        .check(GreaterThan(name="tags", expected_value=0, target_key="trace.last.outputs.score"))
        .check(
            Not(
                name="not_paris",
                check=Equals(expected_value="Paris", target_key="trace.last.outputs.address.city"),
            )
        )
        .check(from_fn(lambda trace: trace.last.outputs["tags"] == ["vip"], name="vip"))
    )
    result = await scenario.run()
    out["scenario"] = [
        result.status.value,
        [[r.status.value, r.message] for r in result.steps[0].results],
        isinstance(result, ScenarioResult),
    ]

    suite = Suite(name="paths")
    suite.append(scenario)
    suite.append(
        Scenario("plain")
        .interact(inputs="a", outputs="b")
        .check(Equals(expected_value="b", target_key="trace.last.outputs"))
    )
    suite_result = await suite.run(verbose=False)
    out["suite"] = [
        isinstance(suite_result, SuiteResult),
        [r.status.value for r in suite_result.results],
    ]
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
