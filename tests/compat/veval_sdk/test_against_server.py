"""The real veval-sdk 1.4.0 (side venv, subprocess) against a real ``scenarist serve`` on
127.0.0.1 in open mode (no key exists; the SDK's API key is not checked): record a run,
fetch it, save and load a snapshot, run a scenario whose items are fetched by name (one
synthetic, one trace-backed), and the SDK's own replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.helpers.databases import free_port
from tests.helpers.limits import HANG_S

from scenarist.testing.fake_providers import FakeLLMServer

HERE = Path(__file__).parent

pytest.importorskip("fastapi", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    log: Path


def _wait_healthy(served: Served) -> None:
    deadline = time.monotonic() + HANG_S  # polling for readiness, not timing it
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise AssertionError(f"scenarist serve exited:\n{served.log.read_text()}")
        try:
            if httpx2.get(f"{served.url}/api/health", timeout=60).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"scenarist serve never became healthy:\n{served.log.read_text()}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path / "home")}
    for name in ("SCENARIST_URL", "SCENARIST_API_KEY", "SCENARIST_DATABASE_URL"):
        env.pop(name, None)
    command = [
        sys.executable,
        "-m",
        "scenarist.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--database-url",
        f"sqlite:///{tmp_path / 'serve.db'}",
    ]
    with open(log, "w") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, text=True
        )
    server = Served(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=HANG_S)


def run_veval(veval_python: Path, served: Served, *args: str) -> dict[str, Any]:
    env = {**os.environ, "VEVAL_INTERNAL_ENDPOINT": served.url, "PYTHONPATH": ""}
    done = subprocess.run(
        [str(veval_python), str(HERE / "against_server.py"), *args],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env=env,
    )
    assert done.returncode == 0, (
        f"{done.stderr[-4000:]}\n--- serve log ---\n{served.log.read_text()}"
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_real_veval_sdk_records_fetches_runs_items_by_name_and_replays(
    veval_python: Path, served: Served
) -> None:
    notice = served.log.read_text()
    assert "open mode" in notice and f"VEVAL_INTERNAL_ENDPOINT={served.url}" in notice

    recorded = run_veval(veval_python, served, "record")
    trace_id = recorded["trace_id"]
    assert recorded["output"] == "Your refund for order 42 is on its way"
    assert recorded["fetched"] == {
        "trace_id": trace_id,
        "agent_name": "support",
        "input": "Where is my refund?",
        "output": "Your refund for order 42 is on its way",
        "status": "success",
        "metadata_channel": "email",
        "total_cost_usd": 0.001,
        "steps": [
            ["classify", "custom", "Where is my refund?", "refund", None],
            [
                "lookup_order",
                "tool",
                {"intent": "refund"},
                {"order": 42, "intent": "refund"},
                0.001,
            ],
        ],
    }
    assert recorded["missing"] is None
    assert recorded["snapshot"] == {
        "name": "support-baseline",
        "steps": ["classify", "lookup_order"],
    }
    assert recorded["loaded"] == {
        "name": "support-baseline",
        "steps": [["classify", "Where is my refund?"], ["lookup_order", {"intent": "refund"}]],
    }

    items = [
        {"name": "refund, live", "input": "Where is my refund?"},
        {"name": "refund, recorded", "trace_id": trace_id},
    ]
    put = httpx2.put(f"{served.url}/v1/scenarios/support/items", json={"items": items})
    assert put.status_code == 200, put.text

    ran = run_veval(veval_python, served, "scenario", trace_id)
    assert ran["items"] == [
        ["refund, live", False, True, []],
        ["refund, recorded", True, True, []],
    ]
    assert ran["passed"] is True
    assert ran["live_calls"] == ["classify", "lookup_order"]  # the recorded item made none
    assert ran["replay"] == {
        "passed": True,
        "output": "Your refund for order 42 is on its way",
        "failures": [],
        "matched": 2,
        "is_faithful": True,
    }
    runs = httpx2.get(f"{served.url}/v1/scenarios/support/runs").json()
    assert [(r["pass_count"], r["fail_count"]) for r in runs["items"]] == [(2, 0)]


def test_a_run_that_cost_nothing_reads_back_without_a_total_whoever_sent_it(
    veval_python: Path, served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Veval's SDK sends a zero total as ``None`` (``total_cost or None``); scenarist's
    client sends the same run the same way, and the server keeps both so: the real SDK
    reads both back alike."""
    from scenarist import Client, ClientOptions, RunContext

    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "client-home"))

    async def free_agent(ctx: RunContext) -> str:  # against_server.free_agent, ported
        async def classify(handle: Any) -> str:
            handle.set_meta("cost_usd", 0)
            return "refund"

        intent = await ctx.track_step_async("classify", ctx.input, classify)
        return str(ctx.track_step("answer", intent, lambda: f"about {intent}"))

    seen: dict[str, RunContext] = {}

    async def remember(ctx: RunContext) -> str:
        seen["ctx"] = ctx
        return await free_agent(ctx)

    client = Client(ClientOptions(base_url=served.url, raise_on_send_failure=True))
    assert client.run("free", remember, input="Where is my refund?") == "about refund"

    read = run_veval(veval_python, served, "free", seen["ctx"].trace_id)
    expected = {
        "agent_name": "free",
        "total_cost_usd": None,
        "steps": [["classify", 0.0], ["answer", None]],
    }
    assert read == {"veval_sent": expected, "scenarist_sent": expected}


@pytest.fixture
def judge_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The server's judge: a fake OpenAI-format model, named in the environment
    ``scenarist serve`` starts with (set up before ``served``)."""
    verdict = json.dumps({"passed": True, "reason": "It says Friday.", "score": 0.9})
    with FakeLLMServer([verdict]) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
        monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/gpt-4o-mini")
        yield llm


def test_real_veval_sdk_judge_async_is_judged_by_the_servers_model(
    veval_python: Path, judge_model: FakeLLMServer, served: Served
) -> None:
    judged = run_veval(veval_python, served, "judge")
    assert judged == {"passed": True, "score": 0.9}
    (request,) = judge_model.requests
    assert request.body["model"] == "gpt-4o-mini"  # the operator's, not the SDK's "gpt-4o"
    assert "It arrives on Friday" in json.dumps(request.body)
