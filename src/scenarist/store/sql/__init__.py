"""The server's database: tables, migrations and the SQL store (SQLAlchemy 2, async)."""
