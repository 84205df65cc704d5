.PHONY: check lint types test

PY ?= .venv/bin/python

check: lint types test

lint:
	$(PY) -m ruff check src tests examples bench
	$(PY) -m ruff format --check src tests examples bench

types:
	$(PY) -m mypy

test:
	$(PY) -m pytest -q
