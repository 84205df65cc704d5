"""``report``, ``demo``, ``replay``, ``traces``, ``items``, the server commands, ``--version``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import Result

from scenarist._sync import run_sync
from scenarist._version import __version__
from scenarist.cli import server
from scenarist.store import MemoryStore, SqlStore
from scenarist.veval.client import Client

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

INJECTED = """
from scenarist import Scenario, StringMatching

def agent(inputs):
    return "<script>alert('x')</script> & more"

evil = Scenario("<b>evil</b>").interact("<img src=x>").check(
    StringMatching(keyword="<script>", name="<i>check</i>")).with_target(agent)
"""

AGENT = """
def agent(ctx):
    word = ctx.track_step("lookup", str(ctx.input), lambda handle: "found " + str(ctx.input))
    return word.upper()

def other(ctx):
    return "never looks anything up"
"""


def test_version(cli: Cli) -> None:
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"scenarist {__version__}"


def test_report_rerenders_a_stored_run_in_every_format(cli: Cli, write: Write, home: Path) -> None:
    cli("run", str(write("evil_suite.py", INJECTED)))
    console = cli("report", "last")
    assert console.exit_code == 0 and "Summary: 1 total, 1 passed" in console.stdout
    junit = cli("report", "last", "--format", "junit")
    assert junit.stdout.startswith("<?xml") or "<testsuites" in junit.stdout
    as_json = json.loads(cli("report", "last", "-f", "json").stdout)
    assert as_json["scenarios"][0]["result"]["scenario_name"] == "<b>evil</b>"
    assert cli("report", "last", "-f", "html", "-o", "out/report.html").exit_code == 0
    page = (home / "out/report.html").read_text()
    assert "<script>" not in page and "<img" not in page and "<b>evil" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in page
    assert "&lt;b&gt;evil&lt;/b&gt;" in page and "&lt;i&gt;check&lt;/i&gt;" in page
    (stored,) = (home / "home/runs").glob("*.jsonl")
    by_id = cli("report", stored.stem, "-o", "out/report.txt")
    assert by_id.exit_code == 0 and "Summary:" in (home / "out/report.txt").read_text()
    unknown = cli("report", "no-such-run")
    assert unknown.exit_code == 2 and "neither a run log file, a run id in" in unknown.stderr
    assert "nor a run of project 'default' in" in unknown.stderr  # the database too


def test_demo_exits_0_and_explains_the_deliberate_failure(cli: Cli, home: Path) -> None:
    result = cli("demo")
    assert result.exit_code == 0, result.output
    assert "One failure is deliberate: international_transfer_fee" in result.stdout
    assert "scenarist serve" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("scenarist: demo PASSED (exit 0)")
    assert len(list((home / "home/runs").glob("*.jsonl"))) == 1


def test_serve_says_what_to_install_when_the_server_is_missing(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "_server_cli", lambda: None)
    result = cli("serve")
    assert result.exit_code == 2
    assert "pip install 'scenarist[server]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_database_commands_work_without_the_server(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    """Keys, migrations and pruning administer the database, which is core: they run
    with the server package unavailable and name the database they used."""
    monkeypatch.setattr(server, "_server_cli", lambda: None)
    upgrade = cli("db", "upgrade")
    assert upgrade.exit_code == 0, upgrade.output
    database = (home / "home" / "scenarist.db").resolve()
    assert f"database {database} at revision" in upgrade.stdout
    created = cli("keys", "create", "--name", "ci")
    assert created.exit_code == 0 and f"in the database {database}; shown once" in created.stdout
    listed = cli("keys", "list")
    assert listed.exit_code == 0 and "ci" in listed.stdout
    nothing = cli("sync")
    assert nothing.exit_code == 2 and "SCENARIST_URL" in nothing.stderr


def test_serve_delegates_to_the_server_cli(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def no_extra(**kwargs: Any) -> None:
        raise ImportError("the server needs its extra: pip install 'scenarist[server]'")

    monkeypatch.setattr(
        server, "_server_cli", lambda: SimpleNamespace(serve=lambda **kw: calls.append(kw))
    )
    assert cli("serve", "--port", "9000").exit_code == 0
    assert calls == [{"host": "127.0.0.1", "port": 9000, "database_url": None}]
    monkeypatch.setattr(server, "_server_cli", lambda: SimpleNamespace(serve=no_extra))
    missing = cli("serve")
    assert missing.exit_code == 2 and "pip install 'scenarist[server]'" in missing.stderr
    monkeypatch.setattr(server, "_server_cli", lambda: SimpleNamespace())
    old = cli("serve")
    assert old.exit_code == 2 and "does not provide `scenarist serve`" in old.stderr


def test_a_run_recorded_with_client_is_replayed_exported_and_listed_by_the_cli(
    cli: Cli, write: Write, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Client()`` with no arguments and every CLI command use one database."""
    write("my_agent.py", AGENT)
    monkeypatch.syspath_prepend(str(home))
    from my_agent import agent  # type: ignore[import-not-found]

    client = Client()
    assert client.run("support", agent, input="refund") == "FOUND REFUND"
    (trace_id,) = [
        t.trace_id for t in run_sync(client.store.search_traces, agent_name="support").items
    ]
    replayed = cli("replay", trace_id, "--agent", "my_agent:agent")
    assert replayed.exit_code == 0, replayed.output
    assert f"replay of {trace_id}: PASSED" in replayed.stdout
    database = (home / "home" / "scenarist.db").resolve()
    assert f"stored in the database {database}" in replayed.stdout
    diverged = cli("replay", trace_id, "--agent", "my_agent:other")
    assert diverged.exit_code == 1 and "FAILED" in diverged.stdout
    exported = json.loads(cli("traces", "export", trace_id).stdout)
    assert exported[0]["output"] == "FOUND REFUND"
    from scenarist import ScenarioItem

    run_sync(client.store.save_items, "support", [ScenarioItem(name="r", trace_id=trace_id)])
    listed = cli("items", "list", "support")
    assert listed.exit_code == 0 and f"trace {trace_id}" in listed.stdout
    empty = cli("items", "list", "nothing_here")
    assert f"no items stored for scenario 'nothing_here' in {database}" in empty.stdout


def _record(agent: Any) -> Any:
    client = Client(store=MemoryStore())
    client.run("support", agent, input="refund")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    return record


def test_traces_import_export_and_replay(
    cli: Cli, write: Write, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("my_agent.py", AGENT)
    monkeypatch.syspath_prepend(str(home))
    from my_agent import agent  # type: ignore[import-not-found]

    record = _record(agent)
    (home / "trace.json").write_text(record.model_dump_json(), encoding="utf-8")
    imported = cli("traces", "import", "trace.json")
    assert imported.exit_code == 0 and "imported 1 trace" in imported.stdout
    assert run_sync(SqlStore().get_trace, record.trace_id) is not None

    veval = cli("traces", "export", record.trace_id, "--format", "veval", "-o", "veval.json")
    assert veval.exit_code == 0
    (row,) = json.loads((home / "veval.json").read_text())
    assert row["steps"][0]["name"] == "lookup"
    plain = json.loads(cli("traces", "export", record.trace_id).stdout)
    assert plain[0]["trace_id"] == record.trace_id
    assert cli("traces", "export", "nope").exit_code == 2

    good = cli("replay", record.trace_id, "--agent", "my_agent:agent")
    assert good.exit_code == 0, good.output
    assert "PASSED" in good.stdout and "1 matched" in good.stdout
    from_file = cli("replay", "veval.json", "--format", "veval", "--agent", "my_agent:agent")
    assert from_file.exit_code == 0, from_file.output
    bad = cli("replay", record.trace_id, "--agent", "my_agent:other")
    assert bad.exit_code == 1 and "FAILED" in bad.stdout
    wrong = cli("replay", record.trace_id, "--agent", "my_agent")
    assert wrong.exit_code == 2 and "use module:function" in wrong.stderr


def test_items_import_list_export(cli: Cli, write: Write, home: Path) -> None:
    items = [
        {"name": "refund", "input": "I want a refund", "tags": ["billing"]},
        {"input": "hello", "assertions": [{"kind": "trace_no_errors"}]},
    ]
    write("items.json", json.dumps(items))
    assert cli("items", "import", "support", "items.json").exit_code == 0
    listed = cli("items", "list", "support")
    assert "refund" in listed.stdout and "1 assertion(s)" in listed.stdout
    exported = json.loads(cli("items", "export", "support").stdout)
    assert [i["input"] for i in exported] == ["I want a refund", "hello"]
    assert exported[1]["assertions"][0]["kind"] == "trace_no_errors"
    assert "no items stored" in cli("items", "list", "other").stdout
    write("bad.json", json.dumps([{"input": "x", "assertions": [{"kind": "nope"}]}]))
    bad = cli("items", "import", "support", "bad.json")
    assert bad.exit_code == 2 and "bad.json[0]" in bad.stderr
