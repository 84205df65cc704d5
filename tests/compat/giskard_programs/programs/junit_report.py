"""A CI job's end: run a suite, write JUnit XML to a file, parse it back with ElementTree
and read what a CI server shows (counts, case names, failure and error messages, the
properties), then the Hub payload an uploader reads (to_hub_format)."""

import asyncio
import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from giskard.checks import (  # IMPORT
    CheckResult,
    Equals,
    FnCheck,
    JsonValid,
    Scenario,
    StringMatching,
    Suite,
)


def agent(inputs):
    if inputs == "json please":
        return '{"ok": true}'
    if inputs == "broken json":
        return '{"ok": tru'
    if inputs == "explode":
        raise ValueError("agent exploded")
    return inputs.upper()


def build():
    suite = Suite(name="ci", target=agent)
    suite.append(Scenario("upper").interact(inputs="abc").check(Equals(expected_value="ABC")))
    suite.append(
        Scenario("json ok")
        .with_tags(["format:json"])
        .interact(inputs="json please")
        .check(JsonValid())
    )
    suite.append(
        Scenario("json broken")
        .with_tags(["format:json"])
        .interact(inputs="broken json")
        .check(JsonValid())
    )
    suite.append(
        Scenario("two steps")
        .interact(inputs="a")
        .check(StringMatching(keyword="A"))
        .interact(inputs="b")
        .check(Equals(expected_value="c", name="wants c"))
    )
    suite.append(Scenario("explodes").interact(inputs="explode").check(FnCheck(fn=lambda t: True)))
    suite.append(Scenario("no checks").interact(inputs="z"))
    suite.append(Scenario("quiet failure").interact(inputs="q").check(FnCheck(fn=lambda t: False)))
    suite.append(
        Scenario("skipped")
        .interact(inputs="s")
        .check(FnCheck(fn=lambda t: CheckResult.skip(message="no model configured"), name="judge"))
    )
    return suite


def element(e):
    keep = ("tests", "failures", "errors", "skipped", "assertions", "name", "message", "type")
    return {k: e.get(k) for k in keep if e.get(k) is not None}


def without_timings(value):
    if isinstance(value, dict):
        volatile = ("duration_ms", "traceback", "created_at", "timestamp")
        return {
            k: type(v).__name__ if k in volatile else without_timings(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def text_lines(element):
    """The outcome's text as a CI log shows it; `details=` lines parsed, timings dropped."""
    lines = []
    for line in (element.text or "").splitlines():
        if line.startswith("details="):
            details = json.loads(line[len("details=") :])
            details.pop("duration_ms", None)
            details.pop("traceback", None)
            lines.append({"details": details})
        else:
            lines.append(line)
    return lines


async def main():
    out = {}
    result = await build().run(return_exception=True, verbose=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "reports" / "junit.xml"
        try:
            text = result.to_junit_xml(path)
            out["written"] = path.exists()
            out["same_as_returned"] = path.exists() and path.read_text(encoding="utf-8") == text
            out["returned_starts"] = text[:10]
            out["file_starts"] = path.read_text(encoding="utf-8")[:5]
        except Exception as exc:
            out["written"] = type(exc).__name__
            text = result.to_junit_xml()
    root = ET.fromstring(text)
    out["root_tag"] = root.tag
    out["root"] = {k: v for k, v in element(root).items() if k != "name"}
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    out["suites"] = [{k: v for k, v in element(s).items() if k != "name"} for s in suites]
    cases = {}
    for case in root.iter("testcase"):
        cases[case.get("name")] = {
            "attributes": element(case),
            "children": sorted({child.tag for child in case}),
            "failure": [element(f) | {"text": text_lines(f)} for f in case.findall("failure")],
            "error": [element(f) | {"text": text_lines(f)} for f in case.findall("error")],
            "skipped": [element(f) | {"text": text_lines(f)} for f in case.findall("skipped")],
        }
    out["cases"] = cases
    hub = result.to_hub_format()  # the payload an uploader script reads, timings left out
    out["hub"] = without_timings(json.loads(json.dumps(hub, default=str)))
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
