"""The price of an LLM call, from the ``genai-prices`` table (bundled data, offline).

:func:`cost_usd` answers in US dollars, or ``None`` when the price is not known: an
unknown model, no token counts, or ``genai-prices`` not installed (a dependency of
``scenarist``; when it is missing all the same, the first lookup warns once, with the
command that installs it). It never guesses: a budget check over a ``None``
cost can say "unknown" instead of passing on a made-up zero.

The provider is taken from the API URL when it is a known provider's (a call to
``api.groq.com`` is priced as Groq's, even through the OpenAI SDK); otherwise from the
wire format (``"openai"``, ``"anthropic"``), so OpenAI-compatible fakes and proxies on
other hosts are priced as the model's own provider. Lookups are cached; the first one
loads the price table (about 0.15 s, once per process).
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["DEFAULT_CEILING_USD_PER_MTOK", "ceiling_price", "cost_usd"]

DEFAULT_CEILING_USD_PER_MTOK: tuple[float, float] = (15.0, 75.0)
"""The price a call of an unknown provider is estimated at, in USD per million input and
output tokens (a frontier model's list price), when the price table has nothing for it or
``genai-prices`` is not installed: a budget never counts an unpriced call as free."""


def cost_usd(
    provider: str | None,
    model: str | None,
    tokens_in: int | None,
    tokens_out: int | None,
    *,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    api_url: str | None = None,
) -> float | None:
    """The price of a call in USD, or ``None`` when it is not known.

    ``tokens_in`` counts every input token, cached ones included; ``cache_read_tokens``
    and ``cache_write_tokens`` say how many of them were read from or written to the
    provider's prompt cache (they are priced differently).

    >>> cost_usd("openai", "gpt-4o-mini", 1000, 500)
    0.00045
    >>> cost_usd("openai", "no-such-model", 1000, 500) is None
    True
    """
    return _cost(
        provider, model, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, api_url
    )


@functools.lru_cache(maxsize=4096)
def _cost(
    provider: str | None,
    model: str | None,
    tokens_in: int | None,
    tokens_out: int | None,
    cache_read_tokens: int,
    cache_write_tokens: int,
    api_url: str | None,
) -> float | None:
    """:func:`cost_usd`, one cache lookup for a call priced before (a replay's calls are
    the recorded ones again: 1.7 µs a call through the URL and price caches, 0.4 here)."""
    if not model or (tokens_in is None and tokens_out is None):
        return None
    provider_id = (_provider_for_url(api_url.split("?")[0]) if api_url else None) or provider
    if provider_id is None:
        return None
    return _price(
        provider_id,
        model,
        tokens_in or 0,
        tokens_out or 0,
        cache_read_tokens,
        cache_write_tokens,
    )


@functools.lru_cache(maxsize=4096)
def _price(
    provider_id: str, model: str, tokens_in: int, tokens_out: int, read: int, write: int
) -> float | None:
    genai_prices = _genai_prices()
    if genai_prices is None:
        return None
    usage: dict[str, int] = {"input_tokens": tokens_in, "output_tokens": tokens_out}
    if read:
        usage["cache_read_tokens"] = read
    if write:
        usage["cache_write_tokens"] = write
    try:
        calculation = genai_prices.calc_price(
            genai_prices.Usage(**usage), model, provider_id=provider_id
        )
    except (LookupError, ValueError):
        return None
    return float(calculation.total_price)


def ceiling_price(provider: str | None, api_url: str | None = None) -> tuple[float, float]:
    """The most expensive known price of ``provider``'s models, in USD per million input
    and output tokens: what a budget charges a call whose own price is unknown (an unknown
    model, no usage reported). :data:`DEFAULT_CEILING_USD_PER_MTOK` when the provider is
    unknown too.

    >>> ceiling_price("anthropic")
    (15.0, 75.0)
    """
    provider_id = (_provider_for_url(api_url.split("?")[0]) if api_url else None) or provider
    if provider_id is None:
        return DEFAULT_CEILING_USD_PER_MTOK
    return _ceiling(provider_id)


@functools.lru_cache(maxsize=64)
def _ceiling(provider_id: str) -> tuple[float, float]:
    if _genai_prices() is None:
        return DEFAULT_CEILING_USD_PER_MTOK
    from genai_prices.data import providers

    best: tuple[float, float] | None = None
    for provider in providers:
        if provider.id != provider_id:
            continue
        for model in provider.models:
            prices = model.prices
            for entry in prices if isinstance(prices, list) else [prices]:
                price: Any = getattr(entry, "prices", entry)  # a conditional price's prices
                pair = (_per_mtok(price.input_mtok), _per_mtok(price.output_mtok))
                if best is None or sum(pair) > sum(best):
                    best = pair
    return best if best is not None and sum(best) > 0 else DEFAULT_CEILING_USD_PER_MTOK


def _per_mtok(value: Any) -> float:
    """A price per million tokens: a number, or the dearest tier of a tiered price."""
    if value is None:
        return 0.0
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return float(value)
    return max([float(value.base), *(float(t.price) for t in tiers)])


@functools.lru_cache(maxsize=256)
def _provider_for_url(url: str) -> str | None:
    """The id of the known provider whose API lives at ``url``, if any."""
    if _genai_prices() is None:
        return None
    from genai_prices.data import providers

    for provider in providers:
        if provider.api_pattern and re.match(provider.api_pattern, url):
            return provider.id
    return None


MISSING_TABLE = (
    "scenarist: LLM costs are unknown in this process: the price table (genai-prices) is "
    "not installed; run: pip install genai-prices"
)


@functools.cache
def _genai_prices() -> Any:
    """The ``genai_prices`` module, or ``None`` (warned once) when it is not installed."""
    try:
        import genai_prices
    except ImportError:
        import warnings

        warnings.warn(MISSING_TABLE, RuntimeWarning, stacklevel=2)
        return None
    return genai_prices
