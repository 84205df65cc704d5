"""The Typer application: global options, error handling, and the command table.

Exit codes (every command): 0 success; 1 scenarios failed (``run``, ``replay``); 2 an
error: a usage error (bad path, bad option value, a file that does not load), a
scenario that errored, a feature that is not installed, or a file or database that
cannot be written (a full disk, a read-only folder, a lock); 3 (``run``) the run's
process ended without its verdict (``os._exit`` or a crash in user code; see
:mod:`scenarist.cli._supervise`); 130 interrupted (Ctrl-C).
Problems the user can fix are :class:`~scenarist.errors.UserError` and print as one
``error: ...`` line on stderr, without a traceback; ``--debug`` adds the traceback. An
unexpected exception is reported the same way (exit 2) with a request to report it,
never as exit 1, which means "failures" and nothing else.
"""

from __future__ import annotations

import sys
import traceback
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from scenarist._version import __version__
from scenarist.cli import demo, judges, report, run, server, store
from scenarist.cli._help import polish
from scenarist.errors import UserError

__all__ = ["DEBUG_KEY", "app"]

DEBUG_KEY = "scenarist.debug"
EXIT_CODES_HELP = (
    "Exit codes: 0 passed (or pass rate at least --fail-under); 1 scenarios failed; "
    "2 errors: a usage error, a file that could not be loaded, an errored scenario, results "
    "that could not be saved, or a feature that is not installed; 3 the run's process ended "
    "without its verdict (os._exit or a crash in user code); 130 interrupted (Ctrl-C)."
)


class _Group(TyperGroup):
    """Turns errors into one line on stderr and exit code 2 (a traceback with --debug);
    its commands' help reads the same way everywhere (:mod:`._help`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        polish(self)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, TyperException):
            raise
        except UserError as exc:
            _report(ctx, f"error: {exc}")
        except KeyboardInterrupt:
            _report(ctx, "error: interrupted (Ctrl-C)", code=130)
        except Exception as exc:
            unavailable = _database_unavailable(exc)  # before OSError: refused connections
            if unavailable is not None:
                _report(ctx, unavailable)
            if isinstance(exc, OSError):  # a full disk, a read-only folder, a missing file
                where = f" ({exc.filename})" if exc.filename else ""
                _report(
                    ctx,
                    f"error: {exc.strerror or exc}{where}; check the path, its permissions "
                    "and the free disk space",
                )
            _report(
                ctx,
                f"error: unexpected {type(exc).__name__}: {exc} (this is a scenarist bug; "
                "run again with --debug and report the traceback)",
            )
        return None  # not reached: _report exits


def _database_unavailable(exc: Exception) -> str | None:
    """The one line for a database that is locked, gone or unreachable (else ``None``)."""
    engine = sys.modules.get("scenarist.store.sql.engine")  # loaded if a database was used
    if engine is None or not engine.is_unavailable(exc):
        return None
    return (
        f"error: the database is unavailable (locked, gone or unreachable): "
        f"{engine.unavailable_reason(exc)}; check SCENARIST_DATABASE_URL (or --database-url) "
        "and that the database server is running"
    )


def _report(ctx: Any, line: str, code: int = 2) -> None:
    if ctx.meta.get(DEBUG_KEY):
        traceback.print_exc(file=sys.stderr)
    typer.echo(line, err=True)
    raise typer.Exit(code)


app = typer.Typer(
    cls=_Group,
    name="scenarist",
    help="Scenario tests for LLM agents. " + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scenarist {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
) -> None:
    """Scenario tests for LLM agents."""
    ctx.meta[DEBUG_KEY] = debug


app.command("run", help=run.HELP)(run.run)
app.command("report")(report.report)
app.command("demo")(demo.demo)
app.command("replay")(store.replay)
app.add_typer(store.traces_app, name="traces")
app.add_typer(store.items_app, name="items")
app.command("serve")(server.serve)
app.add_typer(server.keys_app, name="keys")
app.add_typer(server.db_app, name="db")
app.command("sync")(server.sync)
app.add_typer(judges.judges_app, name="judges")
