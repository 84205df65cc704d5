"""CLI tests: every test runs in its own folder with its own ``SCENARIST_HOME``."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from scenarist.cli.app import app

PASSING = """
from scenarist import Scenario, StringMatching

def agent(inputs):
    return f"echo: {inputs}"

ok = Scenario("echo_ok").interact("hello").check(StringMatching(keyword="hello")).with_target(agent)
"""

FAILING = """
from scenarist import Scenario, StringMatching, Suite

def agent(inputs):
    return f"echo: {inputs}"

suite = Suite(name="mixed", target=agent)
suite.append(Scenario("says_hello").with_tags(["topic:greet"]).interact("hello")
             .check(StringMatching(keyword="hello")))
suite.append(Scenario("says_bye").with_tags(["topic:farewell", "smoke"]).interact("hello")
             .check(StringMatching(keyword="bye")))
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder and ``SCENARIST_HOME`` for one test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)
    return tmp_path


@pytest.fixture
def write(home: Path) -> Callable[[str, str], Path]:
    def write_file(name: str, text: str) -> Path:
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write_file


@pytest.fixture
def cli(home: Path) -> Callable[..., Result]:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, list(args))

    return invoke
