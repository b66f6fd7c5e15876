# The two commands of the README: `make book` and `make test`.
# Both bootstrap a local virtual environment (.venv) from the pins in
# pyproject.toml; it is re-installed only when pyproject.toml changes.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-16)
JB_FLAGS := -W -n --keep-going

.PHONY: help venv book pdf notebooks test mutants bench clean

help:
	@echo "make book       build the HTML book into _build/html (executes every chapter; with the PDF if LaTeX is installed)"
	@echo "make test       unit tests, doctests, nbval on every chapter, and a book build"
	@echo "make pdf        build the whole book as a PDF into _build/latex/egm-book.pdf"
	@echo "make notebooks  re-execute every chapter in place (stored outputs)"
	@echo "make mutants    run every chapter under wrong versions of egmlib functions: all must fail"
	@echo "make bench      run the benchmarks in bench/"
	@echo "make clean      remove _build and caches"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[book,test,bench]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (egmlib)" >/dev/null
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

# The site links the PDF when LaTeX is installed (built first, so that the
# landing page can link it); without LaTeX, or if the PDF fails its checks, the
# site is built all the same and its landing page says how to get the PDF.
book: $(STAMP)
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

test: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg

# Chapter mutants (mutants/): each chapter runs once unchanged and once per
# mutant; every mutant must make a cell raise. Two workers (two cores).
mutants: $(STAMP)
	$(BIN)/python -m mutants.run --jobs 2

bench: $(STAMP)
	$(BIN)/python bench/bench_numerics.py
	$(BIN)/python bench/bench_mechanisms.py

clean:
	rm -rf _build .pytest_cache .hypothesis
