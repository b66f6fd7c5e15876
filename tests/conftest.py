"""What several test files share: the builds of the book, once per pytest run.

Building the site (about a minute), the LaTeX source (half a minute) and the PDF
(pdflatex, a minute or more) are the expensive steps of `make test`; each is done
once, in a session fixture, for every test that needs it (issue 22).  The builds
use the chapters' stored outputs (tests/book_builds.py); the nbval run of the
same pytest invocation proves that a fresh execution reproduces them.

When the run needs the LaTeX source or the PDF, their builds start in a thread
as soon as the site's build does, and run beside it and the tests that follow
(pytest itself keeps only one core busy); a test that needs them waits for them.

The marker ``book`` names the tests of the site, the PDF, the browser and
JupyterLab: their result does not depend on the Python version, so CI runs them
once, with the oldest Python (`make test`), and leaves them out for the newest
(`make test-python`, i.e. ``-m "not book"``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest



def build_book(*args):
    """tests/book_builds.py's build, imported on first use: it needs the book's
    packages (yaml, jupyter-book), which `make library-check`'s bare environments,
    running egmlib's unit tests with only the library's dependencies, do not have."""
    from book_builds import build_book as build

    return build(*args)


def compile_pdf(*args):
    """tests/book_builds.py's pdflatex run, imported on first use (see build_book)."""
    from book_builds import compile_pdf as compile_

    return compile_(*args)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "book: checks the built site, the PDF, the pages in a browser or JupyterLab; "
        "the same on every Python, so CI runs them once (`make test-python` leaves them out)")


class _Later:
    """``function(*args)`` run in a thread from now on; ``result()`` waits for it and
    returns its value or raises its exception (a failure, or pytest's skip)."""

    def __init__(self, function, *args) -> None:
        self._value = self._error = None
        self._thread = threading.Thread(target=self._run, args=(function, *args), daemon=True)
        self._thread.start()

    def _run(self, function, *args) -> None:
        try:
            self._value = function(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the test that waits
            self._error = error

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


class _PdfBuilds:
    """The LaTeX build and, after it, the pdflatex compile, each started once."""

    def __init__(self, tmp_path_factory, session) -> None:
        self.tmp_path_factory, self.session = tmp_path_factory, session
        self.latex = self.pdf = None

    def _needed(self, fixture: str) -> bool:
        return any(fixture in getattr(item, "fixturenames", ()) for item in self.session.items)

    def start(self, compile_too: bool | None = None) -> None:
        if self.latex is None:
            self.latex = _Later(build_book, self.tmp_path_factory.mktemp("pdf"), "latex")
        if compile_too is None:
            compile_too = self._needed("compiled_pdf")
        if compile_too and self.pdf is None:
            self.pdf = _Later(lambda: compile_pdf(self.latex.result() / "latex"))

    def wait(self) -> None:  # no build left running when pytest ends
        for job in (self.latex, self.pdf):
            if job is not None:
                job._thread.join()


@pytest.fixture(scope="session")
def _pdf_builds(tmp_path_factory, request) -> _PdfBuilds:
    builds = _PdfBuilds(tmp_path_factory, request.session)
    yield builds
    builds.wait()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, _pdf_builds) -> Path:
    """The HTML site (stored outputs, warnings as errors): ``.../_build/html``."""
    if _pdf_builds._needed("latex_build") or _pdf_builds._needed("compiled_pdf"):
        _pdf_builds.start()  # beside this build, on the other core
    return build_book(tmp_path_factory.mktemp("book")) / "html"


@pytest.fixture(scope="session")
def latex_build(_pdf_builds) -> Path:
    """Sphinx's LaTeX source of the book (stored outputs): ``.../_build``."""
    _pdf_builds.start()
    return _pdf_builds.latex.result()


@pytest.fixture(scope="session")
def compiled_pdf(_pdf_builds) -> Path:
    """The same LaTeX source compiled as `make pdf` does, checked like it:
    ``.../_build/latex``.  Skips where LaTeX is not installed."""
    _pdf_builds.start(compile_too=True)
    return _pdf_builds.pdf.result()
