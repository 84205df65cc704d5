"""LLM-judge checks without a model: the user's own judge (registered by kind, rule-based)
plugged into LLMJudge and the built-in judge checks, set as the default judge, one that
raises, and the verdicts, reasons and details users read."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    AnswerRelevance,
    BaseJudge,
    Conformity,
    Groundedness,
    Interaction,
    LLMCheckResult,
    LLMJudge,
    Scenario,
    Trace,
    get_default_judge,
    set_default_judge,
)


@BaseJudge.register("keyword_judge")
class KeywordJudge(BaseJudge):
    """Passes when every required word is in the rendered prompt's inputs."""

    required: list[str] = []  # noqa: RUF012 (a pydantic field: copied)

    async def judge(self, prompt, inputs, *, output_type=None):
        text = json.dumps(inputs, default=str, sort_keys=True).lower()
        missing = [w for w in self.required if w.lower() not in text]
        reason = "all present" if not missing else f"missing: {', '.join(missing)}"
        return LLMCheckResult(passed=not missing, reason=reason)


@BaseJudge.register("prompt_recorder")
class PromptRecorder(BaseJudge):
    """Passes and keeps what it was asked, to show which inputs each check gives a judge."""

    seen: list = []  # noqa: RUF012 (a pydantic field: copied)

    async def judge(self, prompt, inputs, *, output_type=None):
        self.seen.append(sorted(inputs))
        return LLMCheckResult(passed=True, reason="recorded")


@BaseJudge.register("broken_judge")
class BrokenJudge(BaseJudge):
    async def judge(self, prompt, inputs, *, output_type=None):
        raise TimeoutError("judge model timed out")


def describe(result):
    details = result.details
    return {
        "status": result.status.value,
        "message": result.message,
        "reason": details.get("reason"),
        "exception_type": details.get("exception_type"),
        "check": [details.get("check_kind"), details.get("check_name")],
        "has_inputs": "inputs" in details,
        "inputs": {
            key: type(value).__name__ if key == "trace" else value
            for key, value in sorted(details.get("inputs", {}).items())
            if key != "history"
        },
    }


async def main():
    out = {}
    trace = await Trace.from_interactions(
        Interaction(
            inputs="What is the capital of France?",
            outputs="Paris is the capital of France.",
            metadata={"context": ["Paris is the capital and largest city of France."]},
        )
    )
    paris = KeywordJudge(required=["paris"])
    berlin = KeywordJudge(required=["berlin", "germany"])
    checks = {
        "llm_judge_pass": LLMJudge(
            name="mentions paris",
            prompt="Does {{ trace.last.outputs }} mention Paris?",
            judge=paris,
        ),
        "llm_judge_fail": LLMJudge(prompt="Is it about Berlin?", judge=berlin),
        "groundedness": Groundedness(judge=paris),
        "groundedness_explicit": Groundedness(answer="Berlin", context=["Paris"], judge=berlin),
        "relevance": AnswerRelevance(judge=paris),
        "conformity": Conformity(rule="Answer in one sentence.", judge=berlin),
    }
    for name, check in checks.items():
        out[name] = describe(await check.run(trace))

    recorder = PromptRecorder(seen=[])
    for check in (
        LLMJudge(prompt="{{ trace.last.inputs }}", judge=recorder),
        Groundedness(judge=recorder),
        AnswerRelevance(judge=recorder),
        Conformity(rule="be nice", judge=recorder),
    ):
        await check.run(trace)
    out["inputs_given"] = recorder.seen
    try:
        await LLMJudge(prompt="anything", judge=BrokenJudge()).run(trace)
        out["broken_direct"] = "returned"
    except TimeoutError as exc:
        out["broken_direct"] = str(exc)

    set_default_judge(KeywordJudge(required=["capital"]))
    default = get_default_judge()
    out["default_judge"] = [type(default).__name__, default.kind, default.required]
    out["by_default"] = describe(await LLMJudge(prompt="ok?").run(trace))
    scenario = (
        Scenario("judged")
        .interact(inputs="Where is the Louvre?", outputs="In Paris.")
        .check(LLMJudge(name="judge", prompt="Fine?"))
        .check(LLMJudge(name="strict", prompt="Fine?", judge=berlin))
        .check(LLMJudge(name="broken", prompt="Fine?", judge=BrokenJudge()))
    )
    result = await scenario.run(return_exception=True)
    out["scenario"] = [result.status.value, [describe(r) for r in result.steps[0].results]]
    set_default_judge(None)

    dumped = checks["llm_judge_pass"].model_dump(mode="json")
    out["dump"] = dumped
    try:
        again = LLMJudge.model_validate(dumped)
        out["reloaded"] = describe(await again.run(trace))
    except Exception as exc:
        out["reloaded"] = type(exc).__name__
    judge_again = BaseJudge.model_validate({"kind": "keyword_judge", "required": ["x"]})
    out["judge_reloaded"] = [type(judge_again).__name__, judge_again.required]
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
