"""What several test files share: the builds of the book, once per pytest run.

Building the site (about a minute), the LaTeX source (half a minute) and the PDF
(pdflatex, a minute or more) are the expensive steps of `make test`; each is done
once, in a session fixture, for every test that needs it (issue 22).  The builds
use the chapters' stored outputs (tests/book_builds.py); the nbval run of the
same pytest invocation proves that a fresh execution reproduces them.

The marker ``book`` names the tests of the site, the PDF, the browser and
JupyterLab: their result does not depend on the Python version, so CI runs them
once, with the oldest Python (`make test`), and leaves them out for the newest
(`make test-python`, i.e. ``-m "not book"``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from book_builds import build_book, compile_pdf


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "book: checks the built site, the PDF, the pages in a browser or JupyterLab; "
        "the same on every Python, so CI runs them once (`make test-python` leaves them out)")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The HTML site (stored outputs, warnings as errors): ``.../_build/html``."""
    return build_book(tmp_path_factory.mktemp("book")) / "html"


@pytest.fixture(scope="session")
def latex_build(tmp_path_factory) -> Path:
    """Sphinx's LaTeX source of the book (stored outputs): ``.../_build``."""
    return build_book(tmp_path_factory.mktemp("pdf"), builder="latex")


@pytest.fixture(scope="session")
def compiled_pdf(latex_build: Path) -> Path:
    """The same LaTeX source compiled as `make pdf` does, checked like it:
    ``.../_build/latex``.  Skips where LaTeX is not installed."""
    return compile_pdf(latex_build / "latex")
