"""Prices from genai-prices: known models cost something, unknown ones cost None."""

from __future__ import annotations

import sys
import warnings

import pytest

from scenarist.providers import pricing
from scenarist.providers.pricing import cost_usd


def test_known_models_are_priced() -> None:
    assert cost_usd("openai", "gpt-4o-mini", 1000, 500) == pytest.approx(0.00045)
    assert cost_usd("anthropic", "claude-3-5-haiku-latest", 1000, 0) == pytest.approx(0.0008)


def test_cached_input_is_cheaper() -> None:
    full = cost_usd("openai", "gpt-4o-mini", 1000, 0)
    cached = cost_usd("openai", "gpt-4o-mini", 1000, 0, cache_read_tokens=1000)
    assert full is not None and cached is not None and cached < full


@pytest.mark.parametrize(
    ("provider", "model", "tokens_in", "tokens_out"),
    [
        ("openai", "no-such-model", 10, 10),
        ("nobody", "gpt-4o-mini", 10, 10),
        (None, "gpt-4o-mini", 10, 10),
        ("openai", None, 10, 10),
        ("openai", "gpt-4o-mini", None, None),
    ],
)
def test_unknown_prices_are_none(
    provider: str | None, model: str | None, tokens_in: int | None, tokens_out: int | None
) -> None:
    assert cost_usd(provider, model, tokens_in, tokens_out) is None


def test_a_known_provider_url_wins_over_the_wire_format() -> None:
    groq = "https://api.groq.com/openai/v1/chat/completions"
    assert cost_usd("openai", "gpt-4o-mini", 10, 10, api_url=groq) is None  # not sold there
    assert cost_usd("openai", "llama-3.1-8b-instant", 1000, 0, api_url=groq) == pytest.approx(5e-5)
    local = "http://127.0.0.1:9/v1/chat/completions?x=1"
    assert cost_usd("openai", "gpt-4o-mini", 1000, 500, api_url=local) == pytest.approx(0.00045)


def test_without_genai_prices_the_cost_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    caches = (pricing._genai_prices, pricing._cost, pricing._price, pricing._provider_for_url)
    for cache in caches:
        cache.cache_clear()
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # as if not installed
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            costs = [
                cost_usd("openai", "gpt-4o-mini", 1000, 500),
                cost_usd("openai", "gpt-4o", 10, 5),  # warned once, not per call
                cost_usd("openai", "gpt-4o", 10, 5, api_url="https://api.groq.com/x"),
            ]
        assert costs == [None, None, None]
        assert [(w.category, str(w.message)) for w in warned] == [
            (RuntimeWarning, pricing.MISSING_TABLE)
        ]
        assert "pip install genai-prices" in pricing.MISSING_TABLE
    finally:
        for cache in caches:
            cache.cache_clear()
