"""Scenarios kept as JSON files: built in code with built-in and user-registered checks and
specs, dumped, written to disk, loaded back (as a CI job loads them) and run; the dump's
shape, what fails to load, and whether the reloaded run gives the same verdicts."""

import asyncio
import json
import tempfile
from pathlib import Path

from giskard.checks import (  # IMPORT
    Check,
    CheckResult,
    Equals,
    Interaction,
    InteractionSpec,
    JsonValid,
    Not,
    RegexMatching,
    Scenario,
    StringMatching,
)
from pydantic import ValidationError


@Check.register("max_length")
class MaxLength(Check):
    limit: int

    async def run(self, trace):
        n = len(str(trace.last.outputs))
        if n <= self.limit:
            return CheckResult.success(message=f"{n} <= {self.limit}")
        return CheckResult.failure(message=f"{n} > {self.limit}")


@InteractionSpec.register("canned_turns")
class CannedTurns(InteractionSpec):
    pairs: list[tuple[str, str]]

    async def generate(self, trace):
        for question, answer in self.pairs:
            yield Interaction(inputs=question, outputs=answer)


def build():
    return (
        Scenario("refund flow", multiple_runs=2)
        .with_tags(["team:billing", "smoke"])
        .with_annotations({"owner": "ana", "ticket": 42})
        .interact(inputs="I want a refund", outputs="Sure, what is the order number?")
        .check(StringMatching(keyword="order number", name="asks order"))
        .check(MaxLength(limit=80))
        .add_interaction(CannedTurns(pairs=[("123", '{"refund": "ok"}'), ("thanks", "bye")]))
        .check(JsonValid(target_key="trace.interactions[1].outputs"))
        .check(Not(check=RegexMatching(pattern="error")))
        .check(Equals(expected_value="bye", name="says bye"))
    )


def verdicts(result):
    return [result.status.value, result.runs_executed] + [
        [r.status.value, r.message] for s in result.steps for r in s.results
    ]


async def main():
    out = {}
    scenario = build()
    dumped = scenario.model_dump(mode="json")
    out["keys"] = sorted(dumped)
    out["dump"] = dumped
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "refund.json"
        path.write_text(json.dumps(dumped, indent=2), encoding="utf-8")
        loaded = Scenario.model_validate(json.loads(path.read_text(encoding="utf-8")))
    out["loaded_equal_dump"] = loaded.model_dump(mode="json") == dumped
    out["loaded_name_tags"] = [loaded.name, loaded.tags, loaded.annotations, loaded.multiple_runs]
    out["original_run"] = verdicts(await scenario.run())
    out["loaded_run"] = verdicts(await loaded.run())
    from_text = Scenario.model_validate_json(scenario.model_dump_json())
    out["from_text_run"] = verdicts(await from_text.run())

    broken = json.loads(json.dumps(dumped))
    broken["steps"][0]["checks"][1]["limit"] = "eighty"
    typo = json.loads(json.dumps(dumped))
    typo["steps"][0]["checks"][0]["keywrd"] = "x"
    unknown = json.loads(json.dumps(dumped))
    unknown["steps"][0]["checks"][0]["kind"] = "string_matchingg"
    for name, data in (("broken", broken), ("typo", typo), ("unknown", unknown)):
        try:
            Scenario.model_validate(data)
            out[f"load:{name}"] = "loaded"
        except ValidationError as exc:
            out[f"load:{name}"] = ["ValidationError", exc.error_count()]
        except Exception as exc:
            out[f"load:{name}"] = [type(exc).__name__]
    with_lambda = Scenario("lambda").interact(inputs="x", outputs=lambda inputs: inputs)
    try:
        data = with_lambda.model_dump(mode="json")
        out["lambda_dump"] = data["steps"][0]["interacts"][0]
    except Exception as exc:
        out["lambda_dump"] = ["raised", type(exc).__name__]
    print(json.dumps(out, sort_keys=True, default=str))


asyncio.run(main())
