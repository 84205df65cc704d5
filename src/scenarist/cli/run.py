"""``scenarist run``: discover scenarios, run them, report, and keep the run log.

Files run one after another (each inside its own cassette with ``--record``/``--replay``),
the scenarios of a file concurrently with ``--parallel N`` (with ``--ray [ADDRESS]``: in
batches on Ray workers, each batch ``--parallel N`` at a time); one progress display and one
report cover the whole run. The run log streams to ``$SCENARIST_HOME/runs/<run_id>.jsonl``
(a header, then a record per finished scenario) and is rewritten whole at the end. The
last line printed is the verdict, computed by :func:`verdict` together with the exit
code, so the two cannot disagree.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scenarist.cli._discover import Discovery, SourceFile, discover
from scenarist.cli._junit import location, locations
from scenarist.cli._outputs import Outputs, check_upload
from scenarist.cli._runs import HOME_FIX, load_run_log, runs_dir, write_problem
from scenarist.cli._select import parse_keyword, parse_tags
from scenarist.engine.adaptive import AdaptiveConcurrency
from scenarist.errors import CassetteError, ReplayError, UserError
from scenarist.formats.runlog import (
    RunLogHeader,
    RunSelection,
    RunSettings,
    ScenarioRecord,
    collect_environment,
    record_json,
    run_log_from_suite_result,
    write_jsonl,
)
from scenarist.model.certificate import run_certificate
from scenarist.model.results import ScenarioResult, SuiteResult
from scenarist.model.status import ScenarioStatus, pass_rate_of

if TYPE_CHECKING:
    from scenarist.engine.budget import Budget, Estimate
    from scenarist.model.budget import BudgetReport
    from scenarist.model.certificate import Guarantee, ReplayCertificate
    from scenarist.replay.cassette import CassetteStats
    from scenarist.report.junit import Location
    from scenarist.store.live_upload import LiveUpload

__all__ = ["HELP", "Verdict", "replay_tally", "run", "run_certificate", "verdict"]

HELP = (
    "Run the scenarios found in PATHs (files or folders).\n\n"
    "Python files are imported and their module-level Suite and Scenario objects run; YAML "
    "and JSON files hold one scenario or a suite (in folders: *.scenario.yaml, "
    "*.suite.yaml). Items count as scenarios: the run_scenario(..., items=...) calls a "
    "Python file makes at module level, and item lists (YAML/JSON with scenario_name, "
    "agent, items; in folders: *.items.yaml), one result per item.\n\n"
    "Exit codes: 0 all passed (or pass rate at least --fail-under); 1 scenarios failed; "
    "2 errors: a usage error, a file that could not be loaded, a cassette problem, results "
    "that could not be saved (a full disk, a read-only folder, a locked database), or an "
    "errored scenario (unless --fail-under is met); 3 the run's process ended without its "
    "verdict (os._exit or a crash in user code); 4 the budget stopped the run: --budget "
    "(or a scenario's own budget) left a scenario unstarted (reported BUDGET) or was "
    "crossed by scenarios already running; the results so far are kept; 130 interrupted "
    "by Ctrl-C. With "
    "--fail-on-vacuous, a scenario that passed with no interaction in its trace, or with "
    "an input generator that yielded none, fails the run (exit 1). With --replay, an LLM "
    "call that went live fails the run (exit 1; --no-fail-on-live to allow it), and "
    "--sandbox runs it in a network namespace with only loopback up (Linux)."
)

CASSETTE_DIR = ".cassettes"


@dataclass(frozen=True)
class Verdict:
    """The exit code and the line that states it: computed together, never apart."""

    exit_code: int
    line: str


def verdict(
    result: SuiteResult,
    *,
    file_errors: int = 0,
    fail_under: float | None = None,
    write_errors: int = 0,
    collected: int | None = None,
    interrupted: bool = False,
    replay_errors: int = 0,
    fail_on_vacuous: bool = False,
    live_calls: int = 0,
    budget: BudgetReport | None = None,
    regressed: int = 0,
) -> Verdict:
    """Exit code and verdict line for a finished run (see the module docstring).

    Errors come first: a file that did not load or run, scenarios collected that have no
    result, results that could not all be saved (``write_errors``): exit 2 whatever the
    scenarios did. ``interrupted`` (Ctrl-C) is exit 130, the shell's code for it.
    ``replay_errors`` are files whose cassette stopped them (a replay miss, a cassette
    that cannot be read): exit 2, said as such. ``fail_on_vacuous`` fails a run whose
    scenarios all passed but some with no interaction in their trace. ``live_calls``:
    LLM calls that went live when they must not (``--fail-on-live``): exit 1, said so.
    ``budget``: the run's budget report; one that stopped a scenario or was crossed is
    exit 4 (never a pass, whatever the pass rate).
    ``regressed``: scenarios that regressed significantly against the baseline
    (``--fail-on-regression``): exit 1, said so.

    A scenario judged against a required pass rate (``--min-pass-rate``, a scenario's
    ``min_pass_rate``, with repeats) counts by its statistical verdict: PASS passes
    whatever its failing repeats, FAIL and INCONCLUSIVE fail; the line then adds the
    verdicts' counts, so it agrees with the exit code.
    """
    # each scenario's status rolled up once (a result does not keep it): the counts, the
    # rate and the notes below read this list, not the result's properties, which each
    # roll every status up again (~20 ms a pass over 10,000 results)
    statuses = [r.status for r in result.results]
    rate = pass_rate_of(statuses)
    counts = result.summary_line()
    failed_count = statuses.count(ScenarioStatus.FAIL)
    errored_count = statuses.count(ScenarioStatus.ERROR)
    verdicts = result.rate_verdicts
    if verdicts:
        judged = [r.rate_verdict for r in result.results]
        below = sum(v != "pass" for v in judged if v is not None)
        failed_count = below + sum(
            s is ScenarioStatus.FAIL for v, s in zip(judged, statuses, strict=True) if v is None
        )
        errored_count = sum(
            s is ScenarioStatus.ERROR for v, s in zip(judged, statuses, strict=True) if v is None
        )
        counts += " | min pass rate: " + ", ".join(
            f"{verdicts.get(v, 0)} {v}" for v in ("pass", "fail", "inconclusive")
        )
    threshold = "" if fail_under is None else f"{fail_under * 100:.1f}%"
    finished = len(result.results)
    missing = max(0, (collected or 0) - finished)
    if interrupted:
        code, word = 130, "INTERRUPTED"
        of = f" of {collected}" if collected is not None else ""
        reason = f"stopped by Ctrl-C after {finished}{of} scenarios finished"
    elif file_errors:
        code, word = 2, "ERROR"
        reason = f"{file_errors} file(s) could not be loaded or run"
        if replay_errors:
            reason += f", {replay_errors} file(s) stopped by their cassette"
    elif replay_errors:
        code, word = 2, "ERROR"
        reason = (
            f"{replay_errors} file(s) stopped by their cassette (a replay miss or an "
            "unreadable cassette, above); re-record with --record"
        )
    elif missing:
        code, word = 2, "ERROR"
        reason = f"{missing} of {collected} scenarios did not finish"
    elif write_errors:
        code, word = 2, "ERROR"
        reason = f"the results could not all be saved ({write_errors} error(s) above)"
    elif budget is not None and budget.failed:
        code, word = 4, "BUDGET"
        reason = _budget_reason(budget)
    elif live_calls:
        code, word = 1, "FAILED"
        reason = (
            f"{live_calls} LLM call(s) went live during the replay (--fail-on-live): "
            "re-record with --record, or find the call in the certificate above"
        )
    elif regressed:
        code, word = 1, "FAILED"
        reason = (
            f"{regressed} scenario(s) regressed significantly against the baseline "
            "(--fail-on-regression)"
        )
    elif (
        fail_on_vacuous
        and (vacuous := [r for r in result.results if r.vacuous])
        and not (failed_count or errored_count)
    ):
        code, word = 1, "FAILED"
        reason = (
            f"{len(vacuous)} scenario(s) passed with no interaction, or with an input "
            "generator that yielded none (--fail-on-vacuous)"
        )
    elif not failed_count and not errored_count:
        code, word, reason = 0, "PASSED", "no scenario failed" + _untested(result, statuses)
    elif fail_under is not None and rate is not None and rate >= fail_under:
        code, word, reason = 0, "PASSED", f"pass rate at least --fail-under {threshold}"
    elif errored_count:
        code, word, reason = 2, "ERROR", f"{errored_count} scenario(s) errored"
    else:
        code, word = 1, "FAILED"
        reason = f"{failed_count} scenario(s) failed"
        if verdicts:
            reason += (
                f" ({verdicts.get('fail', 0)} below their required pass rate, "
                f"{verdicts.get('inconclusive', 0)} inconclusive)"
            )
        if fail_under is not None:
            reason += f", pass rate below --fail-under {threshold}"
    return Verdict(code, f"scenarist: {word} (exit {code}): {reason} | {counts}")


def _budget_reason(budget: BudgetReport) -> str:
    """Why the budget fails the run, in the verdict line."""
    parts = []
    if budget.stopped:
        parts.append(f"{len(budget.stopped)} scenario(s) not started (BUDGET)")
    if budget.over_budget:
        parts.append(f"{len(budget.over_budget)} scenario(s) spent over their own budget")
    if budget.exceeded:
        parts.append("the limit was crossed by scenarios already running")
    return (
        f"the budget of {budget.limit_text()} stopped the run: {', '.join(parts)}; "
        f"spent ${budget.spent_usd:.4f}"
    )


def _untested(result: SuiteResult, statuses: list[ScenarioStatus]) -> str:
    """What a PASSED line must not hide, even with ``--quiet``: passes that tested nothing
    (no interaction, or no check), and a run whose every scenario was skipped.
    ``statuses``: each result's status, in order."""
    passed = [r for r, s in zip(result.results, statuses, strict=True) if s is ScenarioStatus.PASS]
    vacuous = sum(r.vacuous for r in passed)
    unchecked = sum(not r.has_checks and not r.vacuous for r in passed)
    notes = []
    if vacuous:
        notes.append(
            f"{vacuous} passed with no interaction (or an empty input generator): nothing "
            "tested, --fail-on-vacuous fails them"
        )
    if unchecked:
        notes.append(f"{unchecked} passed without any check")
    if result.results and not passed:
        notes.append("every scenario was skipped: nothing was tested")
    return f" ({'; '.join(notes)})" if notes else ""


@dataclass
class _Plan:
    files: list[SourceFile]
    parallel: int | AdaptiveConcurrency
    repeat: int
    cassette_mode: str | None
    quiet: bool
    executor: Any = None
    project: str | None = None
    junit: Path | None = None
    junit_full: bool = False
    guarantee: Guarantee | None = None
    """The run's replay guarantee (``None``: neither a replay nor a recording)."""
    budget: Budget | None = None
    """The run's budget, shared by every file's run (``--budget``)."""
    repeat_auto: bool = False
    """``--repeat auto[:N]``: ``repeat`` is the cap."""
    min_pass_rate: float | None = None
    freeze: Any = None
    """Called every ``FREEZE_EVERY`` results: they are kept to the end (``engine._gc``)."""
    upload_url: str | None = None
    """The server the run is sent to as it runs (``store.live_upload``), then whole."""
    selection: RunSelection | None = None
    """``-k``/``--tag`` as the run log's header records them (``None``: no filter)."""


def run(
    ctx: typer.Context,
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders to run.", show_default=False)
    ],
    keyword: Annotated[
        str | None,
        typer.Option("-k", help="Only scenarios whose names match, e.g. 'card and not lost'."),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Only scenarios with this tag (KEY:VALUE or KEY); repeatable."),
    ] = None,
    parallel: Annotated[
        str,
        typer.Option(
            "--parallel",
            metavar="N|auto",
            help="Scenarios run at once (per file); 'auto' adapts to 429s (AIMD, up to 64).",
        ),
    ] = "1",
    repeat: Annotated[
        str,
        typer.Option(
            "--repeat",
            metavar="K|auto[:N]",
            help=(
                "Run each scenario K times (pass rate, 95% interval, flakiness); 'auto' "
                "repeats each until --min-pass-rate is decided, at most N times (default 100)."
            ),
        ),
    ] = "1",
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate",
            min=0.0,
            max=1.0,
            help=(
                "With --repeat: the pass rate (0-1) each scenario must be shown to reach "
                "(PASS/FAIL/INCONCLUSIVE; a scenario's own min_pass_rate wins)."
            ),
        ),
    ] = None,
    record: Annotated[
        bool,
        typer.Option("--record", help="Re-record LLM calls into .cassettes/ next to each file."),
    ] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Answer LLM calls from .cassettes/ only (never live).")
    ] = False,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help=(
                "Write JUnit XML here: compact (no traces; a plain-text report for failing "
                "cases only; each case's file and line)."
            ),
        ),
    ] = None,
    junit_full: Annotated[
        bool,
        typer.Option(
            "--junit-full",
            help=(
                "With --junit: giskard-checks' full form (every trace and step as JSON "
                "properties, a report for every case)."
            ),
        ),
    ] = False,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Also write the run log (JSON Lines) here.")
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under", min=0.0, max=1.0, help="Exit 0 when the pass rate (0-1) reaches this."
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="Compare with a run log file, a run id, or 'last'."),
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help=(
                "With --baseline: fail the run (exit 1) when a scenario regressed "
                "significantly (one-sided Fisher exact test on its repeats' pass counts)."
            ),
        ),
    ] = False,
    regression_alpha: Annotated[
        float,
        typer.Option(
            "--regression-alpha",
            min=0.0001,
            max=0.5,
            help="The significance level of a regression (default 0.05).",
        ),
    ] = 0.05,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress, no full report: a line a failure, the verdict."
        ),
    ] = False,
    upload: Annotated[
        bool | None,
        typer.Option(
            "--upload/--no-upload",
            help="Send the run log to the server at SCENARIST_URL (default: when it is set).",
        ),
    ] = None,
    fail_on_vacuous: Annotated[
        bool,
        typer.Option(
            "--fail-on-vacuous",
            help="Fail the run when a scenario passed with no interaction in its trace.",
        ),
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help=(
                "Run the scenarios in batches on Ray (extra 'ray'): a local Ray (no ADDRESS, "
                "or 'local'), or the cluster at ADDRESS ('auto', 'ray://host:10001')."
            ),
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The agent (module:function) for scenarios that name none, e.g. YAML files.",
        ),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            envvar="SCENARIST_PROJECT",
            show_envvar=False,
            help="The project the run belongs to (default: SCENARIST_PROJECT, else 'default').",
        ),
    ] = None,
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help=(
                "With --replay: run in a network namespace with only loopback up (Linux, "
                "`unshare -n`), so no process of the run can reach another machine."
            ),
        ),
    ] = False,
    fail_on_live: Annotated[
        bool | None,
        typer.Option(
            "--fail-on-live/--no-fail-on-live",
            help="Fail the run when an LLM call went live (default: on with --replay).",
        ),
    ] = None,
    budget: Annotated[
        str | None,
        typer.Option(
            "--budget",
            metavar="AMOUNT",
            help=(
                "Stop starting scenarios before the run spends more than this: 5usd, $5, "
                "100000tokens, 5usd,1Mtokens. A scenario that would go over is not started "
                "(BUDGET) and the run exits 4; the spend is estimated first from cassettes "
                "and the store's history."
            ),
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
) -> None:
    if project is not None:
        from scenarist.store.projects import check_project

        # by name: Typer vendors click, so the enum's class depends on the Typer version
        from_env = getattr(ctx.get_parameter_source("project"), "name", "") == "ENVIRONMENT"
        check_project(project, source="SCENARIST_PROJECT" if from_env else "--project")
    if debug:
        from scenarist.cli.app import DEBUG_KEY

        ctx.meta[DEBUG_KEY] = True
    if record and replay:
        raise UserError("--record and --replay exclude each other; choose one")
    ledger = _parse_budget(budget)
    if junit_full and junit is None:
        raise UserError("--junit-full shapes the JUnit file: add --junit FILE")
    if fail_on_regression and not baseline:
        raise UserError("--fail-on-regression compares with a baseline: add --baseline RUN")
    repeat_count, repeat_auto = _repeat(repeat)
    if min_pass_rate is not None and repeat_count == 1 and not repeat_auto:
        typer.echo(
            "warning: --min-pass-rate is judged over repeated runs and this run makes one of "
            "each scenario; add --repeat K (30 or more) or --repeat auto",
            err=True,
        )
    if sandbox:
        if not replay:
            raise UserError(
                "--sandbox isolates a replay: add --replay (a recording needs the network)"
            )
        from scenarist.cli import _sandbox

        code = _sandbox.enter(_argv())
        if code >= 0:  # the run happened inside the sandbox, with its own report
            raise typer.Exit(code)
    freeze = _frozen_until_closed(ctx)
    chosen = [m for m in (parse_keyword(keyword) if keyword else None, parse_tags(tag or [])) if m]
    previous = load_run_log(baseline, project=project) if baseline else None
    found = discover(paths)
    for error in found.errors:
        typer.echo(f"error: {error.message}", err=True)
        if debug and error.details:
            typer.echo(error.details, err=True)
    if target is not None:
        _give_target(found, target)
    files = _filter(found, chosen)
    if not any(f.has_work for f in found.files) and found.errors:
        # nothing could be loaded: no report of nothing, no empty run stored
        count = len(found.errors)
        typer.echo(
            f"scenarist: ERROR (exit 2): {count} file(s) could not be loaded and no scenario "
            "ran; fix the errors above",
        )
        raise typer.Exit(2)
    if not any(f.has_work for f in files) and not found.errors:
        filters = " and ".join(f for f, on in (("-k", keyword), ("--tag", tag)) if on)
        if not filters:
            raise UserError(
                f"no scenarios found in {', '.join(map(str, paths))}; define a module-level "
                "Suite or Scenario, or name scenario files *.scenario.yaml / *.suite.yaml "
                "(item lists *.items.yaml)"
            )
        raise UserError(
            f"no scenario matches {filters} ({found.scenario_count} found); loosen the filter"
        )
    _warn_duplicate_names(files)
    if repeat_auto:
        from scenarist.engine._repeats import check_rates

        check_rates((s for f in files for s in f.scenarios), min_pass_rate)
    mode = "refresh" if record else "replay" if replay else None
    upload_url = check_upload(upload)
    scenario_files = [f for f in files if f.scenarios]
    plan = _Plan(
        scenario_files,
        _parallel(parallel),
        repeat_count,
        mode,
        quiet,
        _ray_executor(ray, scenario_files),
        project,
        junit,
        repeat_auto=repeat_auto,
        min_pass_rate=min_pass_rate,
    )
    if mode is not None:
        from scenarist.tracing.http._sandbox import guarantee

        plan.guarantee = guarantee(strict=mode == "replay")
    if ledger is not None:
        plan.budget = _estimated(ledger, scenario_files, mode, repeat_count, quiet, project)
    plan.freeze = freeze
    plan.upload_url = upload_url
    plan.junit_full = junit_full
    if keyword or tag:
        plan.selection = RunSelection(
            keyword=keyword or None,
            tags=list(tag or []),
            selected=sum(len(f.scenarios) for f in scenario_files),
            found=found.scenario_count,
        )
    freeze()  # the scenarios as discovered: kept to the end
    ran = _execute(plan, _suite_name(found))
    if not ran.interrupted:
        _run_items(ran, files, plan)
    result, header = ran.result, ran.header
    if plan.budget is not None:
        result = result.model_copy(update={"budget": plan.budget.report})
        ran.result = result
    from rich.console import Console

    console = Console()
    collected = sum(len(f.scenarios) for f in files) + ran.item_results
    if ran.interrupted:  # Ctrl-C: no report, no database; the streamed log stays as it is
        console.print(f"Run log (incomplete): {ran.stream}", highlight=False, soft_wrap=True)
        outcome = verdict(result, collected=collected, interrupted=True)
        console.print(outcome.line, highlight=False, soft_wrap=True, markup=False)
        raise typer.Exit(outcome.exit_code)
    certificate = run_certificate(
        result.results, [t.certificate() for t in ran.tapes], plan.guarantee
    )
    result = result.model_copy(update={"certificate": certificate})
    if not quiet:
        result.print_report(console=console)  # the certificate's line included
    else:  # one line a failure, as pytest -q
        from scenarist.report._console import short_summary

        for line in short_summary(result):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    for message in ran.errors + ran.replay_errors:
        typer.echo(f"error: {message}", err=True)
    if ran.tapes:
        console.print(replay_tally(ran.tapes), highlight=False, soft_wrap=True, markup=False)
    if certificate is not None and quiet:
        console.print(certificate.line(), highlight=False, soft_wrap=True, markup=False)
    regressed = 0
    if previous is not None:
        comparison = result.compare(previous.to_suite_result(), alpha=regression_alpha)
        regressed = len(comparison.regressed) if fail_on_regression else 0
        if not quiet:
            console.print(f"Compared with run {previous.header.run_id}:")
            comparison.print_report(console=console)
    outputs = Outputs(console, quiet)
    if junit is not None:
        outputs.junit(result, junit, certificate, locations=ran.locations, full=junit_full)
    # files that did not load or were stopped: the log keeps no footer, so the store, the
    # dashboard and `scenarist report` show an incomplete run, never a complete one of fewer
    unfinished = found.errors or ran.errors or ran.replay_errors or len(result.results) < collected
    log = run_log_from_suite_result(
        result.model_copy(update={"incomplete": True}) if unfinished else result,
        project=header.project,
        run_id=header.run_id,
        settings=header.settings,
        environment=header.environment,
        certificate=certificate,
        records=ran.records,
        selection=header.selection,
    )
    kept = outputs.run_log(log, ran.stream, json_file)
    outputs.database(log, ran.stream if kept else None)
    if upload_url is not None:
        outputs.upload(log, upload_url)
    outcome = verdict(
        result,
        file_errors=len(found.errors) + len(ran.errors),
        fail_under=fail_under,
        write_errors=len(outputs.problems),
        collected=collected,
        replay_errors=len(ran.replay_errors),
        fail_on_vacuous=fail_on_vacuous,
        live_calls=_live(certificate, replay if fail_on_live is None else fail_on_live),
        budget=result.budget,
        regressed=regressed,
    )
    console.print(outcome.line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(outcome.exit_code)


def _parse_budget(value: str | None) -> Budget | None:
    """``--budget``: parsed before anything runs (a bad amount is a usage error)."""
    if value is None:
        return None
    from scenarist.engine.budget import parse_budget

    return parse_budget(value, source="--budget")


def _estimated(
    ledger: Budget,
    files: list[SourceFile],
    mode: str | None,
    repeat: int,
    quiet: bool,
    project: str | None,
) -> Budget:
    """The run's budget with its estimate: with ``--replay``, a file's scenarios whose
    cassette exists spend nothing live; otherwise each scenario's largest cost over its
    last 10 stored runs (the store's history). Printed unless ``--quiet``."""
    estimates: dict[str, Estimate] = {}
    names: list[str] = []
    for file in files:
        cassette = file.path.parent / CASSETTE_DIR / f"{file.path.stem}.jsonl"
        for scenario in file.scenarios:
            if mode == "replay" and cassette.exists():
                from scenarist.engine.budget import Estimate

                estimates[scenario.name] = Estimate(0.0, 0, "cassette")
            else:
                names.append(scenario.name)
    estimates.update(_history(names, project))
    ledger.estimates = {**estimates, **ledger.estimates}
    report = ledger.estimate_run([s for f in files for s in f.scenarios], repeat)
    if not quiet:
        typer.echo(f"budget: limit {report.limit_text()}; estimated {report.estimate_text()}")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return ledger


def _history(names: list[str], project: str | None) -> dict[str, Estimate]:
    """Each scenario's largest cost over its last 10 stored runs (none when the store
    has no run of it, or cannot be read: the scenario is then estimated as it runs)."""
    if not names:
        return {}
    from scenarist._sync import run_sync
    from scenarist.engine.budget import Estimate
    from scenarist.store.default import default_store

    async def look_up() -> dict[str, Estimate]:
        store = default_store(project)
        history = getattr(store, "scenario_history", None)
        found: dict[str, Estimate] = {}
        if history is None:
            return found
        for name in dict.fromkeys(names):
            points = (await history(name, limit=10)).points
            costs = [p.cost_usd for p in points if p.cost_usd is not None]
            if costs:
                found[name] = Estimate(max(costs), 0, "history")
        return found

    try:
        return run_sync(look_up)
    except Exception as exc:  # no database yet, or one that cannot be read: no history
        typer.echo(f"warning: no history for the budget's estimate ({exc})", err=True)
        return {}


def _repeat(value: str) -> tuple[int, bool]:
    """``--repeat``: ``K`` (a whole number >= 1), ``auto`` or ``auto:N``."""
    text = value.strip()
    if text.isdigit() and int(text) >= 1:
        return int(text), False
    from scenarist.engine._repeats import parse_auto

    try:
        cap = parse_auto(text, source="--repeat")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return cap, True  # a scenario without a required rate is named by the engine


def _frozen_until_closed(ctx: typer.Context) -> Any:
    """Keep what exists now (the imports), the scenarios as discovered and the results as
    they come out of the cyclic collector's full collections until the command ends (as
    ``Suite.run`` does, ``engine._gc``): the function to call as results accumulate."""
    from scenarist.engine._gc import frozen_while_running

    scope = frozen_while_running()
    freeze = scope.__enter__()
    ctx.call_on_close(lambda: scope.__exit__(None, None, None))
    return freeze


def _live(certificate: ReplayCertificate | None, fail_on_live: bool) -> int:
    """The live calls ``--fail-on-live`` fails the run for (0 when off)."""
    return certificate.live if certificate is not None and fail_on_live else 0


def _argv() -> list[str]:
    """This command's arguments, to start it again in the sandbox."""
    import sys

    args = sys.argv[1:]
    if "run" not in args or "--sandbox" not in args:
        raise UserError(
            "--sandbox starts `scenarist run` again and needs its command line: run it as "
            "`scenarist run --replay --sandbox ...` (or `python -m scenarist run ...`)"
        )
    return args


def _parallel(value: str) -> int | AdaptiveConcurrency:
    """``--parallel``: a number >= 1, or ``auto`` (one adaptive level for the whole run)."""
    if value.strip().lower() == "auto":
        return AdaptiveConcurrency()
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise UserError(f"--parallel takes a number >= 1 or 'auto', got {value!r}")
    return number


def _ray_executor(address: str | None, files: list[SourceFile]) -> Any:
    """``--ray [ADDRESS]``: a ``RayExecutor`` shipping the scenario files' code by value
    (workers cannot import a file by path; the agent's own package they must import)."""
    if address is None:
        return None
    from scenarist.distributed.ray import RayExecutor

    python_files = [f.path for f in files if f.path.suffix == ".py"]
    return RayExecutor(None if address == "local" else address, ship_files=python_files)


def _cap(parallel: int | AdaptiveConcurrency) -> int:
    return parallel.cap if isinstance(parallel, AdaptiveConcurrency) else parallel


def _give_target(found: Discovery, reference: str) -> None:
    """``--target``: the agent of every scenario found that has none of its own."""
    from scenarist.formats.files import resolve_target
    from scenarist.model._missing import is_missing

    agent = resolve_target(reference, source="--target")
    for file in found.files:
        file.scenarios = [
            s.copy().with_target(agent) if is_missing(s.target) else s for s in file.scenarios
        ]


def _filter(found: Discovery, chosen: list[Any]) -> list[SourceFile]:
    if not chosen:
        return found.files
    return [  # items are not selected: a file's module-level runs have already run
        SourceFile(
            f.path,
            [s for s in f.scenarios if all(m(s) for m in chosen)],
            f.suite_names,
            f.item_runs,
            f.item_list,
        )
        for f in found.files
    ]


def _warn_duplicate_names(files: list[SourceFile]) -> None:
    """Two scenarios of one name run, but history, ``--baseline`` and the dashboard match
    scenarios by name: say which, and where (a scenario file without ``name`` is
    ``Unnamed Scenario``)."""
    where: dict[str, list[str]] = {}
    for file in files:
        for scenario in file.scenarios:
            where.setdefault(scenario.name, []).append(str(file.path))
    for name, paths in where.items():
        if len(paths) > 1:
            files_named = ", ".join(dict.fromkeys(paths))
            typer.echo(
                f"warning: {len(paths)} scenarios are named {name!r} ({files_named}); history "
                "and comparisons match scenarios by name: give each its own",
                err=True,
            )


def _suite_name(found: Discovery) -> str:
    names = [n for f in found.files for n in f.suite_names]
    if len(names) == 1:
        return names[0]
    if len(found.files) == 1 and not names:
        return found.files[0].path.stem
    return "scenarist run"


@contextmanager
def _ctrl_c_interrupts() -> Iterator[None]:
    """Ctrl-C raises ``KeyboardInterrupt`` at once, wherever the main thread is.

    asyncio's runner answers the first Ctrl-C by cancelling its main task, which runs only
    when the event loop gets control back: a sync agent that blocks (a slow call, a hung
    socket) kept the run going until it returned, and only a second Ctrl-C stopped it.
    Left alone when the process has its own SIGINT handler or this is not the main thread.
    After a Ctrl-C, asyncio's report of the tasks it then cancels (a traceback on stderr
    under the INTERRUPTED verdict) is dropped: the verdict says what happened.
    """
    import logging
    import signal
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    pressed: list[bool] = []

    def interrupt(signum: int, frame: Any) -> None:
        pressed.append(True)
        raise KeyboardInterrupt

    def quiet(record: logging.LogRecord) -> bool:
        return not (pressed and str(record.msg).startswith("unhandled exception during"))

    asyncio_log = logging.getLogger("asyncio")
    signal.signal(signal.SIGINT, interrupt)
    asyncio_log.addFilter(quiet)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        asyncio_log.removeFilter(quiet)


@dataclass
class _Ran:
    """What running the files gave: the results so far, the header, the errors that
    stopped a file, the streamed run log, and whether Ctrl-C stopped it all."""

    result: SuiteResult
    header: RunLogHeader
    errors: list[str]
    stream: Path
    interrupted: bool
    replay_errors: list[str]
    """Files a cassette stopped (a replay miss, a cassette that cannot be used)."""
    tapes: list[CassetteStats]
    """Each file's cassette verdict (``--record`` / ``--replay``)."""
    item_results: int = 0
    """How many of ``result``'s results are items (after the scenarios')."""
    records: list[ScenarioRecord | None] = field(default_factory=list)
    """The scenarios' records as streamed (by index): the final run log reuses them."""
    locations: list[Location | None] = field(default_factory=list)
    """Where each of ``result``'s results was defined (file, line when known): JUnit's."""


def _run_items(ran: _Ran, files: list[SourceFile], plan: _Plan) -> None:
    """Add the items to ``ran``: the runs files made while imported, then each item
    list run on the default client (inside the file's cassette with ``--record`` /
    ``--replay``, as a scenario file's agents are); one scenario result per item."""
    if not any(f.item_runs or f.item_list is not None for f in files):
        return  # no items: the Veval client is not even imported (~20 ms)
    from scenarist._sync import run_sync
    from scenarist.veval.default_client import get_client

    runs: list[tuple[Any, Path]] = []  # each run and its file

    async def run_list(file: SourceFile) -> None:
        assert file.item_list is not None
        spec, agent = file.item_list

        async def call() -> Any:
            return await get_client().run_scenario_async(
                spec.scenario_name,
                agent,
                list(spec.assertions),
                spec.scenario_items(),
                max_concurrency=max(spec.max_concurrency, _cap(plan.parallel)),
                budget=plan.budget,
            )

        if plan.cassette_mode is None:
            runs.append((await call(), file.path))
            return
        from scenarist.replay.cassette import cassette

        path = file.path.parent / CASSETTE_DIR / f"{file.path.stem}.jsonl"
        tape = cassette(path, plan.cassette_mode)  # type: ignore[arg-type]
        async with tape:
            runs.append((await call(), file.path))
        ran.tapes.append(tape.stats)

    for file in files:
        runs.extend((run, file.path) for run in file.item_runs)
        if file.item_list is None:
            continue
        try:
            with _ctrl_c_interrupts():
                run_sync(run_list, file)
        except KeyboardInterrupt:
            ran.interrupted = True
            break
        except (ReplayError, CassetteError) as exc:
            ran.replay_errors.append(f"{file.path}: {exc}")
        except UserError as exc:
            ran.errors.append(f"{file.path}: {exc}")
    results: list[ScenarioResult] = []
    for run, source in runs:
        found = run.to_scenario_results()
        results.extend(found)
        ran.locations.extend([location(source)] * len(found))
    if results:
        ran.item_results = len(results)
        ran.result = ran.result.model_copy(update={"results": [*ran.result.results, *results]})


def replay_tally(tapes: list[CassetteStats]) -> str:
    """The run's cassette verdict in one line, as the pytest summary gives it: every LLM
    call through a cassette (the agents', the judges' and the simulated users')."""
    total = {k: sum(getattr(t, k) for t in tapes) for k in ("replayed", "missed", "live")}
    unused = sum(t.unused for t in tapes)
    replayed = sum(t.mode == "replay" for t in tapes)
    return (
        f"cassettes: {len(tapes)} ({replayed} replayed, {len(tapes) - replayed} recorded) | "
        f"LLM calls (agents, judges, simulated users): {total['replayed']} replayed, "
        f"{total['missed']} missed, {total['live']} live, {unused} unused"
    )


def _execute(plan: _Plan, suite_name: str) -> _Ran:
    """Run every file's scenarios; results in discovery order, streamed to the run log
    (header first: a runs folder that cannot be written stops here, before any run)."""
    from scenarist._sync import run_sync
    from scenarist.engine._gc import FREEZE_EVERY
    from scenarist.engine._progress import Progress

    scenarios = [s for f in plan.files for s in f.scenarios]
    header = RunLogHeader(
        suite_name=suite_name,
        project=plan.project,
        started_at=datetime.now(UTC),
        environment=collect_environment(),
        settings=RunSettings(
            concurrency=_cap(plan.parallel),
            repeat=plan.repeat,
            repeat_auto=plan.repeat_auto,
            min_pass_rate=plan.min_pass_rate,
        ),
        budget=None if plan.budget is None else plan.budget.report,
        selection=plan.selection,
    )
    stream = runs_dir() / f"{header.run_id}.jsonl"
    try:
        write_jsonl([header], stream)
    except OSError as exc:
        raise UserError(write_problem("the run log in", runs_dir(), exc, HOME_FIX)) from exc
    live = _live_upload(plan.upload_url, header)
    results: list[ScenarioResult | None] = [None] * len(scenarios)
    records: list[ScenarioRecord | None] = [None] * len(scenarios)
    errors: list[str] = []
    replay_errors: list[str] = []
    tapes: list[CassetteStats] = []
    streaming = [True]  # off after a failed append (a full disk): the end rewrites it all
    ends = [sum(len(f.scenarios) for f in plan.files[: n + 1]) for n in range(len(plan.files))]
    from scenarist.cli import _supervise

    _supervise.announce(  # to the parent process, if any: what to report if this one dies
        str(stream.resolve()),
        str(plan.junit.resolve()) if plan.junit is not None else None,
        [s.name for s in scenarios],
        ends,
        _cap(plan.parallel),
        plan.junit_full,
    )
    adaptive = plan.parallel if isinstance(plan.parallel, AdaptiveConcurrency) else None
    progress = (
        None
        if plan.quiet
        else Progress(
            scenarios,
            plain_lines=True,
            parallel=_cap(plan.parallel),
            groups=ends,
            concurrency=adaptive,
        )
    )
    t0 = time.perf_counter()
    appender = _Appender(stream)

    kept = [0]

    def keep(index: int, result: ScenarioResult) -> None:
        results[index] = result
        kept[0] += 1
        if plan.freeze is not None and kept[0] % FREEZE_EVERY == 0:
            plan.freeze()
        record = records[index] = ScenarioRecord.from_result(index, result, plan.guarantee)
        if streaming[0]:
            try:
                appender.write(record_json(record) + "\n")
            except OSError:
                streaming[0] = False
        if live is not None:
            live.add(record)
        if progress is not None:
            progress.advance(index, result)

    async def run_file(file: SourceFile, offset: int) -> None:
        from scenarist.engine.suite import Suite

        suite = Suite(name=suite_name, scenarios=file.scenarios)

        async def sink(index: int, result: ScenarioResult) -> None:
            keep(offset + index, result)  # its line is written before the next one starts

        await suite.each_result(
            sink,
            return_exception=True,
            parallel=_cap(plan.parallel) > 1,
            max_concurrency=plan.parallel,
            repeat=f"auto:{plan.repeat}" if plan.repeat_auto else plan.repeat,
            executor=plan.executor,
            budget=plan.budget,
            min_pass_rate=plan.min_pass_rate,
        )

    async def run_all() -> None:
        offset = 0
        for file in plan.files:
            try:
                if plan.cassette_mode is None:
                    await run_file(file, offset)
                else:
                    from scenarist.replay.cassette import cassette

                    path = file.path.parent / CASSETTE_DIR / f"{file.path.stem}.jsonl"
                    tape = cassette(path, plan.cassette_mode)  # type: ignore[arg-type]
                    entered = False
                    try:
                        async with tape:
                            entered = True
                            await run_file(file, offset)
                    finally:
                        if entered:  # its calls count, a miss included
                            tapes.append(tape.stats)
            except (ReplayError, CassetteError) as exc:  # a miss, a cassette not usable
                replay_errors.append(f"{file.path}: {exc}")
            except UserError as exc:
                errors.append(f"{file.path}: {exc}")
            offset += len(file.scenarios)

    interrupted = False
    try:
        with _ctrl_c_interrupts():
            run_sync(run_all)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        appender.close()
        if live is not None:  # what finished reaches the server, even when interrupted
            live.finish()
        if progress is not None:
            progress.close()
    finished = [r for r in results if r is not None]
    places = [
        place for f in plan.files for place in locations(f.path, (s.name for s in f.scenarios))
    ]
    where: list[Location | None] = [
        place for place, r in zip(places, results, strict=True) if r is not None
    ]
    result = SuiteResult(
        results=finished,
        duration_ms=round((time.perf_counter() - t0) * 1000),
        suite_name=suite_name,
        started_at=header.started_at,
    )
    return _Ran(
        result,
        header,
        errors,
        stream,
        interrupted,
        replay_errors,
        tapes,
        records=records,
        locations=where,
    )


def _live_upload(url: str | None, header: RunLogHeader) -> LiveUpload | None:
    """The run sent to ``url`` as it runs (the header now), or ``None`` without a server."""
    if url is None:
        return None
    from scenarist.store.live_upload import LiveUpload
    from scenarist.store.remote import RemoteStore

    store = RemoteStore(
        url,
        os.environ.get("SCENARIST_API_KEY"),
        timeout_s=10.0,
        retries=1,
        sync_spool_on_start=False,
        project=header.project,
    )
    live = LiveUpload(store)
    live.start(header)
    return live


class _Appender:
    """The streamed run log's records, appended through one file opened at the first
    (each line reaches the file before the next scenario is reported: a run that dies
    leaves every finished scenario's line)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file: Any = None

    def write(self, line: str) -> None:
        data = line.encode("utf-8")
        if self._file is None:
            self._file = self._path.open("ab")
        self._file.write(data)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
