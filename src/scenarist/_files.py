"""Loading scenarios and suites from JSON or YAML files, with errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scenarist.errors import UserError

__all__ = ["load_model"]

M = TypeVar("M", bound=BaseModel)


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in {".yaml", ".yml"}:
        try:
            import yaml
        except ImportError:
            raise UserError(
                f"{path}: reading YAML needs PyYAML; run pip install pyyaml, or write JSON"
            ) from None
        return yaml.safe_load(text)
    return json.loads(text)


def load_model(model: type[M], path: str | Path) -> M:
    """Validate the file at ``path`` as ``model``; ``UserError`` names the file and field."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file; check the path")
    try:
        data = _read(path)
    except (ValueError, OSError) as exc:
        raise UserError(f"{path}: cannot parse the file: {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise UserError(f"{path}: invalid {model.__name__}: {problems}") from exc
