"""The console script's entry point: a clear message instead of a traceback when the
``cli`` extra (Typer) is not installed."""

from __future__ import annotations

import sys

__all__ = ["bare_ray_flag", "main"]

LOCAL_RAY = "local"

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
    args = list(sys.argv[1:] if argv is None else argv)
    supervised = argv is None and _is_run(args)
    if supervised:
        from scenarist.cli import _supervise

        if _supervise.supported():
            code = _supervise.start()  # forks: the parent waits, the child goes on
            if code is not None:
                return code
        else:
            supervised = False
    code = _run_app(args)
    if supervised:
        _supervise.finish(code)
    if argv is None:  # the process ends now: its last full collection need not walk the
        import gc  # modules and the run's results again (the OS takes the memory back)

        gc.freeze()
    return code


def _run_app(args: list[str]) -> int:
    from scenarist.cli.app import app

    try:
        app(args=bare_ray_flag(args), prog_name="scenarist")
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    return 0


def _is_run(args: list[str]) -> bool:
    """Whether the command line is ``scenarist [global options] run ...`` (not its help):
    the one command whose process runs user code, watched from a parent
    (:mod:`scenarist.cli._supervise`)."""
    command = next((arg for arg in args if not arg.startswith("-")), None)
    return command == "run" and not {"-h", "--help", "--version"} & set(args)


def bare_ray_flag(args: list[str]) -> list[str]:
    """``scenarist run ... --ray`` with no address means a local Ray: ``--ray local``.

    ``--ray`` takes the next word as its address unless it is missing, an option or an
    existing path (``scenarist run --ray tests/`` runs ``tests/`` on a local Ray); Typer
    has no options with an optional value, so the word is supplied here.
    """
    from pathlib import Path

    out: list[str] = []
    for position, arg in enumerate(args):
        out.append(arg)
        if arg != "--ray":
            continue
        following = args[position + 1] if position + 1 < len(args) else None
        if following is None or following.startswith("-") or Path(following).exists():
            out.append(LOCAL_RAY)
    return out
