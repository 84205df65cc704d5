"""The SQL store: tables, migrations and ``SqlStore`` (SQLAlchemy 2, async), on SQLite or
PostgreSQL; the one store of every local use and of the server."""
