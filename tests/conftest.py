"""What several test files share: the builds of the book, once per pytest run.

Building the site (about a minute), the LaTeX source (half a minute) and the PDF
(pdflatex, a minute or more) are the expensive steps of `make test`; each is done
once, in a session fixture, for every test that needs it (issue 22).  The builds
use the chapters' stored outputs (tests/book_builds.py); the nbval run of the
same pytest invocation proves that a fresh execution reproduces them.

When the run needs the LaTeX source or the PDF, their builds start in a thread
as soon as the site's build is asked for: the LaTeX build follows the site's in
the same folder (it reuses its doctrees) and runs, with the pdflatex compile,
beside the tests that read the site; a test that needs them waits for them.

`make test` runs pytest on every core (pytest-xdist, ``-n auto --dist
loadgroup``).  A session fixture is per worker, so every test marked ``book`` is
put in one xdist group ("book"): the builds happen once, on the worker that runs
that group.  Every cell of a notebook is in its notebook's group, since nbval runs
the cells in order in one kernel.  The book's group is the longest, so it is put
first, then the notebooks, then the unit tests, which fill in at the end
(pytest_collection_modifyitems; `make test` keeps this order with
--no-loadscope-reorder).  Tests that write files write into their own tmp_path
(per worker under xdist).  Hypothesis's example database (one folder a test,
each test on one worker) writes each example to a temporary file and renames it.

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


def _group(item) -> str | None:
    """The xdist group of a test: every `book` test in one (the session builds of
    the site, LaTeX and PDF happen once, on one worker), every cell of one notebook
    in one (nbval runs them in order in one kernel); None: any worker."""
    if item.get_closest_marker("book") is not None:
        return "book"
    if item.path.suffix == ".ipynb":
        return "nb-" + item.path.stem
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`make test`: ``-n auto --dist loadgroup``), mark each test
    with its group (see _group); and, in every run, put the longest work first: the
    book's tests, then the notebooks, then the rest, so that no worker is left with
    a long group at the end while the other waits.  The order within a group (a
    notebook's cells) is kept (the sort is stable)."""
    groups = {id(item): _group(item) for item in items}
    # on a worker, xdist has set the option dist to "no" (the controller schedules):
    # the marks go on whenever xdist is there (its marker is then registered)
    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            if groups[id(item)] is not None:
                item.add_marker(pytest.mark.xdist_group(groups[id(item)]))

    def rank(item) -> int:
        group = groups[id(item)]
        return 0 if group == "book" else 1 if group else 2

    items.sort(key=rank)


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


class _Builds:
    """The site, its LaTeX source and the PDF, each built at most once, all in one
    folder: Sphinx shares its doctrees between builders, so the second of the
    two Sphinx builds reads the pickled environment of the first instead of
    parsing every chapter again (issue 22).  The two never run at once (a lock);
    the pdflatex compile follows the LaTeX build."""

    def __init__(self, tmp_path_factory, session) -> None:
        self.session = session
        self.folder = tmp_path_factory.mktemp("book")
        self._lock = threading.Lock()
        self.site = self.latex = self.pdf = None

    def _needed(self, fixture: str) -> bool:
        return any(fixture in getattr(item, "fixturenames", ()) for item in self.session.items)

    def _build(self, builder: str | None = None) -> Path:
        with self._lock:
            return build_book(self.folder, builder)

    def start_site(self) -> None:
        if self.site is None:
            self.site = _Later(self._build)
            # the LaTeX build queues behind the site's and then runs beside the
            # tests that read the site (the browser check)
            if self._needed("latex_build") or self._needed("compiled_pdf"):
                self.start_latex()

    def start_latex(self, compile_too: bool | None = None) -> None:
        if self.latex is None:
            self.latex = _Later(self._build, "latex")
        if compile_too is None:
            compile_too = self._needed("compiled_pdf")
        if compile_too and self.pdf is None:
            self.pdf = _Later(lambda: compile_pdf(self.latex.result() / "latex"))

    def wait(self) -> None:  # no build left running when pytest ends
        for job in (self.site, self.latex, self.pdf):
            if job is not None:
                job._thread.join()


@pytest.fixture(scope="session")
def _builds(tmp_path_factory, request) -> _Builds:
    builds = _Builds(tmp_path_factory, request.session)
    yield builds
    builds.wait()


@pytest.fixture(scope="session")
def built_site(_builds) -> Path:
    """The HTML site (stored outputs, warnings as errors): ``.../_build/html``."""
    _builds.start_site()
    return _builds.site.result() / "html"


@pytest.fixture(scope="session")
def latex_build(_builds) -> Path:
    """Sphinx's LaTeX source of the book (stored outputs): ``.../_build``."""
    _builds.start_latex()
    return _builds.latex.result()


@pytest.fixture(scope="session")
def compiled_pdf(_builds) -> Path:
    """The same LaTeX source compiled as `make pdf` does, checked like it:
    ``.../_build/latex``.  Skips where LaTeX is not installed."""
    _builds.start_latex(compile_too=True)
    return _builds.pdf.result()
