"""Old import path of :class:`~scenarist.store.remote.RemoteStore` (kept as a thin alias)."""

from scenarist.store.remote import RemoteStore, UploadResult

__all__ = ["RemoteStore", "UploadResult"]
