"""The same scenario built five ways users write it (chained calls, extend, declarative
steps, add_interactions, append), compared by dump and by run; plus misuse a user meets
while writing one, by exception type, and what running that misuse gives."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    Interact,
    JsonValid,
    RegexMatching,
    Scenario,
    Step,
    StringMatching,
    Suite,
)


def agent(inputs):
    return {"hello": "Hi there!", "price": "It is 10 EUR."}.get(inputs, "?")


def chained():
    return (
        Scenario("shop")
        .interact(inputs="hello")
        .check(StringMatching(keyword="Hi"))
        .interact(inputs="price")
        .check(RegexMatching(pattern=r"\d+ EUR"))
        .check(Equals(expected_value="It is 10 EUR."))
    )


def extended():
    return Scenario("shop").extend(
        Interact(inputs="hello"),
        StringMatching(keyword="Hi"),
        Interact(inputs="price"),
        RegexMatching(pattern=r"\d+ EUR"),
        Equals(expected_value="It is 10 EUR."),
    )


def declarative():
    return Scenario(
        "shop",
        steps=[
            Step(interacts=[Interact(inputs="hello")], checks=[StringMatching(keyword="Hi")]),
            Step(
                interacts=[Interact(inputs="price")],
                checks=[RegexMatching(pattern=r"\d+ EUR"), Equals(expected_value="It is 10 EUR.")],
            ),
        ],
    )


def added():
    return (
        Scenario("shop")
        .add_interactions(Interact(inputs="hello"))
        .check(StringMatching(keyword="Hi"))
        .add_interaction(Interact(inputs="price"))
        .check(RegexMatching(pattern=r"\d+ EUR"))
        .check(Equals(expected_value="It is 10 EUR."))
    )


def many_checks():
    return (
        Scenario("shop")
        .interact(inputs="hello")
        .checks(StringMatching(keyword="Hi"))
        .interact(inputs="price")
        .checks(RegexMatching(pattern=r"\d+ EUR"), Equals(expected_value="It is 10 EUR."))
    )


def appended():
    scenario = Scenario("shop")
    for component in (
        Interact(inputs="hello"),
        StringMatching(keyword="Hi"),
        Interact(inputs="price"),
        RegexMatching(pattern=r"\d+ EUR"),
        Equals(expected_value="It is 10 EUR."),
    ):
        scenario = scenario.append(component)
    return scenario


def attempt(fn):
    try:
        value = fn()
        return ["ok", type(value).__name__]
    except Exception as exc:
        return ["raised", type(exc).__name__, isinstance(exc, (ValueError, TypeError))]


async def run_outcome(run):
    try:
        result = await run()
    except Exception as exc:
        return ["raised", type(exc).__name__, isinstance(exc, ValueError)]
    return ["ran", result.status.value]


async def misuse_at_run():
    """Misuse the builder accepts, then run: what the run gives."""
    calls = []

    def counting(inputs):
        calls.append(inputs)
        return agent(inputs)

    not_a_check = (
        Scenario("not a check")
        .interact(inputs="hello")
        .check(StringMatching(keyword="Hi"))
        .interact(inputs="price")
        .check("not a check")
    )
    out = {
        "not_a_check": await run_outcome(lambda: not_a_check.run(target=counting)),
        "not_a_check_data": await run_outcome(
            lambda: not_a_check.run(target=counting, return_exception=True)
        ),
        "agent_calls": list(calls),
    }
    tagged = Scenario("tagged").with_tags("a,b").interact(inputs="hello", outputs="Hi")
    result = await tagged.run()
    out["tags_scenario_run"] = [result.status.value, result.tags]
    suite = Suite(name="tagged suite")
    suite.append(tagged)
    out["tags_suite_run"] = await run_outcome(lambda: suite.run(verbose=False))
    return out


async def main():
    out = {}
    builders = {
        "chained": chained,
        "extended": extended,
        "declarative": declarative,
        "added": added,
        "many_checks": many_checks,
        "appended": appended,
    }
    reference = chained().model_dump(mode="json")
    out["reference_steps"] = [
        [len(s["interacts"]), [c["kind"] for c in s["checks"]]] for s in reference["steps"]
    ]
    for name, build in builders.items():
        try:
            scenario = build()
            result = await scenario.run(target=agent)
            out[name] = {
                "same_dump": scenario.model_dump(mode="json") == reference,
                "steps": len(scenario.steps),
                "status": result.status.value,
                "results": [[r.status.value for r in s.results] for s in result.steps],
            }
        except Exception as exc:
            out[name] = ["raised", type(exc).__name__]
    out["chain_returns_self"] = (lambda s: s.interact(inputs="x") is s)(Scenario("s"))

    out["misuse"] = {
        "equals_without_expected": attempt(lambda: Equals()),
        "regex_bad_pattern": attempt(lambda: RegexMatching(pattern="(unclosed")),
        "string_matching_without_keyword": attempt(lambda: StringMatching()),
        "json_valid_bad_schema": attempt(lambda: JsonValid(schema={"type": 12})),
        "suite_without_name": attempt(lambda: Suite()),
        "check_not_a_check": attempt(lambda: Scenario("x").check("not a check")),
        "bad_target_key": attempt(lambda: Equals(expected_value=1, target_key="outputs[")),
        "scenario_name_int": attempt(lambda: Scenario(123)),
        "interact_nothing": attempt(lambda: Scenario("x").interact()),
        "tags_not_list": attempt(lambda: Scenario("x").with_tags("a,b")),
    }
    out["misuse_at_run"] = await misuse_at_run()
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
