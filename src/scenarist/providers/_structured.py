"""Structured answers: strict JSON parsing, schema validation, and the fallback instruction.

Parsing is strict on purpose: the whole answer must be one JSON value (optionally wrapped
in a single Markdown code fence, which models in JSON-instruction mode often add), and it
must validate against the requested schema. There is no "find the first brace" rescue: a
judge that half-answered must not be read as a verdict.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scenarist.errors import ProviderError, StructuredOutputError

__all__ = ["StructuredOutputError", "json_instruction", "parse_structured"]

_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n\s*```\Z", re.S)


def parse_structured(text: str, schema: dict[str, Any]) -> Any:
    """The answer decoded and validated; :class:`StructuredOutputError` when it is not."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise StructuredOutputError(
            f"the answer is not valid JSON ({exc}); got {_clip(text)!r}"
        ) from None
    validate(value, schema)
    return value


def validate(value: Any, schema: dict[str, Any]) -> None:
    """Raise :class:`StructuredOutputError` unless ``value`` matches ``schema``."""
    import jsonschema

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise StructuredOutputError(
            f"the answer does not match the schema at {where}: {exc.message}"
        ) from None
    except jsonschema.SchemaError as exc:
        raise ProviderError(f"the requested json_schema is invalid: {exc.message}") from None


def json_instruction(schema: dict[str, Any]) -> str:
    """What to tell a model that cannot be constrained to a schema by the API."""
    return (
        "Answer with a single JSON value and nothing else (no prose, no code fence). "
        f"It must match this JSON Schema:\n{json.dumps(schema, sort_keys=True)}"
    )


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
