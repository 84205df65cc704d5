"""Old home of the SQL store; it lives in :mod:`scenarist.store.sql` now (a thin alias)."""
