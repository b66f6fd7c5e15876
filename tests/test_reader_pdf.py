"""The PDF prints no input that the site hides (issue #26).

The site folds the source of a cell tagged ``hide-input`` or ``hide-cell``
(plotting code, checks) and the output of one tagged ``hide-output`` (a
216-row table); ``_ext/pdf_structure.py`` (``PdfHiddenCells``) leaves them out
of the LaTeX source.  Checked on the LaTeX build (``latex_build``,
tests/conftest.py: no LaTeX installation needed):

* no line of a hidden cell's source is in the .tex's code blocks (Pygments'
  LaTeX, decoded back to text), unless the same line is also in a cell the site
  shows;
* a long folded output is cut to its first lines and a note;
* no output is dropped: a folded table or figure is printed (a table of more
  than LONG_TABLE rows cut to its first rows and a note), and no result is a
  table only HTML renders (issue 33);
* no fold's title stands with nothing under it: a section's checks that print
  nothing are counted and named in one note at the end of its text (issue 33);
* a box that opens with a display has a ``\\needspace`` before it (issue 33).

The decoding and the search are plain functions, tested here on a small .tex
of their own that prints a hidden cell, so that the check cannot pass
vacuously.  The two cutting checks run as well on a synthetic page
(``synthetic_page``: one notebook with a long folded and a long shown output,
built by Sphinx's LaTeX builder with myst-nb and ``_ext/pdf_structure.py``, as
the book is), on which the cutters must act: the book itself may have no output
that long (issue 33 turned its long printouts into tables).
"""

from __future__ import annotations

import json
import math
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
    # a folded figure is printed (issue 33: the PDF dropped folded tables and figures)
    assert len(list(output.findall(nodes.image))) == 1


def _table_node(n_rows: int):
    from docutils import nodes

    table = nodes.table()
    group = nodes.tgroup(cols=2)
    table += group
    group += nodes.colspec(colwidth=1)
    group += nodes.colspec(colwidth=1)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for part, rows in ((head, [("n", "error")]), (body, [(str(k), f"0.{k:03d}") for k in range(n_rows)])):
        for cells in rows:
            row = nodes.row()
            for text in cells:
                entry = nodes.entry()
                entry += nodes.paragraph(text, text)
                row += entry
            part += row
    return table


def test_a_folded_table_is_printed_and_a_long_one_cut():
    """By kind: a folded table (Markdown from glue or display) is printed, whole up to
    LONG_TABLE rows, else its header and first FIRST_ROWS rows and a note with the
    number of rows and the page; only an output LaTeX cannot print (HTML alone)
    becomes a note that the site shows it."""
    from docutils import nodes

    output = nodes.container(nb_element="cell_code_output")
    short = nodes.container(mime_type="text/markdown")
    short += _table_node(3)
    long = nodes.container(mime_type="text/markdown")
    long += _table_node(216)
    output += short
    output += long
    output += nodes.raw("<div>widget</div>", "<div>widget</div>", format="html")
    pdf_structure._shorten_output(output, "chapters/x.html")
    tables = list(output.findall(nodes.table))
    assert [len(list(t.findall(nodes.row))) for t in tables] == [1 + 3, 1 + pdf_structure.FIRST_ROWS]
    text = output.astext()
    assert f"0.{pdf_structure.FIRST_ROWS - 1:03d}" in text and f"0.{pdf_structure.FIRST_ROWS:03d}" not in text
    assert f"The first {pdf_structure.FIRST_ROWS} of the 216 rows of this table" in text
    assert "(chapters/x.html)" in text
    assert "widget" not in text and text.count("shown only on the site") == 1
    assert not list(output.findall(nodes.raw))


# The notes that stand for an output the PDF does not print: the one of issue 26
# (issue 33: a 216-row table of zipf_experiments never reached the PDF's reader) and
# today's, for an output that has no form LaTeX can print.
_DROPPED_OUTPUT = re.compile(r"This output is (?:folded|shown only) on the site")


def dropped_outputs(tex: str) -> int:
    """How many outputs the .tex replaces with a note instead of printing them."""
    return len(_DROPPED_OUTPUT.findall(tex))


def test_the_dropped_output_count():
    before = ("\\sphinxstyleemphasis{Table: every row with σₜₒₜₐₗ = 1, file against exact}\n"
              "\\begin{sphinxuseclass}{cell_output}\n\\sphinxAtStartPar\n"
              "\\sphinxstyleemphasis{This output is folded on the site (the book\\textquotesingle{}s HTML "
              "version).}\n")
    assert dropped_outputs(before) == 1
    assert dropped_outputs("\\sphinxstyleemphasis{The first 20 of the 216 rows of this table; ...}") == 0


def folded_tables(notebooks: list[Path]) -> list[tuple[str, int]]:
    """(notebook, body rows) of every folded output that is a Markdown table."""
    found = []
    for path in notebooks:
        for cell, tags, _ in _cells(path):
            if not tags & set(HIDDEN_OUTPUT) or tags & set(REMOVED) or "remove-output" in tags:
                continue
            for output in cell.get("outputs", []):
                md = "".join(output.get("data", {}).get("text/markdown", ""))
                lines = [line for line in md.splitlines() if line.startswith("|")]
                if len(lines) >= 2 and re.fullmatch(r"\|(?:\s*:?-+:?\s*\|)+", lines[1].strip()):
                    found.append((path.stem, len(lines) - 2))
    return found


@pytest.mark.book
def test_pdf_prints_folded_tables_and_figures(tex):
    """No output is dropped from the PDF (issue 33: zipf_experiments' folded table
    of 216 rows was one line "This output is folded on the site"); each folded
    table longer than LONG_TABLE rows stands with its note."""
    assert dropped_outputs(tex) == 0
    for stem, rows in folded_tables(_book_notebooks()):
        if rows > pdf_structure.LONG_TABLE:
            assert f"The first {pdf_structure.FIRST_ROWS} of the {rows} rows of this table" in tex, stem


def html_only_outputs(notebooks: list[Path]) -> list[tuple[str, int]]:
    """(notebook, cell number) of each shown output whose best form for LaTeX is
    HTML (a pandas DataFrame): myst-nb prints its text form in the PDF, a
    monospace printout of the table, not a table."""
    found = []
    for path in notebooks:
        for k, (cell, tags, _) in enumerate(_cells(path)):
            if tags & set(REMOVED) or "remove-output" in tags:
                continue
            for output in cell.get("outputs", []):
                kinds = set(output.get("data", {}))
                if "text/html" in kinds and not kinds & {"text/markdown", "text/latex", "image/png",
                                                         "image/jpeg", "application/pdf"}:
                    found.append((path.stem, k))
    return found


def test_the_html_output_check(tmp_path):
    path = tmp_path / "a.ipynb"
    path.write_text(json.dumps({"cells": [
        {"cell_type": "code", "metadata": {}, "source": "df", "outputs": [
            {"output_type": "execute_result", "data": {"text/html": "<table></table>",
                                                       "text/plain": "   a\n0  1"}}]},
        {"cell_type": "code", "metadata": {}, "source": "t", "outputs": [
            {"output_type": "display_data", "data": {"text/markdown": "| a |\n|--|\n| 1 |",
                                                     "text/plain": "<Markdown>"}}]}]}))
    assert html_only_outputs([path]) == [("a", 0)]


def test_pdf_has_no_table_that_only_html_renders():
    """A result table reaches the PDF as a table: Markdown (egmlib.report.markdown_table,
    glue) or LaTeX, not pandas' HTML, which the PDF prints as its text form."""
    assert html_only_outputs(_book_notebooks()) == []


# -- a fold's title introduces its output, or stands in the section's note (issue 33) -------

# A titled fold whose cell prints nothing: its italic title, then the end of the cell.
_LONE_TITLE = re.compile(r"\\begin\{sphinxuseclass\}\{tag_hide-(?:input|cell)\}\s*\\sphinxAtStartPar\s*"
                         r"\\sphinxstyleemphasis\{([^\n]*)\}\s*\\end\{sphinxuseclass\}")
_NOTE = re.compile(r"\\sphinxstyleemphasis\{Not printed here: (?:(\d+) executed checks?)?")
_HEADING = re.compile(r"\\(?:part|chapter|section|subsection|subsubsection|paragraph)\*?\{")


def lone_titles(tex: str) -> list[str]:
    """The folds' titles that the .tex prints with nothing under them."""
    return _LONE_TITLE.findall(tex)


def notes_per_section(tex: str) -> list[int]:
    """How many notes of unprinted checks stand under each heading of the .tex."""
    return [len(_NOTE.findall(part)) for part in _HEADING.split(tex)]


def noted_checks(tex: str) -> int:
    """How many checks the notes count."""
    return sum(int(n or 0) for n in _NOTE.findall(tex))


LONE_BEFORE = """\\section{Check}
\\sphinxAtStartPar
Check: the one call uses the same radius and the same noise standard deviations as the steps.

\\begin{sphinxuseclass}{cell}
\\begin{sphinxuseclass}{tag_hide-input}
\\sphinxAtStartPar
\\sphinxstyleemphasis{Check: the same radius and noise as the steps}

\\end{sphinxuseclass}
\\end{sphinxuseclass}
\\begin{sphinxuseclass}{cell}
\\begin{sphinxuseclass}{tag_hide-input}
\\sphinxAtStartPar
\\sphinxstyleemphasis{Check: 400 releases against the closed form}

\\begin{sphinxuseclass}{cell_output}
\\begin{sphinxVerbatim}[commandchars=\\\\\\{\\}]
400 releases: 0.98 of the closed form
\\end{sphinxVerbatim}

\\end{sphinxuseclass}
\\end{sphinxuseclass}
\\end{sphinxuseclass}
"""
LONE_AFTER = LONE_BEFORE.replace(
    "\\begin{sphinxuseclass}{cell}\n\\begin{sphinxuseclass}{tag_hide-input}\n\\sphinxAtStartPar\n"
    "\\sphinxstyleemphasis{Check: the same radius and noise as the steps}\n\n\\end{sphinxuseclass}\n"
    "\\end{sphinxuseclass}\n", "") + (
    "\\sphinxAtStartPar\n\\sphinxstyleemphasis{Not printed here: 1 executed check (the same radius and "
    "noise as the steps), in the notebook chapters/quickstart.ipynb and on its page of the book's HTML "
    "version (chapters/quickstart.html).}\n")


def test_the_lone_title_check():
    assert lone_titles(LONE_BEFORE) == ["Check: the same radius and noise as the steps"]
    assert lone_titles(LONE_AFTER) == []
    assert noted_checks(LONE_AFTER) == 1 and notes_per_section(LONE_AFTER) == [0, 1]
    twice = LONE_AFTER + LONE_AFTER.split("\n", 1)[1]  # two notes under one heading
    assert max(notes_per_section(twice)) == 2


def test_the_note_names_each_check_and_where_it_is():
    note = pdf_structure.unprinted_note(["the radius", "400 releases"], ["read a data file"],
                                        "chapters/x.ipynb", "chapters/x.html").astext()
    assert note == ("Not printed here: 2 executed checks (the radius; 400 releases) and code (read a "
                    "data file), in the notebook chapters/x.ipynb and on its page of the book's HTML "
                    "version (chapters/x.html).")
    assert pdf_structure.unprinted_note(["one"], [], "a.ipynb", "a.html").astext().startswith(
        "Not printed here: 1 executed check (one), in")
    assert website_wording(note) == []


def silent_checks(notebooks: list[Path]) -> int:
    """Folded checks ("Check: ..." titles on a hidden source) that print no output:
    no stream and no display other than glue's records."""
    count = 0
    for path in notebooks:
        for cell, tags, _ in _cells(path):
            prompt = cell.get("metadata", {}).get("mystnb", {}).get("code_prompt_show", "")
            if not prompt.startswith("Check:") or not tags & set(HIDDEN_INPUT) or tags & {"remove-cell"}:
                continue
            shown = [o for o in cell.get("outputs", []) if "remove-output" not in tags and (
                o.get("output_type") == "stream" or any(not k.startswith("application/papermill")
                                                        for k in o.get("data", {})))]
            count += not shown
    return count


@pytest.mark.book
def test_pdf_prints_no_title_that_introduces_nothing(tex):
    """No fold's title stands with nothing under it (issue 33: 90 did); at most one
    note a section says which checks are not printed, and the notes count every
    silent check of the notebooks."""
    assert lone_titles(tex) == []
    assert max(notes_per_section(tex)) <= 1
    silent = silent_checks(_book_notebooks())
    assert silent > 20, "the book has checks made of assertions alone"
    assert noted_checks(tex) == silent


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


# Inline code in Sphinx's LaTeX: \sphinxcode{\sphinxupquote{...}}; a backslash it
# prints is \textbackslash{}.  A Markdown escape that reached the code (the errata's
# ``data/zipf\\_improvement.csv``, issue 33) is a printed backslash before _ * #.
_INLINE_CODE = re.compile(r"\\sphinxupquote\{((?:[^{}]|\{[^{}]*\})*)\}")
_PRINTED_ESCAPE = re.compile(r"\\textbackslash\{\}(?:\\_|\*|\\#)")


def escapes_in_inline_code(tex: str) -> list[str]:
    """Each inline code span of ``tex`` that prints a Markdown escape."""
    return [code for code in _INLINE_CODE.findall(tex) if _PRINTED_ESCAPE.search(code)]


def test_escapes_in_inline_code_are_found():
    tex = (r"are in \sphinxcode{\sphinxupquote{data/zipf\textbackslash{}\_improvement.csv}}, "
           r"\sphinxcode{\sphinxupquote{data/zipf\_improvement.csv}} and a\textbackslash{}\_b in text")
    assert escapes_in_inline_code(tex) == [r"data/zipf\textbackslash{}\_improvement.csv"]


@pytest.mark.book
def test_pdf_prints_no_markdown_escape_in_inline_code(tex):
    found = escapes_in_inline_code(tex)
    assert found == [], f"{len(found)} inline code spans print a Markdown escape: {found[:5]}"


def folded_long_outputs(notebooks: list[Path]) -> list[tuple[str, str]]:
    """(notebook, last line) of every folded text output of more than SHORT_OUTPUT lines."""
    found = []
    for path in notebooks:
        for cell, tags, _ in _cells(path):
            if not tags & set(HIDDEN_OUTPUT) or tags & set(REMOVED):
                continue
            text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
            lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LINE]
            if len(text.splitlines()) > pdf_structure.SHORT_OUTPUT and lines:
                found.append((path.stem, lines[-1]))
    return found


def printed_last_lines(tex: str, outputs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Those of ``outputs`` (notebook, last line) whose last line the .tex prints."""
    printed = {line.strip() for line in verbatim_text(tex).splitlines()}
    return [item for item in outputs if item[1] in printed]


@pytest.mark.book
def test_pdf_cuts_folded_outputs(tex):
    """Every folded output of more than SHORT_OUTPUT lines is cut in the .tex: its
    last line is not printed (the book may have none: test_the_cutters_act_on_a_synthetic_page)."""
    assert printed_last_lines(tex, folded_long_outputs(_book_notebooks())) == []


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


# -- long printed outputs that the site shows (issue #26: 60-row tables ran over pages) -----

def test_a_long_shown_output_is_cut_with_a_note():
    from docutils import nodes

    output = nodes.container(nb_element="cell_code_output")
    table = "\n".join(f"row {k}" for k in range(60))
    output += nodes.literal_block(table, table)
    assert pdf_structure.cut_long_output(output, "chapters/x.html") == 1
    text = output.astext()
    assert f"row {pdf_structure.FIRST_ROWS - 1}" in text and f"row {pdf_structure.FIRST_ROWS}\n" not in text
    assert "row 59" not in text
    assert f"The first {pdf_structure.FIRST_ROWS} of the 60 lines" in text and "chapters/x.html" in text
    short = nodes.container(nb_element="cell_code_output")
    rows = "\n".join(f"row {k}" for k in range(pdf_structure.LONG_OUTPUT))
    short += nodes.literal_block(rows, rows)
    assert pdf_structure.cut_long_output(short, "chapters/x.html") == 0
    assert short.astext() == rows
    assert pdf_structure.site_page("chapters/x", "https://a.b/book/") == "https://a.b/book/chapters/x.html"


def long_shown_outputs(notebooks: list[Path]) -> list[tuple[str, str]]:
    """(notebook, last line) of every shown text output longer than LONG_OUTPUT lines."""
    found = []
    for path in notebooks:
        for cell, tags, _ in _cells(path):
            if tags & set(HIDDEN_OUTPUT) or tags & set(REMOVED) or "remove-output" in tags:
                continue
            for output in cell.get("outputs", []):
                if output.get("data", {}).keys() - {"text/plain"}:
                    continue  # rich output (HTML, figure): not printed as text
                text = "".join(output.get("text", "")) or "".join(output.get("data", {}).get("text/plain", ""))
                lines = [line.strip() for line in text.splitlines()]
                if len(lines) > pdf_structure.LONG_OUTPUT and len(lines[-1]) >= MIN_LINE:
                    found.append((path.stem, lines[-1]))
    return found


@pytest.mark.book
def test_pdf_cuts_long_shown_outputs(tex):
    """No shown output of more than LONG_OUTPUT lines is printed whole: its last line
    is not in the .tex, and a note says where the whole output is (the book may have
    none: test_the_cutters_act_on_a_synthetic_page)."""
    long = long_shown_outputs(_book_notebooks())
    assert printed_last_lines(tex, long) == []
    if long:
        assert "HTML version prints it whole" in tex


# -- the cutters act on a page that needs them ----------------------------------------------

SYNTHETIC_FOLDED = [f"folded row {k:03d} of the synthetic printout" for k in range(40)]
SYNTHETIC_SHOWN = [f"shown row {k:03d} of the synthetic printout" for k in range(60)]


def _stream(lines: list[str]) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": "".join(f"{line}\n" for line in lines)}


SYNTHETIC_TABLE_ROWS = 80  # more than LONG_TABLE
SYNTHETIC_TABLE = "| n | error |\n|--:|--:|\n" + "".join(f"| {k} | 0.{k:03d} |\n"
                                                          for k in range(SYNTHETIC_TABLE_ROWS))
# a PNG of one pixel
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5"
         "ErkJggg==")
# a box that opens with a two-line display (Proposition 9.2 of optimal_scaling)
SYNTHETIC_BOX = ("````{note}\n```{math}\n\\begin{aligned}a &= b\\\\ c &= d\\end{aligned}\n```\n"
                 "with a and c.\n````\n")


def _check(cell_id: str, prompt: str, outputs: list | None = None, tags=("hide-input",)) -> dict:
    return {"cell_type": "code", "id": cell_id, "metadata": {"tags": list(tags), "mystnb": {
        "code_prompt_show": prompt}}, "execution_count": 1, "source": "assert True", "outputs": outputs or []}


def _markdown(cell_id: str, source: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": source}


def synthetic_notebook(folder: Path) -> Path:
    """A page with a folded output of 40 lines and a shown output of 60 (the cutters'
    thresholds: SHORT_OUTPUT and LONG_OUTPUT); a section of folded checks that print
    nothing (two, and a folded helper), one that prints, and a subsection with one
    more; a folded table of 80 rows, a folded figure; a box that opens with a display."""
    assert len(SYNTHETIC_FOLDED) > pdf_structure.SHORT_OUTPUT
    assert len(SYNTHETIC_SHOWN) > pdf_structure.LONG_OUTPUT
    cells = [_markdown("title", "# Synthetic page\n"),
             {"cell_type": "code", "id": "folded", "metadata": {"tags": ["hide-output"]},
              "execution_count": 1, "source": "print_folded_table()", "outputs": [_stream(SYNTHETIC_FOLDED)]},
             {"cell_type": "code", "id": "shown", "metadata": {}, "execution_count": 2,
              "source": "print_shown_table()", "outputs": [_stream(SYNTHETIC_SHOWN)]},
             _markdown("checks", "## Checks\n\nA claim.\n"),
             _check("c1", "Check: the first synthetic identity"),
             _check("c2", "Check: the second synthetic identity"),
             _check("c3", "Show the code: the synthetic helper"),
             _check("c4", "Check: a synthetic check that prints", [_stream(["synthetic check printed"])]),
             _markdown("sub", "### A subsection\n\nAnother claim.\n"),
             _check("c5", "Check: the third synthetic identity"),
             _markdown("results", "## Folded results\n"),
             {"cell_type": "code", "id": "table", "metadata": {"tags": ["hide-output"]}, "execution_count": 3,
              "source": "show_table()", "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
                  "text/markdown": SYNTHETIC_TABLE, "text/plain": "<IPython.core.display.Markdown object>"}}]},
             {"cell_type": "code", "id": "figure", "metadata": {"tags": ["hide-output"]}, "execution_count": 4,
              "source": "plot()", "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
                  "image/png": PIXEL, "text/plain": "<Figure size 640x480 with 1 Axes>"}}]},
             _markdown("box", "## A box\n\n" + SYNTHETIC_BOX)]
    path = folder / "page.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}}))
    return path


@pytest.fixture(scope="module")
def synthetic_page(tmp_path_factory) -> tuple[Path, str]:
    """The synthetic notebook and its LaTeX source: Sphinx's LaTeX builder, in this
    process, with myst-nb (stored outputs, as the book's tests build) and the book's
    _ext/pdf_structure.py (about 3 s)."""
    import io

    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    src = tmp_path_factory.mktemp("synthetic")
    notebook = synthetic_notebook(src)
    (src / "conf.py").write_text(
        "extensions = ['myst_nb', 'pdf_structure']\nnb_execution_mode = 'off'\n"
        "nb_merge_streams = True\nnb_render_markdown_format = 'myst'\nroot_doc = 'page'\n"
        "html_baseurl = 'https://example.org/book/'\n"
        "latex_documents = [('page', 'page.tex', 'Synthetic', 'Nobody', 'manual')]\n")
    warnings = io.StringIO()
    with docutils_namespace():
        app = Sphinx(str(src), str(src), str(src / "_build"), str(src / "_doctrees"), "latex",
                     status=None, warning=warnings, freshenv=True)
        app.build()
    assert app.statuscode == 0 and warnings.getvalue() == "", warnings.getvalue()
    return notebook, (src / "_build" / "page.tex").read_text(encoding="utf-8")


def _verbatim(lines: list[str]) -> str:
    return "\\begin{sphinxVerbatim}[commandchars=\\\\\\{\\}]\n" + "\n".join(lines) + "\n\\end{sphinxVerbatim}\n"


@pytest.mark.book
def test_the_cutters_act_on_a_synthetic_page(synthetic_page):
    """Both cutting checks find their output on the synthetic page, fail on it printed
    whole, and pass on it as the book's LaTeX path prints it: cut, with its note."""
    notebook, tex = synthetic_page
    folded, long = folded_long_outputs([notebook]), long_shown_outputs([notebook])
    assert folded == [("page", SYNTHETIC_FOLDED[-1])]
    assert long == [("page", SYNTHETIC_SHOWN[-1])]
    whole = _verbatim(SYNTHETIC_FOLDED) + _verbatim(SYNTHETIC_SHOWN)
    assert printed_last_lines(whole, folded) == folded and printed_last_lines(whole, long) == long
    assert printed_last_lines(tex, folded) == [] and printed_last_lines(tex, long) == []
    printed = verbatim_text(tex).splitlines()
    # cut, not dropped: the first lines are there, and a note says what is left out
    assert printed.count(SYNTHETIC_FOLDED[0]) == 1 and SYNTHETIC_FOLDED[pdf_structure.FIRST_LINES] not in printed
    assert SYNTHETIC_SHOWN[pdf_structure.FIRST_ROWS - 1] in printed
    assert SYNTHETIC_SHOWN[pdf_structure.FIRST_ROWS] not in printed
    assert f"{len(SYNTHETIC_FOLDED) - pdf_structure.FIRST_LINES} more lines of this output" in tex
    assert f"The first {pdf_structure.FIRST_ROWS} of the {len(SYNTHETIC_SHOWN)} lines" in tex
    assert "HTML version prints it whole (https://example.org/book/page.html)" in tex


@pytest.mark.book
def test_folds_read_as_a_book_on_a_synthetic_page(synthetic_page):
    """The synthetic page through myst-nb and the LaTeX builder: no lone title, one note
    a section (before the subsection), the check that prints keeps its title, the
    folded table printed and cut, the folded figure printed, the box guarded."""
    notebook, tex = synthetic_page
    assert silent_checks([notebook]) == 3
    assert lone_titles(tex) == [] and noted_checks(tex) == 3
    assert sorted(notes_per_section(tex))[-3:] == [0, 1, 1]
    checks, sub = tex.split("{A subsection}")  # the page's title is the document's
    assert ("Not printed here: 2 executed checks (the first synthetic identity; the second synthetic "
            "identity) and code (the synthetic helper), in the notebook page.ipynb") in checks
    assert "1 executed check (the third synthetic identity)" in sub
    assert "sphinxstyleemphasis{Check: a synthetic check that prints}" in checks
    assert "synthetic check printed" in verbatim_text(checks)
    # the folded table: its first FIRST_ROWS rows and a note; the figure
    assert dropped_outputs(tex) == 0
    assert f"0.{pdf_structure.FIRST_ROWS - 1:03d}" in tex and f"0.{pdf_structure.FIRST_ROWS:03d}" not in tex
    assert SYNTHETIC_TABLE_ROWS > pdf_structure.LONG_TABLE
    assert f"The first {pdf_structure.FIRST_ROWS} of the {SYNTHETIC_TABLE_ROWS} rows of this table" in tex
    assert tex.count("\\sphinxincludegraphics") == 1
    # the box that opens with a display
    assert boxes_opening_with_a_display(tex) == 1 and unguarded_boxes(tex) == []


# -- nothing sticks out past the right margin (issue #26: a theorem's title ran off) -------

def words_past_margin(bbox: str, tolerance: float = 3.0) -> list[tuple[int, str, float]]:
    """(page, word, right end) of each word that ends more than ``tolerance`` pt right
    of the text block's right edge, from ``pdftotext -bbox``'s XHTML.  The edge is
    where most words end (justified lines all end there)."""
    pages = bbox.split("<page ")[1:]
    words = [(number, float(xmax), word) for number, page in enumerate(pages, 1)
             for xmax, word in re.findall(r'xMax="([\d.]+)"[^>]*>([^<]*)<', page)]
    if not words:
        return []
    edges = {}
    for _, xmax, _ in words:
        edges[round(xmax)] = edges.get(round(xmax), 0) + 1
    edge = max(edges, key=edges.get)
    return [(number, word, xmax) for number, xmax, word in words if xmax > edge + tolerance]


def _bbox_page(lines: list[tuple[float, str]]) -> str:
    return '<page width="612" height="792">' + "".join(
        f'<word xMin="72" yMin="{100 + 12 * k}" xMax="{x}" yMax="{110 + 12 * k}">{w}</word>'
        for k, (x, w) in enumerate(lines)) + "</page>"


def test_the_margin_check_finds_a_word_past_the_edge():
    justified = [(540.0, "end")] * 20 + [(300.0, "short")]
    good = "<doc>" + _bbox_page(justified) + _bbox_page(justified) + "</doc>"
    assert words_past_margin(good) == []
    bad = "<doc>" + _bbox_page(justified) + _bbox_page(justified + [(614.5, "correc")]) + "</doc>"
    assert words_past_margin(bad) == [(2, "correc", 614.5)]


@pytest.mark.book
def test_pdf_nothing_past_the_right_margin(compiled_pdf):
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    bbox = subprocess.run(["pdftotext", "-bbox", str(compiled_pdf / "egm-book.pdf"), "-"],
                          capture_output=True, text=True, errors="replace", timeout=300).stdout
    assert "<word" in bbox
    assert words_past_margin(bbox) == []


# -- link texts keep a heading's math (issue #26: "\Delta / \sigma" printed raw) -----------

_CROSSREF = re.compile(r"\\sphinxcrossref\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")


def raw_tex_in_links(tex: str) -> list[str]:
    """Link texts of a .tex that print TeX source (a backslash command as text)."""
    return [text for text in _CROSSREF.findall(tex) if re.search(r"\\textbackslash\{\}[A-Za-z]", text)]


def test_the_link_check_finds_raw_tex():
    bad = (r"see \hyperref[x]{\sphinxcrossref{\DUrole{std,std-ref}{The noise scale enters as "
           r"\textbackslash{}Delta / \textbackslash{}sigma}}}")
    good = (r"see \hyperref[x]{\sphinxcrossref{\DUrole{std,std-ref}{The noise scale enters as "
            r"\(\Delta / \sigma\)}}}")
    assert len(raw_tex_in_links(bad)) == 1
    assert raw_tex_in_links(good) == []


def test_a_link_to_a_heading_with_math_keeps_the_math():
    from docutils import nodes

    sys.path.insert(0, str(ROOT / "_ext"))
    import book_fixes

    title = nodes.title("", "", nodes.Text("Scale "), nodes.math(r"\Delta / \sigma", r"\Delta / \sigma"))
    segments = book_fixes._segments(title)
    titles = {book_fixes.plain_text(segments): segments}
    link = nodes.reference("", "", nodes.inline(r"Scale \Delta / \sigma", r"Scale \Delta / \sigma"))
    assert book_fixes.math_link_text(link, titles)
    assert [type(n).__name__ for n in link[0].children] == ["Text", "math"]
    other = nodes.reference("", "", nodes.inline("Other", "Other"))
    assert not book_fixes.math_link_text(other, titles) and other.astext() == "Other"


@pytest.mark.book
def test_pdf_link_texts_print_no_tex_source(tex):
    assert raw_tex_in_links(tex) == []


# -- the PDF reads as a book (issue 33 item 7) ------------------------------------------------

def untitled_boxes(tex: str) -> int:
    """Boxes (sphinx-proof's, admonitions) that LaTeX draws with an empty title bar:
    ``\\begin{sphinxadmonition}{note}`` with no title argument after it."""
    return len(re.findall(r"\\begin\{sphinxadmonition\}\{\w+\}\s*(?!\{)", tex))


def test_the_box_check_finds_an_untitled_box():
    assert untitled_boxes("\\begin{sphinxadmonition}{note}\n\\sphinxAtStartPar\nProof. x") == 1
    assert untitled_boxes("\\begin{sphinxadmonition}{note}{Proof}\n\\sphinxAtStartPar\nx") == 0


@pytest.mark.book
def test_pdf_boxes_have_a_title(tex):
    assert untitled_boxes(tex) == 0


# What a website has and a PDF has not: fold buttons, clicks.
WEBSITE_CONTROLS = re.compile(r"folded cells?|cell[’']s button|\bbuttons?\b|\bclick\w*|"
                              r"\bShow (?:the )?code\b|\bShow code cell", re.I)


def website_wording(tex: str) -> list[str]:
    """Sentences of the PDF's prose (code blocks left out) that mention website controls."""
    prose = _VERBATIM.sub("", tex)
    prose = re.sub(r"\\(?:label|hyperref|index|sphinxstepscope)(?:\[[^\]]*\])?\{[^{}]*\}", "", prose)
    # each sentence or line on its own (a pattern that spans one from its start, [^.\n]*
    # before the words, tried again at every character, took 11 CPU-s on the book)
    return [sentence for sentence in re.split(r"[.\n]", prose) if WEBSITE_CONTROLS.search(sentence)]


def test_the_wording_check_finds_a_button():
    old = ("Every statement is\nfollowed by a folded cell that checks it: the cell\u2019s button says what.\n"
           "\\begin{sphinxVerbatim}\nbutton = 1\n\\end{sphinxVerbatim}\n")
    assert len(website_wording(old)) == 1
    assert website_wording("\\emph{Check: the radius}. \\emph{Code: one run}") == []
    sys.path.insert(0, str(ROOT / "_ext"))
    assert pdf_structure.pdf_prompt("Show the code: one run of X") == "Code: one run of X"
    assert pdf_structure.pdf_prompt("Check: x") == "Check: x"


def test_a_table_fold_title_gives_way_to_the_caption():
    # a captioned table keeps its caption as its only title; a check named in the
    # fold's title stays; a table without a caption keeps the fold's title
    table_prompt = pdf_structure.table_prompt
    assert table_prompt("Table: the verdict", captioned=True) == ""
    assert table_prompt("Table: ratios; check: the gain is under 10%",
                        captioned=True) == "Check: the gain is under 10%"
    assert table_prompt("Table: the verdict", captioned=False) == "Table: the verdict"
    assert table_prompt("Check: x", captioned=True) == "Check: x"


def broken_off(tex: str) -> list[str]:
    """Paragraphs of the .tex that end with a colon and are followed by another
    plain paragraph: a sentence that breaks off where the site has a folded check."""
    body = tex.split(r"\begin{document}", 1)[-1]
    return re.findall(r"([^\n]{0,60}):\n\n(?:\\phantomsection\\label\{[^\n]*\}\n)?"
                      r"\\sphinxAtStartPar\n", body)


def test_a_sentence_broken_off_at_a_colon_is_found():
    # from the PDF of 461a779 (state_of_the_art, chapter 14)
    old = ("standard\\_schedule()}}}}}). We read them:\n\n\\sphinxAtStartPar\n"
           "and rerun the same experiment\n")
    assert len(broken_off(old)) == 1
    assert broken_off("as follows:\n\\begin{equation*}\nx\n\\end{equation*}\n") == []
    assert broken_off("We read them and rerun it.\n\n\\sphinxAtStartPar\nNext\n") == []


def test_an_introduction_is_closed_without_changing_code_or_maths():
    from docutils import nodes

    def section(*children):
        box = nodes.section()
        box.extend(children)
        return box

    def para(*children):
        return nodes.paragraph("", "", *children)

    # joined: a continuation in words
    first = para(nodes.Text("We read them:"))
    box = section(first, para(nodes.Text("and rerun the experiment.")))
    pdf_structure.close_introduction(first)
    assert [p.astext() for p in box] == ["We read them and rerun the experiment."]
    # a full stop: the next paragraph opens with code, not a lower-case word
    first = para(nodes.Text("Every step holds:"))
    box = section(first, para(nodes.literal("", "theorem4_applies"), nodes.Text(" switches.")))
    pdf_structure.close_introduction(first)
    assert [p.astext() for p in box] == ["Every step holds.", "theorem4_applies switches."]
    # a colon inside inline code stays
    first = para(nodes.Text("The key is "), nodes.literal("", "key:"))
    box = section(first, para(nodes.Text("Next.")))
    pdf_structure.close_introduction(first)
    assert box[0].astext() == "The key is key:"
    # a paragraph that only introduced the check goes; one before a display stays
    first = para(nodes.Text("Checked:"))
    box = section(first, para(nodes.Text("Next.")))
    pdf_structure.close_introduction(first)
    assert [p.astext() for p in box] == ["Next."]
    first = para(nodes.Text("It reads:"))
    box = section(first, nodes.math_block("", "a = b"))
    pdf_structure.close_introduction(first)
    assert box[0].astext() == "It reads:"


@pytest.mark.book
def test_no_sentence_breaks_off_at_a_colon(tex):
    """A paragraph that introduced a folded check ("... grants less:") must not end
    the PDF's sentence at its colon when the check prints nothing there (22 places in
    the PDF of 461a779; _ext/pdf_structure.close_introduction)."""
    assert broken_off(tex) == []


@pytest.mark.book
def test_no_fold_title_stands_over_a_table_caption(tex):
    # before: "Table: HLY with its authors' settings ..." in italics right above
    # "Table 14.19: HLY with its authors' settings ..."
    doubled = re.findall(r"\\sphinxstyleemphasis\{Table: [^}]*\}(?:(?!\\sphinxstyleemphasis).){0,400}?"
                         r"\\sphinxcaption", tex, flags=re.S)
    assert doubled == []


@pytest.mark.book
def test_pdf_mentions_no_website_control(tex):
    body = tex.split(r"\begin{document}", 1)[1]
    assert website_wording(body) == []


def index_entries(tex: str) -> list[str]:
    """The general index's entries (``\\index{key@...}``), by key."""
    return re.findall(r"\\index\{((?:[^{}@]|\{[^{}]*\})*)@", tex)


def test_api_entries_leave_the_index():
    from docutils import nodes
    from sphinx import addnodes

    import api_reference

    doc = nodes.section()
    doc += addnodes.index(entries=[("single", "analytic_sigma() (in module egmlib.privacy)",
                                    "egmlib.privacy.analytic_sigma", "", None),
                                   ("pair", "module; egmlib.privacy", "module-egmlib.privacy", "", None),
                                   ("single", "clipping probability", "term-clipping-probability", "", None)])
    assert api_reference.drop_api_index_entries(doc) == 2
    assert [e[1] for e in next(iter(doc.findall(addnodes.index)))["entries"]] == ["clipping probability"]


@pytest.mark.book
def test_pdf_index_lists_concepts_not_api_names(tex):
    entries = index_entries(tex)
    api = [e for e in entries if "egmlib" in e or "()" in e or "attribute" in e]
    assert api == []
    assert len(entries) >= 40  # the glossary's concepts (notation/*.yml), each in the index


# Typewriter fonts as pdffonts names them: txfonts' (t1xtt, tcxtt: \ttfamily of
# the book), Computer Modern's, Courier and the Nimbus/TeX Gyre monospaced ones.
TYPEWRITER_FONT = re.compile(r"(?:^|\+)(?:t1xtt|tcxtt|rtxtt|txtt|cmtt|ec-?tt|lmmono|qcr)|Mono|Courier|Cursor",
                             re.I)


def typewriter_fonts(pdffonts: str) -> list[str]:
    """The typewriter fonts of a ``pdffonts`` listing."""
    names = [line.split()[0] for line in pdffonts.splitlines()[2:] if line.strip()]
    return [name for name in names if TYPEWRITER_FONT.search(name)]


def test_the_font_check_finds_a_typewriter_font():
    listing = ("name                                 type              encoding         emb sub uni\n"
               "------------------------------------ ----------------- ---------------- --- --- ---\n"
               "GTZQTB+TeXGyreHeros-Bold             Type 1            Custom           yes yes yes\n"
               "VRWEVK+TeXGyreTermes-Regular         Type 1            Custom           yes yes yes\n")
    assert typewriter_fonts(listing) == []
    assert typewriter_fonts(listing + "QWGSUB+t1xtt Type 1 Builtin yes yes yes\n") == ["QWGSUB+t1xtt"]


@pytest.mark.book
def test_pdf_index_is_set_in_the_body_font(compiled_pdf):
    """The general index lists concepts in the text's font: no typewriter font on its
    pages (Sphinx sets index entries in \\texttt, for API names), found in the PDF."""
    import shutil
    import subprocess

    if shutil.which("pdffonts") is None or shutil.which("pdftotext") is None:
        pytest.skip("pdffonts, pdftotext (poppler-utils) are not installed")
    pdf = str(compiled_pdf / "egm-book.pdf")

    def run(*cmd):
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120).stdout

    pages = int(re.search(r"^Pages:\s+(\d+)", run("pdfinfo", pdf), re.M).group(1))
    first = next((p for p in range(pages, max(pages - 30, 0), -1)
                  if re.search(r"^\s*INDEX\s*$", run("pdftotext", "-f", str(p), "-l", str(p), "-layout",
                                                       pdf, "-"), re.M | re.I)), None)
    assert first is not None, "no page opens the index (a heading INDEX) among the last 30"
    fonts = run("pdffonts", "-f", str(first), "-l", str(pages), pdf)
    assert "TeXGyreTermes" in fonts
    assert typewriter_fonts(fonts) == []


@pytest.mark.book
def test_pdf_title_page_has_version_and_date(tex):
    sys.path.insert(0, str(ROOT / "_ext"))
    import public_address

    address = public_address.read(ROOT)
    assert f"\\release{{{address.version}}}" in tex
    assert r"\renewcommand{\releasename}{Version}" in tex
    assert f"\\date{{{public_address.release_date_text(address.date)}}}" in tex


@pytest.mark.book
def test_pdf_cites_as_the_bibliography_labels(tex):
    """One citation style: the bibliography's labels ([Pou23a]) are what the text
    cites, and the study's report and its code have labels of their own."""
    labels = re.findall(r"\\bibitem\[([^\]]+)\]", tex)
    assert labels and not any(label.isdigit() for label in labels)
    assert len(labels) == len(set(labels))
    poulsen = [label for label in labels if label.startswith("Pou23")]
    assert len(poulsen) == 2, poulsen


# -- a box that opens with a display keeps its title on the display's page (issue 33) -------

# A box's title argument: balanced braces, three levels (a citation's link inside).
_TITLE_ARG = r"\{(?:[^{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\}"
# ... and its body opens with a display, or with a paragraph of at most two source lines and
# a display (no page break may stand before a display: the three cannot be parted)
_BOX_OPENS_WITH_DISPLAY = re.compile(
    r"\\begin\{sphinxadmonition\}\{\w+\}" + _TITLE_ARG
    + r"\s*(?:\\sphinxAtStartPar\n(?:(?!\s*\n)[^\n]*\n){1,2}?)?\s*\\begin\{(?:equation|align|gather)")
# what may stand between a \needspace and its box: labels, index entries, blank lines
_LEAD_IN = re.compile(r"(?:\s|\\label\{(?:[^{}]|\{[^{}]*\})*\}|\\index\{(?:[^{}]|\{[^{}]*\})*\}\\ignorespaces"
                      r"|\\phantomsection)*$")


def boxes_opening_with_a_display(tex: str) -> int:
    return len(_BOX_OPENS_WITH_DISPLAY.findall(tex))


def unguarded_boxes(tex: str) -> list[str]:
    """The start of each box that opens with a display and has no ``\\needspace``
    before it (and its labels)."""
    out = []
    for match in _BOX_OPENS_WITH_DISPLAY.finditer(tex):
        before = tex[:match.start()]
        before = before[:_LEAD_IN.search(before).start()]
        if not re.search(r"\\needspace\{[^{}]*\}$", before):
            out.append(match.group(0)[:80])
    return out


PROPOSITION = r"""with an edge.

\label{chapters/optimal_scaling:bey-prop-eq25}
\begin{sphinxadmonition}{note}{Proposition 9.2 (The study’s constraint (25) is the exact problem)}


\begin{equation*}
\begin{split}\begin{aligned}
&\min\{\sigma_{\mathrm{opt}}^2\sum_j b_j^{-2} : b \text{ satisfies (25)}\}\\
&\quad= \min_b E(b)
\end{aligned}\end{split}
\end{equation*}
\sphinxAtStartPar
with \(E\) from \eqref{equation:chapters/optimal_scaling:bey-eq-exact-noise}.
\end{sphinxadmonition}
"""
LEMMA = r"""
\index{quadratic form@\spxentry{quadratic form}|spxpagem}\ignorespaces \label{chapters/dp:lem-quadratic}
\begin{sphinxadmonition}{note}{Lemma 1.4 (Expectation of a quadratic form {[}\hyperlink{cite.bibliography:id6}{Bat10}{]})}



\sphinxAtStartPar
Let \(X\) be a random vector in \(\mathbb R^d\) with mean \(\mu\) and covariance
\(\Sigma\), and \(A\) a symmetric \(d \times d\) matrix. Then
\begin{equation}\label{equation:chapters/dp:eq-quadratic}
\begin{split}\mathbb E\big[X^\top A X\big] = \operatorname{tr}(A \Sigma) + \mu^\top A \mu .\end{split}
\end{equation}\end{sphinxadmonition}
"""
TEXT_FIRST = r"""\begin{sphinxadmonition}{note}{Definition 9.1 (The exact noise of a scaling)}

\sphinxAtStartPar
For \(b \in (0, \infty)^d\) and clipping probability \(p\) let
\(w_j = (b_j\sigma_j)^2\) and \(C(b)^2 = \operatorname{isf}(p, w)\), the \(c\) with
\(\Pr[\sum_j w_j Z_j^2 > c] = p\). The noise error of the study’s Algorithm 3 is
\begin{equation}
E(b) = 4\sigma_{\mathrm{opt}}^2\, C(b)^2 \sum_j b_j^{-2}
\end{equation}\end{sphinxadmonition}
"""


def test_the_box_opening_check():
    """A box opening with a display (directly, or after a short paragraph) needs a
    \\needspace before it and its labels; a box whose first paragraph can break does not."""
    assert boxes_opening_with_a_display(PROPOSITION + LEMMA + TEXT_FIRST) == 2
    assert len(unguarded_boxes(PROPOSITION + LEMMA)) == 2
    guarded = PROPOSITION.replace("\n\\label", "\n\\needspace{8\\baselineskip}\n\n\\label") + \
        LEMMA.replace("\n\\index", "\n\\needspace{9\\baselineskip}\n\\index")
    assert unguarded_boxes(guarded) == []
    assert unguarded_boxes(TEXT_FIRST) == []


def _box(title: str, *body):
    from docutils import nodes

    box = nodes.admonition()
    box += nodes.title(title, title)
    content = nodes.section()  # sphinx-proof's untitled content section
    box += content
    for node in body:
        content += node
    return box


def test_the_opening_of_a_box_is_measured():
    from docutils import nodes

    two_lines = nodes.math_block("", "\\begin{aligned}a &= b\\\\ c &= d\\end{aligned}")
    height = pdf_structure.opening_lines(_box("Proposition 9.2 (The study's constraint (25))", two_lines))
    # the title, the box's frame, two display lines at 1.5, the skips, the line after
    assert height == math.ceil(1 + pdf_structure.BOX_FRAME + 2 * pdf_structure.DISPLAY_LINE
                               + pdf_structure.DISPLAY_SKIPS + 1)
    lead = nodes.paragraph("", "Let X be a random vector. Then")
    assert pdf_structure.opening_lines(_box("Lemma", lead, two_lines.deepcopy())) == height + 1
    # three lines still go with the display (Proposition 11.1's lead of four lines
    # and its display stood 24.7 pt into the footer with SHORT_LEAD = 2)
    three = nodes.paragraph("", "word " * 60)
    assert pdf_structure.opening_lines(_box("Lemma", three, two_lines.deepcopy())) == height + 3
    long_lead = nodes.paragraph("", "word " * 130)  # six lines: the box may break in them
    assert pdf_structure.opening_lines(_box("Lemma", long_lead, two_lines.deepcopy())) is None
    assert pdf_structure.opening_lines(_box("Remark", nodes.paragraph("", "Text first."))) is None
    assert pdf_structure.display_lines("a = b") == 1
    assert pdf_structure.display_lines("a &= b \\\\\n c &= d \\\\") == 2


def test_the_box_transform_puts_needspace_before_the_labels():
    from docutils import nodes
    from docutils.utils import new_document
    from sphinx import addnodes

    document = new_document("test")
    document += nodes.paragraph("", "Before.")
    document += addnodes.index(entries=[])
    document += nodes.target(refid="x")
    document += _box("Proposition", nodes.math_block("", "a = b"))
    inner = _box("Inner", nodes.math_block("", "c = d"))
    outer = _box("Exercise", nodes.paragraph("", "Text first."), inner)
    document += outer
    pdf_structure.PdfBoxOpenings(document).run()
    kinds = [type(node).__name__ for node in document.children]
    assert kinds == ["paragraph", "raw", "index", "target", "admonition", "admonition"]
    assert re.fullmatch(r"\s*\\needspace\{\d+\\baselineskip\}\s*", document[1].astext())
    assert not list(outer.findall(nodes.raw))  # inside a box the page's height is not known


@pytest.mark.book
def test_pdf_boxes_that_open_with_a_display_are_kept_off_the_page_foot(tex):
    """Each box that opens with a display has a \\needspace (issue 33: Proposition 9.2
    stood 17.7 pt too high, into the footer); that it is tall enough, the compiled
    PDF's layout check says (test_pdf_nothing_sticks_out_of_the_text_block)."""
    assert boxes_opening_with_a_display(tex) > 10
    assert unguarded_boxes(tex) == []
