# optsched: the two commands of the README (`make demo`, `make test`) do all set-up.
# A virtual environment is created in .venv on first use and refreshed when pyproject.toml changes.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2
NOTEBOOKS := $(wildcard notebooks/*.ipynb)

.PHONY: help venv demo test test-wheel test-slow test-all bench notebooks docs lint clean

help:
	@echo "make demo       exact optimum vs algorithms on the benchmark instances, verified, one table"
	@echo "make test       set-up + the site (notebooks executed, strict) + the default test suite (not 'slow')"
	@echo "make test-wheel the installed-wheel test alone (also a step of make test)"
	@echo "make test-slow  only the long runs (marked slow)"
	@echo "make bench      speed and quality benchmarks (writes benchmarks/results/*.json)"
	@echo "make notebooks  execute every notebook"
	@echo "make docs       the documentation site, strict (every warning fatal; notebooks executed), into site/"
	@echo "make lint       ruff, and mypy on the core layers"

# Set-up also compiles the simulator core once (numba keeps it; a machine where it cannot run says
# why, and the Python engine runs every simulation).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,notebooks,distributed,docs]"
	$(PY) -m optsched.sim.compiled --warm || true
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/optsched demo

# The site is built first (strict): the build executes every notebook (a failing cell fails it)
# and runs the gallery's commands, so the tests do not execute the notebooks again;
# tests/test_docs_site.py opens that build in Chromium and tests/experiments/test_reproduce.py
# checks the reproductions the gallery ran (OPTSCHED_SITE_DIR). --dist loadgroup: the browser
# checks run on one worker (one browser for every page).
test: $(STAMP) docs
	OPTSCHED_SITE_DIR=$(CURDIR)/site $(PY) -m pytest -m "not slow and not wheel" -n $(JOBS) --dist loadgroup tests
	$(PY) -m pytest -m wheel -n 0 tests/test_installed_wheel.py

test-wheel: $(STAMP)
	$(PY) -m pytest -m wheel -n 0 tests/test_installed_wheel.py

test-slow: $(STAMP)
	$(PY) -m pytest -m "slow and not wheel" -n $(JOBS) tests

test-all: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --nbmake --nbmake-timeout=1200 tests $(NOTEBOOKS)

bench: $(STAMP)
	$(PY) -m benchmarks

notebooks: $(STAMP)
	$(PY) -m pytest --nbmake --nbmake-timeout=1200 $(NOTEBOOKS)

# mkdocs.yml: API reference from the docstrings, formulations/ and notebooks/ (executed, JOBS at
# a time, cached in .cache/optsched-docs/ by the code's hash), the gallery drawn by the commands,
# MathJax served locally, all added by docs/_hooks/. Strict without --quiet: every warning (a
# broken link or anchor, a failing notebook, a control character, an undocumented public name)
# fails the build with its file and line. `mkdocs serve` previews it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 OPTSCHED_DOCS_JOBS=$(JOBS) $(PY) -m mkdocs build --strict

lint: $(STAMP)
	$(PY) -m ruff check optsched tests benchmarks
	$(PY) -m ruff format --check optsched tests benchmarks
	$(PY) -m mypy optsched/core optsched/solvers optsched/verify --ignore-missing-imports --follow-imports=silent

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info site .cache/mkdocs-jupyter .cache/optsched-docs
