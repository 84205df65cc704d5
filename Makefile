.PHONY: check lint types test

PY ?= .venv/bin/python
# Test processes (pytest-xdist); each module stays on one worker, so module fixtures
# (a dashboard server, the giskard differential run) are built once. Modules are handed
# out in collection order, the longest first (tests/conftest.py, LONGEST_FIRST).
WORKERS ?= 3

check: lint types test

lint:
	$(PY) -m ruff check src tests examples bench
	$(PY) -m ruff format --check src tests examples bench

types:
	$(PY) -m mypy

test:
	$(PY) -m pytest -q -n $(WORKERS) --dist loadscope --no-loadscope-reorder
