"""``scenarist judges calibrate LABELS --judge MODEL``: a judge against human labels.

``LABELS`` is a JSON, YAML or JSON Lines file of labelled cases (the format of
:mod:`scenarist.judges.labels`, also read by a judge check's ``labelled_set=`` gate); a
JSON/YAML object may also name the judge check to calibrate (any judge kind with its fields; default
``{"kind": "groundedness"}``)::

    check: {kind: conformity, rule: "Never promise a refund."}
    cases:
      - name: polite refusal
        inputs: Can I have my money back?
        outputs: I can't promise that, but I can open a request.
        expected: true            # the person's verdict: should the check pass?
      - name: two turns
        trace:                    # several interactions
          - {inputs: Hi, outputs: Hello}
          - {inputs: Refund?, outputs: Sure, done!, metadata: {context: ...}}
        expected: false

The report is :func:`scenarist.judges.calibrate`'s (accuracy, TPR, TNR, Cohen's κ, every
disagreement). The result is kept as the judge's calibration in
``$SCENARIST_HOME/calibrations.json`` (``--no-save`` to skip), which run reports read to
warn about judges that calibrate badly. Exit 0 when κ reaches ``--min-kappa``; 1 when it
does not (or is undefined: the judge, or the labels, never vary); 2 for a bad file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from scenarist.errors import UserError

__all__ = ["calibrate_command", "judges_app", "load_labels"]

judges_app = typer.Typer(help="Judge models: calibrate them against human labels.")


def load_labels(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The check spec and the labelled cases in ``path`` (errors name the file and case);
    the format is :mod:`scenarist.judges.labels`'."""
    from scenarist.judges.labels import load_labelled_set

    labelled = load_labelled_set(path)
    return labelled.check or {"kind": "groundedness"}, labelled.cases


@judges_app.command("calibrate")
def calibrate_command(
    labels: Annotated[Path, typer.Argument(help="Labelled cases (JSON, YAML or JSON Lines).")],
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="The judge model, 'provider/model' (default: configured)."),
    ] = None,
    min_kappa: Annotated[
        float | None,
        typer.Option(
            "--min-kappa",
            help="Exit 1 below this Cohen's κ (default SCENARIST_MIN_JUDGE_KAPPA, 0.4).",
        ),
    ] = None,
    save: Annotated[
        bool,
        typer.Option("--save/--no-save", help="Keep the result for run reports' warnings."),
    ] = True,
) -> None:
    """Calibrate a judge: its verdicts on labelled cases against the labels."""
    from rich.console import Console

    from scenarist.checks.base import Check
    from scenarist.judges.base import BaseLLMCheck
    from scenarist.judges.calibrate import calibrate_sync
    from scenarist.judges.health import min_kappa as default_min_kappa
    from scenarist.judges.health import save_calibration

    spec, cases = load_labels(labels)
    try:
        check = Check.model_validate(spec)
        if isinstance(check, BaseLLMCheck) and judge is not None:
            check = check.copy_with(judge=judge)
    except ValueError as exc:
        raise UserError(f"{labels}: 'check' is not a valid check: {exc}") from None
    if not isinstance(check, BaseLLMCheck):
        raise UserError(f"{labels}: 'check' must be a judge check (kind {spec['kind']!r} is not)")
    name = check.resolved_judge().name
    result = calibrate_sync(check, cases)
    console = Console()
    console.print(f"Judge {name}, check {check.kind}, {len(cases)} labelled case(s)")
    console.print(result)
    threshold = default_min_kappa() if min_kappa is None else min_kappa
    if save:
        path = save_calibration(name, result)
        console.print(f"Calibration kept in {path}", highlight=False, soft_wrap=True)
    kappa = result.kappa
    if kappa is None or kappa < threshold:
        shown = "undefined" if kappa is None else f"{kappa:.3f}"
        console.print(
            f"scenarist: judge {name} is not reliable: κ {shown} < {threshold:.2f}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        raise typer.Exit(1)
    console.print(
        f"scenarist: judge {name} agrees with the labels: κ {kappa:.3f} ≥ {threshold:.2f}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
