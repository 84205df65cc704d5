"""The differential driver: one program, run once per implementation.

``python program.py <module> <cases.json> [<foreign-dumps.json>]`` imports ``<module>``
(``giskard.checks`` or ``scenarist``) as the *only* import that differs, runs every case
of ``cases.json`` through its public API and prints one JSON object: case id → observed
outcome (statuses, messages, counts, exports). An exception inside a case is an outcome
too (``{"raised": "TypeError"}``), so one gap never hides the other cases.

The optional third file holds scenario dumps written by the *other* implementation; each
is loaded with ``Scenario.model_validate`` and run (JSON in both directions).

Standard library only besides the module under test: it runs on giskard's Python 3.13
venv as well as on ours. Written against the documented API, not against either code base.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
import xml.etree.ElementTree as ET
from typing import Any

from allowlist import JUNIT_EXTRAS  # stdlib only; this script's folder is on sys.path

# The defaults cases start from nothing configured, whatever the caller's environment.
for _name in (
    "SCENARIST_DEFAULT_MODEL",
    "SCENARIST_DEFAULT_JUDGE",
    "SCENARIST_EMBEDDING_MODEL",
    "GISKARD_CHECKS_DEFAULT_MODEL",
    "GISKARD_CHECKS_DEFAULT_JUDGE",
    "GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL",
):
    os.environ.pop(_name, None)

gc = importlib.import_module(sys.argv[1])


# -- user judges, registered by kind as giskard documents (no model: deterministic) -------


@gc.BaseJudge.register("diff_keyword")
class KeywordJudge(gc.BaseJudge):
    """Passes when ``keyword`` is in the last output; the reason says what it saw."""

    keyword: str = "ok"

    async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        text = str(inputs["trace"].last.outputs)
        found = self.keyword in text
        verdict = "found" if found else "missing"
        return gc.LLMCheckResult(passed=found, reason=f"{self.keyword!r} {verdict} in {text!r}")


@gc.BaseJudge.register("diff_echo")
class EchoJudge(gc.BaseJudge):
    """Passes, echoing the prompt it was given (the template source) and its inputs."""

    async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        return gc.LLMCheckResult(passed=True, reason=f"{prompt} | {sorted(inputs)}")


@gc.BaseJudge.register("diff_raises")
class RaisingJudge(gc.BaseJudge):
    async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        raise RuntimeError("judge exploded")


JUDGES = {"keyword": KeywordJudge, "echo": EchoJudge, "raises": RaisingJudge}


# -- named callables (cases are data; functions are referred to by name) ---------------


def _fn_nonempty(trace: Any) -> bool:
    return bool(trace.last.outputs)


def _fn_two_turns(trace: Any) -> bool:
    return len(trace.interactions) >= 2


async def _fn_async_upper(trace: Any) -> bool:
    return str(trace.last.outputs).isupper()


def _fn_result(trace: Any) -> Any:
    if "ok" in str(trace.last.outputs):
        return gc.CheckResult.success(message="contains ok")
    return gc.CheckResult.failure(message="no ok in output")


def _fn_raises(trace: Any) -> bool:
    raise RuntimeError("boom in check")


CHECK_FNS = {
    "nonempty": _fn_nonempty,
    "two_turns": _fn_two_turns,
    "async_upper": _fn_async_upper,
    "result": _fn_result,
    "raises": _fn_raises,
}


def _echo(inputs: Any) -> Any:
    return f"echo: {inputs}"


def _upper(inputs: Any) -> Any:
    return str(inputs).upper()


async def _async_echo(inputs: Any) -> Any:
    return f"async echo: {inputs}"


def _boom(inputs: Any) -> Any:
    raise ValueError(f"target failed on {inputs!r}")


def _with_trace(trace: Any, inputs: Any) -> Any:
    return f"{inputs} #{len(trace.interactions) + 1}"


TARGETS = {
    "echo": _echo,
    "upper": _upper,
    "async_echo": _async_echo,
    "boom": _boom,
    "with_trace": _with_trace,
}


def _inputs_callable(trace: Any) -> Any:
    return f"turn {len(trace.interactions) + 1}"


def _inputs_gen(trace: Any) -> Any:
    trace = yield "first"
    trace = yield f"second after {len(trace.interactions)}"


async def _inputs_agen(trace: Any) -> Any:
    trace = yield "a1"
    yield f"a2 after {len(trace.interactions)}"


INPUTS = {"callable": _inputs_callable, "gen": _inputs_gen, "agen": _inputs_agen}


# -- building objects from case data ------------------------------------------------------


def build_check(spec: dict[str, Any]) -> Any:
    cls = spec["cls"]
    args = dict(spec.get("args", {}))
    if cls in ("AllOf", "AnyOf"):
        args["checks"] = [build_check(c) for c in spec["checks"]]
    elif cls == "Not":
        args["check"] = build_check(spec["check"])
    elif cls == "from_fn":
        return gc.from_fn(CHECK_FNS[spec["fn"]], **args)
    elif cls == "FnCheck":
        args["fn"] = CHECK_FNS[spec["fn"]]
    if "judge" in spec:
        args["judge"] = JUDGES[spec["judge"]](**spec.get("judge_args", {}))
    return getattr(gc, cls)(**args)


def build_interaction(data: dict[str, Any]) -> Any:
    return gc.Interaction(
        inputs=data["inputs"], outputs=data["outputs"], metadata=data.get("metadata", {})
    )


def build_scenario(case: dict[str, Any]) -> Any:
    scenario = gc.Scenario(name=case.get("name", case["id"]))
    if case.get("tags"):
        scenario = scenario.with_tags(case["tags"])
    for step in case["steps"]:
        for turn in step.get("interacts", []):
            kwargs: dict[str, Any] = {}
            if "inputs_fn" in turn:
                kwargs["inputs"] = INPUTS[turn["inputs_fn"]]
            else:
                kwargs["inputs"] = turn["inputs"]
            if "outputs_fn" in turn:
                kwargs["outputs"] = TARGETS[turn["outputs_fn"]]
            elif "outputs" in turn:
                kwargs["outputs"] = turn["outputs"]
            if turn.get("metadata"):
                kwargs["metadata"] = turn["metadata"]
            scenario = scenario.interact(**kwargs)
        for check in step.get("checks", []):
            scenario = scenario.check(build_check(check))
    return scenario


# -- observing outcomes -----------------------------------------------------------------


def status_of(value: Any) -> str:
    return str(getattr(value, "value", value))


def check_outcome(result: Any) -> dict[str, Any]:
    return {
        "status": status_of(result.status),
        "printed": f"{result.status}",
        "message": result.message,
    }


def printed(result: Any) -> list[str]:
    """How each status level prints: ``f"{...}"``, ``str()`` and ``format()``."""
    out = [f"{result.status}"]
    for step in result.steps:
        out.append(str(step.status))
        out.extend(format(r.status) for r in step.results)
    return out


def equal_by_hand(trace: Any) -> list[bool]:
    """Whether each interaction of a final trace ``==`` the same one built by hand."""
    return [
        i == gc.Interaction(inputs=i.inputs, outputs=i.outputs, metadata=i.metadata)
        for i in trace.interactions
    ]


def scenario_outcome(result: Any) -> dict[str, Any]:
    return {
        "printed": printed(result),
        "equal_by_hand": equal_by_hand(result.final_trace),
        "status": status_of(result.status),
        "runs_executed": result.runs_executed,
        "interactions": len(result.final_trace.interactions),
        "steps": [
            {
                "status": status_of(step.status),
                "error": None if step.error is None else step.error.phase,
                "results": [check_outcome(r) for r in step.results],
            }
            for step in result.steps
        ],
    }


def junit_shape(xml: str) -> Any:
    """The JUnit document's structure: element tree, attribute names, property names.

    Values are kept where CI reads them (counts, ``assertions``, names, verdict messages,
    the ``final_trace`` JSON; of each ``step_N`` JSON its keys and statuses), never timings.
    What scenarist adds on purpose (``JUNIT_EXTRAS`` in ``allowlist.py``) is left out of
    both sides; the test checks scenarist does write it.
    """
    root = ET.fromstring(xml)
    # giskard names every suite "Test run" (a known bug we fix): compared apart
    suite_name = root.attrib.pop("name", None)
    kept = ("name", "tests", "failures", "errors", "skipped", "assertions", "message", "type")

    def shape(element: Any) -> Any:
        if element.tag == "property":
            name = element.get("name")
            value: Any = json.loads(element.get("value"))
            if name != "final_trace":
                value = {
                    "keys": sorted(value),
                    "status": value["status"],
                    "results": [[sorted(r), r["status"], r["message"]] for r in value["results"]],
                }
            return ["property", name, value]
        attributes = sorted(a for a in element.attrib if a not in JUNIT_EXTRAS["attributes"])
        values = {a: element.get(a) for a in attributes if a in kept}
        children = [
            shape(child) for child in element if child.get("name") not in JUNIT_EXTRAS["properties"]
        ]
        if element.tag == "properties" and not children:
            return None
        return [element.tag, attributes, values, [c for c in children if c is not None]]

    return {"suite_name": suite_name, "tree": shape(root)}


def raised(exc: BaseException) -> dict[str, Any]:
    return {"raised": type(exc).__name__}


# -- case kinds -----------------------------------------------------------------------


async def run_check_case(case: dict[str, Any]) -> Any:
    check = build_check(case["check"])
    if case.get("direct"):
        trace = await gc.Trace.from_interactions(
            *[build_interaction(i) for i in case["interactions"]]
        )
        result = await check.run(trace)
    else:
        scenario = gc.Scenario(name=case["id"])
        for turn in case["interactions"]:
            scenario = scenario.interact(
                inputs=turn["inputs"], outputs=turn["outputs"], metadata=turn.get("metadata", {})
            )
        scenario = scenario.check(check)
        result = (await scenario.run(return_exception=True)).steps[0].results[0]
    out = check_outcome(result)
    if case.get("metrics"):  # the measured numbers too (readability scores)
        out["metrics"] = [[m.name, round(m.value, 9)] for m in result.metrics]
    return out


def describe_defaults() -> dict[str, Any]:
    """What the default getters return: their types' roles and the models they name."""
    generator = gc.get_default_generator()
    judge = gc.get_default_judge()
    embedding = gc.get_default_embedding_model()
    inner = getattr(judge, "generator", None)
    return {
        "generator": generator.model,
        "judge": [
            type(judge).__name__,
            judge.kind,
            isinstance(judge, gc.BaseJudge),
            None if inner is None else inner.model,
        ],
        "embedding": embedding.model,
    }


async def defaults_outcomes() -> dict[str, Any]:
    """get_default_*() from nothing set, then after each set_default_* (one case each)."""
    steps: list[tuple[str, Any]] = [
        ("unset", None),
        ("embedding_set", lambda: gc.set_default_embedding_model("openai/text-embedding-3-large")),
        ("generator_set", lambda: gc.set_default_generator("anthropic/claude-3-5-haiku")),
        ("judge_set", lambda: gc.set_default_judge("openai/gpt-4o")),
        ("judge_cleared", lambda: gc.set_default_judge(None)),
    ]
    out: dict[str, Any] = {}
    for state, change in steps:
        if change is not None:
            change()
        for role, value in describe_defaults().items():
            out[f"defaults:{state}:{role}"] = value
    gc.set_default_judge(KeywordJudge(keyword="Hello"))
    judge = gc.get_default_judge()
    out["defaults:judge_object"] = [type(judge).__name__, judge.kind, judge.keyword]
    trace = await gc.Trace.from_interactions(gc.Interaction(inputs="q", outputs="Hello World"))
    check = gc.LLMJudge(name="by_default", prompt="Is {{ trace.last.outputs }} fine?")
    out["defaults:judge_object:run"] = check_outcome(await check.run(trace))
    gc.set_default_judge(None)
    gc.set_default_generator(None)
    gc.set_default_embedding_model(None)
    out["defaults:restored"] = describe_defaults()["generator"]
    return out


def judge_registry_outcomes() -> dict[str, Any]:
    """BaseJudge.register / kinds / model_validate, as user code calls them."""
    out: dict[str, Any] = {}
    kinds = gc.BaseJudge.kinds()
    out["judges:kinds"] = sorted(k for k in kinds if k in {"llm", *JUDGE_KINDS})
    out["judges:kind"] = [KeywordJudge().kind, EchoJudge.kinds() == kinds]
    for name, data in [
        ("keyword", {"kind": "diff_keyword", "keyword": "x"}),
        ("llm", {"kind": "llm"}),
        ("unknown", {"kind": "diff_nope"}),
        ("extra", {"kind": "diff_keyword", "bogus": 1}),
        ("no_kind", {}),
    ]:
        try:
            judge = gc.BaseJudge.model_validate(data)
            out[f"judges:validate:{name}"] = [type(judge).__name__, judge.model_dump(mode="json")]
        except Exception as exc:
            out[f"judges:validate:{name}"] = raised(exc)
    try:

        @gc.BaseJudge.register("diff_keyword")
        class Duplicate(gc.BaseJudge):
            pass

        out["judges:duplicate"] = "registered"
    except Exception as exc:
        out["judges:duplicate"] = raised(exc)
    return out


JUDGE_KINDS = {"diff_keyword", "diff_echo", "diff_raises"}


async def run_scenario_case(case: dict[str, Any]) -> Any:
    scenario = build_scenario(case)
    kwargs: dict[str, Any] = {"return_exception": case.get("return_exception", True)}
    if "target" in case:
        kwargs["target"] = TARGETS[case["target"]]
    if "multiple_runs" in case:
        kwargs["multiple_runs"] = case["multiple_runs"]
    result = await scenario.run(**kwargs)
    out = scenario_outcome(result)
    if case.get("assert_passed"):
        try:
            result.steps[-1].assert_passed()
            out["assert_passed"] = None
        except AssertionError as exc:
            out["assert_passed"] = str(exc)
    return out


async def run_suite_case(case: dict[str, Any]) -> Any:
    suite_kwargs: dict[str, Any] = {"name": case["id"]}
    if "target" in case:
        suite_kwargs["target"] = TARGETS[case["target"]]
    suite = gc.Suite(**suite_kwargs)
    for scenario in case["scenarios"]:
        suite.append(build_scenario(scenario))
    result = await suite.run(
        return_exception=True, parallel=case.get("parallel", False), verbose=False
    )
    out: dict[str, Any] = {
        "statuses": [status_of(r.status) for r in result.results],
        "counts": [
            result.passed_count,
            result.failed_count,
            result.errored_count,
            result.skipped_count,
        ],
        "pass_rate": result.pass_rate,
        "failures_and_errors": [r.scenario_name for r in result.failures_and_errors],
    }
    if case.get("group_by"):
        grouped = result.group_by(case["group_by"])
        out["groups"] = {
            str(key): [g.passed, g.failed, g.errored, g.skipped, g.pass_rate]
            for key, g in sorted(grouped.groups.items())
        }
    if case.get("junit"):
        out["junit"] = junit_shape(result.to_junit_xml())
    return out


async def run_dump_case(case: dict[str, Any]) -> Any:
    scenario = build_scenario(case)
    dump = scenario.model_dump(mode="json")
    return {"keys": sorted(dump), "step_keys": sorted(dump["steps"][0]), "dump": dump}


async def run_load_case(dump: dict[str, Any]) -> Any:
    scenario = gc.Scenario.model_validate(dump)
    result = await scenario.run(return_exception=True)
    return scenario_outcome(result)


KINDS = {
    "check": run_check_case,
    "scenario": run_scenario_case,
    "suite": run_suite_case,
    "dump": run_dump_case,
}


async def main(cases: list[dict[str, Any]], foreign: dict[str, Any]) -> None:
    outcomes: dict[str, Any] = {}
    for case in cases:
        try:
            outcomes[case["id"]] = await KINDS[case["kind"]](case)
        except Exception as exc:
            outcomes[case["id"]] = raised(exc)
    if cases:
        outcomes.update(judge_registry_outcomes())
        outcomes.update(await defaults_outcomes())
    if cases:  # giskard's submodules import the same names under the same module name
        outcomes["modules"] = {
            name: sorted(n for n in wanted if hasattr(_submodule(name), n))
            for name, wanted in SUBMODULES.items()
        }
    for case_id, dump in sorted(foreign.items()):
        try:
            outcomes[f"load:{case_id}"] = await run_load_case(dump)
        except Exception as exc:
            outcomes[f"load:{case_id}"] = raised(exc)
    json.dump(outcomes, sys.stdout, sort_keys=True, default=repr)


SUBMODULES = {
    "builtin": [
        "AllOf", "AnyOf", "Equals", "FnCheck", "GreaterThan", "GreaterThanEquals", "JsonValid",
        "LessThan", "LessThanEquals", "Not", "NotEquals", "Readability", "RegexMatching",
        "RegoPolicy", "SemanticSimilarity", "StringMatching",
    ],
    "judges": [
        "AnswerRelevance", "BaseLLMCheck", "Conformity", "Contradiction", "Groundedness",
        "LLMCheckResult", "LLMJudge", "Toxicity",
    ],
}  # fmt: skip


def _submodule(name: str) -> Any:
    return importlib.import_module(f"{sys.argv[1]}.{name}")


def _read(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    asyncio.run(main(_read(sys.argv[2]), _read(sys.argv[3]) if len(sys.argv) > 3 else {}))
