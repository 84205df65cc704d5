"""``calibrate``: agreement between a judge check and human labels, with exact numbers."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from scenarist import Conformity, LLMJudge
from scenarist.judges import (
    CalibrationResult,
    Disagreement,
    LabelledCase,
    calibrate,
    calibrate_sync,
)

from .conftest import FakeProvider, make_trace, verdict


def case(answer: str, expected: bool) -> LabelledCase:
    return LabelledCase(trace=make_trace(("q", answer)), expected=expected, name=answer)


class KeywordJudge(FakeProvider):
    """Passes answers containing "ok", fails the rest, and answers "??" to "broken"."""

    async def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def]
        prompt = messages[-1]["content"]
        if "broken" in prompt:
            self.replies = ["??"]
        else:
            self.replies = [verdict("ok" in prompt, f"judged {prompt!r}")]
        return await super().chat(messages, **kwargs)


CASES = [
    case("ok 1", True),  # TP
    case("ok 2", True),  # TP
    case("ok 3", True),  # TP
    case("bad 1", True),  # FN
    case("bad 2", False),  # TN
    case("bad 3", False),  # TN
    case("ok 4", False),  # FP
    case("broken", True),  # not evaluated
]


@pytest.mark.anyio
async def test_calibrate_counts_rates_and_kappa_exactly() -> None:
    check = LLMJudge(prompt="{{ trace.last.outputs }}", judge=KeywordJudge(), max_retries=0)
    result = await calibrate(check, CASES)
    assert (result.true_positives, result.false_negatives) == (3, 1)
    assert (result.true_negatives, result.false_positives) == (2, 1)
    assert result.judged == 7
    assert result.accuracy == pytest.approx(5 / 7)
    assert result.tpr == pytest.approx(3 / 4)
    assert result.tnr == pytest.approx(2 / 3)
    # observed 5/7; chance = 4/7·4/7 + 3/7·3/7 = 25/49; κ = (35/49 − 25/49) / (24/49)
    assert result.kappa == pytest.approx(10 / 24)
    assert [(d.name, d.expected, d.status) for d in result.disagreements] == [
        ("bad 1", True, "fail"),
        ("ok 4", False, "pass"),
    ]
    assert [(e.name, e.status) for e in result.errors] == [("broken", "error")]
    assert len(result.results) == 8


def test_calibrate_sync_accepts_tuples_and_kappa_can_be_undefined() -> None:
    check = Conformity(rule="r", judge=KeywordJudge())
    traces = [(make_trace(("q", "ok")), True), (make_trace(("q", "ok!")), True)]
    result = calibrate_sync(check, traces)
    assert (result.accuracy, result.tpr, result.tnr, result.kappa) == (1.0, 1.0, None, None)


def test_calibrate_rejects_empty_and_malformed_cases() -> None:
    check = Conformity(rule="r", judge=KeywordJudge())
    with pytest.raises(ValueError, match="at least one labelled case"):
        calibrate_sync(check, [])
    with pytest.raises(ValueError, match="labelled case 0 must be a LabelledCase"):
        calibrate_sync(check, ["not a case"])  # type: ignore[list-item]


def test_calibration_result_renders_with_rich() -> None:
    result = CalibrationResult(
        true_positives=3,
        false_negatives=1,
        true_negatives=2,
        false_positives=1,
        disagreements=[Disagreement(3, "bad 1", True, "fail", "judged no")],
        errors=[Disagreement(7, None, True, "error", "Judge broke")],
    )
    out = io.StringIO()
    Console(file=out, width=60, color_system=None).print(result)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines == [
        "Judge calibration",
        "┌───────────────────┬───────┐",
        "│ cases judged      │     7 │",
        "│ accuracy          │ 71.4% │",
        "│ TPR (pass recall) │ 75.0% │",
        "│ TNR (fail recall) │ 66.7% │",
        "│ Cohen's κ         │ 0.417 │",
        "│ not evaluated     │     1 │",
        "└───────────────────┴───────┘",
        "Labels × judge",
        "┏━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━┓",
        "┃ label ┃ judge: pass ┃ judge: fail ┃",
        "┡━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━┩",
        "│ pass  │           3 │           1 │",
        "│ fail  │           1 │           2 │",
        "└───────┴─────────────┴─────────────┘",
        "Disagreements",
        "  bad 1: labelled pass, judge fail — judged no",
        "Errors",
        "  case 7: labelled pass, judge error — Judge broke",
    ]
