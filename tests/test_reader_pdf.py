"""The PDF prints no input that the site hides (issue #26).

The site folds the source of a cell tagged ``hide-input`` or ``hide-cell``
(plotting code, checks) and the output of one tagged ``hide-output`` (a
216-row table); ``_ext/pdf_structure.py`` (``PdfHiddenCells``) leaves them out
of the LaTeX source.  Checked on the LaTeX build (``latex_build``,
tests/conftest.py: no LaTeX installation needed):

* no line of a hidden cell's source is in the .tex's code blocks (Pygments'
  LaTeX, decoded back to text), unless the same line is also in a cell the site
  shows;
* a long folded output is cut to its first lines and a note.

The decoding and the search are plain functions, tested here on a small .tex
of their own that prints a hidden cell, so that the check cannot pass
vacuously.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import pdf_structure  # noqa: E402

HIDDEN_INPUT = ("hide-input", "hide-cell")
HIDDEN_OUTPUT = ("hide-output", "hide-cell")
REMOVED = ("remove-cell", "remove-input")
MIN_LINE = 12  # shorter source lines ("plt.show()", "ax.legend()") prove nothing

# Pygments' LaTeX formatter writes special characters as \PYGZxx{} macros.
_PYGZ = {"bs": "\\", "ob": "{", "cb": "}", "us": "_", "ca": "^", "am": "&", "lt": "<",
         "gt": ">", "sh": "#", "pc": "%", "dl": "$", "hy": "-", "sq": "'", "dq": '"',
         "ti": "~", "at": "@", "lb": "[", "rb": "]", "em": "!", "zsq": "'", "co": ","}
_VERBATIM = re.compile(r"\\begin\{sphinxVerbatim\}(?:\[[^\]]*\])?(.*?)\\end\{sphinxVerbatim\}", re.S)


def verbatim_text(tex: str) -> str:
    """The text of every code block of a Sphinx .tex (sphinxVerbatim, Pygments'
    markup removed), one block after another."""
    blocks = []
    for body in _VERBATIM.findall(tex):
        body = re.sub(r"\\PYG\{[^{}]*\}", "", body)          # \PYG{k}{...}: the style
        body = re.sub(r"\\PYGZ(\w\w)\{\}", lambda m: "\0" + m.group(1) + "\0", body)
        body = body.replace("{", "").replace("}", "")
        body = re.sub(r"\0(\w\w)\0", lambda m: _PYGZ.get(m.group(1), "?"), body)
        blocks.append(body)
    return "\n".join(blocks)


def _cells(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            yield cell, set(cell.get("metadata", {}).get("tags", [])), source


def _lines(source: str) -> set[str]:
    return {line.strip() for line in source.splitlines() if len(line.strip()) >= MIN_LINE
            and not line.strip().startswith("#")}


def hidden_lines(notebooks: list[Path]) -> dict[str, set[str]]:
    """Per notebook, the source lines that only hidden cells hold (a line that a
    shown cell holds too, anywhere in the book, may be printed)."""
    shown, hidden = set(), {}
    for path in notebooks:
        for _, tags, source in _cells(path):
            if tags & set(REMOVED):
                continue
            if tags & set(HIDDEN_INPUT):
                hidden.setdefault(path.stem, set()).update(_lines(source))
            else:
                shown |= _lines(source)
    return {stem: lines - shown for stem, lines in hidden.items() if lines - shown}


def printed_hidden(tex: str, hidden: dict[str, set[str]]) -> dict[str, list[str]]:
    """Per notebook, the hidden source lines that the .tex prints."""
    text = {line.strip() for line in verbatim_text(tex).splitlines()}
    found = {stem: sorted(lines & text) for stem, lines in hidden.items()}
    return {stem: lines for stem, lines in found.items() if lines}


# -- the check fails on a .tex that prints a hidden cell ----------------------------------

PLOT = ('fig, ax = plt.subplots(figsize=(6.4, 3.2))\n'
        'ax.loglog(n_grid, {"ratio": ratio}["ratio"], label=r"$\\sigma$ \\& 10%")\n')


def _pygments_tex(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import LatexFormatter
    from pygments.lexers import PythonLexer

    body = highlight(code, PythonLexer(), LatexFormatter(commandprefix="PYG"))
    body = body.replace(r"\begin{Verbatim}[commandchars=\\\{\}]", "").replace(r"\end{Verbatim}", "")
    return "\\begin{sphinxVerbatim}[commandchars=\\\\\\{\\}]" + body + "\\end{sphinxVerbatim}\n"


def _notebook(tmp_path: Path, name: str, cells: list[tuple[list[str], str]]) -> Path:
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps({"cells": [
        {"cell_type": "code", "metadata": {"tags": tags}, "source": source, "outputs": []}
        for tags, source in cells]}))
    return path


def test_the_decoding_gives_back_the_source():
    assert verbatim_text(_pygments_tex(PLOT)).strip() == PLOT.strip()


def test_the_check_finds_a_printed_hidden_cell(tmp_path):
    book = [_notebook(tmp_path, "a", [(["hide-input"], PLOT), ([], "x = compute_the_thing(1)\n")])]
    hidden = hidden_lines(book)
    assert set(hidden["a"]) == set(_lines(PLOT))
    bad = "\\chapter{A}\n" + _pygments_tex(PLOT) + _pygments_tex("x = compute_the_thing(1)\n")
    assert printed_hidden(bad, hidden) == {"a": sorted(_lines(PLOT))}
    good = "\\chapter{A}\n" + _pygments_tex("x = compute_the_thing(1)\n")
    assert printed_hidden(good, hidden) == {}
    # a line that a shown cell prints too is no evidence
    book.append(_notebook(tmp_path, "b", [([], PLOT.splitlines()[0] + "\n")]))
    assert set(hidden_lines(book)["a"]) == {PLOT.splitlines()[1].strip()}


def test_the_transform_cuts_a_long_output():
    from docutils import nodes

    output = nodes.container(nb_element="cell_code_output")
    table = "\n".join(f"row {k}" for k in range(216))
    output += nodes.literal_block(table, table)
    output += nodes.image(uri="figure.png")
    pdf_structure._shorten_output(output)
    text = output.astext()
    assert "row 0" in text and f"row {pdf_structure.FIRST_LINES}" not in text
    assert f"{216 - pdf_structure.FIRST_LINES} more lines" in text
    assert not list(output.findall(nodes.image))


# -- the book's LaTeX source -----------------------------------------------------------------

@pytest.fixture(scope="module")
def tex(latex_build: Path) -> str:
    return (latex_build / "latex" / "egm-book.tex").read_text(encoding="utf-8")


def _book_notebooks() -> list[Path]:
    return sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.book
def test_pdf_prints_no_hidden_source(tex):
    hidden = hidden_lines(_book_notebooks())
    assert sum(map(len, hidden.values())) > 20, "the book has hidden cells (plotting code)"
    assert printed_hidden(tex, hidden) == {}


@pytest.mark.book
def test_pdf_cuts_folded_outputs(tex):
    """Every folded output of more than SHORT_OUTPUT lines is cut in the .tex: its
    last line is not printed."""
    checked = 0
    for path in _book_notebooks():
        for cell, tags, _ in _cells(path):
            if not tags & set(HIDDEN_OUTPUT) or tags & set(REMOVED):
                continue
            text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
            lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LINE]
            if len(text.splitlines()) > pdf_structure.SHORT_OUTPUT and lines:
                checked += 1
                printed = {line.strip() for line in verbatim_text(tex).splitlines()}
                assert lines[-1] not in printed, (path.stem, lines[-1])
    assert checked >= 1


def test_wide_verbatim_is_set_smaller():
    """A line that would wrap mid-word at the normal verbatim size gets a smaller font."""
    from docutils import nodes
    from docutils.utils import new_document

    assert pdf_structure.verbatim_size("x = 1\n" + "y" * 78) is None
    assert pdf_structure.verbatim_size("y" * 96) == r"\footnotesize"
    assert pdf_structure.verbatim_size("y" * 120) == r"\scriptsize"
    assert pdf_structure.verbatim_size("y" * 300) == r"\scriptsize"
    document = new_document("test")
    wide = "d n_pow alpha " * 7
    document += nodes.literal_block(wide, wide)
    document += nodes.literal_block("x = 1", "x = 1")
    transform = pdf_structure.PdfWideVerbatim(document)
    transform.run()
    kinds = [child.astext().strip() if isinstance(child, nodes.raw) else "block" for child in document.children]
    assert kinds == [r"\begingroup\fvset{fontsize=\footnotesize}", "block", r"\endgroup", "block"]


@pytest.mark.book
def test_pdf_sets_wide_outputs_smaller(tex):
    """The widest printed table (zipf_experiments, 96 characters a line) is set in
    a smaller font, not wrapped."""
    assert r"\begingroup\fvset{fontsize=\footnotesize}" in tex
