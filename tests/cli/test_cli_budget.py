"""``scenarist run --budget``: the estimate printed before the run (and kept in the run
log), scenarios the budget did not start reported BUDGET in the console, the run log and
JUnit, the results so far kept, exit 4; a bad amount is a usage error naming the flag."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import Result

from scenarist.providers.pricing import cost_usd
from scenarist.testing import FakeLLMServer, Reply

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

TOKENS = 1000
CALL_USD = cost_usd("openai", "gpt-4o-mini", TOKENS, TOKENS)

PAID = """
import os, httpx
from scenarist import Scenario, StringMatching, Suite

def agent(inputs):
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": inputs}]}
    reply = httpx.post(os.environ["FAKE_URL"] + "/v1/chat/completions", json=body, timeout=30)
    return reply.json()["choices"][0]["message"]["content"]

suite = Suite(name="paid", target=agent, scenarios=[
    Scenario(f"s{i}").interact("hello").check(StringMatching(keyword="hi")) for i in range(5)
])
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(lambda request: Reply("hi there", tokens_in=TOKENS, tokens_out=TOKENS)) as s:
        monkeypatch.setenv("FAKE_URL", s.url)
        yield s


def _log(home: Path) -> list[dict[str, object]]:
    (path,) = (home / "home" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_budget_stops_the_run_half_way_exit_4(
    cli: Cli, write: Write, home: Path, server: FakeLLMServer
) -> None:
    assert CALL_USD is not None
    write("paid_suite.py", PAID)
    junit = home / "out.xml"
    result = cli("run", "paid_suite.py", "--budget", f"{CALL_USD * 2.5}usd", "--junit", str(junit))
    assert result.exit_code == 4, result.output
    assert len(server.requests) == 2
    out = result.output
    assert "budget: limit $" in out and "estimated unknown (scenarios by source: 5 unknown)" in out
    assert "..BBB" in out
    assert "BUDGET 3 scenario(s) not started: s2, s3, s4" in out
    assert "3 not started (budget)" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("scenarist: BUDGET (exit 4): the budget of $")
    assert "3 scenario(s) not started (BUDGET)" in last
    # the run log: results so far, the BUDGET outcome, the budget in the header
    header, *scenarios, footer = _log(home)
    budget = header["budget"]
    assert isinstance(budget, dict) and budget["stopped"] == ["s2", "s3", "s4"]
    assert budget["spent_usd"] == pytest.approx(2 * CALL_USD)
    assert [s["outcome"] for s in scenarios] == [None, None, "budget", "budget", "budget"]
    assert [s["result"]["status"] for s in scenarios] == ["pass"] * 2 + ["error"] * 3  # type: ignore[index]
    assert footer["record_type"] == "footer"
    # JUnit: an error of type BUDGET naming the budget
    cases = ET.parse(junit).getroot().iter("testcase")
    errors = [c.find("error") for c in cases]
    kinds = [e.get("type") if e is not None else None for e in errors]
    assert kinds == [None, None, "BUDGET", "BUDGET", "BUDGET"]
    message = errors[2].get("message") if errors[2] is not None else ""
    assert message is not None and message.startswith("BUDGET: not started: the run's budget")


def test_the_estimate_comes_from_history_on_the_next_run(
    cli: Cli, write: Write, home: Path, server: FakeLLMServer
) -> None:
    write("paid_suite.py", PAID)
    assert cli("run", "paid_suite.py").exit_code == 0
    result = cli("run", "paid_suite.py", "--budget", "5usd")
    assert result.exit_code == 0, result.output
    assert CALL_USD is not None
    assert f"estimated ${5 * CALL_USD:.4g} (scenarios by source: 5 history)" in result.output
    runs = sorted((home / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    header = json.loads(runs[-1].read_text().splitlines()[0])
    assert header["budget"]["estimated_from"] == {"history": 5}
    assert header["budget"]["estimate_usd"] == pytest.approx(5 * CALL_USD)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("five", "error: --budget takes an amount of USD or tokens, like 5usd"),
        ("-1", "error: --budget must be 0 or more, got '-1'"),
    ],
)
def test_a_bad_budget_is_a_usage_error_naming_the_flag(
    cli: Cli, write: Write, value: str, message: str
) -> None:
    write("paid_suite.py", PAID)
    result = cli("run", "paid_suite.py", f"--budget={value}")
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_the_help_documents_the_budget_exit_code(cli: Cli) -> None:
    result = cli("run", "--help")
    assert "--budget" in result.output
    assert "4 the budget stopped the run" in " ".join(result.output.split()).replace("│ ", "")


def test_a_replay_is_estimated_from_its_cassette_and_fits_a_zero_budget(
    cli: Cli, write: Write, home: Path, server: FakeLLMServer
) -> None:
    write("paid_suite.py", PAID)
    assert cli("run", "paid_suite.py", "--record").exit_code == 0
    sent = len(server.requests)
    result = cli("run", "paid_suite.py", "--replay", "--budget", "0usd")
    assert result.exit_code == 0, result.output
    assert "estimated $0.00 (scenarios by source: 5 cassette)" in result.output
    assert len(server.requests) == sent  # every call answered by the cassette
    runs = sorted((home / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    budget = json.loads(runs[-1].read_text().splitlines()[0])["budget"]
    assert (budget["spent_usd"], budget["spent_tokens"], budget["stopped"]) == (0.0, 0, [])
