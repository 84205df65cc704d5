"""The pytest plugin (entry point ``pytest11``): fixtures, a marker, a parametrize
helper, a session summary and an optional run log. Thin on purpose: logic stays in the
library; nothing here changes how a plain test runs.

* ``scenarist_replay``: an LLM-call cassette for the test, at
  ``<test dir>/cassettes/<test name>.jsonl`` (see :mod:`scenarist.replay.cassette`).
  Its mode comes from ``--scenarist-record``, else the marker's ``record``, else
  ``SCENARIST_RECORD_MODE``, else ``once``. The pytest vocabulary maps to cassette modes
  as in :data:`RECORD_MODES`: ``once`` → ``once`` (replay if the file exists, else
  record), ``all`` → ``refresh`` (re-record everything, rewriting the file), ``none`` →
  ``replay`` (never record; a missing call fails the test), ``new`` → ``record`` (calls
  go live and are appended to the file, to add recordings to an existing cassette).
* ``scenarist_client``: a fresh :class:`scenarist.testing.TestClient`, also installed as
  the default client for the test (module-level ``run_scenario`` uses it).
* ``scenarist_run``: runs a ``Scenario`` or ``Suite`` (errors become ERROR verdicts),
  records its results for the session summary and run log, and returns the result.
* ``@pytest.mark.scenarist(record="once", tags=[...])``: the cassette mode for the test,
  and tags added to the results it records (and to its JUnit properties).
* :func:`parametrize_suite`: one pytest test per scenario (or item), named after it.

At the end of the session a ``scenarist`` section sums up the recorded scenarios (count,
pass rate, cost) and the replay verdicts; with ``--scenarist-store`` the run log is
written to ``$SCENARIST_HOME/runs/<run_id>.jsonl``. State lives in ``config.stash``.

The replay certificate: when the session used a cassette, the section gives its
certificate (``replay certificate: 1 replayed, 0 missed, 0 refused, 0 live (guarantee:
in-process)``: the calls of its cassettes and of the scenarios ``scenarist_run`` ran,
those run with no cassette counted under guarantee ``none``), and pytest's JUnit file
(``--junitxml``) carries it as ``scenarist run --junit`` does: ``replay.*`` properties on
the suite, and each test's own on its case. ``--fail-on-live`` (on by default when every
cassette of the session replayed; ``--no-fail-on-live`` turns it off) fails the session
when a call went live, naming the tests. Calls made outside both a cassette and
``scenarist_run`` are not seen.

Under pytest-xdist each worker sends its results to the controller at the end
(``workeroutput``), so the summary, the certificate and the run log cover the whole
session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from scenarist.engine.scenario import Scenario
    from scenarist.engine.suite import Suite
    from scenarist.formats.runlog import RunSelection
    from scenarist.model.certificate import ReplayCertificate
    from scenarist.model.items import ScenarioItem
    from scenarist.model.results import ScenarioResult, SuiteResult
    from scenarist.replay.cassette import Cassette, CassetteStats
    from scenarist.testing import TestClient

__all__ = ["RECORD_MODES", "SessionState", "parametrize_suite"]

#: ``--scenarist-record`` / ``mark.scenarist(record=...)`` → cassette mode.
RECORD_MODES = {"once": "once", "all": "refresh", "none": "replay", "new": "record"}


@dataclass
class SessionState:
    """What the session recorded: scenario results, cassette verdicts, the run log path."""

    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    results: list[ScenarioResult] = field(default_factory=list)
    cassettes: list[CassetteStats] = field(default_factory=list)
    run_log: Path | None = None
    database: str | None = None
    problems: list[str] = field(default_factory=list)
    """Outputs of ``--scenarist-store`` that could not be written (one line each)."""
    incomplete: bool = False
    """The session stopped early (Ctrl-C, ``-x``/``--maxfail``): its run is kept as
    incomplete (no footer), never as a complete run of fewer scenarios."""
    live_tests: list[str] = field(default_factory=list)
    """The tests whose LLM calls went live (node ids), for ``--fail-on-live``."""
    live_failure: str | None = None
    """Why ``--fail-on-live`` failed the session (``None``: it did not)."""


@dataclass
class _TestCalls:
    """One test's scenario results and cassette verdicts, for its own certificate."""

    results: list[ScenarioResult] = field(default_factory=list)
    cassettes: list[CassetteStats] = field(default_factory=list)


STATE = pytest.StashKey[SessionState]()
_TEST = pytest.StashKey[_TestCalls]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scenarist", "scenarist: scenario tests for LLM agents")
    group.addoption(
        "--scenarist-record",
        choices=sorted(RECORD_MODES),
        default=None,
        help="cassette mode of scenarist_replay: once (default), all (re-record), "
        "none (replay only), new (record and append)",
    )
    group.addoption(
        "--scenarist-store",
        action="store_true",
        default=False,
        help="write the session's scenario results as a run log to $SCENARIST_HOME/runs/ "
        "and store it in the database (SCENARIST_DATABASE_URL or $SCENARIST_HOME/scenarist.db)",
    )
    group.addoption(
        "--fail-on-live",
        action="store_true",
        dest="scenarist_fail_on_live",
        default=None,
        help="fail the session when an LLM call went live (default: on when every "
        "cassette of the session replayed)",
    )
    group.addoption(
        "--no-fail-on-live",
        action="store_false",
        dest="scenarist_fail_on_live",
        help="allow live LLM calls in a session that replays",
    )
    group.addoption(
        "--fail-on-vacuous",
        action="store_true",
        default=False,
        help="fail a test whose scenario (run by scenarist_run) passed with no interaction "
        "in its trace",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "scenarist(record=None, tags=()): cassette mode (once|all|none|new) for "
        "scenarist_replay, and tags for the scenario results the test records",
    )
    config.stash[STATE] = SessionState()


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("scenarist")
    return dict(marker.kwargs) if marker is not None else {}


def _cassette_mode(request: pytest.FixtureRequest) -> str | None:
    chosen = request.config.getoption("--scenarist-record") or _marker_kwargs(request).get("record")
    if chosen is None:
        return None  # the cassette's own default: SCENARIST_RECORD_MODE, else once
    if chosen not in RECORD_MODES:
        raise pytest.UsageError(
            f"mark.scenarist(record={chosen!r}) is not a record mode; use one of "
            f"{', '.join(sorted(RECORD_MODES))}"
        )
    return RECORD_MODES[chosen]


def _file_name(test_name: str) -> str:
    """A test name (``test_x[case 1]``) as a safe file name (``test_x-case_1-``)."""
    return re.sub(r"[^\w.-]", "_", test_name.replace("[", "-").replace("]", "-"))


@pytest.fixture
def scenarist_replay(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The test's LLM-call cassette, active for the whole test (see the module docs)."""
    from scenarist.replay.cassette import cassette

    path = request.path.parent / "cassettes" / f"{_file_name(request.node.name)}.jsonl"
    tape = cassette(path, _cassette_mode(request))  # type: ignore[arg-type]
    entered = False
    try:
        with tape:
            entered = True
            yield tape
    finally:
        if entered:  # a cassette that could not be opened has no verdict to add
            request.config.stash[STATE].cassettes.append(tape.stats)
            _test_calls(request.node).cassettes.append(tape.stats)


@pytest.fixture
def scenarist_client() -> Iterator[TestClient]:
    """A fresh in-memory ``TestClient``, the default client while the test runs."""
    from scenarist.testing import TestClient
    from scenarist.veval.default_client import set_client

    client = TestClient()
    previous = set_client(client)
    try:
        yield client
    finally:
        set_client(previous)


@pytest.fixture
def scenarist_run(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``scenarist_run(scenario_or_suite, **run_options)``: run it (user errors become
    ERROR verdicts), record the results for the session, and return the result."""
    from scenarist.engine.suite import Suite

    state = request.config.stash[STATE]
    fail_on_vacuous = bool(request.config.getoption("--fail-on-vacuous"))
    tags = list(_marker_kwargs(request).get("tags") or ())
    for tag in tags:
        request.node.user_properties.append(("scenarist_tag", tag))

    mine = _test_calls(request.node)

    def run(subject: Scenario | Suite, **options: Any) -> ScenarioResult | SuiteResult:
        options.setdefault("return_exception", True)
        if isinstance(subject, Suite):
            options.setdefault("verbose", False)
            suite_result = subject.run_sync(**options)
            for result in suite_result.results:
                _record(state, result, tags)
            mine.results.extend(suite_result.results)
            if fail_on_vacuous:
                _fail_vacuous(suite_result.results)
            return suite_result
        result = subject.run_sync(**options)
        _record(state, result, tags)
        mine.results.append(result)
        if fail_on_vacuous:
            _fail_vacuous([result])
        return result

    return run


def _test_calls(item: pytest.Item) -> _TestCalls:
    calls = item.stash.get(_TEST, None)
    if calls is None:
        calls = item.stash[_TEST] = _TestCalls()
    return calls


def certificate_of(
    results: Sequence[ScenarioResult],
    cassettes: Sequence[CassetteStats],
    *,
    unguarded: bool = True,
) -> ReplayCertificate | None:
    """The certificate of some tests' calls: their cassettes' and their scenarios' (one
    run with no cassette: its captured calls under guarantee ``none``). ``None`` when
    they used no cassette and no scenario carries a certificate, unless ``unguarded``
    and their scenarios made LLM calls with nothing guarding them."""
    from scenarist.model.certificate import ReplayCertificate

    parts = [
        r.certificate or ReplayCertificate.from_spans(r.final_trace.spans, "none") for r in results
    ]
    guarded = bool(cassettes) or any(r.certificate is not None for r in results)
    calls = any(p.replayed + p.missed + p.refused + p.live for p in parts)
    if not guarded and not (unguarded and calls):
        return None
    return ReplayCertificate.of_run(parts, [t.certificate() for t in cassettes])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After the test's fixtures are torn down (its cassette left): its certificate as
    ``replay.*`` properties of its JUnit case, and whether its calls went live."""
    yield
    calls = item.stash.get(_TEST, None)
    if calls is None:
        return
    certificate = certificate_of(calls.results, calls.cassettes)
    if certificate is not None:
        item.user_properties.extend(certificate.properties().items())
        if certificate.live:
            item.config.stash[STATE].live_tests.append(item.nodeid)


def _fail_vacuous(results: Sequence[ScenarioResult]) -> None:
    vacuous = [f"{r.scenario_name!r} ({r.vacuous_reason})" for r in results if r.vacuous]
    if vacuous:
        pytest.fail(
            f"scenario(s) passed with nothing tested: {', '.join(vacuous)} (--fail-on-vacuous)",
            pytrace=False,
        )


def _record(state: SessionState, result: ScenarioResult, tags: list[str]) -> None:
    extra = [t for t in tags if t not in result.tags]
    if extra:
        result.tags = [*result.tags, *extra]
    state.results.append(result)


def parametrize_suite(
    suite_or_items: Suite | Sequence[Scenario] | Sequence[ScenarioItem],
    argname: str | None = None,
) -> pytest.MarkDecorator:
    """``@parametrize_suite(suite)``: one test per scenario, its id the scenario's name,
    passed as ``scenario`` (a suite's target is given to scenarios without one). With
    ``ScenarioItem`` objects, one test per item, passed as ``item``, its id the label."""
    from scenarist.engine.scenario import Scenario
    from scenarist.engine.suite import Suite
    from scenarist.model._missing import is_missing
    from scenarist.model.items import ScenarioItem

    if isinstance(suite_or_items, Suite):
        target = suite_or_items.target
        values: list[Any] = [
            s.copy().with_target(target) if is_missing(s.target) and not is_missing(target) else s
            for s in suite_or_items.scenarios
        ]
        ids = [s.name for s in values]
        default = "scenario"
    else:
        values = list(suite_or_items)
        if all(isinstance(v, Scenario) for v in values):
            ids, default = [s.name for s in values], "scenario"
        elif all(isinstance(v, ScenarioItem) for v in values):
            ids, default = [v.label for v in values], "item"
        else:
            raise TypeError(
                "parametrize_suite expects a Suite, or a list of Scenario or of ScenarioItem "
                f"objects, got {type(suite_or_items).__name__}"
            )
    return pytest.mark.parametrize(argname or default, values, ids=ids)


_WORKER_KEY = "scenarist"


@pytest.hookimpl(tryfirst=True)  # before pytest's JUnit file is written
def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    workeroutput = getattr(session.config, "workeroutput", None)
    if state is not None and workeroutput is not None:
        # a pytest-xdist worker: its results go to the controller, which sums up and stores
        workeroutput[_WORKER_KEY] = _to_wire(state)
        return
    if state is not None:
        _certify(session, state)
    if state is None or not state.results or not session.config.getoption("--scenarist-store"):
        return
    from scenarist.cli._runs import (
        HOME_FIX,
        database_problem,
        runs_dir,
        save_run_log,
        store_in_local_database,
        write_problem,
    )
    from scenarist.formats.runlog import run_log_from_suite_result

    stopped = session.exitstatus == pytest.ExitCode.INTERRUPTED
    state.incomplete = bool(stopped or session.shouldstop or session.shouldfail)
    log = run_log_from_suite_result(_suite_result(state), selection=_selection(session.config))
    path = runs_dir() / f"{log.header.run_id}.jsonl"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_run_log(log, path)
        state.run_log = path
    except OSError as exc:
        state.problems.append(write_problem("the run log", path, exc, HOME_FIX))
    try:
        state.database = store_in_local_database(log)
    except Exception as exc:
        line = database_problem(exc, state.run_log)
        if line is None:
            raise
        state.problems.append(line)
    if state.problems and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # results lost must not pass CI


def _certify(session: pytest.Session, state: SessionState) -> None:
    """The session's certificate: as ``replay.*`` properties of pytest's JUnit suite, and
    ``--fail-on-live`` (on by default when every cassette replayed)."""
    certificate = session_certificate(state)
    if certificate is None:
        return
    try:  # pytest's JUnit writer: its suite properties are only reachable here
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover (a pytest without it)
        junit = None
    else:
        junit = session.config.stash.get(xml_key, None)
    if junit is not None:
        for name, value in certificate.properties().items():
            junit.add_global_property(name, value)
    wanted = session.config.getoption("scenarist_fail_on_live", None)
    replaying = bool(state.cassettes) and all(t.mode == "replay" for t in state.cassettes)
    if certificate.live and (replaying if wanted is None else wanted):
        tests = ", ".join(state.live_tests) or "calls made outside every test"
        state.live_failure = (
            f"{certificate.live} LLM call(s) went live during the replay (--fail-on-live): "
            f"{tests}; run them with the scenarist_replay cassette, or --no-fail-on-live"
        )
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def session_certificate(state: SessionState) -> ReplayCertificate | None:
    """The session's replay certificate, when it used a cassette (or a scenario carries
    one): every cassette's calls and every recorded scenario's."""
    return certificate_of(state.results, state.cassettes, unguarded=False)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: a worker finished; its scenario results and
    cassette verdicts join the controller's, so one summary and one run log cover all."""
    state = node.config.stash.get(STATE, None)
    wire = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if state is not None and wire:
        _from_wire(state, wire)


def _to_wire(state: SessionState) -> dict[str, list[Any]]:
    """What a worker sends (execnet carries plain values): run-log records as JSON."""
    from scenarist._jsonable import dump_json
    from scenarist.formats.runlog import ScenarioRecord

    return {  # dump_json: the run log's codec, which never fails on an agent's values
        "results": [
            dump_json(ScenarioRecord.from_result(n, r)) for n, r in enumerate(state.results)
        ],
        "cassettes": [t.to_dict() for t in state.cassettes],
        "live_tests": list(state.live_tests),
    }


def _from_wire(state: SessionState, wire: dict[str, list[Any]]) -> None:
    import dataclasses

    from scenarist.formats.runlog import ScenarioRecord
    from scenarist.replay.cassette import CassetteStats

    records = (ScenarioRecord.model_validate_json(r) for r in wire["results"])
    state.results.extend(record.scenario_result() for record in records)
    names = {f.name for f in dataclasses.fields(CassetteStats)}
    state.cassettes.extend(
        CassetteStats(**{k: v for k, v in t.items() if k in names}) for t in wire["cassettes"]
    )
    state.live_tests.extend(wire.get("live_tests", ()))


def _selection(config: pytest.Config) -> RunSelection | None:
    """pytest's ``-k``/``-m`` as the run log's header records them (a subset run)."""
    from scenarist.formats.runlog import RunSelection

    keyword = config.getoption("keyword", default="") or None
    markers = config.getoption("markexpr", default="") or None
    if keyword is None and markers is None:
        return None
    return RunSelection(keyword=keyword, markers=markers)


def _suite_result(state: SessionState) -> SuiteResult:
    from scenarist.model.results import SuiteResult

    elapsed = datetime.now(UTC) - state.started_at
    return SuiteResult(
        results=state.results,
        duration_ms=round(elapsed.total_seconds() * 1000),
        suite_name="pytest",
        started_at=state.started_at,
        incomplete=state.incomplete,
        certificate=session_certificate(state),
    )


def summary_lines(state: SessionState) -> list[str]:
    """The lines of the session's ``scenarist`` section (empty when nothing was recorded)."""
    lines = []
    if state.results:
        result = _suite_result(state)
        cost = result.cost_usd
        lines.append(result.summary_line() + " | cost " + ("—" if cost is None else f"${cost:.4f}"))
        vacuous = [r.scenario_name for r in result.results if r.vacuous]
        if vacuous:
            lines.append(
                f"vacuous passes (no interaction, or an empty input generator): {len(vacuous)}: "
                f"{', '.join(vacuous)}"
            )
        lines.extend(_rate_lines(result))
        verdicts = [v for r in result.results if (v := r.replay_verdict) is not None]
        if verdicts:
            totals = {k: sum(v[k] for v in verdicts) for k in ("replayed", "missed", "live")}
            lines.append(
                f"replayed scenarios: {len(verdicts)} | LLM calls: {totals['replayed']} "
                f"replayed, {totals['missed']} missed, {totals['live']} live"
            )
    if (certificate := session_certificate(state)) is not None:
        lines.append(certificate.line())
    if state.live_failure is not None:
        lines.append(f"error: {state.live_failure}")
    if state.cassettes:
        tapes = state.cassettes
        lines.append(
            f"cassettes: {len(tapes)} ({sum(t.mode == 'replay' for t in tapes)} replayed, "
            f"{sum(t.mode == 'record' for t in tapes)} recorded) | LLM calls: "
            f"{sum(t.replayed for t in tapes)} replayed, {sum(t.missed for t in tapes)} "
            f"missed, {sum(t.live for t in tapes)} live, {sum(t.unused for t in tapes)} unused"
        )
    if state.run_log is not None:
        lines.append(f"run log: {state.run_log}")
    if state.database is not None:
        lines.append(f"stored in the database {state.database}")
    lines.extend(f"error: {problem}" for problem in state.problems)
    return lines


def _rate_lines(result: SuiteResult) -> list[str]:
    """Each repeated scenario's pass rate, 95% interval and verdict (``docs/statistics.md``)."""
    repeated = [r for r in result.results if r.repeat_stats is not None]
    if not repeated:
        return []
    lines = ["pass rates over repeats (95% Wilson interval):"]
    lines.extend(f"  {r.scenario_name}: {r.repeat_stats.describe()}" for r in repeated)  # type: ignore[union-attr]
    if verdicts := result.rate_verdicts:
        counts = ", ".join(f"{verdicts.get(v, 0)} {v}" for v in ("pass", "fail", "inconclusive"))
        lines.append(f"min pass rate verdicts: {counts}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    lines = summary_lines(state) if state is not None else []
    if not lines:
        return
    terminalreporter.section("scenarist")
    for line in lines:
        terminalreporter.write_line(line)
