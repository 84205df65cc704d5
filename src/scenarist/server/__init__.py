"""The scenarist server: a store on SQLite or PostgreSQL behind an HTTP API.

Install with ``pip install 'scenarist[server]'`` (and ``'scenarist[postgres]'`` for
PostgreSQL). Entry points: :func:`scenarist.server.app.create_app` (the FastAPI app),
:mod:`scenarist.server.cli` (serve, keys, migrations), :class:`scenarist.store.sql.store.SqlStore`
(the store itself) and :class:`scenarist.store.remote.RemoteStore` (a client's store
that talks to a server). Nothing here is imported by ``import scenarist``.
"""
