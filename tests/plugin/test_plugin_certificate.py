"""The replay certificate of a pytest session: the ``scenarist`` summary gives it (replayed
/ missed / refused / live and the guarantee), pytest's JUnit file carries it as
``scenarist run --junit`` does (``replay.*`` properties on the suite and on each case),
and a live LLM call in a session that replays fails the session (``--fail-on-live``, on
by default when every cassette replays; ``--no-fail-on-live`` allows it).

The agent calls the fake provider on loopback, which counts what reached it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx  # noqa: F401  # loaded before pytester's runs, which unload what they import
import pytest
from tests.replay.cassette_support import echo_script

from scenarist.model.certificate import ReplayCertificate
from scenarist.testing import FakeLLMServer

pytest_plugins = ["pytester"]

AGENT = """
import json, os

import httpx
from scenarist import Scenario, StringMatching

BODY = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]})


def agent(inputs):
    reply = httpx.post(os.environ["FAKE_URL"] + "/v1/chat/completions", content=BODY)
    return "answer: " + reply.json()["choices"][0]["message"]["content"]


def asks(name):
    return Scenario(name).interact("hi").check(StringMatching(keyword="answer")).with_target(agent)
"""

REPLAYED = """
from support_agent import asks

def test_asks(scenarist_replay, scenarist_run):
    scenarist_run(asks("asks")).assert_passed()
"""

FORGOT_THE_CASSETTE = """
from support_agent import asks

def test_forgot_the_cassette(scenarist_run):
    scenarist_run(asks("unguarded")).assert_passed()
"""

CLEAN = ReplayCertificate(replayed=1, guarantee="in-process")


@pytest.fixture
def server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("SCENARIST_HOME", str(pytester.path / "home"))
    monkeypatch.delenv("SCENARIST_RECORD_MODE", raising=False)
    with FakeLLMServer(echo_script()) as fake:
        monkeypatch.setenv("FAKE_URL", fake.url)
        pytester.makepyfile(support_agent=AGENT, test_replayed=REPLAYED)
        yield fake


def _replay(element: ET.Element) -> dict[str, str]:
    return {
        p.get("name", ""): p.get("value", "")
        for p in element.findall("properties/property")
        if p.get("name", "").startswith("replay.")
    }


def _junit(path: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The suite's ``replay.*`` properties, and each case's by test name."""
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name", ""): _replay(case) for case in suite.iter("testcase")}
    return _replay(suite), cases


def test_a_replayed_session_shows_its_certificate_in_the_summary_and_junit(
    pytester: pytest.Pytester, server: FakeLLMServer
) -> None:
    recorded = pytester.runpytest("--scenarist-record=all", "--junitxml=recorded.xml")
    recorded.assert_outcomes(passed=1)
    assert recorded.ret == 0
    recorded.stdout.fnmatch_lines(
        ["*= scenarist =*", "replay certificate: 0 replayed, 0 missed, 0 refused, 1 live *none)"]
    )
    assert _junit(pytester.path / "recorded.xml")[0]["replay.live"] == "1"
    sent = len(server.requests)

    replayed = pytester.runpytest("--scenarist-record=none", "--junitxml=replayed.xml")
    replayed.assert_outcomes(passed=1)
    assert replayed.ret == 0
    assert len(server.requests) == sent
    replayed.stdout.fnmatch_lines(["*= scenarist =*", f"{CLEAN.line()}"])
    suite, cases = _junit(pytester.path / "replayed.xml")
    assert suite == CLEAN.properties()
    assert cases == {"test_asks": CLEAN.properties()}


def test_a_live_call_in_a_replaying_session_fails_it(
    pytester: pytest.Pytester, server: FakeLLMServer
) -> None:
    """Every test passes, but one ran its scenario with no cassette: its call went live
    while the session replayed, so the session fails, naming the test."""
    assert pytester.runpytest("--scenarist-record=all").ret == 0
    pytester.makepyfile(test_forgot=FORGOT_THE_CASSETTE)
    sent = len(server.requests)

    failed = pytester.runpytest("--scenarist-record=none", "--junitxml=out.xml")
    failed.assert_outcomes(passed=2)
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    assert len(server.requests) == sent + 1  # the one call nothing guarded
    failed.stdout.fnmatch_lines(
        [
            "*= scenarist =*",
            "replay certificate: 1 replayed, 0 missed, 0 refused, 1 live (guarantee: none)",
            "error: 1 LLM call(s) went live during the replay (--fail-on-live): "
            "test_forgot.py::test_forgot_the_cassette*",
        ]
    )
    suite, cases = _junit(pytester.path / "out.xml")
    assert suite["replay.live"] == "1" and suite["replay.guarantee"] == "none"
    assert cases["test_forgot_the_cassette"]["replay.live"] == "1"
    assert cases["test_asks"] == CLEAN.properties()

    allowed = pytester.runpytest("--scenarist-record=none", "--no-fail-on-live")
    assert allowed.ret == 0
    assert "went live" not in allowed.stdout.str()


def test_fail_on_live_fails_a_recording_session_on_request(
    pytester: pytest.Pytester, server: FakeLLMServer
) -> None:
    """A recording sends its calls: off by default, ``--fail-on-live`` fails it."""
    assert pytester.runpytest("--scenarist-record=all").ret == 0
    strict = pytester.runpytest("--scenarist-record=all", "--fail-on-live")
    strict.assert_outcomes(passed=1)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["error: 1 LLM call(s) went live*test_replayed.py::test_asks*"])


def test_a_session_without_cassettes_shows_no_certificate(
    pytester: pytest.Pytester, server: FakeLLMServer
) -> None:
    pytester.makepyfile(test_replayed="", test_forgot=FORGOT_THE_CASSETTE)
    result = pytester.runpytest()
    assert result.ret == 0
    assert "replay certificate" not in result.stdout.str()


def test_xdist_workers_send_their_calls_to_one_certificate(
    pytester: pytest.Pytester, server: FakeLLMServer
) -> None:
    pytest.importorskip("xdist")
    assert pytester.runpytest("--scenarist-record=all").ret == 0
    pytester.makepyfile(test_forgot=FORGOT_THE_CASSETTE)
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--scenarist-record=none", "--junitxml=out.xml"
    )
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "replay certificate: 1 replayed, 0 missed, 0 refused, 1 live (guarantee: none)",
            "error: 1 LLM call(s) went live*test_forgot.py::test_forgot_the_cassette*",
        ]
    )
    suite, cases = _junit(pytester.path / "out.xml")
    assert suite["replay.live"] == "1" and suite["replay.replayed"] == "1"
    assert cases["test_asks"] == CLEAN.properties()
