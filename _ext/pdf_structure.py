"""The PDF has the site's structure (LaTeX builder only).

Sphinx's LaTeX builder inlines every toctree where it stands.  The landing page
lists the book with ``{tableofcontents}`` under its heading "Map of the book",
so without this extension the landing page's own headings became chapters 1-5,
every real chapter a section 4.x, and the parts of ``_toc.yml`` were lost.

In the assembled LaTeX doctree of the root document this extension

* makes the landing page an unnumbered preface: its title is the book's title
  (already on the title page), its body becomes an unnumbered chapter
  "Preface" whose headings are unnumbered sections;
* drops the toctree placeholder's heading ("Map of the book": the PDF has its
  own table of contents) and puts the chapters after the preface;
* opens each part of ``_toc.yml`` (a caption of the root's toctrees) with
  ``\\part``, so the chapters are numbered 1..N through the parts, as the site
  numbers them (``numbered`` in ``_toc.yml``, continued across parts by
  sphinx-multitoc-numbering);
* sets a part that the site does not number (the front matter before the
  first numbered part, the back matter after the last) unnumbered:
  an unnumbered ``\\part`` whose chapters are unnumbered, like ``\\backmatter``
  of the book class (the report class has none).  The numbered part before it
  and the unnumbered one agree with the site, so a figure, equation or lemma
  number means the same thing in both;
* when the last document of the book holds the bibliography, lets the
  bibliography's entries follow its heading instead of opening a second,
  identical "Bibliography" chapter (Sphinx moves the entries to the end of
  the document and gives them a chapter of their own).

Without parts in ``_toc.yml`` (or in another builder) it changes nothing.  The
table of contents is named "Contents", not after the first part (Sphinx takes
the first toctree caption of the root document as its name).

The PDF prints nothing that the site folds (issue #26), ``PdfHiddenCells``:

* the source of a code cell tagged ``hide-input`` or ``hide-cell`` (plotting
  code, folded checks) is left out; where the fold's button has a text of its
  own (cell metadata ``mystnb: code_prompt_show: "Check: ..."``), that line is
  printed in its place, in italics;
* the output of a cell tagged ``hide-output`` or ``hide-cell`` is printed only
  if it is short (at most ``SHORT_OUTPUT`` lines of text); a longer text (a
  216-row table) is cut to its first ``FIRST_LINES`` lines and a line saying
  how many more the site holds, and a folded figure or rich output becomes one
  line saying that the site shows it.

A printed output that the site shows but that runs over more than
``LONG_OUTPUT`` lines (a table of 60 rows fills two pages) is cut the same way in
the PDF: its first ``FIRST_ROWS`` lines and a note with its number of lines and
the page of the book's HTML version that holds it whole (``PdfLongOutputs``).

A code block or printed output wider than the text at the verbatim font
(10 pt: about 84 characters fit the text width) is set smaller, ``PdfWideVerbatim``
(8 pt up to 104 characters, 7 pt above), instead of being wrapped mid-word
with continuation marks (the chapters' printed tables reach 100 characters).

A table without widths of its own (a Markdown table, a table an output prints)
gets its columns from its content, as a browser lays out a table
(``PdfTableWidths``): each column at least as wide as its longest unbreakable
word, the rest of the line shared in proportion to what each column's longest
line lacks; a table whose lines all fit is as narrow as they are.  Columns are
ragged-right (right-aligned where the Markdown asks for it), a line may break
after an underscore or a slash between words (make_zCDP_to_approxDP,
coinpress/hybrid), and a table whose words cannot fit at the text size, even
hyphenated, is set smaller with narrower gaps (``TABLE_SIZES``).  Sphinx's
tabulary (LaTeX's own guess) cut words it made no room for ("dp-accountin" in
the library comparison).
"""

from __future__ import annotations

import math
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

PREFACE_TITLE = "Preface"

# LaTeX's secnumdepth: -1 leaves chapters (and below) unnumbered, -2 parts too.
SAVE_NUMBERING = r"\edef\egmSavedSecnumdepth{\the\value{secnumdepth}}"
RESTORE_NUMBERING = r"\setcounter{secnumdepth}{\egmSavedSecnumdepth}"
# Bibliography entries without thebibliography's own \chapter*{\bibname}.
BIBLIOGRAPHY_IN_PLACE = (r"\renewenvironment{sphinxthebibliography}[1]"
                         r"{\def\chapter*##1{}\begin{thebibliography}{#1}}"
                         r"{\end{thebibliography}}")
CONTENTS_NAME = r"\addto\captionsenglish{\renewcommand{\contentsname}{Contents}}"


def _raw(*lines: str) -> nodes.raw:
    text = "\n" + "\n".join(lines) + "\n"
    return nodes.raw(text, text, format="latex")


def _latex_escape(text: str) -> str:
    table = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
             "\\": r"\textbackslash{}"}
    return "".join(table.get(c, c) for c in text)


def parts(app) -> list[tuple[str, bool, list[str]]]:
    """(caption, numbered, documents) of each part of ``_toc.yml``, in order."""
    site_map = getattr(app.config, "external_site_map", None)
    if site_map is None:
        return []
    subtrees = site_map.root.subtrees
    if not subtrees or any(not tree.caption for tree in subtrees):
        return []
    return [(tree.caption, bool(tree.numbered), list(tree.files())) for tree in subtrees]


def _inside_a_chapter(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, addnodes.start_of_file):
            return True
        parent = parent.parent
    return False


class PdfStructure(SphinxPostTransform):
    builders = ("latex",)
    # before Sphinx moves the bibliography to the end of the document (750)
    default_priority = 700

    def run(self, **kwargs) -> None:
        root = self.config.root_doc
        if self.env.docname != root or self.document.get("docname") != root:
            return
        book_parts = parts(self.app)
        if not book_parts:
            return
        top = next((child for child in self.document.children if isinstance(child, nodes.section)), None)
        if top is None or not isinstance(top.children[0], nodes.title):
            logger.warning("pdf_structure: the root document has no title section", location=root)
            return

        # The root's toctrees (one per part): chapters are inlined in them.
        wrappers = [node for node in top.findall(nodes.compound)
                    if "toctree-wrapper" in node["classes"] and not _inside_a_chapter(node)]
        by_first_doc = {}
        for wrapper in wrappers:
            docs = [child["docname"] for child in wrapper.children
                    if isinstance(child, addnodes.start_of_file)]
            if docs:
                by_first_doc[docs[0]] = wrapper
            wrapper.parent.remove(wrapper)
        # headings left with nothing under them: the toctree placeholder's ("Map of the book")
        for section in list(top.findall(nodes.section)):
            if section is not top and all(isinstance(c, (nodes.title, nodes.target)) for c in section.children):
                section.parent.remove(section)

        # The preface: the root's body in an unnumbered chapter.
        preface = nodes.section("", ids=["pdf-preface"], names=[])
        preface += nodes.title("", PREFACE_TITLE)
        for child in list(top.children[1:]):
            top.remove(child)
            preface += child
        top += _raw(SAVE_NUMBERING, r"\setcounter{secnumdepth}{-1}")
        top += preface

        # Unnumbered parts before the first numbered one are front matter ("Start
        # here"): they take no number, so the chapters after them keep 1..N.
        numbered_before = True
        seen_numbered = False
        for caption, numbered, docs in book_parts:
            first = next((doc for doc in docs if doc in by_first_doc), None)
            if first is None:
                logger.warning("pdf_structure: part %r has no chapter in the LaTeX document", caption,
                               location=root)
                continue
            depth = RESTORE_NUMBERING if numbered else r"\setcounter{secnumdepth}{-2}"
            if numbered and not numbered_before and seen_numbered:
                logger.warning("pdf_structure: numbered part %r follows an unnumbered one; its "
                               "chapter numbers would not match the site's", caption, location=root)
            numbered_before = numbered
            seen_numbered = seen_numbered or numbered
            self.document += _raw(depth, r"\part{" + _latex_escape(caption) + "}")
            self.document += by_first_doc.pop(first)
        for wrapper in by_first_doc.values():  # not expected: a toctree outside the parts
            self.document += wrapper

        last = [c for c in self.document.findall(addnodes.start_of_file)]
        if last and any(True for _ in last[-1].findall(nodes.citation)):
            # Sphinx puts the entries after everything else: right after this last chapter.
            self.document += _raw(BIBLIOGRAPHY_IN_PLACE)


SHORT_OUTPUT = 15   # lines of a folded text output printed whole
FIRST_LINES = 8     # lines of a longer one printed, with a line saying what is left out
DEFAULT_PROMPT = "{type}"  # myst-nb's own button texts ("Show code cell {type}") hold it


def pdf_prompt(prompt: str) -> str:
    """A fold's button text as the PDF prints it: no website control ("Show the code:
    one run of ..." becomes "Code: one run of ..."; "Check: ..." stays)."""
    return re.sub(r"^Show (?:the )?(\w)", lambda m: m.group(1).upper(), prompt)


def _folded_note(text: str) -> nodes.paragraph:
    para = nodes.paragraph("", "", classes=["egm-folded-note"])
    para += nodes.emphasis(text, text)
    return para


def _shorten_output(output: nodes.Element) -> None:
    """A folded output, as the PDF prints it (in place)."""
    for child in list(output.children):
        if isinstance(child, nodes.literal_block):
            lines = child.astext().rstrip("\n").split("\n")
            if len(lines) <= SHORT_OUTPUT:
                continue
            kept = "\n".join(lines[:FIRST_LINES])
            rest = len(lines) - FIRST_LINES
            child.children = [nodes.Text(kept)]
            child.rawsource = kept
            note = _folded_note(f"... {rest} more lines of this output: folded on the site "
                                "(the book's HTML version).")
            output.insert(output.index(child) + 1, note)
        else:
            output.replace(child, _folded_note("This output is folded on the site "
                                               "(the book's HTML version)."))


LONG_OUTPUT = 30   # lines of a shown text output printed whole in the PDF (about half a page)
FIRST_ROWS = 20    # lines of a longer one printed, with a note


def site_page(docname: str, baseurl: str = "") -> str:
    """Where the book's HTML version shows ``docname`` (its address when the site
    has one, ``html_baseurl``; else the page's path in the HTML build)."""
    page = f"{docname}.html"
    return f"{baseurl.rstrip('/')}/{page}" if baseurl else page


def cut_long_output(output: nodes.Element, page: str) -> int:
    """Cut every text block of a shown output longer than LONG_OUTPUT lines to its
    first FIRST_ROWS lines and a note (in place); returns how many were cut."""
    cut = 0
    for child in list(output.children):
        if not isinstance(child, nodes.literal_block):
            continue
        lines = child.astext().rstrip("\n").split("\n")
        if len(lines) <= LONG_OUTPUT:
            continue
        kept = "\n".join(lines[:FIRST_ROWS])
        child.children = [nodes.Text(kept)]
        child.rawsource = kept
        note = _folded_note(f"The first {FIRST_ROWS} of the {len(lines)} lines of this output; "
                            f"the book's HTML version prints it whole ({page}).")
        output.insert(output.index(child) + 1, note)
        cut += 1
    return cut


class PdfLongOutputs(SphinxPostTransform):
    """A long printed output, shown on the site, in its first lines (module docstring)."""

    builders = ("latex",)
    default_priority = 199  # with PdfHiddenCells (folded outputs are cut there, shorter)

    def run(self, **kwargs) -> None:
        baseurl = getattr(self.config, "html_baseurl", "") or ""
        # The page of each output: the LaTeX builder puts each page's doctree in a
        # start_of_file node without setting its root's parent, so each page is
        # searched within its node (a nested page, later in the walk, wins).
        page_of = {}
        for part in [self.document, *self.document.findall(addnodes.start_of_file)]:
            docname = part.get("docname", self.env.docname)
            for output in part.findall(nodes.container):
                if output.get("nb_element") == "cell_code_output":
                    page_of[id(output)] = (output, docname)
        for output, docname in page_of.values():
            cell = output.parent
            if cell is not None and cell.get("hide_mode") in ("all", "output", "input+output"):
                continue  # folded on the site: PdfHiddenCells cuts it
            cut_long_output(output, site_page(docname, baseurl))


class PdfHiddenCells(SphinxPostTransform):
    """What the site folds, the PDF leaves out (see the module's docstring)."""

    builders = ("latex",)
    # myst-nb folds cells for HTML at 199 (HideInputCells); before pdf_structure
    default_priority = 199

    def run(self, **kwargs) -> None:
        for cell in list(self.document.findall(nodes.container)):
            mode = cell.get("hide_mode")
            if cell.get("nb_element") != "cell_code" or not mode:
                continue
            for child in list(cell.children):
                element = child.get("nb_element")
                if element == "cell_code_source" and mode in ("all", "input", "input+output"):
                    prompt = str(cell.get("prompt_show") or "")
                    if prompt and DEFAULT_PROMPT not in prompt:
                        cell.replace(child, _folded_note(pdf_prompt(prompt)))
                    else:
                        cell.remove(child)
                elif element == "cell_code_output" and mode in ("all", "output", "input+output"):
                    _shorten_output(child)
            if not cell.children:
                cell.parent.remove(cell)


# (longest line, font size): the first that the block's longest line fits
VERBATIM_SIZES = ((84, None), (104, r"\footnotesize"), (125, r"\scriptsize"))


def verbatim_size(text: str) -> str | None:
    """The LaTeX font size a verbatim block of ``text`` is set in (None: the normal one)."""
    longest = max((len(line.rstrip()) for line in text.split("\n")), default=0)
    for width, size in VERBATIM_SIZES:
        if longest <= width:
            return size
    return VERBATIM_SIZES[-1][1]


class PdfWideVerbatim(SphinxPostTransform):
    """Wide code blocks and outputs in a smaller font (see the module's docstring)."""

    builders = ("latex",)
    default_priority = 200  # after PdfHiddenCells has cut folded outputs

    def run(self, **kwargs) -> None:
        for block in list(self.document.findall(nodes.literal_block)):
            size = verbatim_size(block.astext())
            if size is None or block.parent is None:
                continue
            parent = block.parent
            at = parent.index(block)
            parent.insert(at + 1, _raw(r"\endgroup"))
            parent.insert(at, _raw(r"\begingroup\fvset{fontsize=" + size + "}"))


# -- tables: columns from their content (module docstring) ---------------------------------

# Advance widths (1/1000 em) of the printable ASCII characters, space to tilde, in
# the text font (Times; TeX Gyre Termes has its metrics) and the table header's
# (Helvetica; TeX Gyre Heros), from the URW fonts' AFM files (utmr8a, uhvr8a).
_TIMES = ("250 333 408 500 500 833 778 333 333 333 500 564 250 333 250 278 500 500 500 500 500 500 "
          "500 500 500 500 278 278 564 564 564 444 921 722 667 667 722 611 556 722 722 333 389 722 "
          "611 889 722 722 556 722 667 556 611 722 722 944 722 722 611 333 278 333 469 500 333 444 "
          "500 444 500 444 333 500 500 278 278 500 278 778 500 500 500 500 333 389 278 500 500 722 "
          "500 500 444 480 200 480 541")
_HELVETICA = ("278 278 355 556 556 889 667 221 333 333 389 584 278 333 278 278 556 556 556 556 556 "
              "556 556 556 556 556 278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 "
              "500 667 556 833 722 778 667 778 722 667 611 722 667 944 667 667 611 278 278 278 469 "
              "556 222 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 556 556 333 500 "
              "278 556 500 722 500 500 500 334 260 334 584")
_ADVANCE = tuple({chr(32 + k): int(w) / 1000 for k, w in enumerate(font.split())}
                 for font in (_TIMES, _HELVETICA))
OTHER_CHAR_EM = 0.6       # a character beyond ASCII (×, −, ⁻¹, Greek)
SAFETY = 1.06             # kerning, rounding: a column this much wider holds its text
TEXT_WIDTH_EM = 46.97     # \linewidth of the book's page: 6.5 in at 10 pt
COLUMN_PADDING_EM = 1.2   # 2 \tabcolsep (6 pt each side)
HEADER_LINES = 2          # a header may take this many lines before its column widens
# The sizes a table is tried at, in order, until its words fit: (LaTeX size, its
# scale against the text's 10 pt, \tabcolsep in pt).  A wide table of numbers
# (13 columns in state_of_the_art) is set smaller with narrower gaps, as a
# typesetter sets a wide tabular, rather than running past the margin.
TABLE_SIZES = (("", 1.0, 6), (r"\small", 0.9, 6), (r"\footnotesize", 0.8, 4), (r"\scriptsize", 0.7, 3))
BREAK_AFTER = "-/_"       # a word may break after these (TeX's hyphen; \allowbreak)
HYPHENATED = 0.65         # a long word hyphenated: its longest piece, as a share of it
LONG_WORD = 8             # letters of a word that TeX may hyphenate in a narrow column


def text_width(text: str, header: bool = False) -> float:
    """The width of ``text`` on one line, in em of its font (the header's sans serif
    or the text's roman), on the wide side: a column this wide holds it."""
    advance = _ADVANCE[1 if header else 0]
    return SAFETY * sum(advance.get(char, OTHER_CHAR_EM) for char in text)


CODE_CHAR_EM = 0.53       # the typewriter font of inline code (txtt: 525/1000 em)
MATH_FACTOR = 1.2         # italic letters and the spacing around operators
_OPERATORS = r"ln|log|exp|max|min|sup|inf|det|tr|sin|cos|Pr|arg"


def math_text(latex: str) -> str:
    """Roughly what a formula prints, one character a symbol: an operator name
    its letters, another command one symbol, markup nothing."""
    text = re.sub(r"\\(?:left|right|big|Big|bigg|Bigg)[lr]?\b|\\(?:mathrm|mathbf|mathit|mathcal|"
                  r"mathbb|operatorname|text|textrm|boldsymbol)\b|\\[,;:! ]|\\q?quad\b", "", latex)
    text = re.sub(r"\\(" + _OPERATORS + r")\b", r"\1", text)
    text = re.sub(r"\\sqrt\b", "xx", text)  # the radical sign is about 1 em wide
    text = re.sub(r"\\[A-Za-z]+|\\.", "x", text)
    return re.sub(r"[{}^_&\s]", "", text)


# A glyph: (character, width in em, kind); the kinds: "text" (may break at a
# space or after BREAK_AFTER), "code" (inline code: breaks at a space), "math"
# (a formula: never breaks).
Glyph = tuple[str, float, str]


def glyphs(text: str, kind: str = "text", header: bool = False) -> list[Glyph]:
    """The glyphs of ``text`` set as ``kind`` (a formula: its LaTeX source)."""
    if kind == "math":
        shown = math_text(text)
        return [(c, MATH_FACTOR * text_width(c), "math") for c in shown]
    if kind == "code":
        return [(c, SAFETY * CODE_CHAR_EM, "code") for c in text]
    return [(c, text_width(c, header), "text") for c in text]


def cell_lines(entry: nodes.Element, header: bool = False) -> list[list[Glyph]]:
    """A table cell as glyphs, one list a paragraph."""
    lines: list[list[Glyph]] = []

    def walk(node: nodes.Node) -> None:
        if isinstance(node, nodes.paragraph) or not lines:
            lines.append([])
        if isinstance(node, nodes.math):
            lines[-1].extend(glyphs(node.astext(), "math"))
            return
        if isinstance(node, nodes.literal):
            lines[-1].extend(glyphs(node.astext(), "code"))
            return
        if isinstance(node, nodes.Text):
            lines[-1].extend(glyphs(str(node), "text", header))
            return
        if isinstance(node, (nodes.raw, nodes.comment, nodes.target)):
            return
        for child in node.children:
            walk(child)

    walk(entry)
    return [line for line in lines if line] or [[]]


def piece_widths(line: list[Glyph], hyphenate: bool = False) -> list[float]:
    """The widths of the pieces of ``line`` that no line break may split (with
    ``hyphenate``, a word of LONG_WORD letters or more may be split by a hyphen)."""
    out, width, letters = [], 0.0, 0

    def close():
        nonlocal width, letters
        if width:
            out.append(HYPHENATED * width + text_width("-") if hyphenate and letters >= LONG_WORD
                       else width)
        width, letters = 0.0, 0

    for char, advance, kind in line:
        if kind != "math" and char.isspace():
            close()
            continue
        width += advance
        letters += kind == "text" and char.isalpha()
        if kind == "text" and char in BREAK_AFTER:
            close()
    close()
    return out


def cell_size(lines: list[list[Glyph]], hyphenate: bool = False) -> tuple[float, float]:
    """(narrowest, natural) width of a cell in em: its longest unbreakable piece,
    and its longest paragraph on one line."""
    least = max((w for line in lines for w in piece_widths(line, hyphenate)), default=0.0)
    natural = max((sum(g[1] for g in line) for line in lines), default=0.0)
    return least, natural


def column_widths(rows: list[list[list[list[Glyph]]]], n_header: int, available: float,
                  hyphenate: bool = False) -> list[float] | None:
    """Each column's width in em (padding left out) for a table of ``rows`` of
    cells (``cell_lines``; the first ``n_header`` rows its header) within
    ``available`` em, as a browser lays out a table: each column at least its
    longest unbreakable piece; if the natural widths fit, those; else the room
    left shared in proportion to what each column lacks.  A header may take
    HEADER_LINES lines.  None: the pieces alone do not fit."""
    ncols = max(len(row) for row in rows)
    least, most = [0.0] * ncols, [0.0] * ncols
    for r, row in enumerate(rows):
        for c, lines in enumerate(row):
            narrow, natural = cell_size(lines, hyphenate)
            least[c] = max(least[c], narrow)
            most[c] = max(most[c], natural / HEADER_LINES if r < n_header else natural)
    most = [max(m, s) for m, s in zip(most, least)]
    if sum(least) > available:
        return None
    if sum(most) <= available:
        return most
    lack = sum(m - s for m, s in zip(most, least))
    spare = available - sum(least)
    return [s + spare * (m - s) / lack for m, s in zip(most, least)]


PAGE_LINES = 40  # a table estimated taller than this many lines is a longtable (a page holds ~54)


def table_lines(rows: list[list[list[list[Glyph]]]], widths: list[float]) -> int:
    """Roughly how many lines a table takes with these column widths: each row as
    tall as its tallest cell, each paragraph of a cell wrapped to its column."""
    total = 0
    for row in rows:
        total += max(sum(max(1, math.ceil(sum(g[1] for g in line) / max(width, 1e-9)))
                         for line in lines) for lines, width in zip(row, widths))
    return total


def table_spec(widths: list[float], aligns: list[str], scale: float = 1.0,
               padding: float = COLUMN_PADDING_EM) -> str:
    """A tabularcolumns spec: each column a fraction of the line (Sphinx's \\Y),
    ragged-right, or ragged-left where ``aligns`` says "right"."""
    out = []
    for width, align in zip(widths, aligns):
        # rounded down: the shares never add up to more than the line
        share = math.floor(1e4 * (width * scale + padding) / TEXT_WIDTH_EM) / 1e4
        ragged = {"right": r"\raggedleft", "center": r"\centering"}.get(align, r"\raggedright")
        out.append(rf">{{{ragged}\arraybackslash}}\Y{{{share:.4f}}}")
    return "".join(out)


def _table_rows(table: nodes.table) -> tuple[list[list[nodes.Element]], int] | None:
    """The cells of a simple table (no merged cells), row by row, and the number of
    header rows; None for a table this layout does not handle."""
    groups = list(table.findall(nodes.tgroup))
    if len(groups) != 1 or any(True for _ in table.findall(nodes.literal_block)):
        return None
    rows, n_header = [], 0
    for part in groups[0].children:
        if isinstance(part, (nodes.thead, nodes.tbody)):
            for row in part.children:
                cells = [entry for entry in row.children if isinstance(entry, nodes.entry)]
                if any(e.get("morecols") or e.get("morerows") for e in cells):
                    return None
                rows.append(cells)
                n_header += isinstance(part, nodes.thead)
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return rows, n_header


def _alignment(entries: list[nodes.Element]) -> str:
    classes = {cls for entry in entries for cls in entry.get("classes", [])}
    for align in ("right", "center"):
        if f"text-{align}" in classes:
            return align
    return "left"


def _breakable_underscores(entry: nodes.Element) -> None:
    """Let LaTeX break an identifier after each underscore (analytic_sigma) and a
    pair after its slash (coinpress/hybrid): TeX breaks after neither."""
    for text in list(entry.findall(nodes.Text)):
        parent = text.parent
        if isinstance(parent, (nodes.math, nodes.literal, nodes.raw)) or not {"_", "/"} & set(text):
            continue
        pieces = re.split(r"(?<=[_/])(?=\w)", str(text))
        if len(pieces) == 1:
            continue
        new = []
        for k, piece in enumerate(pieces):
            if k:
                new.append(nodes.raw("", r"\allowbreak{}", format="latex"))
            new.append(nodes.Text(piece))
        at = parent.index(text)
        parent.remove(text)
        for offset, node in enumerate(new):
            parent.insert(at + offset, node)


class PdfTableWidths(SphinxPostTransform):
    """Column widths from the content of each table (see the module's docstring)."""

    builders = ("latex",)
    default_priority = 200

    def run(self, **kwargs) -> None:
        for table in list(self.document.findall(nodes.table)):
            parent = table.parent
            if parent is None or "colwidths-given" in table.get("classes", []):
                continue
            at = parent.index(table)
            if at and isinstance(parent[at - 1], addnodes.tabular_col_spec):
                continue  # widths of its own ({tabularcolumns})
            if any(True for _ in table.findall(nodes.table, include_self=False)):
                continue
            found = _table_rows(table)
            if found is None:
                continue
            rows, n_header = found
            cells = [[cell_lines(entry, r < n_header) for entry in row] for r, row in enumerate(rows)]
            ncols = len(rows[0])
            # the text size; else long words hyphenated; else smaller sizes (TABLE_SIZES)
            widths = None
            for size, scale, tabcolsep in TABLE_SIZES:
                padding = 2 * tabcolsep / 10  # in em of 10 pt
                available = TEXT_WIDTH_EM - ncols * padding
                for hyphenate in (False, True):
                    widths = column_widths(cells, n_header, available / scale, hyphenate)
                    if widths is not None:
                        break
                if widths is not None:
                    break
            if widths is None:  # left to tabulary; the PDF's layout check names it
                logger.info("pdf_structure: a table's words do not fit the line even in %s "
                            "(%d columns)", size, ncols, location=table)
                continue
            aligns = [_alignment([row[c] for row in rows[n_header:]] or [rows[0][c]])
                      for c in range(ncols)]
            for row in rows:
                for entry in row:
                    _breakable_underscores(entry)
            if table_lines(cells, widths) > PAGE_LINES and "longtable" not in table["classes"]:
                table["classes"].append("longtable")  # too tall for one page: it breaks across pages
            parent.insert(at, addnodes.tabular_col_spec(spec=table_spec(widths, aligns, scale, padding)))
            if size:
                parent.insert(at, _raw(r"\begingroup" + size + rf"\setlength{{\tabcolsep}}{{{tabcolsep}pt}}"))
                parent.insert(parent.index(table) + 1, _raw(r"\endgroup"))


def _contents_name(app, config) -> None:
    elements = dict(config.latex_elements)
    preamble = elements.get("preamble", "")
    if CONTENTS_NAME not in preamble:
        elements["preamble"] = preamble + "\n" + CONTENTS_NAME + "\n"
    config.latex_elements = elements


def setup(app):
    app.add_post_transform(PdfStructure)
    app.add_post_transform(PdfHiddenCells)
    app.add_post_transform(PdfLongOutputs)
    app.add_post_transform(PdfWideVerbatim)
    app.add_post_transform(PdfTableWidths)
    app.connect("config-inited", _contents_name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
