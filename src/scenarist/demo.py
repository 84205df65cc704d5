"""A small, deterministic support agent to try scenarist on, offline and without keys.

``support_agent`` plays the assistant of a fictional bank. It answers from fixed rules,
remembers the conversation through the trace, and has one deliberate gap (it never
mentions fees for international transfers) so the example suite shows a real failure.
"""

from __future__ import annotations

import json
from typing import Any

from scenarist.model.trace import Trace

__all__ = ["support_agent"]

_CARD_FROZEN = "I have frozen your card ending in 4242. A new card arrives in 3 to 5 working days."
_HANDOFF = "I am passing you to a human colleague now. Reference: HUM-1042."


def _mentioned(trace: Trace[Any, Any], word: str) -> bool:
    return any(word in str(i.inputs).lower() for i in trace.interactions)


def support_agent(trace: Trace[Any, Any], inputs: str) -> str:
    """Answer one customer message, given the conversation so far."""
    text = inputs.lower()
    if "human" in text or "agent" in text:
        return _HANDOFF
    if "weekend" in text and _mentioned(trace, "transfer"):
        return "Yes: SEPA Instant transfers also arrive within seconds at the weekend."
    if "international" in text:
        return "International transfers arrive within 2 working days."
    if "transfer" in text:
        return "A SEPA transfer arrives within one working day and is free."
    if "card" in text and ("lost" in text or "stolen" in text):
        return _CARD_FROZEN
    if "balance" in text:
        return json.dumps({"account": "main", "balance_eur": 1250.0, "currency": "EUR"})
    return "Could you tell me a bit more about what you need?"
