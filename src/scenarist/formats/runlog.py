"""The run log: the complete record of one run, and the contract between the library, the
CLI, the pytest plugin and the server.

A run log is JSON Lines: a :class:`RunLogHeader` line (run id, suite, environment,
settings), then one :class:`ScenarioRecord` line per scenario as it finishes, then a
:class:`RunLogFooter` line with the totals. Writers append line by line, so a log streams
while a run is going and a crashed run still leaves a readable file (without a footer).
Every line carries ``record_type``; the header carries ``format_version``.

The models are the source of truth. ``src/scenarist/formats/schemas/runlog.schema.json`` is
generated from them (``python -m scenarist.formats.runlog``) and a test checks it is current, so
any change to the contract shows up in review. Readers accept older versions: each line
is upgraded through :data:`MIGRATIONS` before validation.

This module is the one codec of the format: :func:`dump_json` writes every record (values
JSON cannot hold in marked forms, never an error), :func:`split_jsonl` is the only line
splitting (``\\n`` alone), :func:`read_jsonl` / :func:`decode_bytes` / :func:`decode_text`
(a file), :func:`decode_records` (its records as JSON objects) and :func:`decode_body` (the
``{"header", "scenarios", "footer"}`` object ``POST /api/runs`` takes) all migrate and
validate through the same code, so the CLI, the server's ingest and the remote upload
accept and refuse the same logs, with the same messages (a
:class:`~scenarist.errors.RunLogError` naming the file or request body, the line or record
and the field, and the fix).
"""

from __future__ import annotations

import json
import platform
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from importlib import metadata
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Field, PrivateAttr, TypeAdapter, ValidationError

from scenarist import _json_limits
from scenarist._jsonable import dump_json, split_jsonl
from scenarist._version import __version__
from scenarist.errors import RunLogError
from scenarist.model._construct import construct
from scenarist.model.budget import BudgetReport
from scenarist.model.certificate import Guarantee, ReplayCertificate, scenario_certificate
from scenarist.model.results import ScenarioResult, SuiteResult
from scenarist.model.status import ScenarioStatus, pass_rate
from scenarist.model.trace import Trace
from scenarist.model.usage import usage_totals

__all__ = [
    "FORMAT_VERSION",
    "MIGRATIONS",
    "SCHEMA_PATH",
    "RunEnvironment",
    "RunLog",
    "RunLogFooter",
    "RunLogHeader",
    "RunSelection",
    "RunSettings",
    "ScenarioRecord",
    "collect_environment",
    "decode_body",
    "decode_bytes",
    "decode_records",
    "decode_scenario_record",
    "decode_text",
    "json_schema",
    "read_jsonl",
    "record_json",
    "run_log_from_suite_result",
    "write_jsonl",
]

FORMAT_VERSION = 3
SCHEMA_PATH = Path(__file__).parent / "schemas" / "runlog.schema.json"
_PACKAGES = ("scenarist", "pydantic", "rich", "anyio")


class RunEnvironment(BaseModel):
    """Where the run happened: enough to tell two runs' machines and code apart."""

    git_commit: str | None = None
    git_branch: str | None = None
    git_merge_base: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The commit where the branch left the default branch (``main``, else ``master``);
    the dashboard compares a branch's first run with the run at that commit."""
    python_version: str = Field(default_factory=platform.python_version)
    platform: str = Field(default_factory=platform.platform)
    hostname: str | None = None
    packages: dict[str, str] = Field(default_factory=dict)


class RunSettings(BaseModel):
    """The settings that change what a run means (an older log's ``target_name``, which
    nothing read, is ignored on read)."""

    concurrency: int | None = None
    repeat: int = 1
    repeat_auto: bool = Field(default=False, exclude_if=lambda v: not v)
    """``--repeat auto``: ``repeat`` is the cap (scenarios stop once decided)."""
    min_pass_rate: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """``--min-pass-rate``: the required rate of scenarios that declare none."""


class RunSelection(BaseModel):
    """How a run chose part of its suite: ``scenarist run -k``/``--tag``, pytest's ``-k``
    and ``-m``. A run with a selection is a subset run: the dashboard does not draw it as
    a suite-wide point on the suite's trend."""

    keyword: str | None = None
    """``-k``: the name expression."""
    tags: list[str] = Field(default_factory=list)
    """``--tag KEY:VALUE`` filters."""
    markers: str | None = None
    """pytest's ``-m`` expression."""
    selected: int | None = None
    """How many scenarios the selection kept (``None``: not known when written)."""
    found: int | None = None
    """How many scenarios there were to choose from (``None``: not known)."""


class RunLogHeader(BaseModel):
    """The first line of a run log."""

    record_type: Literal["header"] = "header"
    format_version: int = FORMAT_VERSION
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    suite_name: str | None = None
    project: str | None = None  # the store's project when None (scenarist.store.projects)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    environment: RunEnvironment = Field(default_factory=RunEnvironment)
    settings: RunSettings = Field(default_factory=RunSettings)
    certificate: ReplayCertificate | None = None
    """The run's replay certificate (its scenarios' calls and those its cassettes saw
    outside them), written when the run ends, complete or not (an incomplete log has no
    footer); ``None``: not a replay nor a recording, or a log from before it existed."""
    budget: BudgetReport | None = None
    """The run's budget (``--budget``, ``Suite.run(budget=...)``): its limit and the
    estimate made before the run (written with the header), then what was spent and
    stopped (when the run ends); ``None``: no budget, or a log from before it existed."""
    selection: RunSelection | None = Field(default=None, exclude_if=lambda v: v is None)
    """The selection the run made of its suite (``-k``, ``--tag``, pytest's ``-m``);
    ``None``: it ran everything it found, or a log from before it existed."""


class ScenarioRecord(BaseModel):
    """One scenario's result with its full trace, plus its cost and token totals.

    ``check_count`` is the number of check verdicts; a passing scenario with 0 is flagged
    ``no_checks`` so that readers (the dashboard, ``scenarist report``) never show an
    untested scenario as a tested pass; ``vacuous`` flags a pass whose final trace is
    empty (no interaction: nothing was tested, whatever the checks said).
    """

    record_type: Literal["scenario"] = "scenario"
    index: int
    result: ScenarioResult
    check_count: int = 0
    no_checks: bool = False
    vacuous: bool = False
    flaky: bool = False
    cost_usd: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    certificate: ReplayCertificate | None = None
    """The replay certificate of its LLM calls (``None``: not a replay nor a recording)."""
    outcome: str | None = None
    """An outcome beyond the four statuses: ``"budget"`` for a scenario the budget did not
    start (its ``result.status`` is ``"error"``, for readers that know only those four);
    ``None`` otherwise."""
    _json: str | None = PrivateAttr(default=None)
    """Its line, once :func:`record_json` wrote it (a record is written to the streamed
    run log, the final one and the database: encoded once). Dropped when a field is set
    or the record copied; its ``result``, a finished scenario's, is not changed after."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "_json":
            self._json = None
        super().__setattr__(name, value)

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        copied._json = None
        return copied

    @classmethod
    def from_result(
        cls, index: int, result: ScenarioResult, guarantee: Guarantee | None = None
    ) -> ScenarioRecord:
        """The record of ``result``; ``guarantee``: the run's, when it replayed or
        recorded (a certificate is written then, and for any trace with replayed calls)."""
        if type(result) is not ScenarioResult or type(result.final_trace) is not Trace:
            return cls(  # a subclass may compute its figures its own way: ask it
                certificate=scenario_certificate(result, guarantee),
                index=index,
                result=result,
                check_count=result.check_count,
                no_checks=not result.has_checks,
                vacuous=result.vacuous,
                flaky=result.flaky,
                cost_usd=result.cost_usd,
                tokens_in=result.tokens_in,
                tokens_out=result.tokens_out,
                outcome="budget" if result.budget_stopped else None,
            )
        # Built without validation (a scenario a run finished: every value is already of
        # its type), each figure read once: this runs for every scenario of a run.
        trace = result.final_trace
        cost, tokens_in, tokens_out = usage_totals(trace._roots())
        check_count = sum(len(step.results) for step in result.steps)
        return construct(
            cls,
            {
                "record_type": "scenario",
                "index": index,
                "result": result,
                "check_count": check_count,
                "no_checks": check_count == 0,
                "vacuous": result.vacuous,
                "flaky": result.flaky,
                "cost_usd": cost,
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "certificate": scenario_certificate(result, guarantee),
                "outcome": "budget" if result.budget_stopped else None,
            },
            private={"_json": None},
            fields_set=_RECORD_FIELDS_SET,
        )

    def scenario_result(self) -> ScenarioResult:
        """The result again, with its certificate (kept on the record, not in the result)."""
        if self.certificate is None or self.result.certificate == self.certificate:
            return self.result
        return self.result.model_copy(update={"certificate": self.certificate})


_RECORD_FIELDS_SET = set(ScenarioRecord.model_fields) - {"record_type"}
"""What :meth:`ScenarioRecord.from_result` sets (as the keyword arguments it passed)."""


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
    vacuous: list[int] = Field(default_factory=list)
    """The indexes of the scenarios that passed with an empty final trace (vacuous passes),
    so a reader of the run alone (the dashboard's run page) can flag them."""


RunLogRecord = Annotated[
    RunLogHeader | ScenarioRecord | RunLogFooter, Field(discriminator="record_type")
]
_RECORD: TypeAdapter[RunLogHeader | ScenarioRecord | RunLogFooter] = TypeAdapter(RunLogRecord)
_MODELS: dict[str, type[RunLogHeader | ScenarioRecord | RunLogFooter]] = {
    "header": RunLogHeader,
    "scenario": ScenarioRecord,
    "footer": RunLogFooter,
}


class RunLog(BaseModel):
    """A whole run log in memory: header, scenario records, footer (``None`` if cut off)."""

    header: RunLogHeader
    scenarios: list[ScenarioRecord] = Field(default_factory=list)
    footer: RunLogFooter | None = None
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """What reading the log left out (a last line cut off mid-write), for people."""
        return self._notes

    def records(self) -> list[RunLogHeader | ScenarioRecord | RunLogFooter]:
        footer = [self.footer] if self.footer is not None else []
        return [self.header, *self.scenarios, *footer]

    def to_suite_result(self) -> SuiteResult:
        """The suite result again, e.g. to re-render a report from a saved run (marked
        ``incomplete`` when the log has no footer: the run did not finish)."""
        footer = self.footer or RunLogFooter()
        return SuiteResult(
            results=[r.scenario_result() for r in sorted(self.scenarios, key=lambda r: r.index)],
            duration_ms=footer.duration_ms,
            suite_name=self.header.suite_name,
            started_at=self.header.started_at,
            recommendation=footer.recommendation,
            incomplete=self.footer is None,
            budget=self.header.budget,
            certificate=self.header.certificate,
        )


def run_log_from_suite_result(
    result: SuiteResult,
    *,
    run_id: str | None = None,
    settings: RunSettings | None = None,
    environment: RunEnvironment | None = None,
    project: str | None = None,
    certificate: ReplayCertificate | None = None,
    records: Sequence[ScenarioRecord | None] = (),
    selection: RunSelection | None = None,
) -> RunLog:
    """The run log of a finished suite run (environment collected now unless given;
    ``project`` ``None``: the project of the store it goes to; ``certificate``: the
    run's replay certificate, whose guarantee the scenario records share; by default the
    result's own, that of a run inside a cassette; ``records``: records already made as
    the scenarios finished (by index, as streamed), reused where they hold the same result
    object with the same certificate guarantee); ``selection``: the part of the suite the
    run chose, if it chose)."""
    if certificate is None:
        certificate = result.certificate
    ended_at = None
    if result.started_at is not None:
        ended_at = result.started_at + timedelta(milliseconds=result.duration_ms)
    header = RunLogHeader(
        suite_name=result.suite_name,
        project=project,
        started_at=result.started_at,
        ended_at=ended_at,
        environment=environment if environment is not None else collect_environment(),
        settings=settings or RunSettings(),
        certificate=certificate,
        budget=result.budget,
        selection=selection,
        **({"run_id": run_id} if run_id else {}),
    )
    level = certificate.guarantee if certificate is not None else None
    made = [
        _reused(records, i, r, level) or ScenarioRecord.from_result(i, r, level)
        for i, r in enumerate(result.results)
    ]
    # An incomplete run (a streamed suite whose source failed) has no footer, so its log
    # reads back as incomplete too. The totals are the records' (each computed once).
    footer = None if result.incomplete else _footer(result, made, ended_at)
    return RunLog(header=header, scenarios=made, footer=footer)


def _footer(
    result: SuiteResult, records: list[ScenarioRecord], ended_at: datetime | None
) -> RunLogFooter:
    """The footer of ``result`` whose records are ``records`` (the same totals as
    ``result``'s properties, in one pass)."""
    counts = dict.fromkeys(ScenarioStatus, 0)
    costs: list[float] = []
    tokens_in = tokens_out = 0
    for record in records:
        counts[record.result.status] += 1
        if record.cost_usd is not None:
            costs.append(record.cost_usd)
        tokens_in += record.tokens_in
        tokens_out += record.tokens_out
    passed = counts[ScenarioStatus.PASS]
    failed, errored = counts[ScenarioStatus.FAIL], counts[ScenarioStatus.ERROR]
    return RunLogFooter(
        ended_at=ended_at,
        duration_ms=result.duration_ms,
        passed_count=passed,
        failed_count=failed,
        errored_count=errored,
        skipped_count=counts[ScenarioStatus.SKIP],
        pass_rate=pass_rate(passed, passed + failed + errored),
        cost_usd=sum(costs) if costs else None,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        recommendation=result.recommendation,
        vacuous=[record.index for record in records if record.vacuous],
    )


def _reused(
    records: Sequence[ScenarioRecord | None],
    index: int,
    result: ScenarioResult,
    level: Guarantee | None,
) -> ScenarioRecord | None:
    record = records[index] if index < len(records) else None
    if record is None or record.result is not result or record.index != index:
        return None
    certificate = record.certificate
    if (certificate.guarantee if certificate is not None else None) != level:
        return None
    return record


def record_json(record: BaseModel) -> str:
    """:func:`dump_json` of ``record``; a :class:`ScenarioRecord`'s is computed once."""
    if isinstance(record, ScenarioRecord):
        if record._json is None:
            record._json = dump_json(record)
        return record._json
    return dump_json(record)


def write_jsonl(
    records: RunLog | Iterable[BaseModel], path: str | PathLike[str], *, append: bool = False
) -> None:
    """Write a run log (or some of its records) as JSON Lines; ``append`` adds to a file.

    Values that JSON cannot hold are written as :func:`dump_json` says (an object used as
    outputs as its ``str``; bytes, cycles and unprintable objects marked).
    """
    items = records.records() if isinstance(records, RunLog) else list(records)
    text = "".join(record_json(record) + "\n" for record in items)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(text)


def read_jsonl(path: str | PathLike[str], *, require_run_id: bool = False) -> RunLog:
    """Read a run log file written by any version of scenarist (see :func:`decode_bytes`)."""
    return decode_bytes(
        Path(path).read_bytes(), source=f"run log {str(path)!r}", require_run_id=require_run_id
    )


def decode_text(text: str, *, source: str = "run log", require_run_id: bool = False) -> RunLog:
    """The run log in ``text`` (JSON Lines): parsed, migrated and validated (as
    :func:`decode_bytes`)."""
    return decode_bytes(
        text.encode("utf-8", "surrogatepass"), source=source, require_run_id=require_run_id
    )


def decode_bytes(data: bytes, *, source: str = "run log", require_run_id: bool = False) -> RunLog:
    """The run log in ``data`` (UTF-8 JSON Lines): parsed, migrated and validated.

    Lines end at ``\\n`` only (:func:`split_jsonl`). A last line without its newline that
    is not a whole record (a run interrupted while writing it, maybe in the middle of a
    character) is dropped and :attr:`RunLog.notes` says so; any other line that is not
    UTF-8 JSON raises :class:`~scenarist.errors.RunLogError` naming ``source`` and the line.
    """
    numbered, rest = split_jsonl(data)
    raw: list[Any] = []
    for number, line in numbered:
        raw.append(_json_line(line, source, number))
    notes: list[str] = []
    if rest.strip():
        number = data.count(b"\n") + 1
        try:
            raw.append(_json_limits.parse(rest.decode("utf-8")))
            numbered.append((number, rest))
        except ValueError:  # UnicodeDecodeError too: cut inside a character
            notes.append(
                f"{source} line {number} was cut off mid-write (the run was interrupted) "
                "and is left out"
            )
    lines = [number for number, _ in numbered]
    log = _decode(raw, source, lambda index: f"line {lines[index]}", require_run_id)
    log.notes.extend(notes)
    return log


def _json_line(line: bytes, source: str, number: int) -> Any:
    try:
        return _json_limits.parse(line.decode("utf-8"))
    except _json_limits.JsonLimitError as exc:
        raise RunLogError(
            f"{source} line {number}: {exc.problem}; {_FIX}",
            fields=[_field(f"line {number}", exc.problem, exc.kind)],
        ) from exc
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text ({exc})"
        error: ValueError = exc
    except ValueError as exc:
        problem = f"is not valid JSON ({exc})"
        error = exc
    raise RunLogError(
        f"{source} line {number} {problem}; the file is damaged: fix or delete line "
        f"{number}, or write the log again with `scenarist run`",
        invalid_json=True,
    ) from error


def decode_records(
    records: Sequence[Any], *, source: str = "request body", require_run_id: bool = False
) -> RunLog:
    """The run log made of ``records`` (the JSON objects of its lines, header first), e.g.
    as a server receives them: migrated and validated exactly as :func:`decode_text` does."""
    return _decode(list(records), source, lambda index: f"record {index}", require_run_id)


def decode_body(body: Any, *, source: str = "request body", require_run_id: bool = True) -> RunLog:
    """The run log in a ``{"header", "scenarios", "footer"}`` object (what
    :meth:`RunLog.model_dump` gives and ``POST /api/runs`` takes). Records without
    ``record_type`` take the one their place says."""
    if not isinstance(body, dict) or not isinstance(body.get("header"), dict):
        raise RunLogError(
            f"{source}: a run log is an object with a 'header' object",
            fields=[_field("header", "a run log is an object with a 'header' object", "missing")],
        )
    scenarios = body.get("scenarios") or []
    if not isinstance(scenarios, list):
        raise RunLogError(
            f"{source}: 'scenarios' must be a list of scenario records",
            fields=[_field("scenarios", "must be a list of scenario records", "list_type")],
        )
    footer = body.get("footer")
    placed = [
        ("header", body["header"]),
        *(("scenario", record) for record in scenarios),
        *([("footer", footer)] if footer is not None else []),
    ]
    records = [
        {"record_type": kind, **record} if isinstance(record, dict) else record
        for kind, record in placed
    ]
    return decode_records(records, source=source, require_run_id=require_run_id)


_FIX = "fix the record, or write the log again with `scenarist run`"


def _field(field: str, message: str, kind: str) -> dict[str, str]:
    return {"field": field, "message": message, "type": kind}


def _decode(
    raw: list[Any], source: str, where: Callable[[int], str], require_run_id: bool
) -> RunLog:
    """Migrate then validate the records of a run log; every entry point ends here."""
    if not raw:
        raise RunLogError(f"{source} is empty; expected a header line first")
    for index, record in enumerate(raw):
        if not isinstance(record, dict):
            raise RunLogError(
                f"{source} {where(index)} is {type(record).__name__} {record!r:.60}, not a JSON "
                f"object; {_FIX}",
                fields=[_field(_record_path(raw, index), "not a JSON object", "dict_type")],
            )
        try:  # depth, NaN/Infinity, lone surrogates: what no reader after us can take
            _json_limits.check_json(record)
        except _json_limits.JsonLimitError as exc:
            field = ".".join(part for part in (_record_path(raw, index), exc.field) if part)
            raise RunLogError(
                f"{source} {where(index)}: field {field}: {exc.problem}; {_FIX}",
                fields=[_field(field, exc.problem, exc.kind)],
            ) from exc
    version = raw[0].get("format_version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise RunLogError(
            f"{source} has format_version {version!r}, newer than this scenarist supports "
            f"({FORMAT_VERSION}); upgrade scenarist to read it",
            fields=[_field("header.format_version", "newer than supported", "version")],
        )
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        message = f"not a format version (a whole number from 0 to {FORMAT_VERSION})"
        raise RunLogError(
            f"{source} has format_version {version!r}, {message}; {_FIX}",
            fields=[_field("header.format_version", message, "version")],
        )
    if require_run_id and (not isinstance(raw[0].get("run_id"), str) or not raw[0]["run_id"]):
        # a made-up run id would store a retried upload twice
        raise RunLogError(
            f"{source} {where(0)}: the header has no run_id; give it the run's id",
            fields=[_field("header.run_id", "Field required", "missing")],
        )
    for step in range(version, FORMAT_VERSION):
        raw = MIGRATIONS[step](raw)
    header: RunLogHeader | None = None
    scenarios: list[ScenarioRecord] = []
    footer: RunLogFooter | None = None
    for index, record in enumerate(raw):
        kind = record.get("record_type")
        model = _MODELS.get(kind) if isinstance(kind, str) else None
        path = _record_path(raw, index)
        if model is None or (index == 0) != (model is RunLogHeader):
            wanted = "'header'" if index == 0 else "'scenario' or 'footer'"
            raise RunLogError(
                f"{source} {where(index)}: record_type is {kind!r}, expected {wanted} "
                f"{'(a run log starts with its header)' if index == 0 else 'here'}; {_FIX}",
                fields=[_field(f"{path}.record_type", f"expected {wanted}", "record_type")],
            )
        try:
            parsed = model.model_validate(record)
        except ValidationError as exc:
            fields = [
                _field(
                    ".".join(str(part) for part in (path, *error["loc"])),
                    error["msg"],
                    error["type"],
                )
                for error in exc.errors()
            ]
            first = fields[0]
            more = f" (and {len(fields) - 1} more)" if len(fields) > 1 else ""
            raise RunLogError(
                f"{source} {where(index)}: field {first['field']}: {first['message']}{more}; "
                f"{_FIX}",
                fields=fields,
            ) from exc
        if isinstance(parsed, RunLogHeader):
            header = parsed
        elif isinstance(parsed, ScenarioRecord):
            scenarios.append(parsed)
        else:
            footer = parsed  # the last footer wins
    assert header is not None  # index 0 is a header, checked above
    return RunLog(header=header, scenarios=scenarios, footer=footer)


def decode_scenario_record(text: str | bytes, *, source: str = "stored record") -> ScenarioRecord:
    """One scenario record from its JSON (e.g. a document the server stored before v2),
    upgraded like the records of a run log (see :func:`_typed_check_identity`)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RunLogError(f"{source} is not valid JSON ({exc})", invalid_json=True) from exc
    if not isinstance(data, dict):
        raise RunLogError(f"{source} is not a JSON object")
    try:
        return ScenarioRecord.model_validate(_typed_check_identity(data))
    except ValidationError as exc:
        raise RunLogError(f"{source} is not a valid scenario record: {exc}") from exc


_IDENTITY = (("kind", "check_kind"), ("name", "check_name"), ("duration_ms", "duration_ms"))


def _typed_check_identity(record: dict[str, Any]) -> dict[str, Any]:
    """Check verdicts written before ``CheckResult.kind``/``name``/``duration_ms`` existed
    carry them in ``details`` only; give them the typed fields."""
    result = record.get("result")
    if not isinstance(result, dict):
        return record
    steps = result.get("steps")
    if not isinstance(steps, list) or not any(
        isinstance(step, dict)
        and any(isinstance(c, dict) and "kind" not in c for c in step.get("results") or ())
        for step in steps
    ):
        return record
    upgraded_steps = []
    for step in steps:
        checks = step.get("results") if isinstance(step, dict) else None
        if isinstance(checks, list):
            step = {**step, "results": [_with_identity(c) for c in checks]}
        upgraded_steps.append(step)
    return {**record, "result": {**result, "steps": upgraded_steps}}


def _with_identity(check: Any) -> Any:
    if not isinstance(check, dict) or not isinstance(check.get("details"), dict):
        return check
    details = check["details"]
    filled = {
        typed: details[free]
        for typed, free in _IDENTITY
        if typed not in check and details.get(free) is not None
    }
    return {**check, **filled} if filled else check


def _record_path(raw: list[Any], index: int) -> str:
    """``header``, ``scenarios.<k>`` or ``footer``: where the record sits in a run log."""
    if index == 0:
        return "header"
    kind = raw[index].get("record_type") if isinstance(raw[index], dict) else None
    if kind == "footer":
        return "footer"
    before = sum(
        1 for r in raw[1:index] if not (isinstance(r, dict) and r.get("record_type") == "footer")
    )
    return f"scenarios.{before}"


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


def _v1_to_v2(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v1: check verdicts carried their identity in ``details`` only (``check_kind``,
    ``check_name``, ``duration_ms``); v2 has the typed ``kind``, ``name``, ``duration_ms``."""
    header, *rest = records
    upgraded = [_typed_check_identity(r) if r.get("record_type") == "scenario" else r for r in rest]
    return [{**header, "format_version": 2}, *upgraded]


def _v2_to_v3(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v2: a snapshot check's changes (``details.changes``) had snake_case kinds
    (``"added"``, ``"input_changed"``...); v3 has Veval's (``"Added"``, ``"InputChanged"``)."""
    header, *rest = records
    upgraded = [_veval_change_kinds(r) if r.get("record_type") == "scenario" else r for r in rest]
    return [{**header, "format_version": 3}, *upgraded]


_CHANGE_KINDS = {
    "added": "Added",
    "removed": "Removed",
    "moved": "Moved",
    "input_changed": "InputChanged",
    "output_changed": "OutputChanged",
}


def _veval_change_kinds(record: dict[str, Any]) -> dict[str, Any]:
    result = record.get("result")
    steps = result.get("steps") if isinstance(result, dict) else None
    if not isinstance(result, dict) or not isinstance(steps, list):
        return record
    upgraded_steps = []
    for step in steps:
        checks = step.get("results") if isinstance(step, dict) else None
        if isinstance(checks, list):
            step = {**step, "results": [_check_change_kinds(c) for c in checks]}
        upgraded_steps.append(step)
    return {**record, "result": {**result, "steps": upgraded_steps}}


def _check_change_kinds(check: Any) -> Any:
    if not isinstance(check, dict) or check.get("kind") != "trace_matches_snapshot":
        return check
    details = check.get("details")
    changes = details.get("changes") if isinstance(details, dict) else None
    if not isinstance(details, dict) or not isinstance(changes, list):
        return check
    renamed = [
        {**c, "kind": _CHANGE_KINDS.get(c["kind"], c["kind"])}
        if isinstance(c, dict) and isinstance(c.get("kind"), str)
        else c
        for c in changes
    ]
    return {**check, "details": {**details, "changes": renamed}}


#: ``MIGRATIONS[v]`` turns the raw JSON lines of format ``v`` into format ``v + 1``.
MIGRATIONS: dict[int, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
    0: _v0_to_v1,
    1: _v1_to_v2,
    2: _v2_to_v3,
}


def collect_environment() -> RunEnvironment:
    """The environment of this process: git commit/branch (if in a repo), versions, host."""
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "scenarist":
                packages[name] = __version__
    branch = _git("rev-parse", "--abbrev-ref", "HEAD")
    return RunEnvironment(
        git_commit=_git("rev-parse", "HEAD"),
        git_branch=branch,
        git_merge_base=_merge_base(branch),
        hostname=socket.gethostname(),
        packages=packages,
    )


_DEFAULT_BRANCHES = ("main", "master")


def _merge_base(branch: str | None) -> str | None:
    """Where ``branch`` left the default branch (none on the default branch itself)."""
    if branch is None or branch in _DEFAULT_BRANCHES:
        return None
    for ref in ("origin/main", "main", "origin/master", "master"):
        commit = _git("merge-base", "HEAD", ref)
        if commit is not None:
            return commit
    return None


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


if __name__ == "__main__":  # python -m scenarist.formats.runlog: regenerate the committed schema
    SCHEMA_PATH.write_text(_schema_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
