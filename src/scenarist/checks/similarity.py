"""``SemanticSimilarity``: the answer means what a reference text means (embeddings, cosine).

Both texts are embedded with ``embedding_model`` (a Provider, a ``"provider/model"``
string, or ``None`` for ``get_default_embedding_model()``), and the check passes when the
cosine similarity reaches ``threshold``. **Thresholds belong to a model**: multilingual
E5 (``local/e5-small``) scores unrelated sentences around 0.7 and paraphrases around 0.95,
while other models spread differently; calibrate on a few pairs before choosing one.

As in giskard-checks: an empty or missing answer or reference is ERROR; a collection
(list, tuple, set, dict) as the answer is FAIL, since it is not one text; other values are
compared as ``str(value)``. A provider that cannot be used (no SDK, no key, no model
configured) is ERROR with the fix in the message.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from scenarist.checks._values import (
    DEFAULT_TARGET_KEY,
    KeyPath,
    NoMatch,
    optional,
    type_name,
)
from scenarist.checks.base import Check
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Trace
from scenarist.providers.base import ProviderError
from scenarist.providers.mixins import WithEmbeddingMixin

__all__ = ["SemanticSimilarity", "cosine_similarity"]

_COLLECTIONS = (list, tuple, set, frozenset, dict)


def cosine_similarity(a: list[float], b: list[float]) -> float:
    """The cosine of the angle between two vectors (``ValueError`` for zero or mismatched)."""
    if len(a) != len(b):
        raise ValueError(f"embeddings have different sizes: {len(a)} and {len(b)}")
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        raise ValueError("an embedding is the zero vector; its similarity is undefined")
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm


@Check.register("semantic_similarity")
class SemanticSimilarity(Check, WithEmbeddingMixin):
    """PASS when the answer's embedding is within ``threshold`` (cosine) of the reference's."""

    threshold: float = Field(default=0.95, ge=-1.0, le=1.0)
    reference_text: str | None = optional()
    reference_text_key: KeyPath = "trace.last.metadata.reference_text"
    target_key: KeyPath = DEFAULT_TARGET_KEY

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        actual = resolve(trace, self.target_key)
        if isinstance(actual, NoMatch):
            return CheckResult.error(
                f"No value found for actual answer key '{self.target_key}'.",
                details={"target_key": self.target_key},
            )
        if isinstance(actual, _COLLECTIONS):
            return CheckResult.failure(
                f"Value for actual answer key '{self.target_key}' must be a single value, "
                f"but found {type_name(actual)}. Use a key that resolves to one value.",
                details={"target_key": self.target_key, "value": repr(actual)},
            )
        reference: Any = self.reference_text
        if reference is None:
            reference = resolve(trace, self.reference_text_key)
            if isinstance(reference, NoMatch):
                return CheckResult.error(
                    f"No value found for reference text key '{self.reference_text_key}'.",
                    details={"reference_text_key": self.reference_text_key},
                )
        if _blank(actual):
            return CheckResult.error(
                "No actual answer found",
                details={"actual_answer": actual, "target_key": self.target_key},
            )
        if _blank(reference):
            return CheckResult.error(
                "No reference text found",
                details={
                    "reference_text": reference,
                    "reference_text_key": self.reference_text_key,
                },
            )
        actual_text, reference_text = str(actual), str(reference)
        try:
            model = self.resolve_embedding_model()
            vectors = await model.embed([actual_text, reference_text])
            similarity = cosine_similarity(vectors[0], vectors[1])
        except (ProviderError, ValueError, IndexError) as exc:
            return CheckResult.error(f"Could not compare embeddings: {exc}")
        details = {
            "similarity": similarity,
            "threshold": self.threshold,
            "actual_answer": actual_text,
            "reference_text": reference_text,
            "embedding_model": model.name,
        }
        metrics = [Metric(name="similarity", value=similarity)]
        if similarity >= self.threshold:
            return CheckResult.success(
                f"The cosine similarity with the reference answer is {similarity:.2f}, "
                f"at or above the threshold {self.threshold}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.failure(
            f"The cosine similarity with the reference answer is {similarity:.2f}, "
            f"below the threshold {self.threshold}",
            details=details,
            metrics=metrics,
        )


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
