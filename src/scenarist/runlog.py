"""The run log: the complete record of one run, and the contract between the library, the
CLI, the pytest plugin and the server.

A run log is JSON Lines: a :class:`RunLogHeader` line (run id, suite, environment,
settings), then one :class:`ScenarioRecord` line per scenario as it finishes, then a
:class:`RunLogFooter` line with the totals. Writers append line by line, so a log streams
while a run is going and a crashed run still leaves a readable file (without a footer).
Every line carries ``record_type``; the header carries ``format_version``.

The models are the source of truth. ``src/scenarist/schemas/runlog.schema.json`` is
generated from them (``python -m scenarist.runlog``) and a test checks it is current, so
any change to the contract shows up in review. Readers accept older versions: each line
is upgraded through :data:`MIGRATIONS` before validation.
"""

from __future__ import annotations

import json
import platform
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from importlib import metadata
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from scenarist._version import __version__
from scenarist.errors import UserError
from scenarist.results import ScenarioResult, SuiteResult

__all__ = [
    "FORMAT_VERSION",
    "MIGRATIONS",
    "SCHEMA_PATH",
    "RunEnvironment",
    "RunLog",
    "RunLogFooter",
    "RunLogHeader",
    "RunSettings",
    "ScenarioRecord",
    "collect_environment",
    "json_schema",
    "read_jsonl",
    "run_log_from_suite_result",
    "write_jsonl",
]

FORMAT_VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schemas" / "runlog.schema.json"
_PACKAGES = ("scenarist", "pydantic", "rich", "anyio")


class RunEnvironment(BaseModel):
    """Where the run happened: enough to tell two runs' machines and code apart."""

    git_commit: str | None = None
    git_branch: str | None = None
    python_version: str = Field(default_factory=platform.python_version)
    platform: str = Field(default_factory=platform.platform)
    hostname: str | None = None
    packages: dict[str, str] = Field(default_factory=dict)


class RunSettings(BaseModel):
    """The settings that change what a run means (an older log's ``target_name``, which
    nothing read, is ignored on read)."""

    concurrency: int | None = None
    repeat: int = 1


class RunLogHeader(BaseModel):
    """The first line of a run log."""

    record_type: Literal["header"] = "header"
    format_version: int = FORMAT_VERSION
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    suite_name: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    environment: RunEnvironment = Field(default_factory=RunEnvironment)
    settings: RunSettings = Field(default_factory=RunSettings)


class ScenarioRecord(BaseModel):
    """One scenario's result with its full trace, plus its cost and token totals.

    ``check_count`` is the number of check verdicts; a passing scenario with 0 is flagged
    ``no_checks`` so that readers (the dashboard, ``scenarist report``) never show an
    untested scenario as a tested pass.
    """

    record_type: Literal["scenario"] = "scenario"
    index: int
    result: ScenarioResult
    check_count: int = 0
    no_checks: bool = False
    flaky: bool = False
    cost_usd: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0

    @classmethod
    def from_result(cls, index: int, result: ScenarioResult) -> ScenarioRecord:
        return cls(
            index=index,
            result=result,
            check_count=result.check_count,
            no_checks=not result.has_checks,
            flaky=result.flaky,
            cost_usd=result.cost_usd,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
        )


class RunLogFooter(BaseModel):
    """The last line: totals of the whole run."""

    record_type: Literal["footer"] = "footer"
    ended_at: datetime | None = None
    duration_ms: int = 0
    passed_count: int = 0
    failed_count: int = 0
    errored_count: int = 0
    skipped_count: int = 0
    pass_rate: float | None = None
    cost_usd: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    recommendation: str | None = None


RunLogRecord = Annotated[
    RunLogHeader | ScenarioRecord | RunLogFooter, Field(discriminator="record_type")
]
_RECORD: TypeAdapter[RunLogHeader | ScenarioRecord | RunLogFooter] = TypeAdapter(RunLogRecord)


class RunLog(BaseModel):
    """A whole run log in memory: header, scenario records, footer (``None`` if cut off)."""

    header: RunLogHeader
    scenarios: list[ScenarioRecord] = Field(default_factory=list)
    footer: RunLogFooter | None = None

    def records(self) -> list[RunLogHeader | ScenarioRecord | RunLogFooter]:
        footer = [self.footer] if self.footer is not None else []
        return [self.header, *self.scenarios, *footer]

    def to_suite_result(self) -> SuiteResult:
        """The suite result again, e.g. to re-render a report from a saved run."""
        footer = self.footer or RunLogFooter()
        return SuiteResult(
            results=[r.result for r in sorted(self.scenarios, key=lambda r: r.index)],
            duration_ms=footer.duration_ms,
            suite_name=self.header.suite_name,
            started_at=self.header.started_at,
            recommendation=footer.recommendation,
        )


def run_log_from_suite_result(
    result: SuiteResult,
    *,
    run_id: str | None = None,
    settings: RunSettings | None = None,
    environment: RunEnvironment | None = None,
) -> RunLog:
    """The run log of a finished suite run (environment collected now unless given)."""
    ended_at = None
    if result.started_at is not None:
        ended_at = result.started_at + timedelta(milliseconds=result.duration_ms)
    header = RunLogHeader(
        suite_name=result.suite_name,
        started_at=result.started_at,
        ended_at=ended_at,
        environment=environment if environment is not None else collect_environment(),
        settings=settings or RunSettings(),
        **({"run_id": run_id} if run_id else {}),
    )
    footer = RunLogFooter(
        ended_at=ended_at,
        duration_ms=result.duration_ms,
        passed_count=result.passed_count,
        failed_count=result.failed_count,
        errored_count=result.errored_count,
        skipped_count=result.skipped_count,
        pass_rate=result.pass_rate,
        cost_usd=result.cost_usd,
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        recommendation=result.recommendation,
    )
    records = [ScenarioRecord.from_result(i, r) for i, r in enumerate(result.results)]
    return RunLog(header=header, scenarios=records, footer=footer)


def write_jsonl(
    records: RunLog | Iterable[BaseModel], path: str | PathLike[str], *, append: bool = False
) -> None:
    """Write a run log (or some of its records) as JSON Lines; ``append`` adds to a file.

    Values that JSON cannot hold (an object used as outputs) are written as their ``str``.
    """
    items = records.records() if isinstance(records, RunLog) else list(records)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a" if append else "w", encoding="utf-8") as handle:
        for record in items:
            handle.write(record.model_dump_json(fallback=str) + "\n")


def read_jsonl(path: str | PathLike[str]) -> RunLog:
    """Read a run log written by any version of scenarist, migrating old records."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise UserError(f"run log {str(path)!r} is empty; expected a header line first")
    raw = [json.loads(line) for line in lines]
    version = raw[0].get("format_version", 0)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise UserError(
            f"run log {str(path)!r} has format_version {version!r}, newer than this "
            f"scenarist supports ({FORMAT_VERSION}); upgrade scenarist to read it"
        )
    for step in range(version, FORMAT_VERSION):
        raw = MIGRATIONS[step](raw)
    parsed = [_RECORD.validate_python(item) for item in raw]
    header = parsed[0]
    if not isinstance(header, RunLogHeader):
        raise UserError(f"run log {str(path)!r} does not start with a header line")
    scenarios = [r for r in parsed if isinstance(r, ScenarioRecord)]
    footers = [r for r in parsed if isinstance(r, RunLogFooter)]
    return RunLog(header=header, scenarios=scenarios, footer=footers[-1] if footers else None)


def _v0_to_v1(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v0 (pre-release drafts): lines had no ``record_type``; position told them apart.

    The first line is the header, every other line a scenario record. Footers did not exist.
    """
    upgraded = []
    for position, record in enumerate(records):
        record = {**record}
        record.setdefault("record_type", "header" if position == 0 else "scenario")
        if position == 0:
            record["format_version"] = 1
        upgraded.append(record)
    return upgraded


#: ``MIGRATIONS[v]`` turns the raw JSON lines of format ``v`` into format ``v + 1``.
MIGRATIONS: dict[int, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {0: _v0_to_v1}


def collect_environment() -> RunEnvironment:
    """The environment of this process: git commit/branch (if in a repo), versions, host."""
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "scenarist":
                packages[name] = __version__
    return RunEnvironment(
        git_commit=_git("rev-parse", "HEAD"),
        git_branch=_git("rev-parse", "--abbrev-ref", "HEAD"),
        hostname=socket.gethostname(),
        packages=packages,
    )


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out and out != "HEAD" else None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one run-log line (what writers produce, in serialization mode)."""
    schema = _RECORD.json_schema(mode="serialization")
    schema["title"] = "scenarist run log record"
    schema["description"] = (
        f"One line of a scenarist run log (JSON Lines), format_version {FORMAT_VERSION}."
    )
    return schema


def _schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m scenarist.runlog: regenerate the committed schema
    SCHEMA_PATH.write_text(_schema_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
