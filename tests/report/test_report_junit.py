"""JUnit XML: validates against the vendored XSD and reads the way CI tools read it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from report_factories import (
    STARTED,
    erroring,
    failing,
    outputs_raised,
    passing,
    stamped,
    suite_of,
    with_spans,
)

from scenarist.model.results import CheckResult, ScenarioResult, SuiteResult, TestCaseResult
from scenarist.report.junit import to_junit_xml

XSD = Path(__file__).parents[1] / "fixtures" / "junit.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


def skipped_scenario() -> ScenarioResult:
    skip = stamped(CheckResult.skip("Skipped: no model configured"), "llm_judge")
    return ScenarioResult(scenario_name="skipped", steps=[TestCaseResult(results=[skip])])


def cases(xml: str) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in ET.fromstring(xml).iter("testcase")}


def test_junit_validates_against_the_xsd(
    schema: xmlschema.XMLSchema, demo_suite: SuiteResult
) -> None:
    for result in (
        demo_suite,
        suite_of(),
        suite_of(outputs_raised(), with_spans(), skipped_scenario()),
        SuiteResult(results=[passing()]),  # no name, no start time
    ):
        schema.validate(result.to_junit_xml())


def test_junit_one_testsuite_named_after_the_suite_with_counts(demo_suite: SuiteResult) -> None:
    suite = ET.fromstring(demo_suite.to_junit_xml())
    assert suite.tag == "testsuite"  # the root, as giskard-checks writes it
    keys = ("name", "tests", "failures", "errors", "skipped", "assertions")
    assert {k: suite.get(k) for k in keys} == {
        "name": "demo_suite",
        "tests": "4",
        "failures": "1",
        "errors": "1",
        "skipped": "0",
        "assertions": str(sum(len(s.results) for r in demo_suite.results for s in r.steps)),
    }
    assert [c.get("assertions") for c in suite.iter("testcase")] == [
        str(sum(len(s.results) for s in r.steps)) for r in demo_suite.results
    ]
    assert suite.get("time") == "0.010"
    assert suite.get("timestamp") == STARTED.isoformat(timespec="seconds")
    assert [c.get("name") for c in suite.iter("testcase")] == [
        "passing",
        "failing",
        "erroring",
        "nochecks",
    ]
    assert {c.get("classname") for c in suite.iter("testcase")} == {"demo_suite"}


def test_junit_unnamed_suite_falls_back_to_scenarist() -> None:
    suite = ET.fromstring(SuiteResult(results=[passing()]).to_junit_xml())
    assert suite.get("name") == "scenarist"
    assert suite.get("timestamp") is None


def test_junit_failure_message_is_the_first_failing_check_and_text_lists_all() -> None:
    second = stamped(CheckResult.failure("too long"), "less_than", "short")
    result = failing()
    result.steps[0].results.append(second)
    case = cases(suite_of(result).to_junit_xml())["failing"]
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "Expected value equal to 'right' but got 'wrong'"
    assert failure.get("type") == "equals"
    # giskard-checks 1.0.6's text: the scenario, a pointer, each failing check and details
    stamp = '"duration_ms": 0, "check_kind": "%s", "check_name": %s, "check_description": null'
    assert failure.text == (
        "scenario=failing\n"
        "See testcase properties for final_trace and step payloads.\n"
        "[FAIL] step_1.equals: Expected value equal to 'right' but got 'wrong'\n"
        "details={" + stamp % ("equals", "null") + "}\n"
        "[FAIL] step_1.short: too long\n"
        "details={" + stamp % ("less_than", '"short"') + "}"
    )
    assert case.find("error") is None


def test_junit_failure_without_a_message_says_scenario_failed() -> None:
    """A failing check with no message: giskard-checks 1.0.6's "Scenario failed." heads
    the <failure> (not an empty message)."""
    result = ScenarioResult(
        scenario_name="quiet",
        steps=[TestCaseResult(results=[stamped(CheckResult.failure(), "fn", "plain")])],
    )
    failure = cases(suite_of(result).to_junit_xml())["quiet"].find("failure")
    assert failure is not None
    assert (failure.get("message"), failure.get("type")) == ("Scenario failed.", "plain")


def test_junit_error_and_skip_children(demo_suite: SuiteResult) -> None:
    by_name = cases(suite_of(erroring(), outputs_raised(), skipped_scenario()).to_junit_xml())
    error = by_name["erroring"].find("error")
    assert error is not None
    assert (error.get("type"), error.get("message")) == (
        "boom_check",
        "Check 'boom_check' failed with error: kaboom",
    )
    # a step that raised: giskard-checks' type and message; the exception is in the
    # case's <system-out>
    step_error = by_name["outputs_raised"].find("error")
    assert step_error is not None
    assert (step_error.get("type"), step_error.get("message")) == ("error", "Scenario errored.")
    assert step_error.text.splitlines() == [  # type: ignore[union-attr]
        "scenario=outputs_raised",
        "See testcase properties for final_trace and step payloads.",
    ]
    assert "division by zero" in (by_name["outputs_raised"].findtext("system-out") or "")
    skipped = by_name["skipped"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "Skipped: no model configured"  # ours: giskard has none


def test_junit_name_exceptions_names_the_step_exception() -> None:
    xml = suite_of(erroring(), outputs_raised()).to_junit_xml(name_exceptions=True)
    by_name = cases(xml)
    step_error = by_name["outputs_raised"].find("error")
    assert step_error is not None
    assert (step_error.get("type"), step_error.get("message")) == (
        "ZeroDivisionError",
        "division by zero",
    )
    assert step_error.text.splitlines()[2:] == [  # type: ignore[union-attr]
        "[ERROR] step_1.outputs: ZeroDivisionError: division by zero"
    ]
    # a check's ERROR reads the same either way
    error = by_name["erroring"].find("error")
    assert error is not None and error.get("type") == "boom_check"


def test_junit_system_out_for_every_case_as_plain_text(demo_suite: SuiteResult) -> None:
    # giskard-checks writes every case's report; system_out="failing" keeps the failing ones
    by_name = cases(demo_suite.to_junit_xml())
    assert (by_name["passing"].findtext("system-out") or "").splitlines()[0].strip(
        "─ "
    ) == "✅ PASSED"
    assert by_name["nochecks"].find("system-out") is not None
    failing_only = cases(demo_suite.to_junit_xml(system_out="failing"))
    assert failing_only["passing"].find("system-out") is None
    assert failing_only["nochecks"].find("system-out") is None
    assert failing_only["erroring"].find("system-out") is not None
    with pytest.raises(ValueError, match="system_out must be 'all' or 'failing', got 'none'"):
        demo_suite.to_junit_xml(system_out="none")
    out = by_name["failing"].findtext("system-out") or ""
    assert "\x1b" not in out
    assert "Inputs: 'q1'" in out
    assert out.splitlines()[0].strip("─ ") == "❌ FAILED"


def test_junit_properties_tags_runs_and_cost() -> None:
    by_name = cases(suite_of(erroring(), with_spans()).to_junit_xml())

    def props(name: str) -> list[tuple[str | None, str | None]]:
        return [
            (p.get("name"), p.get("value"))
            for p in by_name[name].iter("property")
            if p.get("name") != "final_trace" and not str(p.get("name")).startswith("step_")
        ]

    assert props("erroring") == [
        ("tag", "team:a"),
        ("tag", "kind:err"),
        ("runs_executed", "1/1"),
    ]
    assert ("cost_usd", "0.001200") in props("agent_with_tools")


def test_junit_carries_giskard_trace_and_step_payloads_first(demo_suite: SuiteResult) -> None:
    for result, case in zip(
        demo_suite.results, ET.fromstring(demo_suite.to_junit_xml()), strict=True
    ):
        names = [p.get("name") for p in case.iter("property")]
        steps = [f"step_{n}" for n in range(1, len(result.steps) + 1)]
        assert names[: 1 + len(steps)] == ["final_trace", *steps]
        values = {
            p.get("name"): json.loads(p.get("value") or "")
            for p in case.iter("property")
            if p.get("name") in ("final_trace", *steps)
        }
        trace = values["final_trace"]
        assert sorted(trace) == ["annotations", "interactions", "last"]
        assert trace["interactions"] == [
            {"inputs": i.inputs, "outputs": i.outputs, "metadata": i.metadata}
            for i in result.final_trace.interactions
        ]
        for name, step in zip(steps, result.steps, strict=True):
            assert values[name]["status"] == step.status.value
            assert [r["message"] for r in values[name]["results"]] == [
                r.message for r in step.results
            ]


def test_junit_illegal_xml_characters_are_escaped(schema: xmlschema.XMLSchema) -> None:
    nasty = stamped(CheckResult.failure("bad \x00 byte \x1b[31m & <tag>"), "equals")
    result = ScenarioResult(
        scenario_name="ctl\x07name", steps=[TestCaseResult(results=[nasty])], tags=["a\x0bb"]
    )
    xml = suite_of(result).to_junit_xml()
    schema.validate(xml)
    failure = ET.fromstring(xml).find(".//failure")
    assert failure is not None
    assert failure.get("message") == "bad \\x00 byte \\x1b[31m & <tag>"
    assert cases(xml).keys() == {"ctl\\x07name"}


def test_junit_path_writes_the_file_and_returns_the_string(
    tmp_path: Path, demo_suite: SuiteResult
) -> None:
    target = tmp_path / "deep" / "dir" / "junit.xml"
    xml = to_junit_xml(demo_suite, target)
    # as giskard-checks: the file has an XML declaration, the returned element does not
    assert xml.startswith("<testsuite ")
    assert target.read_text(encoding="utf-8") == '<?xml version="1.0" encoding="UTF-8"?>\n' + (
        xml + "\n"
    )
    assert demo_suite.to_junit_xml(str(target)) == xml
    declared = to_junit_xml(demo_suite, xml_declaration=True)
    assert declared == '<?xml version="1.0" encoding="UTF-8"?>\n' + xml


def test_junit_compact_options_are_additive_and_giskards_form_stays_the_default(
    schema: xmlschema.XMLSchema, demo_suite: SuiteResult
) -> None:
    default = demo_suite.to_junit_xml()
    assert "file=" not in default and '"final_trace"' in default  # giskard's form
    locations = [("suites/demo.py", 12), ("suites/demo.py", None), None, ("d.yaml", None)]
    compact = demo_suite.to_junit_xml(
        trace_properties=False, ascii_text=True, system_out="failing", locations=locations
    )
    schema.validate(compact)
    found = cases(compact)
    where = {name: (c.get("file"), c.get("line")) for name, c in found.items()}
    assert list(where.values()) == [
        ("suites/demo.py", "12"),
        ("suites/demo.py", None),
        (None, None),
        ("d.yaml", None),
    ]
    assert "final_trace" not in compact and "See testcase properties" not in compact
    reports = [c.findtext("system-out") or "" for c in found.values()]
    assert any(reports) and all(text.isascii() for text in reports)
    assert len(compact) * 2 < len(default)
