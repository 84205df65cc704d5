"""Old import path of :mod:`scenarist.veval.wire` (renamed), kept so existing imports work."""

from scenarist.veval.wire import (
    from_veval,
    to_veval,
)

__all__ = [
    "from_veval",
    "to_veval",
]
