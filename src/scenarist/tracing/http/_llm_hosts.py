"""The hosts of LLM APIs: a request to one of them is an LLM call, whatever its path.

The payload classifier (``_llm_payloads.classify``) knows LLM calls by their path (a
``/chat/completions``, a ``/messages``...); an API it does not know (a provider's new
endpoint, Bedrock's ``/model/<id>/converse``, Cohere's ``/v2/chat``) is not recognised
by path. A strict replay's network guard also knows them by destination: a request to a
host below (any method, any path) is an LLM call, seen where the host is named: the HTTP
libraries' hooks (URL and ``Host`` header), ``http.client`` (its host or tunnel host),
the TLS server name of an ``ssl.SSLSocket`` / ``ssl.SSLObject`` at a write, an HTTP
proxy's ``CONNECT host:port`` line and the ``Host`` header of a request written on a
socket. This is the one list; users add theirs with ``SCENARIST_LLM_HOSTS`` (names
separated by commas or spaces) or ``llm_hosts=[...]`` on a replay
(``ReplayOptions``, ``cassette(...)``).

A name is exact (``api.openai.com``) or a pattern where ``*`` stands for one or more
characters of the name (``*.openai.azure.com``, ``bedrock-runtime.*.amazonaws.com``).
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterable

from scenarist.errors import UserError

__all__ = ["ENV_VAR", "LLM_HOSTS", "env_hosts", "is_llm_host", "parse_hosts"]

ENV_VAR = "SCENARIST_LLM_HOSTS"

LLM_HOSTS: tuple[str, ...] = (
    "api.openai.com",
    "*.openai.azure.com",  # Azure OpenAI resources
    "*.services.ai.azure.com",  # Azure AI Foundry
    "*.cognitiveservices.azure.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",  # Gemini
    "aiplatform.googleapis.com",  # Vertex AI
    "*-aiplatform.googleapis.com",  # Vertex AI, regional (us-central1-aiplatform...)
    "bedrock-runtime.*.amazonaws.com",
    "bedrock-runtime-fips.*.amazonaws.com",
    "api.mistral.ai",
    "api.cohere.com",
    "api.cohere.ai",
    "api.groq.com",
    "api.together.xyz",
    "api.together.ai",
    "api.deepseek.com",
    "openrouter.ai",
    "api.fireworks.ai",
    "api.perplexity.ai",
    "api.x.ai",
    "api-inference.huggingface.co",
    "router.huggingface.co",
    "api.cerebras.ai",
    "api.voyageai.com",
)
"""Known LLM provider hosts (lower case; ``*`` patterns)."""


def _split(names: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact = frozenset(name for name in names if "*" not in name)
    return exact, tuple(name for name in names if "*" in name)


_EXACT, _PATTERNS = _split(LLM_HOSTS)


def parse_hosts(names: Iterable[str] | str, field: str) -> tuple[str, ...]:
    """User-named hosts checked and lower-cased (``field`` names the option in errors)."""
    if isinstance(names, str):
        raise UserError(f"{field} takes a list of host names, got {names!r}")
    hosts = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"{field} entries are host names like 'llm.internal', got {name!r}")
        host = name.strip().lower().rstrip(".")
        if any(c in host for c in "/:@ ") or host.startswith("["):
            raise UserError(
                f"{field} entry {name!r} is not a host name: give the name alone, without "
                "a scheme, port or path ('llm.internal', '*.llm.internal')"
            )
        hosts.append(host)
    return tuple(hosts)


def env_hosts() -> tuple[str, ...]:
    """The hosts named by ``$SCENARIST_LLM_HOSTS`` (read when a guard is entered)."""
    text = os.environ.get(ENV_VAR, "")
    return parse_hosts(text.replace(",", " ").split(), f"${ENV_VAR}")


@functools.lru_cache(maxsize=512)
def _known(host: str) -> bool:
    return host in _EXACT or any(fnmatch.fnmatchcase(host, p) for p in _PATTERNS)


def is_llm_host(host: str | None, extra: tuple[str, ...] = ()) -> bool:
    """Whether ``host`` (a name, any case, a trailing dot allowed) is an LLM API's, by
    the list above or the ``extra`` names (exact or ``*`` patterns)."""
    if not host:
        return False
    host = host.lower().rstrip(".")
    if _known(host):
        return True
    return bool(extra) and any(
        host == name or ("*" in name and fnmatch.fnmatchcase(host, name)) for name in extra
    )
