"""The CLI as users reach it: ``python -m scenarist``, flags against ``SCENARIST_*``
variables, and the CLI and the Python API reading each other's runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers.limits import HANG_S
from typer.testing import Result

from scenarist._sync import run_sync

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_python_dash_m_scenarist_is_the_cli(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=SRC, SCENARIST_HOME=str(tmp_path / "home"))
    done = subprocess.run(
        [sys.executable, "-m", "scenarist", "run", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: scenarist run [OPTIONS] PATH...")
    assert not (tmp_path / "home").exists()


def test_keys_list_prints_a_line_per_key_not_a_repr(cli: Cli, home: Path) -> None:
    url = f"sqlite:///{home / 'keys.db'}"
    empty = cli("keys", "list", "--database-url", url)
    assert empty.exit_code == 0, empty.output
    assert empty.stdout.startswith("no API keys in the database ")
    assert "scenarist keys create" in empty.stdout
    made = cli("keys", "create", "--name", "ci", "--project", "support", "--database-url", url)
    assert made.exit_code == 0, made.output
    listed = cli("keys", "list", "--database-url", url)
    (line,) = listed.stdout.splitlines()
    key_id, name, scopes, projects, created = line.split("\t")
    assert (name, scopes, projects) == ("ci", "ingest,read", "projects support")
    assert f"key id {key_id} " in made.stdout and created.startswith("created 20")
    assert "datetime" not in line and "=" not in line
    assert cli("keys", "revoke", key_id, "--database-url", url).exit_code == 0
    assert (
        cli("keys", "list", "--database-url", url)
        .stdout.rstrip()
        .split("\t")[-1]
        .startswith("revoked 20")
    )


def test_a_database_url_flag_wins_over_the_environment(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_DATABASE_URL", f"sqlite:///{home / 'env.db'}")
    result = cli("db", "upgrade", "--database-url", f"sqlite:///{home / 'flag.db'}")
    assert result.exit_code == 0, result.output
    assert f"database {home / 'flag.db'} at revision" in result.stdout
    assert (home / "flag.db").exists() and not (home / "env.db").exists()


def test_a_project_flag_wins_over_scenarist_project(
    cli: Cli, write: Write, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli.conftest import PASSING

    from scenarist.store.default import default_store

    write("suite.py", PASSING)
    monkeypatch.setenv("SCENARIST_PROJECT", "from-env")
    assert cli("run", "-q", "suite.py", "--project", "from-flag").exit_code == 0
    assert cli("run", "-q", "suite.py").exit_code == 0
    store = default_store()
    assert len(run_sync(store.scoped("from-flag").list_runs).items) == 1
    assert len(run_sync(store.scoped("from-env").list_runs).items) == 1
    monkeypatch.setenv("SCENARIST_PROJECT", "team a")
    bad = cli("run", "-q", "suite.py")
    assert bad.exit_code == 2
    assert "error: SCENARIST_PROJECT: 'team a' is not a project name" in bad.stderr
    assert "error: --project: 'x y'" in cli("run", "suite.py", "--project", "x y").stderr


def test_a_cli_run_is_seen_by_the_python_api_and_the_other_way(
    cli: Cli, write: Write, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``scenarist run`` stores where ``Client()`` reads, and a run log the API writes to
    the store is re-rendered by ``scenarist report``; with ``SCENARIST_DATABASE_URL`` too."""
    from tests.cli.conftest import FAILING

    from scenarist import Client

    for database in (None, home / "elsewhere.db"):
        if database is not None:
            monkeypatch.setenv("SCENARIST_DATABASE_URL", f"sqlite:///{database}")
        write("suite.py", FAILING)
        ran = cli("run", "suite.py")
        assert ran.exit_code == 1
        where = database or (home / "home" / "scenarist.db").resolve()
        assert f"Stored in the database {where}" in ran.stdout
        runs = run_sync(Client().store.list_runs).items  # type: ignore[attr-defined]
        assert [(r.passed_count, r.failed_count) for r in runs] == [(1, 1)]
        run_id = runs[0].run_id
        report = cli("report", run_id)
        assert report.exit_code == 0, report.output
        assert "says_bye" in report.stdout
        if database is None:
            (home / "home" / "scenarist.db").rename(home / "moved.db")
    assert not (home / "home" / "scenarist.db").exists()  # the second round used the URL


def test_nothing_passes_silently_even_with_quiet(cli: Cli, home: Path) -> None:
    (home / "empty.scenario.yaml").write_text("name: empty\nsteps: []\n")
    (home / "unchecked.scenario.yaml").write_text(
        "name: unchecked\nsteps:\n  - interacts:\n      - {kind: interact, inputs: a, outputs: b}\n"
    )
    result = cli("run", "-q", "empty.scenario.yaml", "unchecked.scenario.yaml")
    assert result.exit_code == 0
    assert result.stdout.strip() == (
        "scenarist: PASSED (exit 0): no scenario failed (1 passed with no interaction (or an "
        "empty input generator): nothing tested, --fail-on-vacuous fails them; 1 passed "
        "without any check) | 2 scenarios: "
        "2 passed, 0 failed, 0 errored, 0 skipped | pass rate 100.0%"
    )
    (home / "zero.suite.yaml").write_text("name: zero\nscenarios: []\n")
    zero = cli("run", "zero.suite.yaml")
    assert zero.exit_code == 2
    assert "error: zero.suite.yaml: no scenarios found" in zero.stderr
    nothing = cli("run", "empty.scenario.yaml", "-k", "nomatch")
    assert nothing.exit_code == 2
    assert "no scenario matches -k (1 found); loosen the filter" in nothing.stderr


def test_a_run_of_only_skipped_scenarios_says_nothing_was_tested() -> None:
    from scenarist.cli.run import verdict
    from scenarist.model.results import CheckResult, ScenarioResult, SuiteResult, TestCaseResult

    skipped = ScenarioResult(
        scenario_name="s", steps=[TestCaseResult(results=[CheckResult(status="skip")])]
    )
    line = verdict(SuiteResult(results=[skipped])).line
    assert line.startswith(
        "scenarist: PASSED (exit 0): no scenario failed (every scenario was skipped: "
        "nothing was tested)"
    )


BLOCKING = """
import time
from pathlib import Path
from scenarist import Scenario, StringMatching, Suite

def agent(inputs):
    if inputs == "block":
        Path("blocking").touch()
        while True:  # a sync agent stuck in a call: the event loop never gets control
            time.sleep(0.05)
    return "ok " + inputs

suite = Suite(name="sig", target=agent)
suite.append(Scenario("first").interact("a").check(StringMatching(keyword="ok")))
suite.append(Scenario("blocks").interact("block").check(StringMatching(keyword="ok")))
suite.append(Scenario("never").interact("c").check(StringMatching(keyword="ok")))
"""


def test_one_ctrl_c_stops_a_blocking_agent_and_the_log_keeps_what_finished(
    tmp_path: Path,
) -> None:
    import json
    import signal
    import time

    (tmp_path / "suite.py").write_text(BLOCKING, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=SRC, SCENARIST_HOME=str(tmp_path / "home"))
    process = subprocess.Popen(
        [sys.executable, "-m", "scenarist", "run", "suite.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG_S  # polling for the marker, not timing anything
        while time.monotonic() < deadline:
            if (tmp_path / "blocking").exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert (tmp_path / "blocking").exists()
        process.send_signal(signal.SIGINT)  # once: a second one was needed before
        out, err = process.communicate(timeout=HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, (out, err)
    assert "stopped by Ctrl-C after 1 of 3 scenarios finished" in out.splitlines()[-1]
    assert "Traceback" not in out + err
    (log,) = (tmp_path / "home" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["record_type"] for r in records] == ["header", "scenario"]
    assert records[1]["result"]["scenario_name"] == "first"


def test_a_scenario_file_named_like_an_installed_module_does_not_replace_it(
    tmp_path: Path,
) -> None:
    """``yaml.py`` or ``aiosqlite.py`` beside the scenarios: imported under a private name,
    so scenarist's own later ``import yaml`` / the database driver still get theirs."""
    scenario = (
        "from scenarist import Scenario, StringMatching\n"
        "s = Scenario({name!r}).interact('hi', outputs='hi').check(StringMatching(keyword='hi'))\n"
    )
    (tmp_path / "yaml.py").write_text(scenario.format(name="in_yaml_py"))
    (tmp_path / "aiosqlite.py").write_text(scenario.format(name="in_aiosqlite_py"))
    (tmp_path / "z.scenario.yaml").write_text(
        "name: z\nsteps:\n  - interacts: [{kind: interact, inputs: hi, outputs: hi}]\n"
        "    checks: [{kind: string_matching, keyword: hi}]\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC, SCENARIST_HOME=str(tmp_path / "home"))
    script = "from scenarist.cli._entry import main; exit(main())"
    done = subprocess.run(  # -P: the working folder is not on sys.path, as for the script
        [sys.executable, "-P", "-c", script, "run", "-q", "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 scenarios: 3 passed" in done.stdout


def test_items_import_reads_a_bom_and_refuses_a_misspelt_field(cli: Cli, home: Path) -> None:
    (home / "bom.json").write_bytes(b'\xef\xbb\xbf[{"name": "a", "input": "x"}]')
    assert cli("items", "import", "support", "bom.json").exit_code == 0
    (home / "typo.json").write_text('[{"name": "a", "input": "x", "expected_ouput": "y"}]')
    typo = cli("items", "import", "support", "typo.json")
    assert typo.exit_code == 2
    assert (
        "error: typo.json[0].expected_ouput: unknown field of a scenario item; did you mean "
        "'expected_output'?" in typo.stderr
    )
    (home / "foreign.json").write_text('[{"name": "a", "input": "x", "veval_id": 7}]')
    assert cli("items", "import", "support", "foreign.json").exit_code == 0  # Veval's keys


def test_report_re_renders_a_run_the_database_holds_without_its_file(
    cli: Cli, write: Write, home: Path
) -> None:
    from tests.cli.conftest import FAILING

    write("suite.py", FAILING)
    assert cli("run", "-q", "suite.py").exit_code == 1
    (log,) = (home / "home" / "runs").glob("*.jsonl")
    from_file = cli("report", log.stem, "--format", "json").stdout
    log.unlink()
    report = cli("report", log.stem)
    assert report.exit_code == 0, report.output
    assert "says_bye" in report.stdout
    again = cli("report", log.stem, "--format", "json")
    assert again.exit_code == 0, again.output
    assert again.stdout == from_file  # the same run log: header, full records, footer
    assert "says_bye" in cli("report", log.stem, "--format", "junit").stdout
    unknown = cli("report", "0123abcd")
    assert unknown.exit_code == 2
    assert "'0123abcd' is neither a run log file, a run id in" in unknown.output
    assert "nor a run of project 'default' in" in unknown.output


def test_report_of_a_stored_run_in_another_project_needs_its_project(
    cli: Cli, write: Write, home: Path
) -> None:
    from tests.cli.conftest import FAILING

    write("suite.py", FAILING)
    assert cli("run", "-q", "--project", "team-b", "suite.py").exit_code == 1
    (log,) = (home / "home" / "runs").glob("*.jsonl")
    log.unlink()
    elsewhere = cli("report", log.stem)
    assert elsewhere.exit_code == 2
    assert "it is in project 'team-b': add --project team-b" in elsewhere.output
    named = cli("report", log.stem, "--project", "team-b")
    assert named.exit_code == 0, named.output
    assert "says_bye" in named.stdout
    assert cli("report", log.stem, "--project", "no such/project").exit_code == 2


def test_report_reads_a_run_from_the_server_at_scenarist_url(
    cli: Cli, write: Write, home: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli.conftest import FAILING

    from scenarist.server.app import create_app
    from scenarist.server.threaded import ThreadedServer

    write("suite.py", FAILING)
    with ThreadedServer(create_app(database_url)) as server:
        monkeypatch.setenv("SCENARIST_URL", server.url)
        ran = cli("run", "-q", "--project", "team-b", "suite.py")
        assert ran.exit_code == 1 and f"to {server.url}" in ran.output, ran.output
        (log,) = (home / "home" / "runs").glob("*.jsonl")
        from_file = cli("report", log.stem, "--format", "json").stdout
        log.unlink()
        (home / "home" / "scenarist.db").unlink()  # the server's copy, not the local one
        wrong = cli("report", log.stem)
        assert wrong.exit_code == 2
        assert f"nor a run of the key's project on the server {server.url}" in wrong.output
        assert "--project NAME" in wrong.output
        again = cli("report", log.stem, "--project", "team-b", "--format", "json")
        assert again.exit_code == 0, again.output
        assert again.stdout == from_file
