"""``scenarist run`` with a calibrated judge check: recorded against the fake server, then
replayed with ``--parallel 4`` from another, cold ``$SCENARIST_HOME`` with the server
stopped. The calibration's judge calls come from the cassette (nothing live, nothing
unused), and the badge is in the console report, the JUnit properties and the run log."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.judges.test_calibration_gate import KAPPA, LABELS, RUBRIC, keyword_judge
from typer.testing import Result

from scenarist.formats.runlog import read_jsonl
from scenarist.testing import FakeLLMServer, ScriptedLLM

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

SUITE = f"""
import os

from scenarist import LLMJudge, Scenario, Suite
from scenarist.providers import OpenAIProvider

judge = OpenAIProvider("gpt-4o-mini", base_url=os.environ["FAKE_LLM_URL"], api_key="k")
suite = Suite(name="returns")
for n, answer in enumerate(["Within 30 days.", "Whenever you like.", "30 days, free."]):
    check = LLMJudge(
        name="return window", prompt={RUBRIC!r}, judge=judge,
        labelled_set="labels.jsonl", min_kappa=0.5,
    )
    suite.append(Scenario(f"answer_{{n}}").interact("Returns?", answer).check(check))
"""


def test_cli_calibration_gate_replays_from_a_cold_home_with_the_badge_everywhere(
    cli: Cli, write: Write, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(LABELS, home / "labels.jsonl")
    path = write("returns_suite.py", SUITE)
    with FakeLLMServer(ScriptedLLM(keyword_judge)) as server:
        monkeypatch.setenv("FAKE_LLM_URL", server.openai_url)
        recorded = cli("run", str(path), "--record")
        assert len(server.requests) == 10 + 3  # one calibration, three verdicts
    sys.modules.pop("returns_suite", None)
    assert recorded.exit_code == 1, recorded.output  # answer_1 fails: no 30-day window
    assert "0 replayed, 0 missed, 13 live" in recorded.stdout

    monkeypatch.setenv("SCENARIST_HOME", str(home / "cold-home"))
    replayed = cli(
        "run", str(path), "--replay", "--parallel", "4",
        "--junit", "out.xml", "--json", "run.jsonl",
    )  # fmt: skip
    sys.modules.pop("returns_suite", None)
    assert replayed.exit_code == 1, replayed.output
    assert "13 replayed, 0 missed, 0 live, 0 unused" in replayed.stdout
    text = " ".join(replayed.stdout.split())
    assert "Judge calibration: judge openai/gpt-4o-mini on labels.jsonl: calibrated κ 0.58, " in (
        text
    )
    assert "n=10" in text and "(3 verdicts)" in text
    assert not (home / "cold-home" / "judge-calibrations").exists()

    properties = [
        json.loads(p.get("value") or "")
        for p in ET.parse(home / "out.xml").iter("property")
        if p.get("name") == "judge_calibration"
    ]
    assert len(properties) == 3
    assert all(p["kappa"] == pytest.approx(KAPPA) and p["n"] == 10 for p in properties)
    records = read_jsonl(home / "run.jsonl").scenarios
    badges = [r.result.steps[0].results[0].details["calibration"] for r in records]
    assert [b["n"] for b in badges] == [10, 10, 10]
    assert [r.result.status.value for r in records] == ["pass", "fail", "pass"]
