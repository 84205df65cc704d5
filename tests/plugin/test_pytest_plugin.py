"""The pytest plugin, driven through ``pytester`` (in-process pytest sessions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarist.pytest_plugin import RECORD_MODES

# pytester only for this module (pytest refuses `pytest_plugins` in a nested conftest).
pytest_plugins = ["pytester"]

SUITE = """
from scenarist import Scenario, StringMatching, Suite

def agent(inputs):
    return "echo " + inputs

suite = Suite(name="echo", target=agent)
suite.append(Scenario("says_echo").interact("hi").check(StringMatching(keyword="echo")))
suite.append(Scenario("says_bye").interact("hi").check(StringMatching(keyword="bye")))
"""


@pytest.fixture
def home(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCENARIST_HOME", str(pytester.path / "home"))
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)
    return pytester.path / "home"


def test_plugin_plain_tests_need_no_configuration(pytester: pytest.Pytester, home: Path) -> None:
    pytester.makepyfile(
        """
        from scenarist import Scenario, StringMatching

        def test_plain():
            Scenario("s").interact("hi", outputs="hello").check(
                StringMatching(keyword="hello")).run_sync().assert_passed()
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "scenarist" not in "\n".join(result.outlines[-3:])
    assert not home.exists()


def test_plugin_parametrize_suite_names_tests_and_summarises(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(
        plugin_echo_suite=SUITE,
        test_plugin_echo_cases="""
        import pytest
        from plugin_echo_suite import suite
        from scenarist.pytest_plugin import parametrize_suite

        @parametrize_suite(suite)
        @pytest.mark.scenarist(tags=["team:support"])
        def test_scenario(scenario, scenarist_run):
            scenarist_run(scenario).assert_passed()
        """,
    )
    result = pytester.runpytest("-v", "--scenarist-store", "-k", "says")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_scenario?says_echo? PASSED*",
            "*test_scenario?says_bye? FAILED*",
            "*= scenarist =*",
            "2 scenarios: 1 passed, 1 failed, 0 errored, 0 skipped | pass rate 50.0% | cost —",
            "run log: *",
            f"stored in the database {(home / 'scenarist.db').resolve()}",
        ]
    )
    (log_path,) = (home / "runs").glob("*.jsonl")
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    scenarios = [line["result"] for line in lines if line["record_type"] == "scenario"]
    assert sorted(s["scenario_name"] for s in scenarios) == ["says_bye", "says_echo"]
    assert all("team:support" in s["tags"] for s in scenarios)
    from scenarist._sync import run_sync
    from scenarist.store import SqlStore

    (run,) = run_sync(SqlStore(home / "scenarist.db").list_runs).items
    assert (run.run_id, run.passed_count, run.failed_count) == (lines[0]["run_id"], 1, 1)
    assert lines[0]["selection"]["keyword"] == "says"  # -k: a subset run of the session
    assert run.subset is True


def test_plugin_parametrize_items_and_client_fixture(pytester: pytest.Pytester, home: Path) -> None:
    pytester.makepyfile(
        """
        from scenarist import ScenarioItem, run_scenario
        from scenarist.pytest_plugin import parametrize_suite
        from scenarist.testing import TestClient

        ITEMS = [ScenarioItem(name="first", input="a"), ScenarioItem(input="b")]

        @parametrize_suite(ITEMS)
        def test_item(item, scenarist_client):
            assert isinstance(scenarist_client, TestClient)
            result = run_scenario("upper", lambda ctx: str(ctx.input).upper(), items=[item])
            assert result.passed
            assert scenarist_client.store.list_scenario_runs
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_item?first? PASSED*", "*test_item?b? PASSED*"])
    assert not home.exists()


@pytest.mark.parametrize(("option", "mode"), sorted(RECORD_MODES.items()))
def test_plugin_record_option_maps_to_cassette_modes(
    pytester: pytest.Pytester, home: Path, option: str, mode: str
) -> None:
    pytester.makepyfile(
        f"""
        def test_tape(scenarist_replay):
            assert scenarist_replay.mode == {mode!r}
            assert scenarist_replay.path.name == "test_tape.jsonl"
            assert scenarist_replay.path.parent.name == "cassettes"
        """
    )
    if mode == "replay":
        cassettes = pytester.path / "cassettes"
        cassettes.mkdir()
        (cassettes / "test_tape.jsonl").write_text(
            '{"format_version":1,"kind":"scenarist.cassette"}\n'
        )
    result = pytester.runpytest(f"--scenarist-record={option}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*= scenarist =*", "cassettes: 1 (*"])


def test_plugin_marker_sets_the_mode_and_replay_fails_closed(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.scenarist(record="none")
        def test_never_recorded(scenarist_replay):
            pass

        @pytest.mark.scenarist(record="sometimes")
        def test_bad_mode(scenarist_replay):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*does not exist, and mode 'replay' never records*"])
    result.stdout.fnmatch_lines(["*record='sometimes'*is not a record mode*"])


def test_plugin_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.scenarist(record=None, tags=()):*"])


def test_plugin_state_lives_in_the_config_stash() -> None:
    import scenarist.pytest_plugin as plugin

    module_state = [
        name
        for name, value in vars(plugin).items()
        if isinstance(value, list | dict | set) and not name.startswith("__")
    ]
    assert module_state == ["RECORD_MODES"]  # a constant mapping, never mutated


VACUOUS = """
from scenarist import Scenario, StringMatching

def test_empty(scenarist_run):
    scenarist_run(Scenario("empty")).assert_passed()

def test_checked(scenarist_run):
    scenarist_run(
        Scenario("checked").interact("hi", outputs="hi").check(StringMatching(keyword="hi"))
    ).assert_passed()
"""


def test_plugin_flags_vacuous_passes_in_the_summary(pytester: pytest.Pytester, home: Path) -> None:
    pytester.makepyfile(test_vacuous_cases=VACUOUS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)  # giskard's documented PASS for an empty scenario
    result.stdout.fnmatch_lines(
        [
            "*= scenarist =*",
            "vacuous passes (no interaction, or an empty input generator): 1: empty",
        ]
    )


def test_plugin_fail_on_vacuous_fails_the_test_with_the_reason(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(test_vacuous_cases=VACUOUS)
    result = pytester.runpytest("--fail-on-vacuous")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*scenario(s) passed with nothing tested: 'empty' (no interaction in its trace) "
            "(--fail-on-vacuous)*"
        ]
    )
