"""The verdict of a ``scenarist run`` whose process ended without its own (see
:mod:`scenarist.cli._supervise`): written by the parent from the run log the child
streamed, so a CI job sees an error and a JUnit file, never a silent exit 0."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from scenarist.errors import RunLogError
from scenarist.formats.runlog import RunLog, read_jsonl
from scenarist.model.results import ScenarioResult, StepError, SuiteResult, TestCaseResult

__all__ = ["report_interrupted_run"]


def report_interrupted_run(plan: dict[str, Any], how: str, code: int) -> int:
    """Print the verdict line of a run whose process ``how`` (``exited with code 0``),
    write its JUnit file when one was asked for, and return ``code``."""
    path = Path(plan["run_log"])
    names: list[str] = list(plan.get("scenarios") or [])
    log: RunLog | None
    try:
        log = read_jsonl(path)
    except (OSError, RunLogError):
        log = None
    finished = {record.index for record in log.scenarios} if log is not None else set()
    running = _running(names, list(plan.get("groups") or [len(names)]), plan, finished)
    shown = ", ".join(repr(names[i]) for i in running)
    where = f" while running {shown}" if running else ""
    state = (
        "is unreadable"
        if log is None
        else "is complete"
        if log.footer is not None
        else f"is incomplete: {len(finished)} of {len(names)} scenarios finished"
    )
    lines = [
        f"scenarist: ERROR (exit {code}): the run ended without its verdict: its process "
        f"{how}{where} (os._exit, or a crash, in user code?); the run log {path} {state}"
    ]
    junit = plan.get("junit")
    if junit:
        full = bool(plan.get("junit_full"))
        lines.insert(0, _write_junit(Path(junit), log, names, running, how, full=full))
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return code


def _running(
    names: list[str], groups: list[int], plan: dict[str, Any], finished: set[int]
) -> list[int]:
    """The scenarios that were running: the first unfinished ones of the first file with
    any, as many as ran at once (the progress display's rule)."""
    parallel = max(1, int(plan.get("parallel") or 1))
    start = 0
    for end in groups:
        pending = [i for i in range(start, min(end, len(names))) if i not in finished]
        if pending:
            return pending[:parallel]
        start = end
    return []


def _write_junit(
    path: Path,
    log: RunLog | None,
    names: list[str],
    running: list[int],
    how: str,
    *,
    full: bool = False,
) -> str:
    """The JUnit file from the run log, in the form ``scenarist run --junit`` writes
    (compact unless ``--junit-full``; no ``file`` attributes: the parent did not import
    the scenario files)."""
    from scenarist.report.junit import to_junit_xml

    results: list[tuple[int, ScenarioResult]] = []
    suite_name = None
    started_at = None
    if log is not None:
        results = [(record.index, record.result) for record in log.scenarios]
        suite_name, started_at = log.header.suite_name, log.header.started_at
    for index in running:
        message = (
            f"the run's process {how} while this scenario was running (os._exit, or a crash, "
            "in user code?); its result is unknown"
        )
        step = TestCaseResult(
            error=StepError(message=message, exception_type="ProcessEnded", phase="outputs")
        )
        results.append((index, ScenarioResult(scenario_name=names[index], steps=[step])))
    result = SuiteResult(
        results=[r for _, r in sorted(results, key=lambda pair: pair[0])],
        suite_name=suite_name,
        started_at=started_at,
        incomplete=True,
    )
    try:
        compact: dict[str, Any] = (
            {} if full else {"trace_properties": False, "system_out": "failing"}
        )
        to_junit_xml(result, path, ascii_text=True, **compact)
    except OSError as exc:
        return f"error: cannot write the JUnit file {path}: {exc.strerror or exc}"
    return f"JUnit: {path} (from the run log; each scenario that was running as an error)"
