"""The pytest plugin as a user's test file meets it: outcomes and failure messages,
``-k``, ``-x``, ``--lf``, pytest-xdist, parametrization, fixtures, async tests, and a
project that does not use scenarist at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.helpers.limits import HANG_S

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest
from scenarist import Scenario, StringMatching, Suite
from scenarist.pytest_plugin import parametrize_suite

def agent(inputs):
    if inputs == "boom":
        raise RuntimeError("agent exploded")
    return "echo " + inputs

suite = Suite(name="echo", target=agent)
suite.append(Scenario("passes").interact("hi").check(StringMatching(keyword="echo")))
suite.append(
    Scenario("fails").interact("hi").check(StringMatching(keyword="bye", name="says_bye"))
)
suite.append(Scenario("errors").interact("boom").check(StringMatching(keyword="echo")))
suite.append(Scenario("later").interact("hi").check(StringMatching(keyword="echo")))

class Opaque:  # an agent value JSON cannot hold: it must still reach the summary
    def __repr__(self):
        return "<opaque>"

suite.append(
    Scenario("odd_output").interact("hi", outputs=lambda inputs: {"obj": Opaque(), "ok": "echo"})
)

@parametrize_suite(suite)
def test_case(scenario, scenarist_run):
    if scenario.name == "later":
        pytest.skip("not yet")
    scenarist_run(scenario).assert_passed()
"""


@pytest.fixture
def home(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCENARIST_HOME", str(pytester.path / "home"))
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return pytester.path / "home"


def test_outcomes_and_failure_messages_name_the_check(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(test_user_cases=USER_TESTS)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_case?passes? PASSED*",
            "*test_case?fails? FAILED*",
            "*test_case?errors? FAILED*",
            "*test_case?later? SKIPPED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "E *scenario 'fails' fail:",
            "E *says_bye FAILED: The answer does not contain the keyword 'bye'",
        ]
    )
    result.stdout.fnmatch_lines(["E *scenario 'errors' error:", "E *RuntimeError*agent exploded*"])
    result.stdout.fnmatch_lines(
        ["*= scenarist =*", "4 scenarios: 2 passed, 1 failed, 1 errored, 0 skipped*"]
    )


def test_k_x_and_last_failed_select_scenarios_by_name(
    pytester: pytest.Pytester, home: Path
) -> None:
    # in subprocesses: pytester's in-process runs unload the modules a run imported, and a
    # second run in one test would meet a second scenarist (two Suite classes)
    pytester.makepyfile(test_user_cases=USER_TESTS)
    picked = pytester.runpytest_subprocess("-k", "passes or fails", timeout=HANG_S)
    picked.assert_outcomes(passed=1, failed=1, deselected=3)
    stopped = pytester.runpytest_subprocess("-x", timeout=HANG_S)
    stopped.assert_outcomes(passed=1, failed=1)
    again = pytester.runpytest_subprocess("--lf", "-v", timeout=HANG_S)
    again.assert_outcomes(failed=1)  # "errors" never ran: -x stopped first
    again.stdout.fnmatch_lines(["*test_case?fails? FAILED*"])


def test_fixtures_parametrize_and_async_tests_run_scenarios(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.fixture
        def shout():
            return lambda inputs: inputs.upper()
        """
    )
    pytester.makepyfile(
        test_user_fixtures="""
        import pytest
        from scenarist import Equals, Scenario

        @pytest.mark.parametrize("word", ["hi", "bye"])
        def test_with_fixture(shout, word, scenarist_run):
            scenario = Scenario(f"shout_{word}").interact(word, outputs=shout).check(
                Equals(expected_value=word.upper())
            )
            scenarist_run(scenario).assert_passed()

        @pytest.mark.anyio
        async def test_async():
            result = await Scenario("a").interact("x", outputs="x").check(
                Equals(expected_value="x")).run()
            result.assert_passed()
        """
    )
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_with_fixture?hi? PASSED*", "2 scenarios: 2 passed*"])


def test_xdist_workers_send_their_results_to_one_summary_and_one_run_log(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_user_cases=USER_TESTS)
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--scenarist-store", timeout=HANG_S
    )
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines(
        ["*= scenarist =*", "4 scenarios: 2 passed, 1 failed, 1 errored, 0 skipped*", "run log: *"]
    )
    (log,) = (home / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    names = sorted(r["result"]["scenario_name"] for r in records if r["record_type"] == "scenario")
    assert names == ["errors", "fails", "odd_output", "passes"]


def test_a_project_without_scenarist_sees_nothing_of_it(
    pytester: pytest.Pytester, home: Path
) -> None:
    """The plugin is loaded (entry point) but adds no output, no files, and no heavy
    imports to a test session that never uses it."""
    pytester.makepyfile(
        test_plain="""
        import sys

        HEAVY = {"sqlalchemy", "aiosqlite", "fastapi", "openai", "anthropic", "ray", "httpx",
                 "typer", "yaml"}

        def test_nothing_heavy_loaded():
            assert "scenarist.pytest_plugin" in sys.modules
            loaded = {m.split(".")[0] for m in sys.modules} & HEAVY
            assert loaded == set()
            assert "scenarist.engine.scenario" not in sys.modules
        """
    )
    env_before = set(os.environ)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=HANG_S)
    result.assert_outcomes(passed=1)
    assert "= scenarist =" not in result.stdout.str()
    assert not home.exists() and not (pytester.path / ".scenarist").exists()
    assert set(os.environ) == env_before


def test_a_store_that_cannot_be_written_is_one_line_each_and_fails_the_session(
    pytester: pytest.Pytester, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.write_text("a file where the folder should be")
    pytester.makepyfile(
        test_stored="""
        from scenarist import Scenario, StringMatching

        def test_a(scenarist_run):
            scenarist_run(
                Scenario("a").interact("hi", outputs="hi").check(StringMatching(keyword="hi"))
            ).assert_passed()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--scenarist-store")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the results were lost
    result.stdout.fnmatch_lines(
        [
            "*= scenarist =*",
            "1 scenario: 1 passed*",
            "error: cannot write the run log *: Not a directory; set SCENARIST_HOME to a "
            "writable folder*",
            "error: could not store the run in the database *",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_session_stopped_early_is_stored_as_incomplete(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(test_user_cases=USER_TESTS)
    # a subprocess: the store's first import (SQLAlchemy, Alembic) must not happen inside an
    # in-process run, which unloads it after and leaves a half-registered copy behind
    result = pytester.runpytest_subprocess(
        "-x", "-p", "no:cacheprovider", "--scenarist-store", timeout=HANG_S
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*= scenarist =*", "INCOMPLETE run *: 2 scenarios: 1 passed*"])
    (log,) = (home / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["record_type"] for r in records] == ["header", "scenario", "scenario"]
