"""get_default_*(): objects as giskard-checks returns them, configured by calls or env."""

from __future__ import annotations

import pytest

from scenarist import (
    BaseJudge,
    CheckStatus,
    Conformity,
    Interaction,
    LLMChatJudge,
    SemanticSimilarity,
    Trace,
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)
from scenarist.providers import CallableProvider, OpenAIProvider, Provider, ProviderError
from scenarist.providers.defaults import reset_settings
from scenarist.providers.named_model import EmbeddingModel, Generator
from scenarist.testing import FakeLLMServer

TRACE = Trace().with_interaction(Interaction(inputs="Hi", outputs="Hello, how can I help?"))


def test_nothing_configured_gives_giskards_built_in_defaults() -> None:
    generator, judge, embedding = (
        get_default_generator(),
        get_default_judge(),
        get_default_embedding_model(),
    )
    assert generator == Generator(model="openai/gpt-4o-mini") and generator.kind == "generator"
    assert isinstance(judge, LLMChatJudge) and isinstance(judge, BaseJudge)
    assert (judge.kind, judge.generator) == ("llm", None)  # follows the default generator
    assert judge.name == "openai/gpt-4o-mini"
    assert embedding == EmbeddingModel(model="text-embedding-3-small")  # giskard's name
    assert all(isinstance(o, Provider) for o in (generator, embedding))


def test_configured_names_become_objects_and_objects_are_kept() -> None:
    set_default_generator("anthropic/claude-3-5-haiku")
    assert get_default_generator().model == "anthropic/claude-3-5-haiku"
    assert get_default_judge().generator is None  # still following the generator
    assert get_default_judge().name == "anthropic/claude-3-5-haiku"
    set_default_judge("llm/openai/gpt-4o")  # giskard's "llm/" prefix is understood
    judge = get_default_judge()
    assert isinstance(judge, LLMChatJudge) and judge.generator == Generator(model="openai/gpt-4o")
    provider = CallableProvider(lambda messages: "ok", name="rules/judge")
    set_default_judge(provider)
    assert get_default_judge().generator is provider
    mine = LLMChatJudge("openai/o3")
    set_default_judge(mine)
    assert get_default_judge() is mine
    set_default_embedding_model("local/e5-small")
    assert get_default_embedding_model().model == "local/e5-small"
    set_default_judge(None)
    set_default_generator(None)
    assert get_default_generator().model == "openai/gpt-4o-mini"
    set_default_generator("gpt-4o")  # a bare name is an OpenAI model's, as in giskard
    assert get_default_generator().model == "gpt-4o"
    with pytest.raises(ValueError, match="generator: model 'openai/' must be written"):
        set_default_generator("openai/")


def test_environment_scenarist_names_first_then_giskards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GISKARD_CHECKS_DEFAULT_MODEL", "openai/from-giskard-env")
    monkeypatch.setenv("GISKARD_CHECKS_DEFAULT_JUDGE", "llm/openai/judge-from-giskard-env")
    monkeypatch.setenv("GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL", "openai/emb-from-giskard-env")
    reset_settings()
    assert get_default_generator().model == "openai/from-giskard-env"
    assert get_default_judge().generator.model == "openai/judge-from-giskard-env"
    assert get_default_embedding_model().model == "openai/emb-from-giskard-env"
    monkeypatch.setenv("SCENARIST_DEFAULT_MODEL", "openai/from-scenarist-env")
    monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/judge-from-scenarist-env")
    monkeypatch.setenv("SCENARIST_EMBEDDING_MODEL", "openai/emb-from-scenarist-env")
    reset_settings()
    assert get_default_generator().model == "openai/from-scenarist-env"
    assert get_default_judge().generator.model == "openai/judge-from-scenarist-env"
    assert get_default_embedding_model().model == "openai/emb-from-scenarist-env"
    set_default_generator("openai/explicit")
    assert get_default_generator().model == "openai/explicit"  # a call beats the env


@pytest.mark.anyio
async def test_the_default_judge_works_against_a_server(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_OPENAI_BASE_URL", server.openai_url)
    server.script.add('{"passed": true, "reason": "the reply is polite", "score": 1.0}')
    result = await Conformity(rule="Be polite.").run(TRACE)  # no judge=: the default
    assert (result.status, result.message) == (CheckStatus.PASS, "the reply is polite")
    assert result.details["judge"]["name"] == "openai/gpt-4o-mini"
    assert server.requests[0].body["model"] == "gpt-4o-mini"
    # the returned objects are usable where a model is taken
    server.script.add('{"passed": false, "reason": "the reply is rude", "score": 0.0}')
    judged = await Conformity(rule="Be polite.", judge=get_default_judge()).run(TRACE)
    assert (judged.status, judged.message) == (CheckStatus.FAIL, "the reply is rude")
    server.script.add("Hi there.")
    answer = await get_default_generator().chat([{"role": "user", "content": "hi"}])
    assert answer.text == "Hi there."
    assert isinstance(get_default_generator().resolve(), OpenAIProvider)
    similar = await SemanticSimilarity(reference_text="Hello, how can I help?").run(TRACE)
    assert similar.status is CheckStatus.PASS  # the default embedding model, same server


@pytest.mark.anyio
async def test_the_built_in_default_without_a_key_says_how_to_configure_one() -> None:
    result = await Conformity(rule="Be polite.").run(TRACE)
    assert result.status is CheckStatus.ERROR
    assert "No judge model is configured" in result.message
    assert "OPENAI_API_KEY" in result.message and "SCENARIST_DEFAULT_JUDGE" in result.message
    similar = await SemanticSimilarity(reference_text="Hello").run(TRACE)
    assert similar.status is CheckStatus.ERROR
    assert "built-in default 'text-embedding-3-small' is used" in similar.message
    assert "set_default_embedding_model" in similar.message
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        await get_default_embedding_model().embed(["x"])
