"""``engine.runner.active_cassette``: the response source a scenario's certificate comes
from. It is asked once a scenario, so a type is checked against the protocol once."""

from __future__ import annotations

from typing import Any

from scenarist.engine.runner import active_cassette
from scenarist.model.certificate import ReplayCertificate
from scenarist.tracing.http.capture import serve_llm_calls


class Plain:
    """Serves calls but certifies nothing (no ``guarantee``, no ``certificate``)."""

    def respond(self, request: Any, module: Any, send: Any) -> Any:
        return send()

    async def respond_async(self, request: Any, module: Any, send: Any) -> Any:
        return await send()


class Certifies(Plain):
    @property
    def guarantee(self) -> str:
        return "in-process"

    def certificate(self) -> ReplayCertificate:
        return ReplayCertificate(guarantee="in-process")


class HalfOnInstance(Plain):
    """``certificate`` on the class, ``guarantee`` only on some instances."""

    def certificate(self) -> ReplayCertificate:
        return ReplayCertificate(guarantee="none")


def test_only_a_certifying_source_is_the_active_cassette() -> None:
    assert active_cassette() is None
    for _ in range(2):  # the second time from what the first one learnt
        with serve_llm_calls(Plain()):  # type: ignore[arg-type]
            assert active_cassette() is None
        source = Certifies()
        with serve_llm_calls(source):  # type: ignore[arg-type]
            assert active_cassette() is source
    half = HalfOnInstance()
    with serve_llm_calls(half):  # type: ignore[arg-type]
        assert active_cassette() is None
    half.guarantee = "none"  # type: ignore[attr-defined]
    with serve_llm_calls(half):  # type: ignore[arg-type]
        assert active_cassette() is None  # a type is judged by its class's members
