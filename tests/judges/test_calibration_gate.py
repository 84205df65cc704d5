"""The calibration gate: a judge check that names a labelled set judges only when its judge
agrees with the labels well enough, and every verdict carries the calibration badge.

The judge is the OpenAI adapter talking to the fake server (real HTTP, counted requests);
its script passes an answer when it contains "30 days". On the shipped labelled set
(``labels/return_window.jsonl``, 10 cases) that judge has 5 true passes, 1 false fail, 3
true fails and 1 false pass: agreement 8/10, chance agreement 0.6·0.6 + 0.4·0.4 = 0.52,
κ = (0.8 − 0.52) / 0.48 = 0.5833.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rich.console import Console
from tests.replay.cassette_support import ConnectionCounter

from scenarist import CheckStatus, LLMJudge, Scenario, Suite
from scenarist.formats.runlog import read_jsonl, run_log_from_suite_result, write_jsonl
from scenarist.judges.gate import calibration_cache_dir
from scenarist.judges.labels import load_labelled_set
from scenarist.model.results import CheckResult
from scenarist.model.trace import Interaction, Trace
from scenarist.providers import OpenAIProvider
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

LABELS = Path(__file__).parent / "labels" / "return_window.jsonl"
SCHEMA = Path(__file__).parents[2] / "src/scenarist/formats/schemas/labelled-set.schema.json"
KAPPA = (0.8 - 0.52) / 0.48
RUBRIC = (
    "Pass if the answer gives the 30-day return window.\n<answer>{{ trace.last.outputs }}</answer>"
)
TRACE: Trace[Any, Any] = Trace().with_interaction(
    Interaction(inputs="Returns?", outputs="You can return it within 30 days.")
)


def keyword_judge(request: FakeRequest) -> Reply:
    """Passes an answer that contains "30 days"; ``broken`` gets a non-JSON reply."""
    found = re.search(r"<answer>(.*?)</answer>", request.text, re.S)
    answer = found.group(1) if found else ""
    if "broken" in answer:
        return Reply("ok", tokens_out=1)
    if "30 days" in answer:
        verdict = {"passed": True, "reason": f"It says {answer[:40]!r}."}
    else:
        verdict = {"passed": False, "reason": "No 30-day window."}
    return Reply(json.dumps(verdict), tokens_in=80, tokens_out=12)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_MIN_JUDGE_KAPPA", raising=False)
    return tmp_path / "home"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(ScriptedLLM(keyword_judge)) as running:
        yield running


def gated(server: FakeLLMServer, model: str = "gpt-4o-mini", **fields: Any) -> LLMJudge:
    judge = OpenAIProvider(model, base_url=server.openai_url, api_key="sk-test")
    options: dict[str, Any] = {
        "name": "return window",
        "prompt": RUBRIC,
        "labelled_set": str(LABELS),
        "min_kappa": 0.5,
        **fields,
    }
    return LLMJudge(judge=judge, **options)


def run(check: LLMJudge, trace: Trace[Any, Any] = TRACE) -> CheckResult:
    return (
        Scenario("s")
        .interact(trace.last.inputs, trace.last.outputs)
        .check(check)
        .run_sync(return_exception=True)
        .steps[0]
        .results[0]
    )


def test_calibration_gate_labelled_set_is_valid_against_its_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    lines = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    one_case = {"$ref": "#/$defs/case", "$defs": schema["$defs"]}  # a JSON Lines line
    for line in lines:
        jsonschema.validate(line, one_case)
    jsonschema.validate({"cases": lines}, schema)
    assert len(load_labelled_set(LABELS).cases) == 10


def test_calibration_gate_passes_with_the_badge_and_calibrates_once(
    home: Path, server: FakeLLMServer
) -> None:
    result = run(gated(server))
    assert result.status is CheckStatus.PASS, result.message
    badge = result.details["calibration"]
    assert badge["kappa"] == pytest.approx(KAPPA)
    assert badge["agreement"] == pytest.approx(0.8)
    assert badge["n"] == 10 and badge["not_evaluated"] == 0
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", badge["date"])
    assert (badge["min_kappa"], badge["min_agreement"]) == (0.5, None)
    assert badge["labelled_set"] == str(LABELS) and badge["source"] == "computed"
    assert len(server.requests) == 10 + 1  # ten labelled cases, then the verdict
    (cached,) = calibration_cache_dir().glob("*.json")
    assert json.loads(cached.read_text())["kappa"] == pytest.approx(KAPPA)

    again = run(gated(server))  # another check object, same judge, rubric and parameters
    assert again.status is CheckStatus.PASS
    assert again.details["calibration"]["source"] == "this run"
    assert len(server.requests) == 10 + 2  # only the verdict


def test_calibration_gate_reuses_the_calibration_kept_in_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, server: FakeLLMServer
) -> None:
    run(gated(server))
    other = tmp_path / "other-home"
    shutil.copytree(home, other)  # what a later run on this machine finds
    monkeypatch.setenv("SCENARIST_HOME", str(other))
    before = len(server.requests)
    result = run(gated(server))
    assert result.status is CheckStatus.PASS
    assert result.details["calibration"]["source"] == "cache"
    assert result.details["calibration"]["kappa"] == pytest.approx(KAPPA)
    assert len(server.requests) == before + 1


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"model": "gpt-4o"}, id="judge-model"),
        pytest.param({"prompt": RUBRIC + "\nBe strict."}, id="prompt"),
        pytest.param({"temperature": 0.5}, id="temperature"),
        pytest.param({"max_retries": 1}, id="retries"),
    ],
)
def test_calibration_gate_any_change_invalidates_the_calibration(
    change: dict[str, Any], home: Path, server: FakeLLMServer
) -> None:
    run(gated(server))
    assert len(server.requests) == 11
    result = run(gated(server, **change))
    assert result.details["calibration"]["source"] == "computed"
    assert len(server.requests) == 11 + 11
    assert len(list(calibration_cache_dir().glob("*.json"))) == 2


def test_calibration_gate_a_changed_labelled_set_invalidates_it(
    tmp_path: Path, home: Path, server: FakeLLMServer
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(LABELS.read_text(encoding="utf-8"), encoding="utf-8")
    run(gated(server, labelled_set=str(labels)))
    labels.write_text(LABELS.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = run(gated(server, labelled_set=str(labels)))
    assert result.details["calibration"]["source"] == "computed"
    assert len(server.requests) == 22


@pytest.mark.parametrize(
    ("minimums", "shortfall"),
    [
        pytest.param({"min_kappa": 0.6}, "κ 0.58 < min_kappa 0.60", id="kappa"),
        pytest.param(
            {"min_agreement": 0.9}, "agreement 80.0% < min_agreement 90.0%", id="agreement"
        ),
    ],
)
def test_calibration_gate_below_the_minimum_is_error_with_the_figures(
    minimums: dict[str, float], shortfall: str, home: Path, server: FakeLLMServer
) -> None:
    result = run(gated(server, **minimums))
    assert result.status is CheckStatus.ERROR
    message = result.message or ""
    assert message.startswith("The judge is below this check's calibration minimum: ")
    assert shortfall in message
    assert f"on {LABELS} (n=10, calibrated " in message
    assert "the check was not judged" in message
    assert result.details["calibration"]["kappa"] == pytest.approx(KAPPA)
    assert len(server.requests) == 10  # the calibration only: no verdict asked


def test_calibration_gate_unevaluated_cases_are_an_error_and_not_kept(
    tmp_path: Path, home: Path, server: FakeLLMServer
) -> None:
    labels = tmp_path / "labels.jsonl"
    broken = {"name": "broken", "inputs": "q", "outputs": "broken", "expected": True}
    labels.write_text(LABELS.read_text(encoding="utf-8") + json.dumps(broken) + "\n")
    result = run(gated(server, labelled_set=str(labels), max_retries=0))
    assert result.status is CheckStatus.ERROR
    assert "1 labelled case(s) were not evaluated (first: broken: error — " in (
        result.message or ""
    )
    assert not calibration_cache_dir().exists()
    assert len(server.requests) == 11
    again = run(gated(server, labelled_set=str(labels), max_retries=0))
    assert again.status is CheckStatus.ERROR
    assert len(server.requests) == 22  # the next run tries again: the judge may be fixed
    suite = gated_suite(server.openai_url, labels, max_retries=0)
    outcome = suite.run_sync(parallel=True, verbose=False)
    assert [r.steps[0].results[0].message for r in outcome.results] == [again.message] * 2
    assert len(server.requests) == 22 + 11  # within a run, one failed calibration is enough


def test_calibration_gate_misuse_and_a_missing_set(
    tmp_path: Path, home: Path, server: FakeLLMServer
) -> None:
    with pytest.raises(ValueError, match=r"min_kappa=0\.5 needs labelled_set="):
        LLMJudge(prompt=RUBRIC, min_kappa=0.5)
    missing = tmp_path / "nowhere.jsonl"
    result = run(gated(server, labelled_set=str(missing)))
    assert result.status is CheckStatus.ERROR
    assert result.message == (
        f"The calibration gate cannot read the labelled set: {missing}: no such labelled "
        "set; give the path of a JSON Lines, JSON or YAML file of labelled cases (relative "
        "paths are read from the working directory)"
    )
    assert len(server.requests) == 0


def test_calibration_gate_absent_leaves_results_and_dumps_as_before(
    home: Path, server: FakeLLMServer
) -> None:
    plain = LLMJudge(prompt=RUBRIC, judge=gated(server).judge)
    assert set(plain.model_dump(mode="json")) == {
        "kind", "name", "description", "prompt", "prompt_path", "judge"
    }  # fmt: skip
    result = run(plain)
    assert result.status is CheckStatus.PASS
    assert "calibration" not in result.details
    assert len(server.requests) == 1
    dumped = gated(server).model_dump(mode="json")
    assert (dumped["labelled_set"], dumped["min_kappa"]) == (str(LABELS), 0.5)
    assert "min_agreement" not in dumped


# -- replay and reports ------------------------------------------------------------------


def gated_suite(base_url: str, labelled_set: Path = LABELS, **options: Any) -> Suite:
    """Two scenarios, run in parallel, sharing one calibrated judge check's parameters."""
    judge = OpenAIProvider("gpt-4o-mini", base_url=base_url, api_key="sk-test")

    def scenario(name: str, answer: str) -> Scenario[Any, Any]:
        check = LLMJudge(
            name="return window",
            prompt=RUBRIC,
            judge=judge,
            labelled_set=str(labelled_set),
            min_kappa=0.5,
            **options,
        )
        return Scenario(name).interact("Returns?", answer).check(check)

    return Suite(
        name="returns",
        scenarios=[
            scenario("in window", "Within 30 days, free of charge."),
            scenario("no window", "Send it back whenever you like."),
        ],
    )


def test_calibration_gate_a_replayed_calibrated_run_makes_no_live_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded with one home, replayed with another, cold one: the calibration's judge
    calls come from the cassette too, so the replay reaches no server and gives the same
    badge and verdicts."""
    tape_path = tmp_path / "returns.jsonl"
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "recording-home"))
    with FakeLLMServer(ScriptedLLM(keyword_judge)) as server:
        with cassette(tape_path, mode="record") as tape:
            recorded = gated_suite(server.openai_url).run_sync(parallel=True, verbose=False)
        assert tape.stats.live == 10 + 2  # one calibration for both scenarios, two verdicts
        assert len(server.requests) == 12
    assert not (tmp_path / "recording-home" / "judge-calibrations").exists()  # on the tape

    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "replaying-home"))
    with ConnectionCounter() as port, cassette(tape_path, mode="replay") as tape:
        replayed = gated_suite(port.openai_url).run_sync(parallel=True, verbose=False)
    assert port.connections == 0
    assert tape.stats.faithful, tape.stats.to_dict()
    assert tape.stats.replayed == 12
    for live, again in zip(recorded.results, replayed.results, strict=True):
        live_check, replayed_check = live.steps[0].results[0], again.steps[0].results[0]
        assert replayed_check.status is live_check.status
        badge = replayed_check.details["calibration"]
        assert badge["kappa"] == pytest.approx(KAPPA) and badge["n"] == 10
        assert {k: v for k, v in badge.items() if k not in {"source", "date", "calibrated_at"}} == {
            k: v
            for k, v in live_check.details["calibration"].items()
            if k not in {"source", "date", "calibrated_at"}
        }
    assert [r.status.value for r in replayed.results] == ["pass", "fail"]


def test_calibration_gate_badge_in_console_junit_and_run_log(
    tmp_path: Path, home: Path, server: FakeLLMServer
) -> None:
    result = gated_suite(server.openai_url).run_sync(verbose=False)
    badge_line = f"calibrated κ 0.58, agreement 80.0%, n=10, {date.today().isoformat()}"

    console = Console(width=200, color_system=None, record=True)
    result.print_report(console)
    text = console.export_text()
    assert f"No 30-day window. [{badge_line}]" in text  # on the check's row
    assert (
        f"Judge calibration: judge openai/gpt-4o-mini on {LABELS}: {badge_line} (2 verdicts)"
        in (" ".join(text.split()))
    )  # under the results, for the passes too

    xml = ET.fromstring(result.to_junit_xml())
    properties = [
        json.loads(p.get("value") or "")
        for p in xml.iter("property")
        if p.get("name") == "judge_calibration"
    ]
    assert [p["check"] for p in properties] == ["step_1.return window"] * 2
    assert all(p["kappa"] == pytest.approx(KAPPA) and p["n"] == 10 for p in properties)

    path = tmp_path / "run.jsonl"
    write_jsonl(run_log_from_suite_result(result), path)
    records = read_jsonl(path).scenarios
    badges = [r.result.steps[0].results[0].details["calibration"] for r in records]
    assert [(b["kappa"], b["n"], b["min_kappa"]) for b in badges] == [
        (pytest.approx(KAPPA), 10, 0.5)
    ] * 2
