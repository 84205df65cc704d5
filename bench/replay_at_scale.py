"""Replay at scale: ``scenarist run --replay --parallel 16`` over 10,000 recorded scenarios
(not a test; issue 30 item 4).

Writes a scenario file (into a temp dir) whose module-level ``Suite`` holds ``N``
scenarios; each one's agent makes one ``openai`` SDK chat completion (``AsyncOpenAI``,
one client for the run) and a ``StringMatching`` check reads the answer. Then, each as its
own process, through the real CLI (``python -m scenarist run``):

1. **record**: ``run FILE --record --parallel P`` against ``FakeLLMServer`` on loopback
   (one cassette, ``.cassettes/<file>.jsonl``, ``N`` calls); the server is then stopped.
2. **replay**: ``run FILE --replay --parallel P``, timed: wall time and CPU time (user +
   system of the process and the run's forked child, ``RUSAGE_CHILDREN``). Every run must
   pass every scenario with a certificate of ``N replayed, 0 missed, 0 refused, 0 live``.
3. **floor**: the same ``N`` calls with no scenarist at all: a fresh Python imports
   ``openai``, serves each call from a minimal in-process ``httpx2.MockTransport``
   (``httpx2`` is the SDK's HTTP client; the cassette's recorded status, headers and
   body, looked up by the question) and makes them ``P`` at a time with ``asyncio`` (a
   semaphore), checking each answer. Same interpreter start and SDK import as the replay
   process: the SDK's own work.
4. **profile** (``--profiler``): the replay once more in one process
   (``SCENARIST_SUPERVISE=0``, so the run is in the measured process), its time split
   into components by the files of the running code: ``scenarist`` (``src/scenarist``),
   the SDK stack (``openai``, ``httpx2``, ``httpcore``, ``h11``, ``jiter``, ...), the
   scenario file itself, the event loop (``asyncio``, ``selectors``). Builtins, the rest
   of the standard library (``json``, ``re``, ``sqlite3``...) and packages both sides use
   (``pydantic``, ``anyio``) or only we use (``sqlalchemy``, ``rich``, ``typer``) have no
   owner of their own: their time counts for the nearest caller that has one.

   * ``sample`` (default): a ``SIGPROF`` timer every ``--interval`` s of CPU time; the
     handler, run by the main thread at its next bytecode, walks the stack: the sample
     is the innermost frame's component that has one (exact, as the whole stack is
     known). Also by phase (the scenarist function under ``cli/run.py:run``) and by
     scenarist function (the innermost scenarist frame). Signals that arrive during one
     long C call count once, so such calls are under-counted.
   * ``cprofile``: each function's own time (cProfile), given up the call graph to the
     callers that have a component, split by the time each caller spent in it (cProfile
     keeps one level of callers, so this is an estimate); cProfile's per-call cost
     weighs most on code with many small calls (the SDK's request building).

Before any of it, scenarist's modules are byte-compiled (``compileall``), as an installed
package's are and as the SDK's are: a source tree in an environment with
``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile them again in every replay.

5. **engine only** (``--repeat`` times, after the pairs): the same scenario file's suite
   through ``Suite.each_result`` inside the cassette, in a fresh Python, results dropped:
   no CLI, run log, database, JUnit or report. The bound of what trimming the CLI's part
   could reach: its overhead against the floor is printed beside the command's.

Figures, medians over ``--repeat`` alternated replay/floor pairs:

* scenarios/s = ``N`` / replay wall time (the whole command: start, imports, building the
  scenarios, the run, the run log and the database write, the report);
* overhead (floor) = (replay - floor) / replay, on CPU time and on wall time;
* overhead (profile) = scenarist's share of the profile (the event loop and
  unattributed shown apart).

The target: overhead (floor, CPU) <= 20 %.

    .venv/bin/python bench/replay_at_scale.py [--n 10000] [--parallel 16] [--repeat 3]
        [--profiler sample|cprofile|none] [--interval S] [--top 25] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET = 0.20  # our share of the replay's time (issue 30 item 4)

SCENARIOS = '''
"""N scenarios, each one openai SDK call (bench/replay_at_scale.py)."""
import os

import openai

from scenarist import Scenario, StringMatching, Suite

N = int(os.environ["SCALE_N"])
BASE = os.environ["SCALE_BASE_URL"]
_client = []


def _llm():
    if not _client:  # made in the run, on its event loop
        _client.append(openai.AsyncOpenAI(base_url=BASE, api_key="sk-bench", max_retries=0))
    return _client[0]


async def agent(question):
    reply = await _llm().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
    )
    return reply.choices[0].message.content


suite = Suite(name="replay-at-scale", target=agent)
for i in range(N):
    suite.append(
        Scenario(f"s{i:05d}").interact(f"question <q{i}>").check(StringMatching(keyword=f"<q{i}>"))
    )
'''

ENGINE_ONLY = '''
"""The bound: the same scenarios through the engine alone, no CLI (no run log, database,
JUnit or report): Suite.each_result inside the cassette, each result dropped."""
import asyncio
import sys

from scenarist.replay.cassette import cassette

import scale_scenarios

passed = 0


async def sink(index, result):
    global passed
    passed += result.passed


async def main():
    async with cassette(sys.argv[1], "replay") as tape:
        suite, cap = scale_scenarios.suite, int(sys.argv[2])
        await suite.each_result(sink, parallel=True, max_concurrency=cap)
    assert passed == scale_scenarios.N and tape.stats.replayed == scale_scenarios.N, tape.stats
    print(f"engine only: {passed} passed, {tape.stats.replayed} replayed")


asyncio.run(main())
'''

FLOOR = '''
"""The SDK's own work: the same calls from a MockTransport, no scenarist."""
import asyncio
import json
import sys

import httpx2
import openai

cassette, n, parallel, base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
recorded = {}
with open(cassette) as lines:
    next(lines)  # the header
    for line in lines:
        call = json.loads(line)
        answer = call["response"]
        recorded[call["request"]["body"]["messages"][-1]["content"]] = (
            answer["status"], answer["headers"], json.dumps(answer["body"]).encode()
        )


def serve(request):
    status, headers, body = recorded[json.loads(request.content)["messages"][-1]["content"]]
    return httpx2.Response(status, headers=headers, content=body)


async def main():
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(serve))  # the SDK's client
    async with openai.AsyncOpenAI(
        base_url=base, api_key="sk-bench", max_retries=0, http_client=http
    ) as llm:
        gate = asyncio.Semaphore(parallel)

        async def one(i):
            async with gate:
                reply = await llm.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": f"question <q{i}>"}]
                )
                assert f"<q{i}>" in reply.choices[0].message.content

        await asyncio.gather(*(one(i) for i in range(n)))
    print(f"floor: {n} calls")


asyncio.run(main())
'''

SAMPLER = '''
"""``scenarist run`` sampled: every ``INTERVAL`` s of CPU time (``SIGPROF``), the stack the
main thread is running (the handler runs in it, at its next bytecode)."""
import json
import signal
import sys

out, interval = sys.argv[1], float(sys.argv[2])
samples = []


def sample(signum, frame):
    stack = []
    while frame is not None:
        code = frame.f_code
        stack.append((code.co_filename, code.co_firstlineno, code.co_name))
        frame = frame.f_back
    samples.append(stack)


signal.signal(signal.SIGPROF, sample)
signal.setitimer(signal.ITIMER_PROF, interval, interval)
from scenarist.cli._entry import main  # noqa: E402

try:
    code = main(sys.argv[3:])
finally:
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    with open(out, "w") as f:
        json.dump(samples, f)
raise SystemExit(code)
'''

# pydantic (and its helpers) serve both: scenarist's models and the SDK's are pydantic
# models, so pydantic's time counts for its caller, as the standard library's does.
SDK = ("openai", "httpx2", "httpx", "httpcore", "h11", "jiter", "distro", "sniffio", "certifi")
LOOP = ("asyncio", "selectors")
CERTIFICATE = re.compile(
    r"replay certificate: (\d+) replayed, (\d+) missed, (\d+) refused, (\d+) live"
)
PASSED = re.compile(r"(\d+) scenarios: (\d+) passed")


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of a child process (and its waited-for children), its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return wall, cpu, proc.stdout


def _check_replay(out: str, n: int) -> None:
    cert = CERTIFICATE.search(out)
    passed = PASSED.search(out)
    if cert is None or cert.groups() != (str(n), "0", "0", "0") or passed is None:
        raise SystemExit(f"the replay did not replay all {n} calls, none live:\n{out}")
    if passed.groups() != (str(n), str(n)):
        raise SystemExit(f"not every scenario passed:\n{out}")


def component(filename: str, scenario_file: str) -> str | None:
    """The component a function's file belongs to; ``None``: its callers' (builtins,
    the standard library outside the event loop, other packages)."""
    if filename == scenario_file:
        return "scenario file"
    path = filename.replace("\\", "/")
    if "/src/scenarist/" in path:
        return "scenarist"
    if "site-packages/" in path:
        package = path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
        return "SDK stack" if package in SDK else None
    parts = path.split("/")
    if len(parts) >= 2 and (parts[-2] in LOOP or parts[-1].removesuffix(".py") in LOOP):
        return "event loop"
    return None


def attribute(stats_file: Path, scenario_file: str) -> tuple[dict[str, float], list[tuple]]:
    """Seconds of own time per component (see the module's docstring), and the profile's
    rows for the top list: (own seconds, cumulative seconds, calls, where, component)."""
    raw: dict[Any, Any] = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    owners = {func: component(func[0], scenario_file) for func in raw}
    seconds: dict[str, float] = {}
    pending: dict[Any, float] = {}
    rows = []
    for func, (_cc, nc, tt, ct, _callers) in raw.items():
        owner = owners[func]
        if owner is None:
            pending[func] = pending.get(func, 0.0) + tt
        else:
            seconds[owner] = seconds.get(owner, 0.0) + tt
        where = f"{func[0].split('site-packages/')[-1].split('/src/')[-1]}:{func[1]}({func[2]})"
        rows.append((tt, ct, nc, where, owner or "-"))
    for _ in range(100):  # up the call graph, one level a round (cycles fade out)
        moved: dict[Any, float] = {}
        for func, mass in pending.items():
            weights = {c: e[3] for c, e in raw[func][4].items() if c in raw and e[3] > 0}
            total = sum(weights.values())
            if total <= 0:
                seconds["unattributed"] = seconds.get("unattributed", 0.0) + mass
                continue
            for caller, weight in weights.items():
                part = mass * weight / total
                owner = owners[caller]
                if owner is None:
                    moved[caller] = moved.get(caller, 0.0) + part
                else:
                    seconds[owner] = seconds.get(owner, 0.0) + part
        pending = moved
        if not pending:
            break
    rest = sum(pending.values())
    if rest:
        seconds["unattributed"] = seconds.get("unattributed", 0.0) + rest
    rows.sort(reverse=True)
    return seconds, rows


def sampled(
    samples_file: Path, scenario_file: str
) -> tuple[dict[str, float], dict[str, int], dict[str, int], dict[str, int]]:
    """Samples per component (a sample belongs to the innermost frame of the stack that
    has a component: builtins and the standard library count for their caller); per
    scenarist function (the innermost scenarist frame of a scenarist sample); per phase
    (the outermost scenarist frame below ``cli/run.py:run``)."""
    stacks = json.loads(samples_file.read_text())
    counts: dict[str, float] = {}
    ours: dict[str, int] = {}
    packages: dict[str, int] = {}
    phases: dict[str, int] = {}
    for stack in stacks:
        owner, where = "unattributed", ""
        for filename, line, name in stack:
            found = component(filename, scenario_file)
            if found is not None:
                owner = found
                where = f"{filename.split('/src/')[-1]}:{line}({name})"
                break
        counts[owner] = counts.get(owner, 0) + 1
        if owner == "scenarist":
            ours[where] = ours.get(where, 0) + 1
            package = where.split(":", 1)[0].rsplit("/", 1)[0]
            packages[package] = packages.get(package, 0) + 1
        inside = [f for f in stack if "/src/scenarist/" in f[0]]
        phase = "outside cli/run.py:run (start, imports, exit)"
        for k, (filename, _line, name) in enumerate(inside):
            if filename.endswith("cli/run.py") and name == "run":
                if k > 0:
                    below = inside[k - 1]
                    phase = f"{below[0].split('/src/')[-1]}:{below[1]}({below[2]})"
                else:
                    phase = "cli/run.py:run itself"
                break
        phases[f"{phase} [{owner}]"] = phases.get(f"{phase} [{owner}]", 0) + 1
    return counts, ours, packages, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="scenarios (one call each)")
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3, help="replay/floor pairs, alternated")
    parser.add_argument(
        "--profiler",
        choices=("sample", "cprofile", "none"),
        default="sample",
        help="how the replay's time is split between scenarist and the SDK",
    )
    parser.add_argument("--interval", type=float, default=0.002, help="sampling period, s")
    parser.add_argument("--top", type=int, default=25, help="profile rows printed")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args()
    n, parallel = args.n, str(args.parallel)

    import compileall

    import scenarist
    from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

    # Like with like: the SDK is an installed package, its modules compiled (pip writes
    # the .pyc files); scenarist may be a source tree in an environment that never writes
    # them (PYTHONDONTWRITEBYTECODE=1 here), which would charge every replay ~0.25 s of
    # compiling. compileall writes them whatever that variable says.
    package = Path(scenarist.__file__).parent
    compiled = compileall.compile_dir(str(package), quiet=1)
    print(f"scenarist's modules compiled ({package}): {'ok' if compiled else 'FAILED'}")

    with tempfile.TemporaryDirectory(prefix="replay-at-scale-") as tmp:
        root = Path(tmp)
        scenario_file = root / "scale_scenarios.py"
        scenario_file.write_text(SCENARIOS)
        (root / "floor.py").write_text(FLOOR)
        env = {
            **os.environ,
            "SCALE_N": str(n),
            "SCENARIST_HOME": str(root / "home"),
            "GISKARD_TELEMETRY_DISABLED": "1",
            "DO_NOT_TRACK": "1",
        }
        env.pop("SCENARIST_URL", None)  # no upload
        run = [sys.executable, "-m", "scenarist", "run", scenario_file.name, "-q"]
        run += ["--parallel", parallel]

        script = ScriptedLLM(lambda r: Reply(f"answer to {r.text}", tokens_in=11, tokens_out=4))
        with FakeLLMServer(script) as server:
            env["SCALE_BASE_URL"] = server.openai_url
            record_wall, _, _ = _timed([*run, "--record"], env, root)
        cassette = root / ".cassettes" / "scale_scenarios.jsonl"
        calls = len(cassette.read_text().splitlines()) - 1
        assert calls == n, f"recorded {calls} calls, expected {n}"
        print(f"recorded {n} scenarios in {record_wall:.1f} s (the server is now stopped)")

        base_url = env["SCALE_BASE_URL"]
        floor_cmd = [sys.executable, "floor.py", str(cassette), str(n), parallel, base_url]
        replays: list[tuple[float, float]] = []
        floors: list[tuple[float, float]] = []
        for k in range(args.repeat):
            pair = ["replay", "floor"] if k % 2 == 0 else ["floor", "replay"]
            for which in pair:
                if which == "replay":
                    wall, cpu, out = _timed([*run, "--replay"], env, root)
                    _check_replay(out, n)
                    replays.append((wall, cpu))
                else:
                    wall, cpu, _ = _timed(floor_cmd, env, root)
                    floors.append((wall, cpu))
                print(f"  {which:6} wall {wall:7.2f} s  cpu {cpu:7.2f} s")
        (root / "engine_only.py").write_text(ENGINE_ONLY)
        engine_cmd = [sys.executable, "engine_only.py", str(cassette), parallel]
        engines = []
        for _ in range(args.repeat):
            wall, cpu, _ = _timed(engine_cmd, env, root)
            engines.append((wall, cpu))
            print(f"  engine wall {wall:7.2f} s  cpu {cpu:7.2f} s")
        e_cpu = statistics.median(c for _, c in engines)
        r_wall = statistics.median(w for w, _ in replays)
        r_cpu = statistics.median(c for _, c in replays)
        f_wall = statistics.median(w for w, _ in floors)
        f_cpu = statistics.median(c for _, c in floors)
        results: dict[str, Any] = {
            "scenarios": n,
            "parallel": args.parallel,
            "replay_wall_s": r_wall,
            "replay_cpu_s": r_cpu,
            "floor_wall_s": f_wall,
            "floor_cpu_s": f_cpu,
            "scenarios_per_s": n / r_wall,
            "floor_calls_per_s": n / f_wall,
            "overhead_cpu": (r_cpu - f_cpu) / r_cpu,
            "overhead_wall": (r_wall - f_wall) / r_wall,
            "runs": {"replay": replays, "floor": floors},
            "engine_only_cpu_s": e_cpu,
            "overhead_engine_only_cpu": (e_cpu - f_cpu) / e_cpu,
            "load_average": os.getloadavg(),
        }

        if args.profiler == "sample":
            (root / "sampler.py").write_text(SAMPLER)
            samples_file = root / "samples.json"
            sampler = [sys.executable, str(root / "sampler.py"), str(samples_file)]
            sampler += [str(args.interval), *run[3:]]
            _timed([*sampler, "--replay"], {**env, "SCENARIST_SUPERVISE": "0"}, root)
            counts, ours, packages, phases = sampled(samples_file, str(scenario_file))
            total = sum(counts.values())
            results["profile_seconds"] = {k: v * args.interval for k, v in counts.items()}
            results["profile_samples"] = counts
            results["overhead_profile"] = counts.get("scenarist", 0) / total
            print(f"\nsampled replay (one process, {total:,} samples of the main thread):")
            for name, value in sorted(counts.items(), key=lambda kv: -kv[1]):
                print(f"  {name:14} {value:7,} samples  {value / total:6.1%}")
            print("\nby phase (the scenarist function under cli/run.py:run) [component]:")
            for name, value in sorted(phases.items(), key=lambda kv: -kv[1])[: args.top]:
                print(f"  {value / total:6.1%}  {name}")
            print("\nscenarist's samples by package (the innermost scenarist frame's folder):")
            for name, value in sorted(packages.items(), key=lambda kv: -kv[1]):
                print(f"  {value / total:6.1%}  {name}")
            print(f"\ntop {args.top} scenarist functions (innermost scenarist frame):")
            for name, value in sorted(ours.items(), key=lambda kv: -kv[1])[: args.top]:
                print(f"  {value / total:6.1%}  {name}")
        elif args.profiler == "cprofile":
            profile = root / "replay.prof"
            profiled = [sys.executable, "-m", "cProfile", "-o", str(profile), *run[1:]]
            _timed([*profiled, "--replay"], {**env, "SCENARIST_SUPERVISE": "0"}, root)
            seconds, rows = attribute(profile, str(scenario_file))
            total = sum(seconds.values())
            results["profile_seconds"] = seconds
            results["overhead_profile"] = seconds.get("scenarist", 0.0) / total
            print(f"\nprofiled replay (cProfile, one process): {total:.2f} s of own time")
            for name, value in sorted(seconds.items(), key=lambda kv: -kv[1]):
                print(f"  {name:14} {value:7.2f} s  {value / total:6.1%}")
            print(f"\ntop {args.top} functions by own time:")
            print(f"  {'own s':>7} {'cum s':>7} {'calls':>9}  component     function")
            for tt, ct, nc, where, owner in rows[: args.top]:
                print(f"  {tt:7.2f} {ct:7.2f} {nc:9,}  {owner:12}  {where}")
            print(f"\ntop {args.top} scenarist functions by cumulative time:")
            ours = sorted((r for r in rows if r[4] == "scenarist"), key=lambda r: -r[1])
            for tt, ct, nc, where, _ in ours[: args.top]:
                print(f"  {tt:7.2f} {ct:7.2f} {nc:9,}  {where}")

    print(f"\nreplay, {n:,} scenarios, --parallel {args.parallel} (median of {args.repeat}):")
    print(f"  scenarist run --replay: {r_wall:.2f} s wall, {r_cpu:.2f} s CPU -> "
          f"{n / r_wall:,.0f} scenarios/s")  # fmt: skip
    print(f"  floor (openai SDK + MockTransport, no scenarist): {f_wall:.2f} s wall, "
          f"{f_cpu:.2f} s CPU -> {n / f_wall:,.0f} calls/s")  # fmt: skip
    print(f"  our overhead, (replay - floor) / replay: {results['overhead_cpu']:.1%} of CPU, "
          f"{results['overhead_wall']:.1%} of wall")  # fmt: skip
    print(f"  the engine alone (no CLI, run log, database, report): {e_cpu:.2f} s CPU, "
          f"overhead {results['overhead_engine_only_cpu']:.1%}")  # fmt: skip
    if "overhead_profile" in results:
        print(f"  our overhead, scenarist's share of the {args.profiler} profile: "
              f"{results['overhead_profile']:.1%}")  # fmt: skip
    verdict = "meets" if results["overhead_cpu"] <= TARGET else "MISSES"
    print(f"  {verdict} the target: overhead <= {TARGET:.0%} (CPU, against the floor)")
    print(f"  load average {results['load_average'][0]:.2f} (2 cores shared)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
