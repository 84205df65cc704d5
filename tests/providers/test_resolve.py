"""resolve_provider: objects, 'provider/model' strings, settings defaults, helpful errors."""

from __future__ import annotations

import pytest

from scenarist import set_default_embedding_model, set_default_generator, set_default_judge
from scenarist.providers import (
    AnthropicProvider,
    CallableProvider,
    OpenAIProvider,
    ProviderError,
    resolve_provider,
)


def test_resolve_without_any_default_says_how_to_set_one() -> None:
    with pytest.raises(ProviderError) as caught:
        resolve_provider(None)
    message = str(caught.value)
    assert "set_default_generator('openai/gpt-4o-mini')" in message
    assert "SCENARIST_DEFAULT_MODEL" in message


def test_resolve_embedding_and_judge_defaults_name_their_settings() -> None:
    with pytest.raises(ProviderError, match="SCENARIST_EMBEDDING_MODEL"):
        resolve_provider(None, purpose="embedding")
    with pytest.raises(ProviderError, match="SCENARIST_DEFAULT_JUDGE"):
        resolve_provider(None, purpose="judge")


def test_resolve_openai_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    adapter = resolve_provider("openai/gpt-4o-mini")
    assert isinstance(adapter, OpenAIProvider) and adapter.name == "openai/gpt-4o-mini"
    assert resolve_provider("openai/gpt-4o-mini") is adapter  # cached


def test_resolve_model_keeps_later_slashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    adapter = resolve_provider("openai/meta-llama/Llama-3")
    assert isinstance(adapter, OpenAIProvider) and adapter.model == "meta-llama/Llama-3"
    assert adapter.base_url == "http://127.0.0.1:9/v1"


def test_resolve_anthropic_string_and_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        resolve_provider("anthropic/claude-3-5-haiku-latest")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert isinstance(resolve_provider("anthropic/claude-3-5-haiku-latest"), AnthropicProvider)


def test_resolve_openai_compatible_server_by_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError, match="SCENARIST_OLLAMA_BASE_URL"):
        resolve_provider("ollama/llama3")
    monkeypatch.setenv("SCENARIST_OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1")
    adapter = resolve_provider("ollama/llama3")
    assert isinstance(adapter, OpenAIProvider)
    assert (adapter.name, adapter.base_url) == ("ollama/llama3", "http://127.0.0.1:11434/v1")


def test_resolve_uses_the_settings_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    set_default_generator("openai/gpt-4o")
    assert resolve_provider(None).name == "openai/gpt-4o"
    assert resolve_provider(None, purpose="judge").name == "openai/gpt-4o"
    judge = CallableProvider(lambda m: "ok", name="rules/judge")
    set_default_judge(judge)
    assert resolve_provider(None, purpose="judge") is judge
    set_default_embedding_model("openai/text-embedding-3-small")
    assert resolve_provider(None, purpose="embedding").name == "openai/text-embedding-3-small"


def test_resolve_env_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("SCENARIST_DEFAULT_MODEL", "openai/gpt-4.1-mini")
    assert resolve_provider().name == "openai/gpt-4.1-mini"


def test_resolve_rejects_malformed_strings_and_other_objects() -> None:
    with pytest.raises(ProviderError, match="'provider/model'"):
        resolve_provider("openai/")
    with pytest.raises(ProviderError, match="'provider/model'"):
        resolve_provider(" ")
    with pytest.raises(ProviderError, match="expected a Provider object"):
        resolve_provider(42)


def test_resolve_passes_provider_objects_through() -> None:
    adapter = CallableProvider(lambda m: "x")
    assert resolve_provider(adapter) is adapter


def test_local_prefix_with_a_base_url_names_the_prefix_to_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``local/`` is in-process embeddings; a server URL under that name is refused with
    the prefix and variable that work, not silently ignored."""
    monkeypatch.setenv("SCENARIST_LOCAL_BASE_URL", "http://127.0.0.1:8767/v1")
    with pytest.raises(ProviderError) as caught:
        resolve_provider("local/smollm2")
    message = str(caught.value)
    assert "'local/' names in-process embedding models (local/e5-small)" in message
    assert "SCENARIST_LOCAL_BASE_URL is not read" in message
    assert "'llamacpp/smollm2' with SCENARIST_LLAMACPP_BASE_URL" in message


def test_an_unknown_local_model_says_how_to_reach_a_server() -> None:
    with pytest.raises(ProviderError) as caught:
        resolve_provider("local/smollm2")
    message = str(caught.value)
    assert "unknown local embedding model 'smollm2'" in message
    assert "SCENARIST_LLAMACPP_BASE_URL=http://127.0.0.1:8767/v1 and 'llamacpp/smollm2'" in (
        message
    )


def test_the_documented_local_server_prefix_judges_against_a_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    from scenarist import CheckStatus, Conformity
    from scenarist._sync import run_sync
    from scenarist.model.trace import Interaction, Trace
    from scenarist.testing import FakeLLMServer, ScriptedLLM

    verdict = {"passed": True, "reason": "The reply thanks the customer politely."}
    with FakeLLMServer(ScriptedLLM([json.dumps(verdict)])) as server:
        monkeypatch.setenv("SCENARIST_LLAMACPP_BASE_URL", server.openai_url)
        check = Conformity(rule="Be polite.", judge="llamacpp/smollm2")
        trace: Trace[str, str] = Trace().with_interaction(Interaction(inputs="q", outputs="a"))
        result = run_sync(check.run, trace)
        (request,) = server.requests
    assert result.status is CheckStatus.PASS
    assert request.body["model"] == "smollm2"
    assert request.headers["authorization"] == "Bearer unused"  # no key needed locally


def test_a_bare_model_name_is_an_openai_model_as_in_giskard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    adapter = resolve_provider("gpt-4o-mini")
    assert adapter.name == "openai/gpt-4o-mini"
    assert resolve_provider("openai/gpt-4o-mini") is adapter  # one adapter per model
