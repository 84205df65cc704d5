"""``scenarist report``: re-render a stored run without running anything again."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scenarist.cli._runs import load_run_log

__all__ = ["ReportFormat", "report"]


class ReportFormat(StrEnum):
    console = "console"
    junit = "junit"
    json = "json"
    html = "html"


def report(
    runlog: Annotated[
        str,
        typer.Argument(
            help=(
                "A run log file, a run id (from the runs folder, else the database: the "
                "server at SCENARIST_URL, or the local one), or 'last'."
            )
        ),
    ],
    format: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ReportFormat.console,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="The project a run id is in (default: SCENARIST_PROJECT, else default).",
        ),
    ] = None,
) -> None:
    """Re-render a stored run (console, JUnit XML, JSON or a self-contained HTML page)."""
    if project is not None:
        from scenarist.store.projects import check_project

        project = check_project(project, source="--project")
    log = load_run_log(runlog, project=project)
    result = log.to_suite_result()
    if format is ReportFormat.console:
        from rich.console import Console

        if output is None:
            result.print_report(console=Console())
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("w", encoding="utf-8") as handle:
            result.print_report(console=Console(file=handle, width=120, no_color=True))
        return
    if format is ReportFormat.junit:
        from scenarist.report.junit import to_junit_xml

        text = to_junit_xml(result, xml_declaration=True) + "\n"
    elif format is ReportFormat.json:
        from scenarist._jsonable import dump_json

        text = dump_json(log, indent=2) + "\n"
    else:
        from scenarist.report.html import to_html

        text = to_html(result, title=log.header.suite_name)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
