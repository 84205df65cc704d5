"""How every command's ``--help`` reads: flags as flags, values named in capitals
(``--junit FILE``, not ``--junit <path>``), one example per command, 80 columns.

:func:`polish` walks the command tree once it is built (the root group calls it) and
sets each parameter's metavar and each command's example epilog from the tables below;
a test renders every command's help at ``COLUMNS=80`` and fails on a command without an
example or a line too long.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["EXAMPLES", "polish"]

EXAMPLES = {
    "": "scenarist run tests/scenarios --parallel 4",
    "run": "scenarist run tests/scenarios -k refund --parallel 4 --junit out.xml",
    "report": "scenarist report last --format html -o report.html",
    "demo": "scenarist demo",
    "replay": "scenarist replay tr_1234 --agent my_app.agent:run",
    "serve": "scenarist serve --port 8480",
    "sync": "scenarist sync --url http://scenarist.internal:8480",
    "traces": "scenarist traces list --agent support --status error",
    "traces list": "scenarist traces list --agent support --since 1d",
    "traces export": "scenarist traces export tr_1234 -o trace.json",
    "traces import": "scenarist traces import otlp.json",
    "items": "scenarist items list refunds",
    "items list": "scenarist items list refunds",
    "items export": "scenarist items export refunds -o items.json",
    "items import": "scenarist items import refunds items.json",
    "items add": "scenarist items add refunds --trace tr_1234",
    "keys": "scenarist keys create --name ci --scope ingest",
    "keys create": "scenarist keys create --name ci --scope ingest --project support",
    "keys list": "scenarist keys list",
    "keys revoke": "scenarist keys revoke 3f9a0c1d2e4b",
    "db": "scenarist db upgrade",
    "db upgrade": "scenarist db upgrade --database-url postgresql://ci@db/scenarist",
    "db prune": "scenarist db prune --days 90",
    "judges": "scenarist judges calibrate labels.yaml --judge openai/gpt-4o-mini",
    "judges calibrate": "scenarist judges calibrate labels.yaml --judge openai/gpt-4o-mini",
}

# Metavars by parameter name (else the name in capitals; choices as {a|b|c}).
_METAVARS = {
    "keyword": "EXPR",
    "tag": "KEY[:VALUE]",
    "parallel": "N",
    "repeat": "K",
    "junit": "FILE",
    "json_file": "FILE",
    "output": "FILE",
    "fail_under": "RATE",
    "baseline": "RUN",
    "project": "NAME",
    "target": "MODULE:FUNCTION",
    "database_url": "URL",
    "url": "URL",
    "from_server": "URL",
    "api_key": "KEY",
    "allowed_host": "HOST",
    "trusted_proxy": "ADDRESS",
    "port": "PORT",
    "host": "HOST",
    "days": "DAYS",
    "agent": "MODULE:FUNCTION",
    "agent_name": "NAME",
    "status": "STATUS",
    "since": "WHEN",
    "limit": "N",
    "name": "NAME",
    "scope": "SCOPE",
    "trace": "TRACE",
    "paths": "PATH",
    "trace_ids": "TRACE_ID",
    "runlog": "RUN",
    "scenario": "SCENARIO",
    "key_id": "KEY_ID",
    "path": "FILE",
    "labels": "FILE",
    "judge": "MODEL",
    "min_kappa": "KAPPA",
}


def _metavar(param: Any) -> str:
    choices = getattr(getattr(param, "type_descriptor", None), "choices", None)
    if choices:
        return "{" + "|".join(str(getattr(c, "value", c)) for c in choices) + "}"
    name = str(param.name or "value")
    return _METAVARS.get(name, name.upper())


def _label(text: str, ctx: Any = None) -> str:
    return text


def polish(command: Any, path: str = "") -> None:
    """Set metavars and the example epilog on ``command`` and everything under it.

    Typer renders a value's type (``<path>``, ``<list[str]>``, ``<bool>``); the label
    here replaces it per parameter (flags show none), and arguments read ``PATH...``
    in the usage line."""
    example = EXAMPLES.get(path)
    if example is not None and not command.epilog:
        command.epilog = f"\b\nExample:\n  {example}"
    for param in getattr(command, "params", []):
        if getattr(param, "is_flag", False) or param.name in ("help", "version"):
            continue
        label = _metavar(param)
        param.display_type_rich = functools.partial(_label, label)
        if param.param_type_name == "argument":
            usage = label + ("..." if param.nargs != 1 else "")
            usage = usage if param.required else f"[{usage}]"
            param.display_type_rich = functools.partial(_label, "")
            param._usage_display_name = functools.partial(_label, usage)
            param._rich_display_name = functools.partial(_label, usage)
    for name, sub in getattr(command, "commands", {}).items():
        polish(sub, f"{path} {name}".strip())
