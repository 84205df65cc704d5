"""``scenarist run``: discovery, filters, exit codes, the verdict line and the run log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from scenarist.cli._select import parse_keyword, parse_tags
from scenarist.cli.run import verdict
from scenarist.engine.scenario import Scenario
from scenarist.errors import UserError
from scenarist.formats.runlog import read_jsonl
from scenarist.model.results import CheckResult, ScenarioResult, SuiteResult, TestCaseResult

from .conftest import FAILING, PASSING

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]
WORD = {0: "PASSED", 1: "FAILED", 2: "ERROR"}


def last_line(result: Result) -> str:
    return result.stdout.strip().splitlines()[-1]


def assert_consistent(result: Result) -> None:
    """The verdict line names the exit code the process really returned."""
    code = result.exit_code
    assert last_line(result).startswith(f"scenarist: {WORD[code]} (exit {code})")


def test_run_passing_file_exits_0_and_writes_the_run_log(
    cli: Cli, write: Write, home: Path
) -> None:
    path = write("ok_suite.py", PASSING)
    result = cli("run", str(path), "--json", "out/run.jsonl", "--junit", "out/junit.xml")
    assert result.exit_code == 0, result.output
    assert_consistent(result)
    (stored,) = (home / "home" / "runs").glob("*.jsonl")
    log = read_jsonl(stored)
    assert [r.result.scenario_name for r in log.scenarios] == ["echo_ok"]
    assert log.footer is not None and log.footer.passed_count == 1
    assert read_jsonl(home / "out/run.jsonl").header.run_id == log.header.run_id
    assert "echo_ok" in (home / "out/junit.xml").read_text()


def test_run_failures_exit_1_and_the_summary_agrees(cli: Cli, write: Write) -> None:
    result = cli("run", str(write("mixed.py", FAILING)))
    assert result.exit_code == 1
    assert_consistent(result)
    assert "Summary: 2 total, 1 failed, 1 passed" in result.stdout
    assert "1 scenario(s) failed" in last_line(result)


@pytest.mark.parametrize(("threshold", "code"), [("0.5", 0), ("0.51", 1)])
def test_run_fail_under_decides_the_exit_code(
    cli: Cli, write: Write, threshold: str, code: int
) -> None:
    result = cli("run", str(write("mixed.py", FAILING)), "--fail-under", threshold)
    assert result.exit_code == code
    assert_consistent(result)


def test_run_errored_scenario_exits_2(cli: Cli, write: Write) -> None:
    path = write(
        "boom.py",
        """
        from scenarist import Scenario, StringMatching

        def agent(inputs):
            raise RuntimeError("model down")

        s = Scenario("boom").interact("hi").check(StringMatching(keyword="x")).with_target(agent)
        """,
    )
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert_consistent(result)
    assert "1 scenario(s) errored" in last_line(result)


def _suite(*statuses: str) -> SuiteResult:
    results = [
        ScenarioResult(
            scenario_name=f"s{i}",
            steps=[TestCaseResult(results=[CheckResult(status=status)])],  # type: ignore[arg-type]
        )
        for i, status in enumerate(statuses)
    ]
    return SuiteResult(results=results)


@pytest.mark.parametrize(
    "statuses",
    [(), ("pass",), ("pass", "fail"), ("fail",), ("pass", "error"), ("skip",), ("error", "fail")],
)
@pytest.mark.parametrize("fail_under", [None, 0.0, 0.5, 1.0])
@pytest.mark.parametrize("file_errors", [0, 1])
def test_verdict_line_and_exit_code_never_disagree(
    statuses: tuple[str, ...], fail_under: float | None, file_errors: int
) -> None:
    result = _suite(*statuses)
    outcome = verdict(result, file_errors=file_errors, fail_under=fail_under)
    assert outcome.line.startswith(
        f"scenarist: {WORD[outcome.exit_code]} (exit {outcome.exit_code})"
    )
    noun = "scenario" if len(statuses) == 1 else "scenarios"
    counts = f"{len(statuses)} {noun}: {result.passed_count} passed, {result.failed_count} failed"
    assert counts in outcome.line
    if file_errors:
        assert outcome.exit_code == 2
    elif result.failed_count == result.errored_count == 0:
        assert outcome.exit_code == 0
    elif outcome.exit_code == 0:
        assert fail_under is not None and (result.pass_rate or 0) >= fail_under
    else:
        assert outcome.exit_code == (2 if result.errored_count else 1)


def _made(kinds: str) -> list[ScenarioResult]:
    """A result of each kind: P pass, V vacuous pass (no interaction), U pass without
    checks, N both, F fail, X error, S skip, B not started (budget); r / f / i a repeated
    scenario whose rate verdict is pass / fail / inconclusive (its status the opposite)."""
    from scenarist.model.budget import BUDGET_PHASE
    from scenarist.model.results import RepeatStats, StepError
    from scenarist.model.trace import Interaction, Trace

    def step(status: str) -> TestCaseResult:
        return TestCaseResult(results=[CheckResult(status=status)])  # type: ignore[arg-type]

    made = []
    for i, kind in enumerate(kinds):
        talked = Trace(interactions=[Interaction(inputs="q", outputs="a")])
        fields: dict[str, object] = {
            "P": {"steps": [step("pass")], "final_trace": talked},
            "V": {"steps": [step("pass")]},
            "U": {"steps": [TestCaseResult()], "final_trace": talked},
            "N": {"steps": [TestCaseResult()]},
            "F": {"steps": [step("pass"), step("fail")], "final_trace": talked},
            "X": {"steps": [step("error")], "final_trace": talked},
            "S": {"steps": [step("skip")]},
            "B": {
                "steps": [
                    TestCaseResult(
                        error=StepError(message="b", exception_type="E", phase=BUDGET_PHASE)
                    )
                ]
            },
        }.get(kind, {})
        if kind in "rfi":
            status, rate = {
                "r": ("fail", "pass"),
                "f": ("pass", "fail"),
                "i": ("fail", "inconclusive"),
            }[kind]
            stats = RepeatStats(
                runs=5,
                passed=3,
                pass_rate=0.6,
                ci_low=0.2,
                ci_high=0.9,
                min_pass_rate=0.5,
                verdict=rate,  # type: ignore[arg-type]
            )
            fields = {"steps": [step(status)], "final_trace": talked, "repeat_stats": stats}
        made.append(ScenarioResult(scenario_name=f"{kind}{i}", **fields))  # type: ignore[arg-type]
    return made


@pytest.mark.parametrize(
    ("kinds", "options", "code", "line"),
    [
        (
            "PN",
            {"incomplete": True},
            0,
            (
                "no scenario failed (1 passed with no interaction (or an empty input generator): "
                "nothing tested, --fail-on-vacuous fails them) | INCOMPLETE run (no end record): "
                "2 scenarios: 2 passed, 0 failed, 0 errored, 0 skipped | pass rate 100.0%"
            ),
        ),
        (
            "VU",
            {},
            0,
            (
                "no scenario failed (1 passed with no interaction (or an empty input generator): "
                "nothing tested, --fail-on-vacuous fails them; 1 passed without any check) | 2 "
                "scenarios: 2 passed, 0 failed, 0 errored, 0 skipped | pass rate 100.0%"
            ),
        ),
        (
            "VU",
            {"fail_on_vacuous": True},
            1,
            (
                "1 scenario(s) passed with no interaction, or with an input generator that "
                "yielded none (--fail-on-vacuous) | 2 scenarios: 2 passed, 0 failed, 0 errored, 0 "
                "skipped | pass rate 100.0%"
            ),
        ),
        (
            "UUS",
            {},
            0,
            (
                "no scenario failed (2 passed without any check) | 3 scenarios: 2 passed, 0 "
                "failed, 0 errored, 1 skipped | pass rate 100.0%"
            ),
        ),
        (
            "PB",
            {},
            2,
            (
                "1 scenario(s) errored | 2 scenarios: 1 passed, 0 failed, 0 errored, 1 not "
                "started (budget), 0 skipped | pass rate 50.0%"
            ),
        ),
        (
            "PVUNFXSB",
            {},
            2,
            (
                "2 scenario(s) errored | 8 scenarios: 4 passed, 1 failed, 1 errored, 1 not "
                "started (budget), 1 skipped | pass rate 57.1%"
            ),
        ),
        (
            "PVUNFXSB",
            {"fail_under": 0.5},
            0,
            (
                "pass rate at least --fail-under 50.0% | 8 scenarios: 4 passed, 1 failed, 1 "
                "errored, 1 not started (budget), 1 skipped | pass rate 57.1%"
            ),
        ),
        (
            "rf",
            {"fail_under": 0.5},
            0,
            (
                "pass rate at least --fail-under 50.0% | 2 scenarios: 1 passed, 1 failed, 0 "
                "errored, 0 skipped | pass rate 50.0% | min pass rate: 1 pass, 1 fail, 0 "
                "inconclusive"
            ),
        ),
        (
            "rP",
            {},
            0,
            (
                "no scenario failed | 2 scenarios: 1 passed, 1 failed, 0 errored, 0 skipped | "
                "pass rate 50.0% | min pass rate: 1 pass, 0 fail, 0 inconclusive"
            ),
        ),
        (
            "fX",
            {},
            2,
            (
                "1 scenario(s) errored | 2 scenarios: 1 passed, 0 failed, 1 errored, 0 skipped | "
                "pass rate 50.0% | min pass rate: 0 pass, 1 fail, 0 inconclusive"
            ),
        ),
        (
            "iPV",
            {"fail_on_vacuous": True},
            1,
            (
                "1 scenario(s) failed (0 below their required pass rate, 1 inconclusive) | 3 "
                "scenarios: 2 passed, 1 failed, 0 errored, 0 skipped | pass rate 66.7% | min pass "
                "rate: 0 pass, 0 fail, 1 inconclusive"
            ),
        ),
        (
            "rfiPFXSBVU",
            {},
            2,
            (
                "2 scenario(s) errored | 10 scenarios: 4 passed, 3 failed, 1 errored, 1 not "
                "started (budget), 1 skipped | pass rate 44.4% | min pass rate: 1 pass, 1 fail, 1 "
                "inconclusive"
            ),
        ),
    ],
)
def test_verdict_counts_each_status_rate_verdict_and_untested_pass(
    kinds: str, options: dict[str, object], code: int, line: str
) -> None:
    """The verdict rolls each status up once (``verdict``): the same lines as reading the
    suite result's properties gave (recorded from that version)."""
    incomplete = bool(options.pop("incomplete", False))
    result = SuiteResult(results=_made(kinds), incomplete=incomplete)
    outcome = verdict(result, collected=len(kinds), **options)  # type: ignore[arg-type]
    assert (outcome.exit_code, outcome.line) == (
        code,
        f"scenarist: {WORD[code]} (exit {code}): {line}",
    )


def test_run_import_error_is_reported_and_other_files_still_run(cli: Cli, write: Write) -> None:
    write("suites/good.py", PASSING)
    write("suites/broken.py", "import nonexistent_module_xyz\n")
    write("suites/_helper.py", "raise RuntimeError('never imported')\n")
    result = cli("run", "suites")
    assert result.exit_code == 2
    assert_consistent(result)
    assert "broken.py" in result.stderr and "nonexistent_module_xyz" in result.stderr
    assert "Traceback" not in result.output
    assert "1 passed" in last_line(result)


def test_run_usage_errors_are_one_line_without_traceback(cli: Cli, write: Write) -> None:
    write("empty.py", "x = 1\n")
    write(
        "typo.scenario.yaml",
        """
        name: typo
        steps:
          - interacts: [{kind: interact, inputs: hi, outputs: hello}]
            checks: [{kind: string_matching, keywrd: hello}]
        """,
    )
    cases = {
        ("run", "missing.py"): "missing.py: no such file or folder",
        ("run", "empty.py"): "empty.py: no scenarios found",
        ("run", "typo.scenario.yaml"): "typo.scenario.yaml: invalid Scenario: steps[0].checks[0]",
        ("run", "typo.scenario.yaml", "--tag", "a=b"): "--tag 'a=b' is not a tag filter",
        ("run", "empty.py", "-k", "a and"): "-k 'a and': it ends too early",
    }
    for args, expected in cases.items():
        result = cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: ") and expected in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.output
    typo = cli("run", "typo.scenario.yaml").stderr
    assert "keywrd" in typo and "did you mean 'keyword'" in typo


def test_run_debug_shows_the_traceback(cli: Cli) -> None:
    result = cli("--debug", "run", "missing.py")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert "Traceback" in cli("run", "missing.py", "--debug").stderr


def test_run_filters_by_keyword_and_tag(cli: Cli, write: Write) -> None:
    path = str(write("mixed.py", FAILING))
    assert cli("run", path, "-k", "hello").exit_code == 0
    assert cli("run", path, "-k", "not hello").exit_code == 1
    assert cli("run", path, "--tag", "topic:greet").exit_code == 0
    assert cli("run", path, "--tag", "smoke").exit_code == 1
    none = cli("run", path, "-k", "nothing_matches")
    assert none.exit_code == 2 and "no scenario matches -k (2 found)" in none.stderr


def test_run_log_header_records_the_selection(cli: Cli, write: Write, home: Path) -> None:
    """``-k``/``--tag`` are in the run log's header: the dashboard marks the run a subset
    and leaves it off the suite's trend (issue 31, item 5); a run of everything has none."""
    path = str(write("mixed.py", FAILING))
    runs = home / "home" / "runs"
    assert cli("run", path).exit_code == 1
    (whole,) = runs.glob("*.jsonl")
    assert read_jsonl(whole).header.selection is None
    assert cli("run", path, "-k", "hello", "--tag", "topic:greet").exit_code == 0
    (chosen,) = set(runs.glob("*.jsonl")) - {whole}
    selection = read_jsonl(chosen).header.selection
    assert selection is not None
    assert (selection.keyword, selection.tags) == ("hello", ["topic:greet"])
    assert (selection.selected, selection.found) == (1, 2)
    from scenarist._sync import run_sync
    from scenarist.store import SqlStore

    stored = run_sync(SqlStore(home / "home" / "scenarist.db").list_runs).items
    assert {r.run_id: r.subset for r in stored} == {
        read_jsonl(whole).header.run_id: False,
        read_jsonl(chosen).header.run_id: True,
    }


def test_keyword_expressions_follow_pytest_rules() -> None:
    card = Scenario("lost_card")
    sepa = Scenario("sepa_transfer")
    matcher = parse_keyword("(card or sepa) and not lost")
    assert (matcher(card), matcher(sepa)) == (False, True)
    with pytest.raises(UserError, match="not closed"):
        parse_keyword("(card")
    tags = parse_tags(["topic:payments", "smoke"])
    assert tags is not None
    assert tags(Scenario("a", tags=["topic:payments"])) and tags(Scenario("b", tags=["smoke"]))
    assert not tags(Scenario("c", tags=["topic:cards"]))


def test_run_discovers_data_files_in_folders_by_name(cli: Cli, write: Write) -> None:
    scenario = {
        "name": "from_json",
        "steps": [
            {
                "interacts": [{"kind": "interact", "inputs": "hi", "outputs": "hello"}],
                "checks": [{"kind": "string_matching", "keyword": "hello"}],
            }
        ],
    }
    write("cases/a.scenario.json", json.dumps(scenario))
    write("cases/b.suite.yaml", "name: yaml_suite\nscenarios:\n  - name: empty_one\n")
    write("cases/config.json", '{"not": "a scenario"}')
    result = cli("run", "cases")
    assert result.exit_code == 0, result.output
    assert "2 scenarios" in last_line(result)


def test_run_dedupes_scenarios_seen_twice(cli: Cli, write: Write) -> None:
    write("pkg/mixed_suite.py", FAILING)
    write("pkg/again.py", "from mixed_suite import suite\nalias = suite\n")
    result = cli("run", "pkg")
    assert "2 scenarios" in last_line(result)


def test_run_baseline_last_prints_the_comparison(cli: Cli, write: Write) -> None:
    path = str(write("mixed.py", FAILING))
    missing = cli("run", path, "--baseline", "last")
    assert missing.exit_code == 2 and "no previous run" in missing.stderr
    cli("run", path)
    result = cli("run", path, "--baseline", "last")
    assert result.exit_code == 1
    assert "Compared with run" in result.stdout and "still failing" in result.stdout


def test_run_record_then_replay_uses_a_cassette_next_to_the_file(
    cli: Cli, write: Write, home: Path
) -> None:
    path = str(write("flows/ok_suite.py", PASSING))
    replay_first = cli("run", path, "--replay")
    assert replay_first.exit_code == 2
    assert "does not exist" in replay_first.stderr
    assert cli("run", path, "--record").exit_code == 0
    assert (home / "flows/.cassettes/ok_suite.jsonl").exists()
    assert cli("run", path, "--replay").exit_code == 0
    both = cli("run", path, "--record", "--replay")
    assert both.exit_code == 2 and "exclude each other" in both.stderr


def test_run_quiet_prints_a_line_a_failure_then_the_verdict(cli: Cli, write: Write) -> None:
    result = cli("run", str(write("mixed.py", FAILING)), "--quiet")
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == last_line(result)
    assert lines[:-1] and all(line.startswith(("FAIL ", "ERROR ")) for line in lines[:-1])
    assert result.stderr == ""


def test_a_bare_ray_flag_means_a_local_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarist.cli._entry import bare_ray_flag

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    assert bare_ray_flag(["run", "x.py", "--ray"]) == ["run", "x.py", "--ray", "local"]
    assert bare_ray_flag(["run", "--ray", "tests", "-q"]) == [
        "run",
        "--ray",
        "local",
        "tests",
        "-q",
    ]
    assert bare_ray_flag(["run", "--ray", "--parallel", "2"]) == [
        "run",
        "--ray",
        "local",
        "--parallel",
        "2",
    ]
    assert bare_ray_flag(["run", "--ray", "ray://head:10001", "t.py"]) == [
        "run",
        "--ray",
        "ray://head:10001",
        "t.py",
    ]


def test_ray_without_the_extra_says_what_to_install(
    cli: Callable[..., Result], write: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    write("one.py", PASSING)
    monkeypatch.setitem(sys.modules, "ray", None)  # an import of ray fails
    result = cli("run", "one.py", "--ray", "local")
    assert result.exit_code == 2
    assert "pip install 'scenarist[ray]'" in result.output


def test_parallel_auto_shows_its_level_and_bad_values_are_named(
    cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    path = write("one.py", PASSING)
    result = cli("run", str(path), "--parallel", "auto")
    assert result.exit_code == 0, result.output
    assert "concurrency 4/64" in result.output  # no LLM call: the level stays where it began
    bad = cli("run", str(path), "--parallel", "lots")
    assert bad.exit_code == 2
    assert "--parallel takes a number >= 1 or 'auto', got 'lots'" in bad.output
