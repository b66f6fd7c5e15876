"""The whole site builds with warnings as errors, and serves MathJax locally.

The chapters' stored outputs are used here (execution "off"): the nbval run in
the same pytest invocation proves that a fresh execution reproduces them, and
`make book` executes every chapter itself.  If Debian's chromium is installed,
a page with equations is also rendered headless with no network and the
typeset math is checked (scripts/check_math_offline.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from book_builds import build_book

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    return build_book(tmp_path_factory.mktemp("book")) / "html"


def test_site_has_every_page(built_site: Path):
    assert (built_site / "index.html").exists()
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        assert (built_site / "chapters" / f"{nb.stem}.html").exists(), nb.name


def test_mathjax_is_served_locally(built_site: Path):
    page = (built_site / "chapters" / "differential_privacy.html").read_text()
    assert "_static/mathjax/tex-chtml.js" in page
    assert "cdn.jsdelivr" not in page and "mathjax@3" not in page
    assert (built_site / "_static" / "mathjax" / "tex-chtml.js").exists()
    fonts = list((built_site / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff*"))
    assert fonts, "MathJax fonts are not shipped with the site"


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_every_page_in_a_real_browser(built_site: Path, tmp_path: Path):
    """No raw TeX, no broken internal link or image, no console error, on any page."""
    shots = ROOT / "_build" / "screenshots"  # build artifact, not committed
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_site.py"), str(built_site),
                           "--screenshots", str(shots)], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_math_typesets_offline_in_chromium(built_site: Path, tmp_path: Path):
    script = ROOT / "scripts" / "check_math_offline.py"
    page = built_site / "chapters" / "differential_privacy.html"
    proc = subprocess.run([sys.executable, str(script), str(page), "--screenshot", str(tmp_path / "dp.png")],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_api_reference_documents_every_public_name(built_site: Path):
    """Each module of egmlib has a section in api.md, and every name in its __all__
    is rendered there with an anchor the chapters can link to."""
    import importlib
    import inspect
    import pkgutil

    import egmlib

    page = (built_site / "api.html").read_text()
    source = (ROOT / "api.md").read_text()
    modules = [m.name for m in pkgutil.iter_modules(egmlib.__path__) if not m.name.startswith("_")]
    assert modules
    for name in modules:
        assert f".. automodule:: egmlib.{name}" in source, f"egmlib.{name} is missing from api.md"
        module = importlib.import_module(f"egmlib.{name}")
        assert module.__all__, f"egmlib.{name} exports nothing"
        for public in module.__all__:
            obj = getattr(module, public)
            if inspect.isfunction(obj) or inspect.isclass(obj):  # aliases carry a #: comment instead
                doc = inspect.getdoc(obj) or ""
                assert doc.strip(), f"egmlib.{name}.{public} has no docstring"
                # dataclasses and NamedTuples get "Name(field, ...)" when undocumented
                assert not doc.startswith(f"{public}("), f"egmlib.{name}.{public} has only a generated docstring"
            if inspect.isfunction(obj) and inspect.signature(obj).parameters:
                assert "Parameters\n----------" in doc, f"egmlib.{name}.{public}: no numpydoc Parameters section"
            assert f'id="egmlib.{name}.{public}"' in page, f"egmlib.{name}.{public} is not in the API reference"


def test_site_links_only_addresses_the_setting_produces(built_site: Path):
    """No page of the book links the project's hosts (GitHub, Binder, Colab) except where
    the public address of pyproject.toml says (tests/test_public_address.py)."""
    from test_public_address import assert_only_produced, governed_links, pa

    address = pa.read(ROOT)
    chapters = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "chapters").glob("*.ipynb"))]
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > len(chapters)
    for page in pages:
        links = governed_links(page.read_text(errors="replace"))
        assert_only_produced(links, address, chapters, str(page.relative_to(built_site)))


def test_landing_page_bibtex_parses(built_site: Path):
    """The "How to cite" box of the landing page is BibTeX that pybtex reads, with the
    version, year and (when set) URL of pyproject.toml."""
    import html
    import re

    from pybtex.database import parse_string
    from test_public_address import pa

    landing = yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]  # index.html only redirects there
    page = (built_site / f"{landing}.html").read_text()
    box = re.search(r'<div class="[^"]*how-to-cite[^"]*".*?<pre>(.*?)</pre>', page, re.S)
    assert box, "no BibTeX box on the landing page"
    entries = parse_string(html.unescape(re.sub(r"<[^>]+>", "", box.group(1))), "bibtex").entries
    assert len(entries) == 1
    entry = next(iter(entries.values()))
    address = pa.read(ROOT)
    assert entry.fields["version"] == address.version
    assert entry.fields["year"] == str(address.date.year)
    assert entry.fields.get("url") == (address.repository or None)
