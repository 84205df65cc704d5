"""The console script's entry point: a clear message instead of a traceback when the
``cli`` extra (Typer) is not installed."""

from __future__ import annotations

import sys

__all__ = ["main"]

MISSING_TYPER = (
    "scenarist: the command line needs Typer, which is not installed; "
    "run: pip install 'scenarist[cli]'"
)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        import typer  # noqa: F401
    except ImportError:
        sys.stderr.write(MISSING_TYPER + "\n")
        return 2
    from scenarist.cli.app import app

    try:
        app(args=argv, prog_name="scenarist")
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    return 0
