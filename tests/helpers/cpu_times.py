"""Where the suite's CPU goes: a pytest plugin and its report (a measuring tool, not a test).

On a loaded machine a test's wall time says more about the neighbours than about the
test; its CPU time does not. With this plugin each test's CPU is written down: this
process's (every thread: the servers the tests start run in threads) and that of the
children it waited for (subprocesses, a browser closed with its module), one JSON line
per test in ``DIR/cpu-<xdist worker>.jsonl``::

    SCENARIST_TEST_CPU_REPORT=/tmp/cpu .venv/bin/python -m pytest -p tests.helpers.cpu_times -n 3
    .venv/bin/python -m tests.helpers.cpu_times /tmp/cpu [FILES [TESTS]]

The report prints the totals per worker, then the files and the tests costing most CPU.
A PostgreSQL server's own CPU is not counted (the cluster is not a child of the test).
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

REPORT_ENV = "SCENARIST_TEST_CPU_REPORT"
_out: list[IO[str]] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    folder = os.environ.get(REPORT_ENV)
    if not folder:
        yield
        return
    if not _out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder).mkdir(parents=True, exist_ok=True)
        _out.append(open(Path(folder) / f"cpu-{worker}.jsonl", "a", encoding="utf-8"))  # noqa: SIM115
    wall, (own, children) = time.monotonic(), _cpu()
    yield
    own_after, children_after = _cpu()
    row = {
        "id": item.nodeid,
        "self": own_after - own,
        "children": children_after - children,
        "wall": time.monotonic() - wall,
    }
    _out[0].write(json.dumps(row) + "\n")
    _out[0].flush()


def pytest_unconfigure(config: pytest.Config) -> None:
    while _out:
        _out.pop().close()


def report(folder: Path, files: int = 40, tests: int = 0) -> None:
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("cpu-*.jsonl")):
        mine = [json.loads(line) for line in path.read_text().splitlines()]
        rows += mine
        own, children, wall = (sum(r[key] for r in mine) for key in ("self", "children", "wall"))
        print(
            f"{path.stem}: {len(mine)} tests, CPU {own:.0f} s own + {children:.0f} s children, "
            f"wall {wall:.0f} s"
        )
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        total = by_file[row["id"].split("::")[0]]
        total[0] += row["self"]
        total[1] += row["children"]
        total[2] += row["wall"]
        total[3] += 1
    print("   CPU s    own  child   wall s  tests  file")
    ranked = sorted(by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for name, (own, children, wall, count) in ranked[:files]:
        print(f"{own + children:8.1f} {own:6.1f} {children:6.1f} {wall:8.1f} {count:6d}  {name}")
    if tests:
        print("   CPU s    own  child   wall s  test")
        for row in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:tests]:
            own, children = row["self"], row["children"]
            wall = row["wall"]
            print(f"{own + children:8.1f} {own:6.1f} {children:6.1f} {wall:8.1f}  {row['id']}")


if __name__ == "__main__":
    report(Path(sys.argv[1]), *(int(n) for n in sys.argv[2:4]))
