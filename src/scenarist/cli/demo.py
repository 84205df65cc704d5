"""``scenarist demo``: the bundled example suite against the bundled demo agent, offline.

With ``SCENARIST_URL`` set the run is also uploaded there, as ``scenarist run`` does
(a server that is down spools it). It exits 0 when the only scenario that did not pass
is the deliberate failure (:data:`scenarist.demo.DELIBERATE_FAILURE`), so the
README's first command
succeeds while still showing how a failure reads; any other outcome exits as
``scenarist run`` would (1 failures, 2 errors).
"""

from __future__ import annotations

import typer

from scenarist.cli._outputs import Outputs, check_upload
from scenarist.cli._runs import runs_dir, save_run_log, store_in_local_database
from scenarist.cli.server import server_available

__all__ = ["demo"]


def demo() -> None:
    """Run the example suite against the demo support agent (offline, no API key)."""
    from rich.console import Console

    from scenarist.demo import DELIBERATE_FAILURE, build_demo_suite
    from scenarist.formats.runlog import RunSettings, run_log_from_suite_result

    console = Console()
    upload_url = check_upload(None)  # SCENARIST_URL set: the run goes there too, as with run
    result = build_demo_suite().run_sync(parallel=True, max_concurrency=4, return_exception=True)
    result.print_report(console=console, group_by="topic")
    log = run_log_from_suite_result(result, settings=RunSettings(concurrency=4))
    stored = runs_dir() / f"{log.header.run_id}.jsonl"
    save_run_log(log, stored)
    database = store_in_local_database(log)
    unexpected = [
        r for r in result.results if not r.passed and r.scenario_name != DELIBERATE_FAILURE
    ]

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False, soft_wrap=True)

    say("")
    say(
        f"One failure is deliberate: {DELIBERATE_FAILURE} checks for a fee that the demo "
        "agent never states, to show how a failure reads. The suite is defined in "
        "scenarist/demo.py."
    )
    say(f"Run log: {stored}")
    say(f"Stored in the database {database}")
    say(f"Re-render it: scenarist report {stored} --format html -o report.html")
    if upload_url is not None:
        outputs = Outputs(console, quiet=False)
        outputs.upload(log, upload_url)
        if outputs.problems:
            raise typer.Exit(2)
    if server_available():
        say("Open the dashboard: scenarist serve, then http://127.0.0.1:8480/")
    else:
        say(
            "Dashboard: `scenarist serve` needs the server, which is not installed in this "
            "version (it arrives with the 'server' extra: pip install 'scenarist[server]')."
        )
    if unexpected:
        names = ", ".join(r.scenario_name for r in unexpected)
        code = 2 if any(r.errored for r in unexpected) else 1
        say(f"scenarist: demo FAILED (exit {code}): unexpected result for {names}")
        raise typer.Exit(code)
    say("scenarist: demo PASSED (exit 0): only the deliberate failure failed")
