"""``scenarist replay``, ``traces export|import`` and ``items list|import|export``: the
database from the command line, the same one ``Client()`` writes and ``scenarist serve``
reads (:mod:`scenarist.store.location`). Commands that write say which database they used.

Files are JSON: a trace file holds one trace or a list of traces, in scenarist's own
shape (:class:`~scenarist.model.record.TraceRecord`) or, with ``--format veval``,
Veval's wire format (:mod:`scenarist.model.veval_wire`); an items file holds a list of
:class:`~scenarist.model.items.ScenarioItem`. ``traces import`` also reads OpenTelemetry
OTLP files (JSON or protobuf, detected; :mod:`scenarist.otel`) and ``traces export
--format otlp`` writes OTLP/JSON. ``items add --trace ID`` makes one trace-backed item.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import json
import sys
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scenarist.errors import UserError

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord
    from scenarist.store.sql.store import SqlStore

__all__ = ["TraceFormat", "items_app", "load_agent", "replay", "traces_app"]

traces_app = typer.Typer(help="Recorded traces in the database.", no_args_is_help=True)
items_app = typer.Typer(help="Scenario items in the database.", no_args_is_help=True)


class TraceFormat(StrEnum):
    scenarist = "scenarist"
    veval = "veval"
    otlp = "otlp"


def _store() -> SqlStore:
    from scenarist.store.default import default_store

    return default_store()


def _where(store: SqlStore) -> str:
    from scenarist.store.location import database_label

    return database_label(store.url)


def _sync(coroutine_function: Any, *args: Any) -> Any:
    from scenarist._sync import run_sync

    return run_sync(coroutine_function, *args)


def load_agent(reference: str) -> Any:
    """The callable named by ``module:function`` (or ``path/to/file.py:function``)."""
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise UserError(f"--agent {reference!r}: use module:function, e.g. my_app.agent:run")
    sys.path.insert(0, str(Path.cwd()))
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location("_scenarist_agent", module_name)
            if spec is None or spec.loader is None or not Path(module_name).is_file():
                raise UserError(f"--agent {reference!r}: no such file {module_name!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"--agent {reference!r}: cannot import {module_name!r}: {exc}") from exc
    finally:
        sys.path.remove(str(Path.cwd()))
    agent = getattr(module, attribute, None)
    if not callable(agent):
        raise UserError(f"--agent {reference!r}: {module_name!r} has no callable {attribute!r}")
    return agent


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8-sig"))  # a byte-order mark or not
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file: {exc}") from exc
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON: {exc}") from exc


def _is_otlp(raw: bytes) -> bool:
    """An OTLP file: protobuf bytes, or a JSON object with ``resourceSpans``."""
    head = raw.lstrip()[:1]
    if head not in (b"{", b"["):
        return True
    return head == b"{" and b'"resourceSpans"' in raw[:4096]


def _otlp_traces(path: Path, raw: bytes) -> list[TraceRecord]:
    from scenarist.otel import parse_otlp

    try:
        return parse_otlp(raw)
    except UserError as exc:
        raise UserError(f"{path}: not an OTLP trace file: {exc}") from exc


def _traces_from(path: Path, format: TraceFormat) -> list[TraceRecord]:
    from pydantic import ValidationError

    from scenarist.formats.files import describe_validation_error
    from scenarist.model.record import TraceRecord
    from scenarist.model.veval_wire import from_veval

    if format is not TraceFormat.veval:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UserError(f"{path}: cannot read the file: {exc}") from exc
        if format is TraceFormat.otlp or _is_otlp(raw):
            return _otlp_traces(path, raw)
    data = _read_json(path)
    rows = data if isinstance(data, list) else [data]
    traces = []
    for position, row in enumerate(rows):
        try:
            if format is TraceFormat.veval:
                traces.append(from_veval(row))
            else:
                traces.append(TraceRecord.model_validate(row))
        except ValidationError as exc:
            where = f"[{position}]" if isinstance(data, list) else ""
            raise UserError(
                f"{path}{where}: not a {format.value} trace: {describe_validation_error(exc, row)}"
            ) from exc
        except (TypeError, KeyError, AttributeError, ValueError) as exc:
            raise UserError(f"{path}: not a {format.value} trace: {exc}") from exc
    return traces


def replay(
    trace: Annotated[str, typer.Argument(help="A trace id in the database, or a JSON file.")],
    agent: Annotated[str, typer.Option("--agent", help="The agent to replay: module:function.")],
    format: Annotated[
        TraceFormat, typer.Option("--format", help="Format of a trace file.")
    ] = TraceFormat.scenarist,
) -> None:
    """Replay one recorded trace against the agent: exit 0 passed, 1 failed, 2 error."""
    from scenarist.veval.client import Client

    callback = load_agent(agent)
    path = Path(trace)
    recording: Any = trace
    if path.is_file():
        records = _traces_from(path, format)
        if len(records) != 1:
            raise UserError(f"{path}: holds {len(records)} traces; replay takes one")
        recording = records[0]
    store = _store()
    from scenarist.replay.step_replay import ReplayOptions

    result = Client(store=store).replay(recording, callback, ReplayOptions(mock_llm_responses=True))
    fidelity = result.fidelity
    assert fidelity is not None  # a mocked replay always reports its bindings
    typer.echo(
        f"replay of {result.trace_id}: {'PASSED' if result.passed else 'FAILED'} | "
        f"fidelity: {fidelity.matched} matched, {fidelity.diverged} diverged, "
        f"{fidelity.live} live, {len(fidelity.unused)} unused"
        + (" (faithful)" if fidelity.is_faithful else "")
    )
    for failure in result.failures:
        typer.echo(f"  - {failure}")
    if result.replayed_record is not None:
        typer.echo(
            f"replayed run {result.replayed_record.trace_id} stored in the database {_where(store)}"
        )
    raise typer.Exit(0 if result.passed else 1)


_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``30m``, ``2h``, ``1d``, ``2w`` ago, or an ISO date or time (UTC unless it says)."""
    now = now or datetime.now(UTC)
    value = text.strip()
    if len(value) > 1 and value[-1] in _UNITS and value[:-1].isdigit():
        return now - timedelta(seconds=int(value[:-1]) * _UNITS[value[-1]])
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"--since {text!r}: use a duration (30m, 2h, 1d, 2w) or a date (2026-01-31)"
        ) from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


@traces_app.command("list")
def traces_list(
    agent_name: Annotated[
        str | None, typer.Option("--agent", help="Only this agent's (its name).")
    ] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="Only with this status (success, error).")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only from then on: 2h, 1d, 2026-01-31.")
    ] = None,
    text: Annotated[
        str | None, typer.Option("--text", "-q", help="Only traces holding this text (any case).")
    ] = None,
    replays: Annotated[
        bool | None,
        typer.Option("--replays/--no-replays", help="Only replays, or no replays (default: both)."),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project", help="The project to list (default: SCENARIST_PROJECT, else default)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 50,
) -> None:
    """List recorded traces, newest first: id, agent, status, start, duration, spans, and
    whether it is a replay. Reads the server at SCENARIST_URL when it is set (with
    SCENARIST_API_KEY), else the local database."""
    import os

    from scenarist.store.projects import check_project

    if project is not None:
        project = check_project(project)
    start = parse_since(since) if since is not None else None
    url = os.environ.get("SCENARIST_URL")
    store: Any
    if url:
        from scenarist.store.remote import RemoteStore

        store = RemoteStore(url, os.environ.get("SCENARIST_API_KEY"), project=project)
        where = f"on the server {url}"
    else:
        local = _store()
        store = local.scoped(project) if project is not None else local
        where = f"in the database {_where(local)}"
    page = _sync(
        lambda: store.search_traces(
            agent_name=agent_name, status=status, since=start, limit=limit,
            text=text, replay=replays,
        )
    )  # fmt: skip
    if not page.items:
        name = project or getattr(store, "project", None)
        shown = f"project {name!r}" if name else "the key's project"
        typer.echo(f"no traces match in {shown} {where}{_elsewhere(store, url)}")
        return
    for trace in page.items:
        started = f"{trace.started_at:%Y-%m-%d %H:%M:%S}" if trace.started_at else "-"
        duration = f"{trace.duration_ms:.0f} ms" if trace.duration_ms is not None else "-"
        replay = ""
        if trace.is_replay:
            replay = f"\treplay of {trace.replay_of}" if trace.replay_of else "\treplay"
        typer.echo(
            f"{trace.trace_id}\t{trace.agent_name or '-'}\t{trace.status}\t{started}\t"
            f"{duration}\t{trace.span_count} span(s){replay}"
        )
    if page.next_cursor is not None:
        typer.echo(f"(more: raise --limit above {limit})")


def _elsewhere(store: Any, url: str | None) -> str:
    """Where else traces are: the local database's other projects that hold some, or the
    hint to name a project on a server."""
    if url:
        return "; name another project with --project NAME"
    others = []
    for name in _sync(store.list_projects):
        if (
            name != store.project
            and _sync(lambda n=name: store.scoped(n).search_traces(limit=1)).items
        ):
            others.append(name)
    if not others:
        return ""
    return f"; traces are in project(s) {', '.join(others)}: add --project {others[0]}"


@traces_app.command("export")
def traces_export(
    trace_ids: Annotated[list[str], typer.Argument(help="Trace ids to export.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
    format: Annotated[TraceFormat, typer.Option("--format")] = TraceFormat.scenarist,
) -> None:
    """Export traces from the database as a JSON list (``--format otlp``: one OTLP/JSON
    export request, GenAI semantic-convention names)."""
    from scenarist._jsonable import to_json_value
    from scenarist.model.veval_wire import to_veval

    store = _store()
    records = []
    for trace_id in trace_ids:
        record = _sync(store.get_trace, trace_id)
        if record is None:
            raise UserError(f"trace {trace_id!r} is not in the database {_where(store)}")
        records.append(record)
    rows: Any
    if format is TraceFormat.otlp:
        from scenarist.otel import to_otlp_json

        rows = to_otlp_json(records)
    else:
        rows = [
            to_veval(r) if format is TraceFormat.veval else to_json_value(r.model_dump())
            for r in records
        ]
    text = json.dumps(rows, indent=2, ensure_ascii=False, default=str) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"exported {len(records)} trace(s) to {output}", err=True)


@traces_app.command("import")
def traces_import(
    file: Annotated[
        Path, typer.Argument(help="A JSON file (one trace or a list), or an OTLP file.")
    ],
    format: Annotated[TraceFormat, typer.Option("--format")] = TraceFormat.scenarist,
) -> None:
    """Import traces into the database: scenarist or Veval JSON, or OpenTelemetry OTLP
    (JSON or protobuf, detected; spans of a trace already imported are merged)."""
    from scenarist.otel.ingest import store_records
    from scenarist.redaction import redact_received

    traces = [redact_received(r) for r in _traces_from(file, format)]
    store = _store()
    otel = [r for r in traces if r.metadata.get("source") == "otel"]
    if otel:
        _sync(store_records, store, otel)
    for record in traces:
        if record.metadata.get("source") != "otel":
            _sync(store.save_trace, record)
    spans = sum(len(r.spans) for r in traces)
    typer.echo(f"imported {len(traces)} trace(s) ({spans} spans) into {_where(store)}")


@items_app.command("list")
def items_list(scenario: Annotated[str, typer.Argument(help="The scenario name.")]) -> None:
    """List the stored items of a scenario."""
    store = _store()
    items = _sync(store.get_items, scenario)
    if not items:
        typer.echo(f"no items stored for scenario {scenario!r} in {_where(store)}")
        return
    for position, item in enumerate(items):
        source = f"trace {item.trace_id}" if item.trace_id else f"input {item.input!r}"
        typer.echo(f"{position}\t{item.label}\t{source}\t{len(item.assertions)} assertion(s)")


@items_app.command("export")
def items_export(
    scenario: Annotated[str, typer.Argument(help="The scenario name.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
) -> None:
    """Export the stored items of a scenario as a JSON list."""
    from scenarist._jsonable import to_json_value

    items = _sync(_store().get_items, scenario)
    rows = [to_json_value(item.model_dump()) for item in items]
    text = json.dumps(rows, indent=2, ensure_ascii=False, default=str) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"exported {len(rows)} item(s) to {output}", err=True)


@items_app.command("import")
def items_import(
    scenario: Annotated[str, typer.Argument(help="The scenario name.")],
    file: Annotated[Path, typer.Argument(help="A JSON list of items.")],
) -> None:
    """Replace the stored items of a scenario with those in a JSON file."""
    from pydantic import ValidationError

    from scenarist.formats.files import describe_validation_error
    from scenarist.model.items import ScenarioItem

    data = _read_json(file)
    if not isinstance(data, list):
        raise UserError(f"{file}: expected a JSON list of items, got {type(data).__name__}")
    items = []
    fields = list(ScenarioItem.model_fields)
    for position, row in enumerate(data):
        # keys from elsewhere (Veval's exports) are ignored, but not a misspelt field: its
        # value (an expected output, the assertions) would be dropped without a word
        for key in row if isinstance(row, dict) else ():
            close = difflib.get_close_matches(str(key), fields, n=1)
            if key not in fields and close:
                raise UserError(
                    f"{file}[{position}].{key}: unknown field of a scenario item; "
                    f"did you mean {close[0]!r}?"
                )
        try:
            items.append(ScenarioItem.model_validate(row))
        except ValidationError as exc:
            raise UserError(
                f"{file}[{position}]: not a scenario item: {describe_validation_error(exc, row)}"
            ) from exc
    store = _store()
    _sync(store.save_items, scenario, items)
    typer.echo(f"imported {len(items)} item(s) for scenario {scenario!r} into {_where(store)}")


@items_app.command("add")
def items_add(
    scenario: Annotated[str, typer.Argument(help="The scenario name.")],
    trace: Annotated[
        str, typer.Option("--trace", help="A stored trace id (recorded, or imported from OTel).")
    ],
    name: Annotated[str | None, typer.Option("--name", help="The item's name.")] = None,
) -> None:
    """Add one trace-backed item to a scenario: running it replays the trace."""
    from scenarist.model.items import ScenarioItem

    store = _store()
    record = _sync(store.get_trace, trace)
    if record is None:
        raise UserError(
            f"--trace {trace!r}: no such trace in the database {_where(store)}; "
            "import it first (scenarist traces import FILE)"
        )
    item_id = _sync(store.add_item, scenario, ScenarioItem(name=name, trace_id=trace))
    typer.echo(f"added item {item_id} (trace {trace}) to scenario {scenario!r} in {_where(store)}")
    from scenarist.veval.agent_replay import replay_problem

    problem = replay_problem(record)  # what the trace page says too
    if problem is not None:
        typer.echo(f"warning: this item will error when run: {problem}", err=True)
