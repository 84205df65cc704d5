"""Every Python example of docs/statistics.md runs and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example_{i}" for i in range(len(BLOCKS))])
def test_statistics_doc_example_runs(block: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block, str(DOC), "exec"), {"__name__": "statistics_doc"})
    printed = capsys.readouterr().out.splitlines()
    expected = [
        line.split("# ", 1)[1].split(":", 1)[0]
        if "ScenarioStatus" in line
        else line.split("# ", 1)[1]
        for line in block.splitlines()
        if line.startswith("print(") and "# " in line
    ]
    assert len(printed) == len(expected)
    for got, want in zip(printed, expected, strict=True):
        assert got.startswith(want), (got, want)


def test_statistics_doc_has_an_example_per_topic() -> None:
    assert len(BLOCKS) == 3  # rates and a required rate, repeat auto, regressions
