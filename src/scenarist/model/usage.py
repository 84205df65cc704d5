"""Counting a run's steps, LLM calls, tokens and cost once: the one rule every total uses.

A run has two kinds of spans: **tracked steps** (``ctx.track_step``, ``scenarist.step``:
what the agent's author declared) and **captured calls** (``llm`` spans the HTTP capture
recorded for each SDK call, see :mod:`scenarist.tracing.http.capture`). One SDK call
made inside a step that also declares its usage (``set_meta("cost_usd", ...)``) appears
in both. The rule, so nothing is counted twice:

* **Steps** (``max_steps``, ``min_steps``) count tracked steps only, as Veval does (Veval
  has no capture): wrapping a step around an SDK call does not make it two steps.
* **LLM calls** (``max_llm_calls``) count captured calls, plus each ``llm`` tracked step
  with no captured call inside (a call made with a client the capture does not see).
* **Errors** (``no_errors``): a failed captured call inside a tracked step is the step's
  to report (it failed too, or it handled the error: a retry, a fallback), as Veval sees
  only the step; a failed captured call outside any step counts on its own.
* **Usage** (cost, tokens): declared usage wins over captured usage of the same call. A
  tracked step that declares a cost accounts for the captured calls inside it, whose own
  cost is not added; likewise for tokens (``tokens_in`` / ``tokens_out``, as a pair).
  Captured calls in a step that declares nothing count as they were measured.

The rule reads the recorded shape, so a replayed trace (served steps carry their recorded
subtree) counts exactly what its recording counted: live and replay verdicts agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from scenarist.model.trace import Span

__all__ = [
    "RECORDED_COST_KEY",
    "cost_spans",
    "declared_cost",
    "error_spans",
    "is_captured_call",
    "llm_call_spans",
    "step_spans",
    "token_spans",
]

RECORDED_COST_KEY = "recorded_cost_usd"
"""Span metadata key replay sets on served spans: the cost of the original call."""


def is_captured_call(span: Span) -> bool:
    """Whether ``span`` is an LLM call the HTTP capture recorded (not a tracked step)."""
    metadata = span.metadata
    return span.kind == "llm" and "url" in metadata and "provider" in metadata


def declared_cost(span: Span) -> Any:
    """The cost a span stands for: the recorded one on a replayed span, else ``cost_usd``."""
    recorded = span.metadata.get(RECORDED_COST_KEY)
    if recorded is not None:
        return recorded
    if span.metadata.get("_source") == "replay":  # served, and its recording had no cost
        return None
    return span.cost_usd


def _declares_tokens(span: Span) -> bool:
    return span.tokens_in is not None or span.tokens_out is not None


def _walk(roots: Iterable[Span], cost_above: bool, tokens_above: bool) -> Iterator[_Counted]:
    for span in roots:
        captured = is_captured_call(span)
        yield span, captured, captured and cost_above, captured and tokens_above
        declares_cost = not captured and declared_cost(span) is not None
        declares_tokens = not captured and _declares_tokens(span)
        yield from _walk(
            span.children, cost_above or declares_cost, tokens_above or declares_tokens
        )


_Counted = tuple[Span, bool, bool, bool]  # span, captured, cost covered, tokens covered


def usage_totals(roots: Sequence[Span]) -> tuple[float | None, int, int]:
    """A trace's cost (``None`` when no counted span has one), input and output tokens,
    in one walk: what :func:`cost_spans` and :func:`token_spans` count, summed."""
    costs: list[float] = []
    tokens_in = tokens_out = 0
    for span, _, cost_covered, tokens_covered in _walk(roots, False, False):
        if not cost_covered and span.cost_usd is not None:
            costs.append(span.cost_usd)
        if not tokens_covered:
            tokens_in += span.tokens_in or 0
            tokens_out += span.tokens_out or 0
    return (sum(costs) if costs else None), tokens_in, tokens_out


def error_spans(roots: Sequence[Span]) -> list[Span]:
    """The failed spans that count, in pre-order (a captured call in a step does not)."""

    def walk(spans: Iterable[Span], in_step: bool) -> Iterator[Span]:
        for span in spans:
            captured = is_captured_call(span)
            if span.status == "error" and not (captured and in_step):
                yield span
            yield from walk(span.children, in_step or not captured)

    return list(walk(roots, False))


def step_spans(roots: Sequence[Span]) -> list[Span]:
    """The tracked steps, in pre-order (captured calls left out)."""
    return [s for s, captured, _, _ in _walk(roots, False, False) if not captured]


def llm_call_spans(roots: Sequence[Span]) -> list[Span]:
    """Captured calls, and ``llm`` tracked steps with no captured call inside."""
    return [
        span
        for span, captured, _, _ in _walk(roots, False, False)
        if captured or (span.kind == "llm" and not any(map(is_captured_call, span.walk())))
    ]


def cost_spans(roots: Sequence[Span]) -> list[Span]:
    """The spans whose cost counts (a captured call in a step declaring cost does not)."""
    return [s for s, _, covered, _ in _walk(roots, False, False) if not covered]


def token_spans(roots: Sequence[Span]) -> list[Span]:
    """The spans whose tokens count (a captured call in a step declaring tokens does not)."""
    return [s for s, _, _, covered in _walk(roots, False, False) if not covered]
