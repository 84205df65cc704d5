"""``scenarist run --junit``: the compact file CI servers read (issue 31, item 9): each
case's source file and line, ASCII ``<system-out>`` for failing cases only, no traces as
JSON; ``--junit-full`` keeps giskard-checks' full form."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
import xmlschema
from click.testing import Result
from tests.cli.conftest import FAILING

XSD = Path(__file__).parents[1] / "fixtures" / "junit.xsd"
BOX_DRAWING = re.compile("[\u2500-\u257f]")

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

MANY = """
from scenarist import Equals, Scenario, StringMatching, Suite

WORDS = " ".join(f"word{{n}}" for n in range(150))

def agent(inputs):
    return f"{{inputs}}: " + WORDS

suite = Suite(name="many", target=agent)
for n in range({count}):
    keyword = "word3" if n % 20 else "absent"  # one in twenty fails
    suite.append(
        Scenario(f"case_{{n:04d}}")
        .interact(f"question {{n}} about the order status and the refund " * 3)
        .check(StringMatching(keyword=keyword))
        .interact(f"follow-up {{n}}")
        .check(StringMatching(keyword="word1"))
    )
"""

YAML = """
name: yaml_case
steps:
  - interacts: [{kind: interact, inputs: hi, outputs: hello}]
    checks: [{kind: string_matching, keyword: nope}]
"""


def _cases(path: Path) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in ET.parse(path).getroot().iter("testcase")}


def test_the_cli_junit_is_compact_with_file_and_line_and_ascii_reports(
    cli: Cli, write: Write, home: Path
) -> None:
    write("suites/greet.py", FAILING)
    result = cli("run", "-q", "suites/greet.py", "--junit", "out/junit.xml")
    assert result.exit_code == 1, result.output
    path = home / "out" / "junit.xml"
    xmlschema.XMLSchema(XSD).validate(str(path))
    text = path.read_text(encoding="utf-8")
    assert not BOX_DRAWING.search(text)
    cases = _cases(path)
    assert {n: (c.get("file"), c.get("line")) for n, c in cases.items()} == {
        "says_hello": ("suites/greet.py", "8"),  # where each Scenario(...) is built
        "says_bye": ("suites/greet.py", "10"),
    }
    names = {p.get("name") for c in cases.values() for p in c.iter("property")}
    assert "final_trace" not in names and "step_1" not in names  # the run log has traces
    assert cases["says_hello"].find("system-out") is None  # a passing case: no report
    report = cases["says_bye"].findtext("system-out") or ""
    assert "FAILED" in report and "bye" in report and report.isascii()
    failure = cases["says_bye"].find("failure")
    assert failure is not None and "final_trace" not in (failure.text or "")


def test_junit_full_keeps_giskards_form_with_traces_and_every_report(
    cli: Cli, write: Write, home: Path
) -> None:
    write("greet.py", FAILING)
    result = cli("run", "-q", "greet.py", "--junit", "junit.xml", "--junit-full")
    assert result.exit_code == 1, result.output
    xmlschema.XMLSchema(XSD).validate(str(home / "junit.xml"))
    cases = _cases(home / "junit.xml")
    for case in cases.values():
        names = [p.get("name") for p in case.iter("property")]
        assert names[:2] == ["final_trace", "step_1"]
        assert case.find("system-out") is not None
        assert case.get("file") == "greet.py"
    assert not BOX_DRAWING.search((home / "junit.xml").read_text(encoding="utf-8"))


def test_junit_full_without_junit_is_a_usage_error(cli: Cli, write: Write) -> None:
    write("greet.py", FAILING)
    result = cli("run", "greet.py", "--junit-full")
    assert result.exit_code == 2
    assert "--junit FILE" in result.output


def test_a_scenario_file_case_names_its_file_without_a_line(
    cli: Cli, write: Write, home: Path
) -> None:
    write("data/greet.scenario.yaml", YAML)
    result = cli("run", "-q", "data", "--junit", "junit.xml")
    assert result.exit_code == 1, result.output
    case = _cases(home / "junit.xml")["yaml_case"]
    assert case.get("file") == "data/greet.scenario.yaml" and case.get("line") is None


def test_the_compact_junit_of_200_scenarios_is_ten_times_smaller_than_the_full(
    cli: Cli, write: Write, home: Path
) -> None:
    write("many.py", MANY.format(count=200))
    assert cli("run", "-q", "many.py", "--junit", "compact.xml").exit_code == 1
    assert cli("run", "-q", "many.py", "--junit", "full.xml", "--junit-full").exit_code == 1
    compact, full = (home / "compact.xml").stat().st_size, (home / "full.xml").stat().st_size
    assert len(_cases(home / "compact.xml")) == len(_cases(home / "full.xml")) == 200
    print(f"junit sizes: compact {compact} bytes, full {full} bytes")
    assert compact * 10 <= full, (compact, full)
    failing = [c for c in _cases(home / "compact.xml").values() if c.find("failure") is not None]
    assert len(failing) == 10
    assert all(c.find("system-out") is not None for c in failing)


def test_locations_of_a_file_are_each_scenarios_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarist.cli._junit import location, locations

    inside = tmp_path / "work" / "suites" / "greet.py"
    inside.parent.mkdir(parents=True)
    inside.write_text(
        'from scenarist import Scenario\n\nA = Scenario("a")\nB = Scenario(name="bé")\n'
        'C = Scenario(f"c{1}")\nD = Scenario("a")\n',
        encoding="utf-8",
    )
    outside = tmp_path / "elsewhere" / "case.scenario.yaml"
    outside.parent.mkdir()
    outside.write_text(YAML, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")
    names = ["a", "bé", "c1", "missing", "a"]
    for path in (inside, Path("suites/greet.py"), outside):
        assert locations(path, iter(names)) == [location(path, name) for name in names]
    assert locations(inside, names) == [
        ("suites/greet.py", 3),
        ("suites/greet.py", 4),
        ("suites/greet.py", None),
        ("suites/greet.py", None),
        ("suites/greet.py", 3),
    ]
    assert locations(outside, ["yaml_case"]) == [(str(outside.resolve()), None)]
    assert locations(inside, []) == []
