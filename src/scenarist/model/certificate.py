"""The replay certificate: what the LLM calls of a replay did, and what guarantees it.

Every scenario, item and run replayed from a recording reports its calls ``replayed``
(answered from the recording), ``missed`` (no recording matched: an error, never a live
call), ``refused`` (the network guard stopped them before they were sent) and ``live``
(they reached the network: a recording, a non-strict replay, a call nothing guarded),
with the ``guarantee`` under which a zero ``live`` holds:

* ``"none"``: not a strict replay (a live run, a recording): calls may go out;
* ``"in-process"``: scenarist's guards in this process, every thread: Python-level
  sockets (``connect``, ``send``, ``sendall``, ``sendto``, ``sendmsg``), ``ssl`` sockets
  and TLS objects (asyncio's TLS streams), ``http.client`` and the HTTP libraries'
  hooks (httpx, requests/urllib3, aiohttp); an LLM call known by its path or by its
  host (an LLM provider's, or one the user names). Not covered: network code below
  Python (grpc core, pycurl, an extension's own sockets) and other processes (a child
  ``python``, ``curl``): only the sandbox covers those;
* ``"sandboxed"``: the run was also inside a network namespace with only loopback up
  (``scenarist run --replay --sandbox``), so no process at all could reach another
  machine. Loopback stays up (a local fake provider, a test database), so a sandbox
  proves that nothing left the machine, not that nothing left the process.

Calls are counted where they are attributed: a scenario counts the captured LLM calls of
its trace; a run adds the calls its cassettes saw outside every scenario's context (a
thread started without it), so a run's counts are at least the sum of its scenarios'.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = [
    "GUARANTEES",
    "GUARANTEE_KEY",
    "Certifying",
    "Guarantee",
    "ReplayCertificate",
    "run_certificate",
    "scenario_certificate",
    "trace_certificate",
]

Guarantee = Literal["none", "in-process", "sandboxed"]
GUARANTEES: tuple[Guarantee, ...] = ("none", "in-process", "sandboxed")
"""Weakest first."""

GUARANTEE_KEY = "replay_guarantee"
"""The metadata key under which a replayed trace keeps the guarantee it ran under."""

_REFUSED = "LiveCallBlockedError"
_MISSED = "ReplayMissError"


class ReplayCertificate(BaseModel):
    """LLM calls replayed / missed / refused / live, and the guarantee that held."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    replayed: int = 0
    missed: int = 0
    refused: int = 0
    live: int = 0
    """Calls that reached the network (never counted in ``refused``)."""
    guarantee: Guarantee = "none"

    @property
    def clean(self) -> bool:
        """Nothing went live, nothing was refused or missed."""
        return self.live == 0 and self.refused == 0 and self.missed == 0

    @classmethod
    def from_spans(cls, spans: Iterable[Any], guarantee: Guarantee = "none") -> ReplayCertificate:
        """The counts of a trace's captured LLM calls (``llm`` spans with a ``url``)."""
        replayed = missed = refused = live = 0
        for span in spans:
            if span.kind != "llm" or "url" not in span.metadata:
                continue
            if span.metadata.get("replayed"):
                replayed += 1
            elif span.error is not None and span.error.type == _MISSED:
                missed += 1
            elif span.error is not None and span.error.type == _REFUSED:
                refused += 1
            else:
                live += 1
        if cls is ReplayCertificate:
            return _certificate(replayed, missed, refused, live, guarantee)
        return cls(
            replayed=replayed, missed=missed, refused=refused, live=live, guarantee=guarantee
        )

    @classmethod
    def combine(
        cls, parts: Iterable[ReplayCertificate], guarantee: Guarantee | None = None
    ) -> ReplayCertificate:
        """Sums of ``parts``; the guarantee is the weakest of theirs unless given."""
        parts = list(parts)
        weakest = min((GUARANTEES.index(p.guarantee) for p in parts), default=0)
        return cls(
            replayed=sum(p.replayed for p in parts),
            missed=sum(p.missed for p in parts),
            refused=sum(p.refused for p in parts),
            live=sum(p.live for p in parts),
            guarantee=guarantee if guarantee is not None else GUARANTEES[weakest],
        )

    @classmethod
    def of_run(
        cls,
        parts: Iterable[ReplayCertificate],
        tallies: Iterable[ReplayCertificate] = (),
        guarantee: Guarantee | None = None,
    ) -> ReplayCertificate:
        """A run's certificate from its scenarios' (``parts``, summed) and its cassettes'
        (``tallies``, which also saw the calls made outside every scenario's context):
        each count the larger of the two sums. ``guarantee``: the run's; ``None``: the
        weakest of them all."""
        parts, tallies = list(parts), list(tallies)
        level = guarantee or cls.combine([*parts, *tallies]).guarantee
        total = cls.combine(parts, level)
        return total.at_least(cls.combine(tallies)) if tallies else total

    def at_least(self, other: ReplayCertificate) -> ReplayCertificate:
        """Each count the larger of the two (``other``: tallies that also saw calls made
        outside every scenario's context); this guarantee."""
        return self.model_copy(
            update={
                "replayed": max(self.replayed, other.replayed),
                "missed": max(self.missed, other.missed),
                "refused": max(self.refused, other.refused),
                "live": max(self.live, other.live),
            }
        )

    def since(self, earlier: ReplayCertificate) -> ReplayCertificate:
        """The calls counted after ``earlier`` (a tally taken before, e.g. of a cassette
        that saw other runs first); this guarantee."""
        return self.model_copy(
            update={
                "replayed": max(0, self.replayed - earlier.replayed),
                "missed": max(0, self.missed - earlier.missed),
                "refused": max(0, self.refused - earlier.refused),
                "live": max(0, self.live - earlier.live),
            }
        )

    def summary(self) -> str:
        """``3 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)``."""
        return (
            f"{self.replayed} replayed, {self.missed} missed, {self.refused} refused, "
            f"{self.live} live (guarantee: {self.guarantee})"
        )

    def line(self) -> str:
        """``replay certificate: <summary>``: the line every report prints for a run."""
        return f"replay certificate: {self.summary()}"

    def properties(self) -> dict[str, str]:
        """As JUnit ``<property>`` pairs."""
        return {
            "replay.replayed": str(self.replayed),
            "replay.missed": str(self.missed),
            "replay.refused": str(self.refused),
            "replay.live": str(self.live),
            "replay.guarantee": self.guarantee,
        }


@functools.lru_cache(maxsize=256)
def _certificate(
    replayed: int, missed: int, refused: int, live: int, guarantee: Guarantee
) -> ReplayCertificate:
    """A certificate of these counts, made (validated) once: it is frozen, so scenarios
    with the same counts share it (every scenario of a replay asks for one: 5 µs)."""
    return ReplayCertificate(
        replayed=replayed, missed=missed, refused=refused, live=live, guarantee=guarantee
    )


@runtime_checkable
class Certifying(Protocol):
    """A response source that certifies the calls it sees (a cassette): the guarantee its
    replay gives (``none`` when it records), and its counts so far."""

    @property
    def guarantee(self) -> Guarantee: ...

    def certificate(self) -> ReplayCertificate: ...


def scenario_certificate(result: Any, guarantee: Guarantee | None) -> ReplayCertificate | None:
    """A scenario result's certificate: its own (``result.certificate``: it ran inside a
    cassette, or replayed a trace as an item), else one from the captured calls of its
    final trace under the run's ``guarantee`` (``None``: the runner did not say, e.g. a
    library run outside any cassette: no certificate then, the scenario's
    ``replay_verdict`` still counts its calls)."""
    own = getattr(result, "certificate", None)
    if own is not None:
        return own  # type: ignore[no-any-return]
    if guarantee is None:
        return None
    return ReplayCertificate.from_spans(result.final_trace.spans, guarantee)


def run_certificate(
    results: Iterable[Any],
    tallies: Iterable[ReplayCertificate],
    guarantee: Guarantee | None = None,
) -> ReplayCertificate | None:
    """A run's certificate: its scenarios' counts (:func:`scenario_certificate`), each
    raised to what its cassettes saw (``tallies``: calls made outside every scenario's
    context count on the run only). ``guarantee``: the run's; ``None``: the weakest of
    its parts'. ``None`` when nothing was certified (no guarantee, no part, no tally).

    The one computation behind ``scenarist run``, ``Suite.run`` inside a cassette and the
    pytest plugin's session."""
    parts = [c for r in results if (c := scenario_certificate(r, guarantee)) is not None]
    tallies = list(tallies)
    if guarantee is None and not parts and not tallies:
        return None
    return ReplayCertificate.of_run(parts, tallies, guarantee)


def trace_certificate(record: Any) -> ReplayCertificate | None:
    """A stored trace's certificate: a replay's (``is_replay``), from the captured calls
    it holds and the guarantee it ran under (``metadata["replay_guarantee"]``, ``none``
    when it does not say); ``None`` for a trace that is not a replay."""
    if not record.is_replay:
        return None
    level = record.metadata.get(GUARANTEE_KEY)
    if level not in GUARANTEES:
        level = "none"
    return ReplayCertificate.from_spans(record.steps, level)
