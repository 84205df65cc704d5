.PHONY: check lint types test

PY ?= .venv/bin/python
# Bytecode is cached, as Python does by default: environments that set
# PYTHONDONTWRITEBYTECODE=1 make every xdist worker and every `scenarist` subprocess of the
# tests compile our modules and the test files again (collecting the suite: 39 -> 25 s of
# CPU per worker here). __pycache__ is ignored by git.
export PYTHONDONTWRITEBYTECODE :=
# Test processes (pytest-xdist); each module stays on one worker, so module fixtures
# (a dashboard server, the giskard differential run) are built once, and tests/dashboard
# is one unit (its tests share a browser). Modules are handed out in collection order,
# the longest first (tests/conftest.py, LONGEST_FIRST). Four: see docs/design/testing.md.
WORKERS ?= 4

# mypy (about 40 s of CPU from a cold cache, as in a clean clone) runs beside the tests,
# not before them: on two busy cores the tests' waits leave room for it. Lint goes first
# (a second). Either failing fails `make check`; make waits for the other to finish.
check: lint
	@$(MAKE) --no-print-directory -j2 types test

lint:
	$(PY) -m ruff check src tests examples bench
	$(PY) -m ruff format --check src tests examples bench

types:
	$(PY) -m mypy

test:
	$(PY) -m pytest -q -n $(WORKERS) --dist loadscope --no-loadscope-reorder
