"""JUnit XML for CI systems, in giskard-checks' element structure.

The root is one ``<testsuite>`` (as giskard-checks writes it) named after the **suite**
(giskard hard-codes "Test run"), with the counts, an ``assertions`` total (check results),
``time``, ``timestamp`` and ``hostname``. Each scenario is a ``<testcase>`` (``name``,
``classname`` = the suite, ``assertions``, ``time``) whose properties start with giskard's
``final_trace`` and ``step_1``... ``step_N`` (the trace and each step as compact JSON, the
same objects as the Hub payload, so CI scripts that parse them keep working), then ours:
tags, runs executed, cost when known. At most one ``<failure>``, ``<error>`` or
``<skipped>`` child carries giskard's text (the scenario, then each check result with the
scenario's status and its details as JSON; ``<skipped>`` also gives the first skip reason
as its ``message``, which giskard leaves out). A scenario errored by a step that raised
reads as giskard's: ``type="error"``, ``Scenario errored.``; ``name_exceptions=True``
names the exception instead (type, message, and a line of its text). Every case carries
its plain-text report in ``<system-out>``, as giskard's; ``system_out="failing"`` keeps it
for failing and erroring cases only (smaller files). Additive options (ours, off by default
so giskard's output stays as it is): ``trace_properties=False`` leaves out ``final_trace``
and ``step_N`` (the bulk of the file: the run log keeps the traces), ``ascii_text=True``
writes ``<system-out>`` in ASCII (an ASCII frame, ``->`` and ``...`` for arrows and
ellipses, no emoji), and ``locations`` gives each case ``file`` and ``line`` attributes
(what ``scenarist run --junit`` writes; ``--junit-full`` keeps giskard's form). The
returned text is the ``<testsuite>`` element, as giskard returns it; the file written to
``path`` starts with an XML declaration (``xml_declaration=True`` adds it to the returned
text too). The full record of a run belongs to the run log (:mod:`scenarist.formats.runlog`).

Built with :mod:`xml.etree.ElementTree`, which escapes ``<``, ``&`` and quotes; characters
that XML 1.0 cannot hold at all (most control characters) are replaced by a visible
``\\xNN`` escape before they reach the tree.
"""

from __future__ import annotations

import io
import json
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

from scenarist.model.certificate import Guarantee, ReplayCertificate, scenario_certificate
from scenarist.model.results import RepeatStats, ScenarioResult, SuiteResult
from scenarist.model.status import RateVerdict, format_rate
from scenarist.report.hub import jsonable, scenario_payload

__all__ = ["to_junit_xml"]

DEFAULT_SUITE_NAME = "scenarist"
_SYSTEM_OUT_WIDTH = 120
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ELEMENT_FOR = {"fail": "failure", "error": "error", "skip": "skipped"}
_NO_MESSAGE = {"failure": "Scenario failed.", "error": "Scenario errored."}
_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'

SystemOut = Literal["all", "failing"]
Location = tuple[str, int | None]
"""A case's source: the file (as CI shows it, usually relative to the job's working
directory) and the line, when known."""

_ASCII = str.maketrans(
    {
        "\u2500": "-",  # ─
        "\u2501": "=",  # ━
        "\u2502": "|",  # │
        "\u2503": "|",  # ┃
        "\u250c": "+",  # ┌
        "\u2510": "+",  # ┐
        "\u2514": "`-",  # └ (a tree's last branch)
        "\u2518": "+",  # ┘
        "\u251c": "|-",  # ├ (a tree's branch)
        "\u2524": "+",  # ┤
        "\u2550": "=",  # ═
        "\u256d": "+",  # ╭
        "\u256e": "+",  # ╮
        "\u256f": "+",  # ╯
        "\u2570": "+",  # ╰
        "\u00b7": "-",  # ·
        "\u2026": "...",  # …
        "\u2192": "->",  # →
        "\u2014": "-",  # —
        "\u2013": "-",  # –
        "\u2705": "",  # ✅ (the word follows)
        "\u274c": "",  # ❌
        "\u26a0": "",  # ⚠
        "\u26d4": "",  # ⛔
        "\ufe0f": "",  # the emoji variation selector
    }
)
_BOX_DRAWING = re.compile("[\u2500-\u257f]")
_EMOJI = re.compile("[\u2705\u274c\u26a0\u26d4]\ufe0f? ?")  # the status titles' marks


def to_junit_xml(
    result: SuiteResult,
    path: str | PathLike[str] | None = None,
    *,
    system_out: SystemOut = "all",
    name_exceptions: bool = False,
    xml_declaration: bool = False,
    certificate: ReplayCertificate | None = None,
    trace_properties: bool = True,
    ascii_text: bool = False,
    locations: Sequence[Location | None] | None = None,
) -> str:
    """The suite result as JUnit XML; with ``path``, also write it there (parents created,
    with an XML declaration).

    ``system_out``: ``"all"`` (giskard-checks') gives every case its plain-text report,
    ``"failing"`` only failing and erroring cases. ``name_exceptions``: a step that raised
    makes the ``<error>``'s type and message the exception's, and adds a line for it to
    its text (giskard-checks writes ``error`` / ``Scenario errored.``). ``xml_declaration``:
    the returned text starts with the declaration too (the file always does).
    ``certificate``: the run's replay certificate (by default the result's own, that of a
    run inside a cassette), written as ``replay.*`` properties of the suite, and each
    case's own (its ``certificate``, else its calls under the run's guarantee) on the
    case. ``trace_properties=False``: no ``final_trace`` / ``step_N`` properties (giskard
    writes them; they hold every trace as JSON). ``ascii_text=True``: ``<system-out>`` in
    ASCII (box drawing, arrows, ellipses, dashes and the status emoji become ASCII, in the
    run's own text too; its other characters are kept). ``locations``: by case
    (``result.results``' order), the ``file`` and ``line`` attributes (``None``, or a
    ``None`` line: left out).
    """
    if system_out not in ("all", "failing"):
        raise ValueError(f"system_out must be 'all' or 'failing', got {system_out!r}")
    if certificate is None:
        certificate = result.certificate  # a run inside a cassette carries its own
    suite_name = result.suite_name or DEFAULT_SUITE_NAME
    root = ET.Element(
        "testsuite",
        {
            "name": _clean(suite_name),
            "tests": str(len(result.results)),
            "failures": str(result.failed_count),
            "errors": str(result.errored_count),
            "skipped": str(result.skipped_count),
            "assertions": str(sum(_assertions(r) for r in result.results)),
            "time": _seconds(result.duration_ms),
        },
    )
    if result.started_at is not None:
        root.set("timestamp", result.started_at.isoformat(timespec="seconds"))
    root.set("hostname", _clean(socket.gethostname()))
    cost = result.cost_usd
    if cost is not None or result.incomplete or certificate is not None:
        properties = ET.SubElement(root, "properties")
        if cost is not None:
            ET.SubElement(properties, "property", {"name": "cost_usd", "value": f"{cost:.6f}"})
        if result.incomplete:  # the run did not finish: its log has no end record
            ET.SubElement(properties, "property", {"name": "incomplete", "value": "true"})
        _certificate_properties(properties, certificate)
    level = certificate.guarantee if certificate is not None else None
    shape = _Shape(system_out, name_exceptions, trace_properties, ascii_text)
    for index, scenario in enumerate(result.results):
        case = _testcase(root, scenario, suite_name, shape, level)
        where = locations[index] if locations is not None and index < len(locations) else None
        if where is not None:
            case.set("file", _clean(where[0]))
            if where[1] is not None:
                case.set("line", str(where[1]))
    if result.rate_verdicts:  # required pass rates decided some cases: count the cases
        for attribute in ("failures", "errors"):
            found = sum(case.find(attribute[:-1]) is not None for case in root.iter("testcase"))
            root.set(attribute, str(found))

    ET.indent(root, space="  ")
    xml = ET.tostring(root, encoding="unicode")
    if path is not None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_DECLARATION + xml + "\n", encoding="utf-8")
    return _DECLARATION + xml if xml_declaration else xml


@dataclass(frozen=True)
class _Shape:
    """What each case carries (``to_junit_xml``'s options)."""

    system_out: SystemOut
    name_exceptions: bool
    trace_properties: bool
    ascii_text: bool


def _testcase(
    parent: ET.Element,
    scenario: ScenarioResult,
    suite_name: str,
    shape: _Shape,
    guarantee: Guarantee | None = None,
) -> ET.Element:
    name_exceptions = shape.name_exceptions
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": _clean(suite_name),
            "name": _clean(scenario.scenario_name),
            "assertions": str(_assertions(scenario)),
            "time": _seconds(scenario.duration_ms),
        },
    )
    properties = ET.SubElement(case, "properties")
    if shape.trace_properties:
        payload = scenario_payload(scenario)
        _json_property(properties, "final_trace", payload["final_trace"])
        for index, step in enumerate(payload["steps"], start=1):
            _json_property(properties, f"step_{index}", step)
    for tag in scenario.tags:
        ET.SubElement(properties, "property", {"name": "tag", "value": _clean(tag)})
    runs = f"{scenario.runs_executed}/{scenario.multiple_runs}"
    ET.SubElement(properties, "property", {"name": "runs_executed", "value": runs})
    if (cost := scenario.cost_usd) is not None:
        ET.SubElement(properties, "property", {"name": "cost_usd", "value": f"{cost:.6f}"})
    if not scenario.has_checks:
        ET.SubElement(properties, "property", {"name": "no_checks", "value": "true"})
    if scenario.vacuous:
        ET.SubElement(properties, "property", {"name": "vacuous", "value": "true"})
    if scenario.repeat_statuses:
        passed = f"{scenario.repeats_passed}/{len(scenario.repeat_statuses)}"
        ET.SubElement(properties, "property", {"name": "repeats_passed", "value": passed})
    if scenario.flaky:
        ET.SubElement(properties, "property", {"name": "flaky", "value": "true"})
    _calibration_properties(properties, scenario)
    stats = scenario.repeat_stats
    if stats is not None:
        for name, value in _stats_properties(stats).items():
            ET.SubElement(properties, "property", {"name": name, "value": value})
    _certificate_properties(properties, scenario_certificate(scenario, guarantee))

    element = _ELEMENT_FOR.get(scenario.status)
    judged = stats is not None and stats.verdict is not None and element != "skipped"
    if judged and stats is not None and stats.verdict is RateVerdict.PASS:
        element = None  # a required pass rate (ours, opt-in): the statistical verdict decides
    if scenario.budget_stopped:  # an ERROR for giskard readers, BUDGET for ours
        ET.SubElement(properties, "property", {"name": "outcome", "value": "budget"})
        error = scenario.steps[0].error
        message = f"BUDGET: {error.message if error is not None else 'not started'}"
        outcome = ET.SubElement(case, "error", {"message": _clean(message), "type": "BUDGET"})
        outcome.text = _clean(f"scenario={scenario.scenario_name}\n{message}")
    elif judged and stats is not None and stats.verdict is not RateVerdict.PASS:
        word = "below" if stats.verdict is RateVerdict.FAIL else "not shown to reach"
        message = (
            f"pass rate {word} the required {format_rate(stats.min_pass_rate)}: {stats.describe()}"
        )
        outcome = ET.SubElement(
            case, "failure", {"message": _clean(message), "type": "min_pass_rate"}
        )
        outcome.text = _clean("\n".join(_problem_lines(scenario, shape)))
        element = "failure"
    elif element is not None:
        problems = _problems(scenario, name_exceptions)
        # no verdict, or one without a message: giskard-checks' wording
        first_type, first_message = problems[0] if problems else (element, "")
        first_message = first_message or _NO_MESSAGE.get(element, "")
        outcome = ET.SubElement(case, element, {"message": _clean(first_message)})
        if element != "skipped":
            outcome.set("type", _clean(first_type))
        outcome.text = _clean("\n".join(_problem_lines(scenario, shape)))
    if shape.system_out == "all" or element in ("failure", "error"):
        report = _plain_report(scenario, ascii_text=shape.ascii_text)
        ET.SubElement(case, "system-out").text = _clean(report)
    if len(properties) == 0:
        case.remove(properties)
    return case


def _calibration_properties(properties: ET.Element, scenario: ScenarioResult) -> None:
    """One ``judge_calibration`` property per calibrated judge check (judges/gate.py):
    the check and its badge as JSON (κ, agreement, n, date, minimums, labelled set)."""
    for index, step in enumerate(scenario.steps, start=1):
        for check in step.results:
            badge = (check.details or {}).get("calibration")
            if isinstance(badge, dict) and "kappa" in badge:
                _json_property(
                    properties,
                    "judge_calibration",
                    {"check": f"step_{index}.{check.label}", **badge},
                )


def _stats_properties(stats: RepeatStats) -> dict[str, str]:
    """The repeats' statistics as JUnit properties (``pass_rate``, ``pass_rate_ci``,
    ``min_pass_rate``, ``rate_verdict``...)."""
    found = {
        "repeat_runs": str(stats.runs),
        "pass_rate": f"{stats.pass_rate:.4f}" if stats.pass_rate is not None else "",
        "pass_rate_ci95": f"{stats.ci_low:.4f}-{stats.ci_high:.4f}",
    }
    if stats.min_pass_rate is not None and stats.verdict is not None:
        found["min_pass_rate"] = f"{stats.min_pass_rate:.4f}"
        found["rate_verdict"] = stats.verdict.value
        found["rate_method"] = stats.method
    return found


def _certificate_properties(properties: ET.Element, certificate: ReplayCertificate | None) -> None:
    if certificate is not None:
        for name, value in certificate.properties().items():
            ET.SubElement(properties, "property", {"name": name, "value": value})


def _assertions(scenario: ScenarioResult) -> int:
    """How many check results the scenario's steps hold."""
    return sum(len(step.results) for step in scenario.steps)


def _json_property(properties: ET.Element, name: str, value: object) -> None:
    text = _clean(json.dumps(value, ensure_ascii=False))
    ET.SubElement(properties, "property", {"name": name, "value": text})


def _problems(scenario: ScenarioResult, name_exceptions: bool) -> list[tuple[str, str]]:
    """``(type, message)`` of each result matching the scenario's status, in order (with
    ``name_exceptions``, a step's exception first)."""
    wanted = scenario.status.value
    found: list[tuple[str, str]] = []
    for step in scenario.steps:
        if name_exceptions and step.error is not None and wanted == "error":
            found.append((step.error.exception_type, step.error.message))
        found.extend((r.label, r.message or "") for r in step.results if r.status == wanted)
    return found


def _problem_lines(scenario: ScenarioResult, shape: _Shape) -> list[str]:
    """The outcome's text, as giskard-checks writes it: the scenario, a pointer to the
    properties, then each check result with the scenario's status (``[FAIL] step_1.<check>:
    <message>``) and its details as JSON. With ``name_exceptions``, a step that raised
    adds its exception (giskard writes nothing for it); without trace properties, no
    pointer to them."""
    name_exceptions = shape.name_exceptions
    wanted = scenario.status.value
    lines = [f"scenario={scenario.scenario_name}"]
    if shape.trace_properties:
        lines.append("See testcase properties for final_trace and step payloads.")
    for index, step in enumerate(scenario.steps, start=1):
        if name_exceptions and step.error is not None and wanted == "error":
            error = step.error
            lines.append(
                f"[ERROR] step_{index}.{error.phase}: {error.exception_type}: {error.message}"
            )
        for r in step.results:
            if r.status == wanted:
                lines.append(f"[{r.status.upper()}] step_{index}.{r.label}: {r.message or ''}")
                lines.append("details=" + json.dumps(jsonable(r.details), ensure_ascii=False))
    return lines


class _AsciiBuffer(io.StringIO):
    """A text buffer that says it holds ASCII: Rich then draws frames and rules with
    ASCII characters (its ``safe_box``)."""

    encoding = "ascii"


def _plain_report(scenario: ScenarioResult, *, ascii_text: bool = False) -> str:
    from rich.console import Console

    from scenarist.report._console import render

    buffer = _AsciiBuffer() if ascii_text else io.StringIO()
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
    text = buffer.getvalue()
    if ascii_text:
        text = _BOX_DRAWING.sub("-", _EMOJI.sub("", text).translate(_ASCII))
    return "\n".join(line.rstrip() for line in text.splitlines())


def _seconds(duration_ms: float) -> str:
    return f"{duration_ms / 1000:.3f}"


def _clean(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids replaced by a ``\\xNN`` escape."""
    return _ILLEGAL_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
