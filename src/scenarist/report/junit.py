"""JUnit XML for CI systems, in the shape pytest writes with ``junit_family=xunit2``.

One ``<testsuites>`` root holds one ``<testsuite>`` named after the suite; each scenario
is a ``<testcase>`` with at most one ``<failure>``, ``<error>`` or ``<skipped>`` child.
The file stays compact on purpose: giskard embeds every trace and step as JSON
attributes, which makes files grow fast and CI pages slow. Here a failing case carries
one line per failing check and its plain-text report in ``<system-out>``; passing cases
carry only their properties (tags, runs executed, cost when known). The full record of a
run belongs to the run log (:mod:`scenarist.runlog`).

Built with :mod:`xml.etree.ElementTree`, which escapes ``<``, ``&`` and quotes; characters
that XML 1.0 cannot hold at all (most control characters) are replaced by a visible
``\\xNN`` escape before they reach the tree.
"""

from __future__ import annotations

import io
import re
import socket
import xml.etree.ElementTree as ET
from os import PathLike
from pathlib import Path

from scenarist._status import FAILING, SKIPPED
from scenarist.results import ScenarioResult, SuiteResult

__all__ = ["to_junit_xml"]

DEFAULT_SUITE_NAME = "scenarist"
_SYSTEM_OUT_WIDTH = 120
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ELEMENT_FOR = {"fail": "failure", "error": "error", "skip": "skipped"}


def to_junit_xml(result: SuiteResult, path: str | PathLike[str] | None = None) -> str:
    """The suite result as JUnit XML; with ``path``, also write it there (parents created)."""
    suite_name = result.suite_name or DEFAULT_SUITE_NAME
    counts = {
        "tests": str(len(result.results)),
        "failures": str(result.failed_count),
        "errors": str(result.errored_count),
        "skipped": str(result.skipped_count),
        "time": _seconds(result.duration_ms),
    }
    root = ET.Element("testsuites", {"name": _clean(suite_name), **counts})
    suite = ET.SubElement(root, "testsuite", {"name": _clean(suite_name), **counts})
    if result.started_at is not None:
        suite.set("timestamp", result.started_at.isoformat(timespec="seconds"))
    suite.set("hostname", _clean(socket.gethostname()))
    if (cost := result.cost_usd) is not None:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "cost_usd", "value": f"{cost:.6f}"})
    for scenario in result.results:
        _testcase(suite, scenario, suite_name)

    ET.indent(root, space="  ")
    xml = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
    xml += "\n"
    if path is not None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(xml, encoding="utf-8")
    return xml


def _testcase(parent: ET.Element, scenario: ScenarioResult, suite_name: str) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": _clean(suite_name),
            "name": _clean(scenario.scenario_name),
            "time": _seconds(scenario.duration_ms),
        },
    )
    properties = ET.SubElement(case, "properties")
    for tag in scenario.tags:
        ET.SubElement(properties, "property", {"name": "tag", "value": _clean(tag)})
    runs = f"{scenario.runs_executed}/{scenario.multiple_runs}"
    ET.SubElement(properties, "property", {"name": "runs_executed", "value": runs})
    if (cost := scenario.cost_usd) is not None:
        ET.SubElement(properties, "property", {"name": "cost_usd", "value": f"{cost:.6f}"})
    if not scenario.has_checks:
        ET.SubElement(properties, "property", {"name": "no_checks", "value": "true"})
    if scenario.repeat_statuses:
        passed = f"{scenario.repeats_passed}/{len(scenario.repeat_statuses)}"
        ET.SubElement(properties, "property", {"name": "repeats_passed", "value": passed})
    if scenario.flaky:
        ET.SubElement(properties, "property", {"name": "flaky", "value": "true"})

    element = _ELEMENT_FOR.get(scenario.status)
    if element is None:
        return
    problems = _problems(scenario)
    first_type, first_message = problems[0] if problems else ("", "")
    outcome = ET.SubElement(case, element, {"message": _clean(first_message)})
    if element != "skipped":
        outcome.set("type", _clean(first_type))
    outcome.text = _clean("\n".join(_problem_lines(scenario)))
    if element != "skipped":
        ET.SubElement(case, "system-out").text = _clean(_plain_report(scenario))


def _problems(scenario: ScenarioResult) -> list[tuple[str, str]]:
    """``(type, message)`` of each result matching the scenario's status, in order."""
    wanted = scenario.status.value
    found: list[tuple[str, str]] = []
    for step in scenario.steps:
        if step.error is not None and wanted == "error":
            found.append((step.error.exception_type, step.error.message))
        found.extend((r.label, r.message or "") for r in step.results if r.status == wanted)
    return found


def _problem_lines(scenario: ScenarioResult) -> list[str]:
    """One line per failing, erroring (or, for a skipped scenario, skipped) check."""
    statuses = SKIPPED if scenario.status == "skip" else FAILING
    lines = []
    for index, step in enumerate(scenario.steps, start=1):
        if step.error is not None:
            error = step.error
            lines.append(
                f"[ERROR] step {index} {error.phase}: {error.exception_type}: {error.message}"
            )
        lines.extend(
            f"[{r.status.upper()}] step {index} {r.label}: {r.message or ''}"
            for r in step.results
            if r.status in statuses
        )
    return lines


def _plain_report(scenario: ScenarioResult) -> str:
    from rich.console import Console

    from scenarist.report._console import render

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=_SYSTEM_OUT_WIDTH,
        color_system=None,
        force_terminal=False,
        no_color=True,
        highlight=False,
        emoji=False,
    )
    for renderable in render(scenario):
        console.print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def _seconds(duration_ms: float) -> str:
    return f"{duration_ms / 1000:.3f}"


def _clean(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids replaced by a ``\\xNN`` escape."""
    return _ILLEGAL_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
