"""The Python examples of ``docs/judges.md`` run as they are (offline, from the repository
root, with a fresh ``$SCENARIST_HOME``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "docs/judges.md").read_text(), re.S | re.M)
EXAMPLES = [block for block in BLOCKS if "FakeLLMServer" in block]


def test_judges_docs_have_one_runnable_example_per_guarantee() -> None:
    assert len(EXAMPLES) == 2


@pytest.mark.parametrize("code", EXAMPLES, ids=["short-verdicts", "calibration-gate"])
def test_judges_docs_example_runs(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_MIN_JUDGE_KAPPA", raising=False)
    exec(compile(code, "docs/judges.md", "exec"), {"__name__": "docs_example"})
