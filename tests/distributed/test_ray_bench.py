"""``bench/ray_executor.py`` runs, at a tiny size, on the session's Ray (a smoke test like
those of ``tests/test_benchmarks.py``; starting a second Ray for it cost a minute of a
busy machine). Its command line (``main``: the re-run inside ``unshare -n``, then a Ray
of its own) is what this test does not run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.ray


# Starting the limiter actor's worker process took over 120 s with the suite beside two
# busy loops on two cores: the suite's per-test limit (pyproject.toml) is for hangs only.
def test_the_ray_benchmark_measures_and_reports_on_a_running_ray(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import ray_executor as bench
    finally:
        sys.path.remove(str(BENCH))
    numbers = bench.measure_on(ray_cluster, 8, [1], 1, actor_calls=20)
    bench.report(numbers)
    out = capsys.readouterr().out
    assert "workers  batches  suite s" in out
    (row,) = numbers["rows"]
    assert row["workers"] == 1 and row["batches"] >= 1
    assert numbers["limiter_actor"]["round_trip_ms"] > 0
