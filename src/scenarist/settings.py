"""Old import path of :mod:`scenarist.model_defaults` (renamed), kept so existing imports work."""

from scenarist.model_defaults import (
    BUILTIN_EMBEDDING_MODEL,
    BUILTIN_GENERATOR,
    configured,
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    reset_settings,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)

__all__ = [
    "BUILTIN_EMBEDDING_MODEL",
    "BUILTIN_GENERATOR",
    "configured",
    "get_default_embedding_model",
    "get_default_generator",
    "get_default_judge",
    "reset_settings",
    "set_default_embedding_model",
    "set_default_generator",
    "set_default_judge",
]
