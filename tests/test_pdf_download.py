"""The landing page's link to the PDF (``_ext/pdf_download.py``).

A two-page Sphinx project, built in a temporary directory, with and without a
PDF beside the HTML output: the link appears, points to a file of the site and
is relative from nested pages; without a PDF there is no link and no sentence
about the build (nothing at all), and the LaTeX build renders nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.book  # Sphinx builds: run once in CI (tests/conftest.py)


def _build(tmp: Path, builder: str = "html", pdf: bytes | None = None) -> Path:
    src = tmp / "src"
    (src / "sub").mkdir(parents=True)
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['pdf_download']\n"
        "latex_documents = [('index', 'x.tex', 'x', 'a', 'manual')]\n"
    )
    (src / "index.rst").write_text("Top\n===\n\n.. pdf-download::\n\n.. toctree::\n\n   sub/page\n")
    (src / "sub" / "page.rst").write_text("Page\n====\n\nText.\n\n.. pdf-download::\n")
    build = tmp / "_build"
    if pdf is not None:
        (build / "latex").mkdir(parents=True, exist_ok=True)
        (build / "latex" / "egm-book.pdf").write_bytes(pdf)
    out = build / builder
    _run(src, out, build / ".doctrees" / builder, builder, fresh=True)
    return out


def _run(src: Path, out: Path, doctrees: Path, builder: str, fresh: bool) -> None:
    with docutils_namespace():  # node and directive registrations stay local to this build
        app = Sphinx(str(src), str(src), str(out), str(doctrees), builder,
                     status=None, warning=None, freshenv=fresh, warningiserror=True)
        app.build()


def test_link_when_the_pdf_exists(tmp_path):
    content = b"%PDF-1.5 fake" * 1000
    out = _build(tmp_path, pdf=content)
    assert (out / "egm-book.pdf").read_bytes() == content  # copied into the site
    top = (out / "index.html").read_text()
    sub = (out / "sub" / "page.html").read_text()
    assert re.search(r'href="egm-book\.pdf"', top)
    assert re.search(r'href="\.\./egm-book\.pdf"', sub)
    assert "(0.0 MiB)" in top and "not part of this build" not in top


def test_page_count_from_the_latex_log(tmp_path):
    (tmp_path / "_build" / "latex").mkdir(parents=True)
    (tmp_path / "_build" / "latex" / "egm-book.log").write_text(
        "Output written on egm-book.pdf (201 pages, 1788027 bytes).\n")
    out = _build(tmp_path, pdf=b"%PDF" * 300000)
    assert "(201 pages, 1.1 MiB)" in (out / "index.html").read_text()


def test_link_from_nested_pages_with_dirhtml(tmp_path):
    out = _build(tmp_path, builder="dirhtml", pdf=b"%PDF")
    sub = out / "sub" / "page" / "index.html"
    href = re.search(r'href="([^"]*egm-book\.pdf)"', sub.read_text()).group(1)
    assert (sub.parent / href).resolve() == (out / "egm-book.pdf").resolve()


def test_no_broken_link_without_the_pdf(tmp_path):
    out = _build(tmp_path)
    top = (out / "index.html").read_text()
    assert "egm-book.pdf" not in top
    # no bookkeeping sentence for the reader either (issue 33): nothing at all
    assert "pdf-download" not in top and "make pdf" not in top and " PDF" not in top
    assert not (out / "egm-book.pdf").exists()


def test_the_link_appears_on_the_next_build(tmp_path):
    """The page is re-read although its source did not change."""
    src_out = _build(tmp_path)
    assert "egm-book.pdf" not in (src_out / "index.html").read_text()
    (tmp_path / "_build" / "latex").mkdir(parents=True)
    (tmp_path / "_build" / "latex" / "egm-book.pdf").write_bytes(b"%PDF")
    _run(tmp_path / "src", src_out, tmp_path / "_build" / ".doctrees" / "html", "html", fresh=False)
    assert 'href="egm-book.pdf"' in (src_out / "index.html").read_text()


@pytest.mark.parametrize("pdf", [None, b"%PDF"])
def test_nothing_in_the_latex_build(tmp_path, pdf):
    out = _build(tmp_path, builder="latex", pdf=pdf)
    tex = (out / "x.tex").read_text()
    assert "egm-book.pdf" not in tex and "pdf-download" not in tex


def _pdf_tools():
    import importlib.util

    spec = importlib.util.spec_from_file_location("pdf_tools", ROOT / "scripts" / "pdf_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOOD_LOG = "(./egm-book.aux)\nOutput written on egm-book.pdf (201 pages, 1788027 bytes).\n"


def test_pdf_check_passes_a_clean_log(tmp_path, capsys):
    (tmp_path / "egm-book.log").write_text(GOOD_LOG)
    (tmp_path / "egm-book.pdf").write_bytes(b"%PDF")
    assert _pdf_tools().check(tmp_path / "egm-book.log") == 0
    assert "201 pages" in capsys.readouterr().out


@pytest.mark.parametrize("warning", [
    "LaTeX Warning: Reference `equation:chapters/gaussian_mechanism:gm-eq-error' on page 12 undefined on input line 7.\n",
    # TeX folds long log lines at 79 characters
    "LaTeX Warning: Reference `equation:chapters/gaussian_mechanism:gm-eq-error' on \npage 12 undefined on input line 7.\n",
    "LaTeX Warning: Citation `poulsen2023' on page 3 undefined on input line 9.\n",
    "LaTeX Warning: There were undefined references.\n",
    "LaTeX Warning: Reference `chapters/intro:x' on page iii undefined on input line 7.\n",
    "pdfTeX warning (dest): name{equation:chapters/x:eq-1} has been referenced but does not exist, replaced by a fixed one\n",
    # a section note put between a label and its section (issue 33's PDF notes)
    "LaTeX Warning: Label `chapters/gaussian_data:gd-sec-run' multiply defined.\n",
])
def test_pdf_check_fails_on_undefined_references(tmp_path, warning):
    (tmp_path / "egm-book.log").write_text(warning + GOOD_LOG)
    (tmp_path / "egm-book.pdf").write_bytes(b"%PDF")
    assert _pdf_tools().check(tmp_path / "egm-book.log") == 1


def test_pdf_check_fails_without_a_pdf(tmp_path):
    assert _pdf_tools().check(tmp_path / "egm-book.log") == 1  # no log
    (tmp_path / "egm-book.log").write_text(GOOD_LOG)
    assert _pdf_tools().check(tmp_path / "egm-book.log") == 1  # log but no PDF


def test_latex_needs_names_the_debian_packages(monkeypatch, capsys):
    tools = _pdf_tools()
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)  # nothing installed
    assert tools.needs() == 1
    out = capsys.readouterr().out
    for package in tools.NEEDED:
        assert package in out
    assert "apt-get install -y" in out
