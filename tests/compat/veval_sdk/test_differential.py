"""The same Veval programs on veval-sdk 1.4.0 and on scenarist, compared leaf by leaf.

Each program in ``programs/`` is written against Veval (its own offline test double,
``VevalTestSdk``, whose dashboard uploads go to a closed loopback port and are only
logged). :func:`~tests.compat.veval_sdk.porting.port` changes its import line and its
client construction, nothing else; both versions print their results as JSON, and every
leaf must agree except the differences in :data:`KNOWN`, each intended and explained, and
those in :data:`PENDING`: our bugs, seen and not fixed yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.compat.leaves import differences, leaves
from tests.compat.veval_sdk.porting import port
from tests.helpers.limits import HANG_S

import scenarist
import scenarist.testing.fake_providers

PROGRAMS = Path(__file__).parent / "programs"
# The scenarist under test (a worktree's ``src`` when PYTHONPATH names one), for the
# ported program: without it the subprocess would import the editable install's.
SCENARIST_SRC = Path(scenarist.__file__).parents[1]
# The fake provider server, stdlib only: copied beside each program as ``fake_llm`` so
# both sides start the same server (``from fake_llm import FakeLLMServer``).
FAKE_LLM = Path(scenarist.testing.fake_providers.__file__)

# (program, leaf path prefix) -> why scenarist answers differently, on purpose.
KNOWN = {
    ("step_shapes", "steps.1.parent"): "a step tracked inside another is its child: spec 04 "
    "§1, spans opened inside a span become its children ('real nesting, which Veval documents "
    "but its Python API cannot do'; Veval records every step at the top level)",
    ("hostile_inputs", "trace_backed.no steps"): "a recording with no steps fails its item: "
    "spec 04 §2, 'Where Veval is broken' (an empty recording is that item's failure, Replay "
    "trace '<id>' has no steps...; Veval's run_scenario raises)",
    ("replay_divergence", "scenario item"): "a trace-backed item whose step input changed "
    "fails with a diff: spec 04 §4, on_divergence 'fail' is the default in scenarios ('Veval "
    "silently serves the wrong output here'); replay_async and the double serve it, as Veval",
    ("replay_rich_inputs", "amount as float.fidelity"): "the number 19.99 does not match a "
    "recorded string '19.99': spec 04 §4, binding compares a canonical JSON form with types "
    "preserved ('the string \"1\" is not the number 1'; Veval compares a top-level string "
    "input as bare text, so it matches)",
    ("assertion_chains", "broken"): "an assertion that raises fails its item as ERROR and the "
    "other items still run: spec 04 §2, 'Where Veval is broken' (every item is isolated: an "
    "exception from an assertion is that item's failure; Veval's run_scenario raises)",
}


# (program, leaf path prefix) -> a difference that is our bug, not fixed yet: these leaves
# are expected to differ (the test fails once they agree, so the entry gets removed).
PENDING: dict[tuple[str, str], str] = {}


def run_program(
    python: Path | str, source: str, tmp_path: Path, name: str, pythonpath: str = ""
) -> dict[str, Any]:
    folder = tmp_path / name
    folder.mkdir()
    script = folder / f"{name}.py"
    script.write_text(source)
    (folder / "fake_llm.py").write_text(FAKE_LLM.read_text())
    env = {
        **os.environ,
        # Veval's test double still posts to its API: send it to a closed loopback port.
        "VEVAL_INTERNAL_ENDPOINT": "http://127.0.0.1:9",
        "SCENARIST_HOME": str(tmp_path / "home"),
        "PYTHONPATH": pythonpath,
        # The programs' SDK clients talk to their own fake server on 127.0.0.1 only.
        "NO_PROXY": "127.0.0.1,localhost",
    }
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env.pop(proxy, None)
    env.pop("SCENARIST_URL", None)
    done = subprocess.run(
        [str(python), str(script)], capture_output=True, text=True, timeout=HANG_S, env=env
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def under(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def known(program: str, path: str) -> bool:
    return any(p == program and under(k, path) for p, k in (*KNOWN, *PENDING))


@pytest.mark.parametrize("program", sorted(p.stem for p in PROGRAMS.glob("*.py")))
def test_veval_program_gives_the_same_results_on_scenarist(
    program: str, veval_sdks_python: Path, tmp_path: Path
) -> None:
    source = (PROGRAMS / f"{program}.py").read_text()
    veval = run_program(veval_sdks_python, source, tmp_path, f"{program}_veval")
    ours = run_program(
        sys.executable, port(source), tmp_path, f"{program}_scenarist", str(SCENARIST_SRC)
    )
    diff = differences(veval, ours)
    unexplained = {p: d for p, d in diff.items() if not known(program, p)}
    assert unexplained == {}, json.dumps(unexplained, indent=1, default=str)
    stale = [k for p, k in KNOWN if p == program and not any(under(k, d) for d in diff)]
    assert stale == [], f"known differences that no longer differ: {stale}"
    fixed = [k for p, k in PENDING if p == program and not any(under(k, d) for d in diff)]
    assert fixed == [], f"pending differences that agree now (remove them from PENDING): {fixed}"
    veval_leaves = leaves(veval)
    agreeing = sum(1 for p in veval_leaves if p not in diff)
    print(f"{program}: {agreeing}/{len(veval_leaves)} of Veval's result leaves agree")


def test_port_changes_only_the_import_and_the_client() -> None:
    source = (PROGRAMS / "traced_run.py").read_text()
    ported = port(source)
    changed = [
        line for line in ported.splitlines() if line not in source.splitlines() and line.strip()
    ]
    assert changed == [
        "from scenarist import RunContext as VevalExecutionContext, VevalOptions, ClientOptions",
        "from scenarist.testing import TestClient",
        'sdk = TestClient(ClientOptions(api_key="vk_test"))',
    ]
