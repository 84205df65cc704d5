"""The web dashboard: server-rendered pages with JSON twins (see ``routes.py``)."""
