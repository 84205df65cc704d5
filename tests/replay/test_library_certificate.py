"""The replay certificate of a library run: ``Suite.run`` / ``Scenario.run`` inside a
cassette, and trace-backed items run through the Veval client, carry it on their results;
the report, JUnit and run log written from such a result say it as ``scenarist run`` does.

The agent calls the fake provider on loopback, which counts what reached it, so every
certificate is held to what really happened.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from contextlib import suppress
from pathlib import Path

import pytest
from rich.console import Console
from tests.helpers.thread_paths import bare_thread
from tests.replay.cassette_support import echo_script
from tests.replay.test_live_zero import ask_httpx, ask_socket

from scenarist import Client, RunContext, Scenario, StringMatching, Suite
from scenarist.errors import LiveCallBlockedError
from scenarist.formats.runlog import run_log_from_suite_result
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.items import ScenarioItem
from scenarist.replay import cassette
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer

CLEAN = {"replayed": 1, "missed": 0, "refused": 0, "live": 0}


def _suite(url: str, *, sneak: bool = False) -> Suite:
    def agent(inputs: str) -> str:
        answer = ask_httpx(url, inputs)
        if sneak:  # a call from a thread started without the run's context
            with suppress(LiveCallBlockedError):
                bare_thread(lambda: ask_socket(url, "sneaked"))
        return "answer: " + answer

    def scenario(name: str) -> Scenario:
        check = StringMatching(keyword="answer")
        return Scenario(name).interact(name).check(check).with_target(agent)

    return Suite(name="library", scenarios=[scenario("one"), scenario("two")])


def _properties(element: ET.Element) -> dict[str, str]:
    return {
        p.get("name", ""): p.get("value", "")
        for p in element.findall("properties/property")
        if p.get("name", "").startswith("replay.")
    }


def _report(result: object) -> str:
    buffer = io.StringIO()
    result.print_report(console=Console(file=buffer, width=200, color_system=None))  # type: ignore[attr-defined]
    return buffer.getvalue()


def test_a_suite_run_in_a_replaying_cassette_carries_its_certificate(tmp_path: Path) -> None:
    tape = tmp_path / "suite.jsonl"
    with FakeLLMServer(echo_script()) as server:
        suite = _suite(server.url)
        with cassette(tape, "record"):
            recorded = suite.run_sync(verbose=False)
        assert len(server.requests) == 2
        live = {"replayed": 0, "missed": 0, "refused": 0, "live": 2}
        assert recorded.certificate == ReplayCertificate(**live, guarantee="none")
        with cassette(tape, "replay"):
            replayed = suite.run_sync(verbose=False)
        assert len(server.requests) == 2
        plain = suite.run_sync(verbose=False)  # no cassette: no certificate, as before
    certificate = ReplayCertificate(replayed=2, guarantee="in-process")
    assert replayed.passed_count == 2
    assert replayed.certificate == certificate
    for result in replayed.results:
        assert result.certificate == ReplayCertificate(**CLEAN, guarantee="in-process")
    assert plain.certificate is None and all(r.certificate is None for r in plain.results)
    # additive: a dump (what giskard-checks code reads) is the same as without a replay
    assert "certificate" not in replayed.model_dump()
    assert "certificate" not in replayed.results[0].model_dump()

    line = "replay certificate: 2 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)"
    assert line in _report(replayed)
    assert "replay certificate" not in _report(plain)

    replayed.to_junit_xml(tmp_path / "out.xml")
    root = ET.parse(tmp_path / "out.xml").getroot()
    assert _properties(root) == certificate.properties()
    for case in root.findall("testcase"):
        assert _properties(case) == {
            **ReplayCertificate(**CLEAN, guarantee="in-process").properties()
        }

    log = run_log_from_suite_result(replayed)
    assert log.header.certificate == certificate
    assert [r.certificate for r in log.scenarios] == [r.certificate for r in replayed.results]
    again = log.to_suite_result()
    assert again.certificate == certificate
    assert [r.certificate for r in again.results] == [r.certificate for r in replayed.results]


def test_a_scenario_run_in_a_replaying_cassette_carries_its_certificate(tmp_path: Path) -> None:
    tape = tmp_path / "scenario.jsonl"
    with FakeLLMServer(echo_script()) as server:
        scenario = _suite(server.url).scenarios[0]
        with cassette(tape, "record"):
            scenario.run_sync()
        with cassette(tape, "replay"):
            result = scenario.run_sync()
        assert len(server.requests) == 1
    assert result.passed
    assert result.certificate == ReplayCertificate(**CLEAN, guarantee="in-process")
    assert "guarantee: in-process" in _report(result)


def test_a_call_sneaked_from_a_thread_counts_on_the_suite_run(tmp_path: Path) -> None:
    """A call made outside every scenario's context is refused, and counted on the run
    (the cassette saw it) though no scenario's trace holds it."""
    tape = tmp_path / "suite.jsonl"
    with FakeLLMServer(echo_script()) as server:
        with cassette(tape, "record"):
            _suite(server.url).run_sync(verbose=False)
        sent = len(server.requests)
        with pytest.raises(LiveCallBlockedError), cassette(tape, "replay"):
            result = _suite(server.url, sneak=True).run_sync(verbose=False)
        assert len(server.requests) == sent
    assert result.certificate is not None
    assert result.certificate.refused == 2 and result.certificate.live == 0
    assert result.certificate.replayed == 2
    assert all(r.certificate is not None and r.certificate.refused == 0 for r in result.results)


def test_trace_backed_items_carry_their_certificate_as_scenario_results() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            return ask_httpx(server.url, label)

        client.run("agent", agent, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        sent = len(server.requests)
        run = client.run_scenario("items", agent, items=[ScenarioItem(trace_id=record.trace_id)])
        assert len(server.requests) == sent
    certificate = ReplayCertificate(**CLEAN, guarantee="in-process")
    assert run.certificate == certificate
    (converted,) = run.to_scenario_results()
    assert converted.certificate == certificate
