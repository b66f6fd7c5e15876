"""The API reference for readers (_ext/api_reference.py).

* A docstring's References keys become citation links; unknown keys are named.
* A type alias is shown as its source writes it, not as "alias of" numpy's
  expanded types.
* In the LaTeX (the PDF), an object keeps its signature, anchor and one-line
  summary; parameters and examples are left to the website.
Checked on egmlib's own docstrings and on a tiny Sphinx project (autodoc, napoleon,
sphinxcontrib-bibtex, as the book configures them).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import api_reference as ar  # noqa: E402


def test_every_reference_key_of_egmlib_is_in_the_bibliography():
    """Every References line of egmlib's docstrings is a list of known keys (so each
    becomes a link), or a numbered note that starts with a known key."""
    import importlib
    import inspect
    import pkgutil

    import egmlib

    keys = ar.bib_keys(ROOT)
    cited = 0
    for info in pkgutil.iter_modules(egmlib.__path__):
        module = importlib.import_module(f"egmlib.{info.name}")
        for name in getattr(module, "__all__", []):
            doc = inspect.getdoc(getattr(module, name)) or ""
            unknown: list[str] = []
            lines = ar.cite_references(doc.splitlines(), keys, unknown)
            assert not unknown, f"egmlib.{info.name}.{name} cites {unknown}, not in references.bib"
            if "References\n----------" in doc:
                refs = doc.split("References\n----------", 1)[1].strip().split("\n\n")[0]
                rewritten = "\n".join(lines).split("References\n----------", 1)[1].strip().split("\n\n")[0]
                assert ":cite:" in rewritten, (name, refs)
                cited += 1
    assert cited > 20


def test_cite_references_rewrites_only_the_references_section():
    keys = {"poulsen2023", "balle2018", "imhof1961"}
    doc = ["Summary mentions poulsen2023.", "", "Notes", "-----", "poulsen2023", "",
           "References", "----------", "poulsen2023, balle2018", "",
           ".. [1] imhof1961: J. P. Imhof, Computing ...", "", "Examples", "--------", ">>> 1"]
    out = ar.cite_references(doc, keys)
    assert out[0] == doc[0] and out[4] == "poulsen2023"  # outside References: untouched
    assert out[8] == ":cite:p:`poulsen2023,balle2018`"
    assert out[10] == ".. [1] :cite:t:`imhof1961`: J. P. Imhof, Computing ..."
    unknown: list[str] = []
    assert ar.cite_references(["References", "----------", "nobody1999"], keys, unknown)[2] == "nobody1999"
    assert unknown == ["nobody1999"]


def test_alias_source_is_as_written():
    import egmlib.elliptical as el

    assert ar.alias_source(el, "LogGenerator") == "Callable[[NDArray[np.float64]], NDArray[np.float64]]"
    assert ar.alias_source(el, "no_such_name") is None


MODULE = '''
"""A tiny module."""
from typing import Callable
import numpy as np
from numpy.typing import NDArray

__all__ = ["Mapper", "scale"]

#: A mapper: takes an array to an array.
Mapper = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def scale(x, factor=2.0):
    """Scale an array by a factor.

    A second paragraph that only the website shows.

    Parameters
    ----------
    x : array
        The input.
    factor : float
        The factor.

    References
    ----------
    poulsen2023, balle2018

    Examples
    --------
    >>> scale(1.0)
    2.0
    """
    return x * factor
'''


def _build(tmp: Path, builder: str) -> str:
    (tmp / "tinymod.py").write_text(MODULE)
    (tmp / "references.bib").write_text((ROOT / "references.bib").read_text())
    (tmp / "conf.py").write_text(textwrap.dedent(f"""\
        import sys
        sys.path[:0] = [{str(ROOT / '_ext')!r}, {str(tmp)!r}]
        extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinxcontrib.bibtex",
                      "api_reference"]
        bibtex_bibfiles = ["references.bib"]
        bibtex_reference_style = "author_year"
        autodoc_typehints = "none"
        napoleon_google_docstring = False
        napoleon_use_param = False
        root_doc = "index"
        """))
    (tmp / "index.rst").write_text("API\n===\n\n.. automodule:: tinymod\n   :members:\n\n"
                                   "Bibliography\n============\n\n.. bibliography::\n")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", builder, "-W", "-q", str(tmp),
                           str(tmp / "_build" / builder)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if builder == "html":
        return (tmp / "_build" / "html" / "index.html").read_text()
    return "".join(p.read_text() for p in (tmp / "_build" / builder).glob("*.tex"))


def test_tiny_site_links_citations_and_reads_aliases(tmp_path: Path):
    page = re.sub(r"\s+", " ", _build(tmp_path, "html"))
    text = re.sub(r"<[^>]+>", "", page)
    assert "poulsen2023" not in text and "balle2018" not in text  # no raw keys
    assert "Poulsen, 2023" in text.replace("\xa0", " ") or "Poulsen 2023" in text
    assert "alias of" not in text
    assert "Type alias: Callable[[NDArray[np.float64]], NDArray[np.float64]]" in text
    assert "Type: A mapper" not in text
    assert "A second paragraph that only the website shows." in text  # the site: everything


def test_tiny_pdf_source_is_compact(tmp_path: Path):
    tex = _build(tmp_path, "latex")
    assert r"\sphinxbfcode{\sphinxupquote{scale}}" in tex  # the signature
    assert "Scale an array by a factor." in tex  # the one-line summary
    assert r"\label{\detokenize{index:tinymod.scale}}" in tex  # the anchor
    assert "A second paragraph" not in tex and "The factor." not in tex
    assert ">>> scale" not in tex and "sphinxrubric{Examples}" not in tex
