"""The scenarist server: the SQL store (:mod:`scenarist.store.sql`) behind an HTTP API and
a dashboard.

Install with ``pip install 'scenarist[server]'`` (and ``'scenarist[postgres]'`` for
PostgreSQL). Entry points: :func:`scenarist.server.app.create_app` (the FastAPI app),
:mod:`scenarist.server.cli` (serve), :class:`scenarist.store.sql.store.SqlStore`
(the store itself) and :class:`scenarist.store.remote.RemoteStore` (a client's store
that talks to a server). Nothing here is imported by ``import scenarist``.
"""
