"""What a finished ``scenarist run`` leaves behind: the JUnit file, the run log (in the runs
folder and at ``--json``), the local database and the upload.

Each is kept independently: a full disk, a read-only folder, a locked database or a
server that refuses the key costs that one output, reported as one ``error:`` line that
names the file and the fix (never a traceback, never SQL), and the others are still
written. :attr:`Outputs.problems` counts them for the verdict (exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from scenarist.cli._runs import (
    HOME_FIX,
    database_problem,
    save_run_log,
    store_in_local_database,
    write_problem,
)
from scenarist.errors import RequestError, UserError
from scenarist.formats.runlog import RunLog, write_jsonl
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.results import SuiteResult

if TYPE_CHECKING:
    from scenarist.report.junit import Location

__all__ = ["Outputs", "check_upload"]


def check_upload(wanted: bool | None) -> str | None:
    """The server URL to upload to (``None``: no upload); a ``UserError`` before the run
    when ``--upload`` cannot work, rather than after it."""
    url = os.environ.get("SCENARIST_URL")
    if wanted is False or (wanted is None and not url):
        return None
    if not url:
        raise UserError("--upload needs a server: set SCENARIST_URL (and SCENARIST_API_KEY)")
    from scenarist.store.remote import http_library

    try:
        http_library()
    except ImportError:
        raise UserError("uploading needs httpx2: pip install 'scenarist[remote]'") from None
    return url


@dataclass
class Outputs:
    """Writes a run's outputs, printing what went wrong as it happens."""

    console: Any
    quiet: bool
    problems: list[str] = field(default_factory=list)

    def _problem(self, line: str) -> None:
        self.problems.append(line)
        typer.echo(f"error: {line}", err=True)

    def _say(self, line: str) -> None:
        if not self.quiet:
            self.console.print(line, highlight=False, soft_wrap=True)

    def junit(
        self,
        result: SuiteResult,
        path: Path,
        certificate: ReplayCertificate | None = None,
        *,
        locations: Sequence[Location | None] | None = None,
        full: bool = False,
    ) -> None:
        """The JUnit file: compact by default (no trace properties, an ASCII report for
        failing and erroring cases only, each case's file and line); ``full`` (``--junit-
        full``): giskard-checks' form, every trace as JSON and a report for every case."""
        compact: dict[str, Any] = (
            {} if full else {"trace_properties": False, "system_out": "failing"}
        )
        try:
            result.to_junit_xml(
                path,
                certificate=certificate,
                locations=locations,
                ascii_text=True,
                **compact,
            )
        except OSError as exc:
            self._problem(write_problem("the JUnit file", path, exc, "choose another --junit file"))

    def run_log(self, log: RunLog, stored: Path, json_file: Path | None) -> bool:
        """The run log in the runs folder (atomically) and at ``--json``; whether the
        runs folder copy was written."""
        try:
            save_run_log(log, stored)
            kept = True
        except OSError as exc:
            fix = f"free some disk space, or {HOME_FIX}"
            self._problem(write_problem("the run log", stored, exc, fix))
            kept = False
        if json_file is not None:
            try:
                write_jsonl(log, json_file)
            except OSError as exc:
                fix = "choose another --json file"
                self._problem(write_problem("the run log", json_file, exc, fix))
        if kept:
            self._say(f"Run log: {stored}")
        return kept

    def database(self, log: RunLog, kept: Path | None) -> None:
        try:
            label = store_in_local_database(log)
        except Exception as exc:
            line = database_problem(exc, kept)
            if line is None:
                raise
            self._problem(line)
            return
        self._say(f"Stored in the database {label} (open it with `scenarist serve`)")

    def upload(self, log: RunLog, url: str) -> None:
        """Send the run log; a server that is down spools it (``scenarist sync`` later)."""
        from scenarist._sync import run_sync
        from scenarist.store.remote import RemoteStore

        store = RemoteStore(url, os.environ.get("SCENARIST_API_KEY"))
        try:
            result = run_sync(store.upload_run_log, log)
        except (RequestError, OSError) as exc:  # refused (a bad key), or the spool unwritable
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self._problem(f"could not upload the run to {url}: {reason}")
            return
        if result.spooled:
            self.console.print(
                f"Server {url} unreachable: run {result.run_id} spooled to {result.spooled}; "
                "send it later with `scenarist sync`",
                highlight=False,
                soft_wrap=True,
            )
        else:
            self.console.print(
                f"Uploaded run {result.run_id} to {url}", highlight=False, soft_wrap=True
            )
