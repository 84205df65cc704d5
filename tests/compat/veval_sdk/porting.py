"""Port a Veval program to scenarist the way the compat contract allows: the import line
and the client construction change, nothing else.

The Veval import (``from veval import ...``, marked ``# IMPORT``) becomes a scenarist
import that keeps every name the program uses, renamed names aliased back
(``from scenarist import RunContext as VevalExecutionContext``; ``Step`` and ``StepData``
from ``scenarist.veval``, under their own names); the line marked
``# CLIENT`` becomes ``TestClient(ClientOptions(...))`` with the same options. A program
whose agent calls a model (its own fake server on 127.0.0.1) marks it ``# CLIENT live``:
Veval's test double lets the call through, scenarist's blocks live calls unless the client
is built with ``allow_live_llm_calls=True``, which the port adds (still only the client
construction).
"""

from __future__ import annotations

import ast
import re

__all__ = ["FROM_VEVAL_PACKAGE", "RENAMED", "port"]

RENAMED = {
    "VevalExecutionContext": "RunContext",
    "TraceData": "TraceRecord",
    "VevalRequestError": "RequestError",
    "VevalSendError": "SendError",
}
_CLIENT_NAMES = {"VevalSdk", "VevalTestSdk"}
# Veval's step constructors keep their names, from scenarist.veval: the table's rename of
# both to Span cannot keep both positional orders (Step(name, ...), StepData(step_id, ...)).
FROM_VEVAL_PACKAGE = {"Step", "StepData"}


def port(source: str) -> str:
    """The scenarist version of the Veval program ``source``."""
    tree = ast.parse(source)
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "veval"]
    if len(imports) != 1:
        raise ValueError("a Veval program has exactly one `from veval import ...`")
    node = imports[0]
    lines = source.splitlines()
    assert node.end_lineno is not None
    if not any("# IMPORT" in line for line in lines[node.lineno - 1 : node.end_lineno]):
        raise ValueError("mark the Veval import with `# IMPORT`")
    names = [a.name for a in node.names if a.name not in _CLIENT_NAMES]
    steps = [n for n in names if n in FROM_VEVAL_PACKAGE]
    ported = [f"{RENAMED[n]} as {n}" if n in RENAMED else n for n in names if n not in steps]
    replacement = [
        "from scenarist import " + ", ".join([*ported, "ClientOptions"]),
        "from scenarist.testing import TestClient",
    ]
    if steps:
        replacement.append("from scenarist.veval import " + ", ".join(steps))
    lines[node.lineno - 1 : node.end_lineno] = replacement
    text = "\n".join(lines) + "\n"
    client = re.compile(r"^(\w+) = VevalTestSdk\(VevalOptions\((.*)\)\)\s*# CLIENT( live)?$", re.M)
    if not client.search(text):
        raise ValueError("mark `sdk = VevalTestSdk(VevalOptions(...))` with `# CLIENT`")

    def construct(match: re.Match[str]) -> str:
        live = ", allow_live_llm_calls=True" if match[3] else ""
        return f"{match[1]} = TestClient(ClientOptions({match[2]}){live})"

    return client.sub(construct, text)
