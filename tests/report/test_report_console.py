# ruff: noqa: E501  (snapshots are 100 columns wide, plus the closing backslash)
"""The terminal report, snapshot-tested at a fixed width with colour off."""

from __future__ import annotations

import io

import pytest
import rich
from inline_snapshot import snapshot
from report_factories import (
    erroring,
    failing,
    nochecks,
    outputs_raised,
    passing,
    stamped,
    suite_of,
    with_spans,
)
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from scenarist.model.results import CheckResult, ScenarioResult, SuiteResult, TestCaseResult
from scenarist.model.trace import Interaction, Trace
from scenarist.report import print_report, render


def text_of(obj: object, width: int = 100) -> str:
    console = Console(
        width=width, color_system=None, force_terminal=False, record=True, file=io.StringIO()
    )
    console.print(obj)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def test_report_suite_layout(demo_suite: SuiteResult) -> None:
    assert text_of(demo_suite) == snapshot("""\
────────────────────────────────────────── Suite Results ───────────────────────────────────────────
.FE.

============================================= FAILURES =============================================
╭──────────────────────────────────────────── failing ─────────────────────────────────────────────╮
│ ────────────────────────────────────────── ❌ FAILED ─────────────────────────────────────────── │
│ step 1 · equals  FAIL  Expected value equal to 'right' but got 'wrong'                           │
│ step 2 · equals  SKIP  Step 2 was skipped due to previous failure                                │
│ ──────────────────────────────────────────── Trace ───────────────────────────────────────────── │
│ ──────────────────────────────────────── Interaction 1 ───────────────────────────────────────── │
│ Inputs: 'q1'                                                                                     │
│ Outputs: 'wrong'                                                                                 │
│ ──────────────────────────── 2 steps (1 skipped) in 1ms | runs: 1/1 ──────────────────────────── │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
╭──────────────────────────────────────────── erroring ────────────────────────────────────────────╮
│ ─────────────────────────────────────────── ⚠️ ERROR ─────────────────────────────────────────── │
│ step 1 · boom_check  ERROR  Check 'boom_check' failed with error: kaboom                         │
│ ──────────────────────────────────────────── Trace ───────────────────────────────────────────── │
│ ──────────────────────────────────────── Interaction 1 ───────────────────────────────────────── │
│ Inputs: 'q'                                                                                      │
│ Outputs: 'a'                                                                                     │
│ ────────────────────────────────── 1 step in 2ms | runs: 1/1 ─────────────────────────────────── │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
============================================= SUMMARY ==============================================
failing  FAIL
    step 1 · equals  FAIL  Expected value equal to 'right' but got 'wrong'
erroring  ERROR
    step 1 · boom_check  ERROR  Check 'boom_check' failed with error: kaboom
Passed without any check: nochecks
────────────────────────────────────────────────────────────────────────────────────────────────────
Summary: 4 total, 1 errored, 1 failed, 2 passed | Pass Rate: 50.0% | Total Duration: 10ms\
""")


def test_report_grouped_adds_results_by_key_table(demo_suite: SuiteResult) -> None:
    text = text_of(demo_suite.group_by("team"))
    assert text.startswith(text_of(demo_suite))
    assert text[len(text_of(demo_suite)) :] == snapshot("""\

     Results by team
┏━━━━━━━━━━━━┳━━━━━━━━━━━┓
┃ team       ┃ Pass Rate ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━━┩
│ a          │     1 / 2 │
│ b          │     0 / 1 │
│ (untagged) │     1 / 1 │
└────────────┴───────────┘\
""")


def test_report_all_pass_and_empty_suites() -> None:
    assert text_of(suite_of(passing(), passing())) == snapshot("""\
────────────────────────────────────────── Suite Results ───────────────────────────────────────────
..

────────────────────────────────────────────────────────────────────────────────────────────────────
Summary: 2 total, 2 passed | Pass Rate: 100.0% | Total Duration: 10ms\
""")
    assert text_of(suite_of()) == snapshot("""\
────────────────────────────────────────── Suite Results ───────────────────────────────────────────


────────────────────────────────────────────────────────────────────────────────────────────────────
Summary: 0 total | Pass Rate: — | Total Duration: 10ms\
""")


def test_report_scenario_with_spans_and_cost() -> None:
    assert text_of(with_spans()) == snapshot("""\
──────────────────────────────────────────── ❌ FAILED ─────────────────────────────────────────────
step 1 · cites  FAIL  The answer does not cite a source.
────────────────────────────────────────────── Trace ───────────────────────────────────────────────
────────────────────────────────────────── Interaction 1 ───────────────────────────────────────────
Inputs: 'What is the capital of France? What is the capital of France? What is the capital of Franc…
Outputs: {'answer': 'Paris'}
agent [agent] 60ms
├── chat [llm] gpt-x 40ms 120→30 tok $0.0012
└── search [tool] 15ms
──────────────────────────── 1 step in 61ms | runs: 1/1 | cost: $0.0012 ────────────────────────────\
""")


def test_report_scenario_step_error_has_no_interactions() -> None:
    assert text_of(outputs_raised()) == snapshot("""\
───────────────────────────────────────────── ⚠️ ERROR ─────────────────────────────────────────────
step 1           ERROR  ZeroDivisionError during outputs: division by zero
step 1 · equals  SKIP   Checks were skipped due to input generation failure
────────────────────────────────────────────── Trace ───────────────────────────────────────────────
(no interactions)
──────────────────────────────────── 1 step in 1ms | runs: 1/1 ─────────────────────────────────────\
""")


def test_report_scenario_without_checks_is_flagged() -> None:
    assert text_of(nochecks()) == snapshot("""\
──────────────────────────────────────────── ✅ PASSED ─────────────────────────────────────────────
no checks: this scenario passed without asserting anything
────────────────────────────────────────────── Trace ───────────────────────────────────────────────
────────────────────────────────────────── Interaction 1 ───────────────────────────────────────────
Inputs: 'q'
Outputs: 'a'
──────────────────────────────────── 1 step in 0ms | runs: 1/1 ─────────────────────────────────────\
""")


class _ChatTrace(Trace[str, str]):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for interaction in self.interactions:
            yield Text(f"[user] {interaction.inputs}")
            yield Text(f"[assistant] {interaction.outputs}")


def test_report_trace_subclass_with_its_own_rendering_is_rendered_by_it() -> None:
    """giskard-checks' report renders the final trace with its ``__rich_console__``."""
    result = passing().model_copy(
        update={"final_trace": _ChatTrace(interactions=[Interaction(inputs="hi", outputs="yo")])}
    )
    assert text_of(result) == snapshot("""\
──────────────────────────────────────────── ✅ PASSED ─────────────────────────────────────────────
step 1 · equals  PASS
────────────────────────────────────────────── Trace ───────────────────────────────────────────────
[user] hi
[assistant] yo
──────────────────────────────────── 1 step in 3ms | runs: 1/1 ─────────────────────────────────────\
""")


def test_report_a_trace_renders_itself_as_giskards_does() -> None:
    trace = Trace(interactions=[Interaction(inputs="a", outputs={"x": 1})])
    assert text_of(trace, width=40) == snapshot("""\
──────────── Interaction 1 ─────────────
Inputs: 'a'
Outputs: {'x': 1}\
""")


def test_report_vacuous_check_pass_is_flagged() -> None:
    from scenarist import AllOf, Scenario

    result = Scenario("empty all_of").interact("q", "a").check(AllOf(checks=[])).run_sync()
    assert result.passed
    assert "all_of  PASS  vacuous: no check inside, nothing was asserted" in text_of(result)


def test_report_test_case_and_check_results() -> None:
    step, skipped_step = failing().steps
    assert text_of(step) == snapshot("""\
──────────────────────────────────────────── ❌ FAILED ─────────────────────────────────────────────
equals  FAIL  Expected value equal to 'right' but got 'wrong'
───────────────────────────────────────── 1 failed in 1ms ──────────────────────────────────────────\
""")
    assert text_of(skipped_step) == snapshot("""\
──────────────────────────────────────────── ⚠️ SKIPPED ────────────────────────────────────────────
equals  SKIP  Step 2 was skipped due to previous failure
───────────────────────────────────────── 1 skipped in 0ms ─────────────────────────────────────────\
""")
    assert text_of(nochecks().steps[0]) == snapshot("""\
──────────────────────────────────────────── ✅ PASSED ─────────────────────────────────────────────
───────────────────────────────────────── no checks in 0ms ─────────────────────────────────────────\
""")
    assert text_of(erroring().steps[0].results[0]) == snapshot(
        "boom_check  ERROR  Check 'boom_check' failed with error: kaboom"
    )


def test_report_unnamed_check_shows_its_kind_never_none(demo_suite: SuiteResult) -> None:
    text = text_of(demo_suite)
    assert "None" not in text
    assert "equals  FAIL" in text


def test_report_summary_shows_cost_when_known() -> None:
    text = text_of(suite_of(passing(), with_spans()), width=200)
    assert text.splitlines()[-1] == snapshot(
        "Summary: 2 total, 1 failed, 1 passed | Pass Rate: 50.0% | Total Duration: 10ms | Cost: $0.0012"
    )


def test_report_recommendation_is_rendered_as_markdown() -> None:
    text = text_of(suite_of(failing(), recommendation="**Fix** the `failing` scenario."))
    assert "Fix the failing scenario." in text
    assert "**" not in text


def test_report_long_values_end_in_an_ellipsis_instead_of_wrapping() -> None:
    long = ScenarioResult(
        scenario_name="long",
        steps=[TestCaseResult(results=[stamped(CheckResult.failure("x" * 300), "equals")])],
        final_trace=failing().final_trace.with_interaction(
            failing()
            .final_trace.interactions[0]
            .model_copy(update={"inputs": "line1\nline2 " * 50, "outputs": {"out": "y" * 500}})
        ),
    )
    lines = text_of(long, width=80).splitlines()
    assert all(len(line) <= 80 for line in lines)
    inputs = [line for line in lines if line.startswith("Inputs: ")]
    assert inputs[-1].endswith("…")
    assert [line for line in lines if line.startswith("Outputs: ")][-1].endswith("…")
    # the message wraps inside its own column: continuation lines keep the indent
    message_lines = [line for line in lines if "xxxx" in line]
    assert len(message_lines) > 1
    assert all(line.startswith(" " * len("equals  FAIL  ")) for line in message_lines[1:])


def test_report_names_are_not_parsed_as_markup() -> None:
    result = passing().model_copy(update={"scenario_name": "[bold]odd[/bold]"})
    bad = failing().model_copy(update={"scenario_name": "[red]x"})
    text = text_of(suite_of(result, bad))
    assert "[red]x" in text


def test_report_max_reported_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_MAX_REPORTED_FAILURES", "1")
    text = text_of(suite_of(failing(), erroring(), with_spans()))
    assert text.count("╭") == 1
    assert "... and 2 more" in text
    # SUMMARY still lists every failing scenario
    summary = text.split("SUMMARY")[1]
    assert all(name in summary for name in ("failing", "erroring", "agent_with_tools"))


def test_report_honours_giskards_max_reported_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_MAX_REPORTED_FAILURES", raising=False)
    monkeypatch.setenv("GISKARD_CHECKS_MAX_REPORTED_FAILURES", "1")
    text = text_of(suite_of(failing(), erroring()))
    assert text.count("╭") == 1
    assert "... and 1 more" in text
    monkeypatch.setenv("SCENARIST_MAX_REPORTED_FAILURES", "2")  # ours wins
    assert "more" not in text_of(suite_of(failing(), erroring()))


def test_report_shows_every_failure_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_MAX_REPORTED_FAILURES", raising=False)
    monkeypatch.delenv("GISKARD_CHECKS_MAX_REPORTED_FAILURES", raising=False)
    text = text_of(suite_of(*[failing() for _ in range(25)]))
    assert text.count("╭") == 25
    assert "more" not in text


def test_report_max_reported_failures_ignores_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_MAX_REPORTED_FAILURES", "many")
    assert "more" not in text_of(suite_of(failing(), erroring()))


def test_report_rich_print_works(capsys: pytest.CaptureFixture[str]) -> None:
    rich.print(suite_of(failing()))
    assert "Suite Results" in capsys.readouterr().out


def test_report_print_report_defaults_to_stdout(
    capsys: pytest.CaptureFixture[str], demo_suite: SuiteResult
) -> None:
    demo_suite.print_report(group_by="team")
    out = capsys.readouterr().out
    assert "FAILURES" in out
    assert "Results by team" in out


def test_report_colours_only_on_terminals_without_no_color(
    monkeypatch: pytest.MonkeyPatch, demo_suite: SuiteResult
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    tty = io.StringIO()
    print_report(demo_suite, Console(file=tty, force_terminal=True, color_system="standard"))
    assert "\x1b[31m" in tty.getvalue()  # red for the failure

    piped = io.StringIO()
    print_report(demo_suite, Console(file=piped))
    assert "\x1b[" not in piped.getvalue()

    monkeypatch.setenv("NO_COLOR", "1")
    no_color = io.StringIO()
    print_report(demo_suite, Console(file=no_color, force_terminal=True))
    assert "\x1b[31m" not in no_color.getvalue()
    assert "\x1b[32m" not in no_color.getvalue()


def test_report_render_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="cannot render 'int'"):
        list(render(3))


def test_report_names_the_empty_input_generator_of_a_vacuous_pass() -> None:
    from scenarist import Scenario, Suite
    from scenarist.report.html import to_html

    async def silent(trace):  # type: ignore[no-untyped-def]
        for line in ():
            yield line

    empty = Scenario("silent").interact(inputs=silent, outputs="o").run_sync()
    assert (
        "vacuous: this scenario passed with nothing tested (the input generator 'silent' of step 1 yielded no input)"
        in text_of(empty, width=200)
    )
    bare = Scenario("bare").run_sync()
    assert "vacuous: this scenario passed with nothing tested (no interaction in its trace)" in (
        text_of(bare)
    )
    suite = Suite(name="s")
    suite.append(Scenario("silent").interact(inputs=silent, outputs="o"))
    result = suite.run_sync(verbose=False)
    assert "Vacuous passes (nothing was tested): silent; --fail-on-vacuous fails them" in (
        text_of(result, width=200)
    )
    html = to_html(result)
    assert (
        'title="nothing tested: the input generator &#x27;silent&#x27; of step 1 yielded no input"'
        in html
    )
