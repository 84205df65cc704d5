"""giskard-agents' ``Generator`` and ``EmbeddingModel`` objects, which giskard's documentation
configures models with, are taken wherever a model is: recognised by shape (a ``model``
name with ``complete()`` or ``embed()``), never by importing giskard, and called through
our adapter of that name. The stand-ins below have giskard-agents 1.0.6's shape (pydantic
models with its fields); giskard-agents itself lives in another interpreter's venv."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

import scenarist
from scenarist import (
    CheckStatus,
    Conformity,
    EmbeddingModel,
    Generator,
    Interaction,
    LLMChatJudge,
    LLMJudge,
    Scenario,
    SemanticSimilarity,
    Trace,
    UserSimulator,
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)
from scenarist.providers import ProviderError, resolve_provider
from scenarist.testing import FakeLLMServer

pytestmark = pytest.mark.anyio

TRACE = Trace().with_interaction(Interaction(inputs="Hi", outputs="Hello, how can I help?"))


class GenerationParams(BaseModel):
    temperature: float = 1.0
    max_tokens: int | None = None


class GiskardLLMGenerator(BaseModel):
    """giskard-agents' ``Generator``: a model name, parameters, ``complete()`` and a
    ``chat()`` that starts a workflow (not a chat call)."""

    model: str
    params: GenerationParams = Field(default_factory=GenerationParams)

    async def complete(self, messages: Any, params: Any = None, metadata: Any = None) -> Any:
        raise AssertionError("scenarist calls its own adapter, not giskard's client")

    def chat(self, message: str, role: str = "user") -> Any:
        raise AssertionError("giskard's chat() builds a workflow; scenarist must not call it")


class LitellmEmbeddingModel(BaseModel):
    """giskard-agents' ``EmbeddingModel`` (its default model is Google's)."""

    model: str = "google/gemini-embedding-001"

    async def embed(self, texts: list[str], params: Any = None) -> Any:
        raise AssertionError("scenarist calls its own adapter, not giskard's client")


@pytest.fixture
def openai_server(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    monkeypatch.setenv("SCENARIST_OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return server


def test_the_same_constructors_are_offered_at_the_top_level() -> None:
    assert {"Generator", "EmbeddingModel"} <= set(scenarist.__all__)
    assert Generator(model="openai/gpt-4o-mini").model == "openai/gpt-4o-mini"
    assert Generator(model="gpt-4o").model == "gpt-4o"  # giskard's bare OpenAI name
    assert EmbeddingModel(model="text-embedding-3-small").model == "text-embedding-3-small"
    with pytest.raises(ValueError, match="must be written 'provider/model'"):
        Generator(model="openai/")


def test_defaults_take_giskard_objects_as_models_of_their_name() -> None:
    set_default_generator(GiskardLLMGenerator(model="anthropic/claude-3-5-haiku"))
    assert get_default_generator() == Generator(model="anthropic/claude-3-5-haiku")
    set_default_judge(GiskardLLMGenerator(model="openai/gpt-4o"))
    judge = get_default_judge()
    assert isinstance(judge, LLMChatJudge) and judge.generator == Generator(model="openai/gpt-4o")
    set_default_embedding_model(LitellmEmbeddingModel(model="openai/text-embedding-3-large"))
    assert get_default_embedding_model() == EmbeddingModel(model="openai/text-embedding-3-large")


def test_model_fields_take_giskard_objects() -> None:
    generator = GiskardLLMGenerator(model="openai/gpt-4o-mini")
    assert UserSimulator(persona="p", generator=generator).generator == Generator(
        model="openai/gpt-4o-mini"
    )
    assert LLMJudge(prompt="ok?", judge=generator).judge == Generator(model="openai/gpt-4o-mini")
    assert LLMChatJudge(generator).generator == Generator(model="openai/gpt-4o-mini")
    similarity = SemanticSimilarity(reference_text="a", embedding_model=LitellmEmbeddingModel())
    assert similarity.embedding_model == EmbeddingModel(model="google/gemini-embedding-001")
    assert resolve_provider(GiskardLLMGenerator(model="local/e5-small")).name == "local/e5-small"


def test_an_object_that_is_no_model_is_still_refused_with_the_forms_accepted() -> None:
    class NoName(BaseModel):
        async def complete(self, messages: Any) -> Any: ...

    with pytest.raises(ProviderError, match="giskard-agents Generator / EmbeddingModel"):
        resolve_provider(NoName())
    with pytest.raises(ValueError, match="giskard-agents Generator / EmbeddingModel, got NoName"):
        UserSimulator(persona="p", generator=NoName())


async def test_checks_configured_with_giskard_objects_call_the_model_they_name(
    openai_server: FakeLLMServer,
) -> None:
    openai_server.script.add('{"passed": true, "reason": "the reply is polite", "score": 1.0}')
    result = await Conformity(
        rule="Be polite.", judge=GiskardLLMGenerator(model="openai/gpt-4o")
    ).run(TRACE)
    assert (result.status, result.message) == (CheckStatus.PASS, "the reply is polite")
    assert openai_server.requests[-1].body["model"] == "gpt-4o"

    set_default_generator(GiskardLLMGenerator(model="gpt-4o-mini"))  # as the docs configure it
    openai_server.script.add('{"passed": false, "reason": "the reply is rude", "score": 0.0}')
    result = (
        await Scenario("s")
        .interact(inputs="Hi", outputs="Go away.")
        .check(LLMJudge(name="tone", prompt="Is {{ trace.last.outputs }} polite?"))
        .run()
    )
    assert result.steps[0].results[0].status is CheckStatus.FAIL
    assert openai_server.requests[-1].body["model"] == "gpt-4o-mini"

    similar = await SemanticSimilarity(
        reference_text="Hello, how can I help?",
        embedding_model=LitellmEmbeddingModel(model="text-embedding-3-small"),
    ).run(TRACE)
    assert similar.status is CheckStatus.PASS
    assert openai_server.requests[-1].body["model"] == "text-embedding-3-small"
