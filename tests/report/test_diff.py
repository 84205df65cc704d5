# ruff: noqa: E501  (snapshots are 100 columns wide, plus the closing backslash)
"""The one diff of expected and actual values (``scenarist.report.diff``), as data and as
the terminal report and the HTML report draw it; and money at its scale."""

from __future__ import annotations

import io
import re

import pytest
from inline_snapshot import snapshot
from report_factories import stamped, suite_of, trace
from rich.console import Console

from scenarist import Equals, Scenario
from scenarist.model.results import CheckResult, ScenarioResult, TestCaseResult
from scenarist.report._money import format_usd
from scenarist.report.diff import MAX_COMPARED_CHARS, check_diff, value_diff
from scenarist.report.html import to_html


def ops(expected: object, actual: object) -> list[tuple[str, str]]:
    diff = value_diff(expected, actual)
    assert diff is not None
    return [(s.op, s.text) for s in diff.segments]


def test_diff_marks_changed_words_not_characters() -> None:
    assert ops(
        "The refund was sent on Monday to your card",
        "The refund was sent on Tuesday to your bank card",
    ) == [
        ("equal", "The refund was sent on "),
        ("delete", "Monday"),
        ("insert", "Tuesday"),
        ("equal", " to your"),
        ("insert", " bank"),
        ("equal", " card"),
    ]


def test_diff_sides_rebuild_each_value() -> None:
    diff = value_diff("a b c d", "a x c d e")
    assert diff is not None
    assert "".join(s.text for s in diff.side("expected")) == "a b c d"
    assert "".join(s.text for s in diff.side("actual")) == "a x c d e"
    assert diff.changed == len("b") + len("x") + len(" e")


def test_diff_compares_json_values_field_by_field() -> None:
    diff = value_diff({"b": [1, 2], "a": "x"}, {"a": "x", "b": [1, 3]})
    assert diff is not None and diff.form == "json"
    changed = [(s.op, s.text) for s in diff.segments if s.op != "equal"]
    assert changed == [("delete", "2"), ("insert", "3")]  # key order does not count
    as_strings = value_diff('{"ok": true, "n": 1}', '{"n": 2, "ok": true}')
    assert as_strings is not None and as_strings.form == "json"
    assert [(s.op, s.text) for s in as_strings.segments if s.op != "equal"] == [
        ("delete", "1"),
        ("insert", "2"),
    ]
    mixed = value_diff("plain text", {"k": "plain text"})
    assert mixed is not None and mixed.form == "json"


def test_diff_elides_long_unchanged_text_and_bounds_the_work() -> None:
    same = "word " * 400
    changed = [(op, text) for op, text in ops(same + "end", same + "fin") if op != "equal"]
    assert changed[0][0] == "elided"
    assert changed[0][1] == " … 1840 unchanged characters … "
    assert changed[1:] == [("delete", "end"), ("insert", "fin")]

    huge = "x " * MAX_COMPARED_CHARS
    diff = value_diff(huge + "tail", "y " + huge)
    assert diff is not None and diff.truncated
    notes = [s.text for s in diff.segments if s.op == "elided" and "not compared" in s.text]
    assert notes == [
        f" … {len(huge) + 4 - MAX_COMPARED_CHARS} more characters of expected not compared",
        f" … {len(huge) + 2 - MAX_COMPARED_CHARS} more characters of actual not compared",
    ]


@pytest.mark.parametrize(
    ("expected", "actual"),
    [(1, 2), (True, False), (None, 0), (1.5, 2.5), ("same", "same"), ({"a": 1}, {"a": 1})],
)
def test_diff_skips_scalars_and_equal_values(expected: object, actual: object) -> None:
    assert value_diff(expected, actual) is None


def test_diff_survives_values_no_page_can_print() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise ValueError("no repr")

    cycle: dict[str, object] = {"a": 1}
    cycle["self"] = cycle
    for actual in (b"\xff\xfe", cycle, Unprintable(), "bad \ud800"):
        diff = value_diff("good", actual)
        assert diff is not None
        for segment in diff.segments:
            segment.text.encode("utf-8")  # never a lone surrogate


def test_check_diff_reads_the_comparison_details() -> None:
    assert check_diff({"expected_value": "a b", "actual_value": "a c"}) is not None
    assert check_diff({"expected_value": 1, "actual_value": 2}) is None
    assert check_diff({"text": "x"}) is None
    assert check_diff(None) is None
    result = (
        Scenario("s")
        .interact("q", lambda _i: "it is late")
        .check(Equals(expected_value="it is early", target_key="trace.last.outputs"))
        .run_sync()
    )
    (verdict,) = result.steps[0].results
    diff = check_diff(verdict.details)
    assert diff is not None
    assert [(s.op, s.text) for s in diff.segments if s.op != "equal"] == [
        ("delete", "early"),
        ("insert", "late"),
    ]


def _failing_comparison(expected: object, actual: object) -> ScenarioResult:
    bad = stamped(
        CheckResult.failure(
            f"Expected value equal to {expected!r} but got {actual!r}",
            details={"expected_value": expected, "actual_value": actual},
        ),
        "equals",
        "answer",
    )
    return ScenarioResult(
        scenario_name="diffed",
        steps=[TestCaseResult(results=[bad], duration_ms=1, last_interaction_index=0)],
        final_trace=trace(("q", actual)),
        duration_ms=1,
    )


def _text_of(obj: object) -> str:
    console = Console(
        width=100, color_system=None, force_terminal=False, record=True, file=io.StringIO()
    )
    console.print(obj)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def test_terminal_report_shows_the_diff_of_a_failed_comparison() -> None:
    text = _text_of(_failing_comparison("refund sent on Monday", "refund sent on Tuesday"))
    assert text == snapshot("""\
──────────────────────────────────────────── ❌ FAILED ─────────────────────────────────────────────
step 1 · answer  FAIL  Expected value equal to 'refund sent on Monday' but got 'refund sent on
                       Tuesday'
diff of step 1 · answer (- expected, + actual)
- expected: refund sent on [-Monday-]
+ actual:   refund sent on {+Tuesday+}
────────────────────────────────────────────── Trace ───────────────────────────────────────────────
────────────────────────────────────────── Interaction 1 ───────────────────────────────────────────
Inputs: 'q'
Outputs: 'refund sent on Tuesday'
──────────────────────────────────── 1 step in 1ms | runs: 1/1 ─────────────────────────────────────\
""")


def test_terminal_report_colours_the_diff_when_colour_is_on() -> None:
    console = Console(width=100, color_system="standard", force_terminal=True, file=io.StringIO())
    console.print(_failing_comparison("a b", "a c"))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[1;31m[-b-]" in out  # removed: bold red
    assert "\x1b[1;32m{+c+}" in out  # added: bold green


def test_html_report_shows_the_diff_escaped() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    page = to_html(suite_of(_failing_comparison(f"say {hostile} now", f"say {hostile} later")))
    assert hostile not in page
    (block,) = re.findall(r'<div class="diff">.*?</div></div>', page)
    assert "<del>now</del>" in block and "<ins>later</ins>" in block
    assert "say &lt;img src=x onerror=alert(1)&gt; " in block


@pytest.mark.parametrize(
    ("usd", "shown"),
    [
        (0.000032, "$0.000032"),
        (0.0004, "$0.0004"),
        (0.00003, "$0.00003"),
        (0.0123, "$0.0123"),
        (0.5, "$0.50"),
        (12.345, "$12.35"),
        (1234.5, "$1,234.50"),
        (0.0, "$0.00"),
        (-0.00002, "-$0.00002"),
        (None, "–"),
        (float("nan"), "–"),
    ],
)
def test_money_shows_at_its_scale(usd: float | None, shown: str) -> None:
    assert format_usd(usd) == shown
