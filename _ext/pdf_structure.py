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

The PDF prints no code that the site folds (issue #26), and every table and
figure, folded or not (issue 33), ``PdfHiddenCells``:

* the source of a code cell tagged ``hide-input`` or ``hide-cell`` (plotting
  code, folded checks) is left out.  Where the fold's button has a text of its
  own (cell metadata ``mystnb: code_prompt_show: "Check: ..."``) and an output
  follows, that line is printed in its place, in italics, as the output's
  title.  A titled cell that prints nothing (a check made of assertions) leaves
  no line where it stood: a title that introduces nothing reads as debris (issue
  33 counted 90 of them).  Instead each section ends its own text (before its
  first subsection) with one note that counts its such checks, names what each
  checks and says where they are: the notebook and its page of the book's HTML
  version (``unprinted_note``);
* the output of a cell tagged ``hide-output`` or ``hide-cell`` is printed by
  kind: a text printout of at most ``SHORT_OUTPUT`` lines whole, a longer one
  cut to its first ``FIRST_LINES`` lines and a line saying how many more the
  site holds; a table (Markdown, from glue or display) and a figure are printed,
  a table of more than ``LONG_TABLE`` rows (a page) cut to its header and first
  ``FIRST_ROWS`` rows and a note; only an output LaTeX cannot print at all (HTML
  without a text form) becomes a line saying that the site shows it.

A box (sphinx-proof's statements, exercises, admonitions) that opens with a
display (or a short paragraph and a display) gets a ``\\needspace`` as tall as
that opening (``PdfBoxOpenings``): LaTeX may not break between a box's title and
a display, so at a page's foot the two ran into the footer.

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


LONG_OUTPUT = 30   # lines of a shown text output printed whole in the PDF (about half a page)
FIRST_ROWS = 20    # lines of a longer one printed, with a note
LONG_TABLE = 60    # rows of a folded table printed whole (about a page); a longer one: FIRST_ROWS
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


def table_prompt(prompt: str, captioned: bool) -> str:
    """A fold's title over a table that has its own caption, as the PDF prints it:
    "Table: ..." would stand as a second title right above the caption, so only a
    check it names stays ("Table: X; check: Y" -> "Check: Y"; "Table: X" -> "")."""
    if not captioned or not prompt.startswith("Table: "):
        return prompt
    _, sep, check = prompt.partition("; check: ")
    return f"Check: {check}" if sep else ""


def _has_captioned_table(cell: nodes.Element) -> bool:
    """Whether an output of ``cell`` holds a table with a caption."""
    return any(isinstance(table.children[0], nodes.title)
               for child in cell.children if child.get("nb_element") == "cell_code_output"
               for table in child.findall(nodes.table) if table.children)


def _prints_in_latex(node: nodes.Node) -> bool:
    """Whether the LaTeX writer prints anything of ``node``: raw output of another
    format (an HTML-only output) prints nothing."""
    if isinstance(node, nodes.raw):
        return "latex" in node.get("format", "").split()
    if isinstance(node, (nodes.Text, nodes.image, nodes.math, nodes.math_block)):
        return True
    return any(_prints_in_latex(child) for child in node.children)


def cut_long_table(table: nodes.table, page: str) -> nodes.paragraph | None:
    """A table of more than LONG_TABLE body rows cut to its header and first
    FIRST_ROWS rows (in place); returns the note saying so, to go after it, or None
    for a table that stays whole."""
    bodies = list(table.findall(nodes.tbody))
    if len(bodies) != 1:
        return None
    rows = [row for row in bodies[0].children if isinstance(row, nodes.row)]
    if len(rows) <= LONG_TABLE:
        return None
    for row in rows[FIRST_ROWS:]:
        bodies[0].remove(row)
    if "longtable" in table["classes"]:
        table["classes"].remove("longtable")
    return _folded_note(f"The first {FIRST_ROWS} of the {len(rows)} rows of this table; "
                        f"the book's HTML version holds it whole ({page}).")


def _shorten_output(output: nodes.Element, page: str = "the book's HTML version") -> None:
    """A folded output, as the PDF prints it (in place), by kind: a text printout of
    more than SHORT_OUTPUT lines is cut to its first FIRST_LINES lines and a note; a
    table (Markdown from glue or display, a figure's data) and a figure are printed,
    a table of more than LONG_TABLE rows cut to its first FIRST_ROWS and a note; an
    output that LaTeX cannot print at all (HTML only) becomes a note."""
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
        elif not _prints_in_latex(child):
            output.replace(child, _folded_note("This output is shown only on the site "
                                               f"(the book's HTML version, {page})."))
        else:
            for table in list(child.findall(nodes.table)):
                note = cut_long_table(table, page)
                if note is not None:
                    table.parent.insert(table.parent.index(table) + 1, note)


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


def _docnames(document: nodes.document, default: str) -> dict[int, str]:
    """The page (docname) of each code cell of the assembled LaTeX document: the
    builder puts each page's doctree in a start_of_file node (a nested page, later
    in the walk, wins)."""
    page_of = {}
    for part in [document, *document.findall(addnodes.start_of_file)]:
        docname = part.get("docname", default)
        for cell in part.findall(nodes.container):
            if cell.get("nb_element") == "cell_code":
                page_of[id(cell)] = docname
    return page_of


def _heading_section(node: nodes.Node) -> nodes.Element | None:
    """The innermost section with a heading around ``node`` (sphinx-proof's content
    sections have none)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section) and parent.children and isinstance(parent[0], nodes.title):
            return parent
        parent = parent.parent
    return None


def _has_output(cell: nodes.Element) -> bool:
    """Whether the PDF prints an output of ``cell`` (a glue without display has none)."""
    return any(child.get("nb_element") == "cell_code_output" and _prints_in_latex(child)
               for child in cell.children if isinstance(child, nodes.Element))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def unprinted_note(checks: list[str], code: list[str], notebook: str, page: str) -> nodes.paragraph:
    """The one paragraph that stands, at the end of a section's own text, for the
    section's folded cells that print nothing: how many checks, what each checks
    (the fold's text), and where they are."""
    said = []
    if checks:
        said.append(f"{_plural(len(checks), 'executed check')} ({'; '.join(checks)})")
    if code:
        said.append(f"code ({'; '.join(code)})")
    return _folded_note(f"Not printed here: {' and '.join(said)}, in the notebook {notebook} "
                        f"and on its page of the book's HTML version ({page}).")


# "Checked:", "We check these statements:": a paragraph that only introduces a check
_ONLY_INTRODUCES = re.compile(r"^(?:Checked|We check (?:these|the|each|this) \w+(?: \w+)?):$")
# what a colon may introduce in print: a display, a list, a table, code or an output
_INTRODUCED = (nodes.math_block, nodes.bullet_list, nodes.enumerated_list, nodes.table,
               nodes.literal_block, nodes.container, nodes.figure, nodes.definition_list)


def close_introduction(paragraph: nodes.paragraph) -> None:
    """A paragraph that ended with ":" before a cell the PDF leaves out (in place):
    the sentence would break off at the colon ("We read them:" and then "and rerun
    the same experiment ...").  A paragraph that only introduced the check goes; one
    followed by a paragraph that goes on in lower case is joined to it; otherwise the
    colon becomes a full stop.  A colon before a display, a list, a table or a printed
    output stays."""
    parent = paragraph.parent
    if parent is None or not any(child is paragraph for child in parent.children):
        return
    texts = list(paragraph.findall(nodes.Text))
    if not texts or not texts[-1].astext().rstrip().endswith(":"):
        return
    at = parent.index(paragraph)
    after = parent[at + 1] if at + 1 < len(parent) else None
    if isinstance(after, _INTRODUCED):
        return
    if _ONLY_INTRODUCES.match(paragraph.astext().strip()):
        parent.remove(paragraph)
        return
    last = texts[-1]
    if any(isinstance(a, (nodes.literal, nodes.math)) for a in _ancestors(last)):
        return  # a colon inside inline code or maths is not punctuation
    stem = last.astext().rstrip()[:-1]
    first = after[0] if isinstance(after, nodes.paragraph) and len(after) else None
    # a continuation in words ("and rerun ..."), not one that opens with code or maths
    if isinstance(first, nodes.Text) and first.astext()[:1].islower():
        last.parent.replace(last, nodes.Text(stem + " "))
        paragraph.extend(list(after.children))
        parent.remove(after)
    else:
        last.parent.replace(last, nodes.Text(stem + "."))


class PdfHiddenCells(SphinxPostTransform):
    """What the site folds, the PDF leaves out (see the module's docstring).

    A folded source is replaced by its fold's own text ("Check: ...") when an output
    follows it; one that prints nothing leaves no line where it stood (a title that
    introduces nothing), and each section's such cells are named in one note at the
    end of the section's own text (``unprinted_note``)."""

    builders = ("latex",)
    # myst-nb folds cells for HTML at 199 (HideInputCells); before pdf_structure
    default_priority = 199

    def run(self, **kwargs) -> None:
        baseurl = getattr(self.config, "html_baseurl", "") or ""
        page_of = _docnames(self.document, self.env.docname)
        unprinted: dict[int, tuple[nodes.Element, str, list[str], list[str]]] = {}
        introducers: list[nodes.paragraph] = []  # paragraphs that stood before a cell now gone
        for cell in list(self.document.findall(nodes.container)):
            mode = cell.get("hide_mode")
            if cell.get("nb_element") != "cell_code" or not mode:
                continue
            docname = page_of.get(id(cell), self.env.docname)
            page = site_page(docname, baseurl)
            for child in list(cell.children):
                element = child.get("nb_element")
                if element == "cell_code_output" and mode in ("all", "output", "input+output"):
                    _shorten_output(child, page)
            for child in list(cell.children):
                hidden = mode in ("all", "input", "input+output")
                if child.get("nb_element") != "cell_code_source" or not hidden:
                    continue
                prompt = str(cell.get("prompt_show") or "")
                titled = prompt and DEFAULT_PROMPT not in prompt
                if titled and _has_output(cell):
                    shown = table_prompt(pdf_prompt(prompt), _has_captioned_table(cell))
                    if shown:
                        cell.replace(child, _folded_note(shown))
                    else:
                        cell.remove(child)
                    continue
                cell.remove(child)
                if titled:
                    section = _heading_section(cell)
                    key = id(section) if section is not None else id(self.document)
                    entry = unprinted.setdefault(key, (section, docname, [], []))
                    text = pdf_prompt(prompt)
                    if text.startswith("Check: "):
                        entry[2].append(text.removeprefix("Check: "))
                    else:
                        entry[3].append(text.removeprefix("Code: "))
            if not cell.children or not any(_prints_in_latex(c) for c in cell.children):
                before = cell.parent.index(cell) - 1
                if before >= 0 and isinstance(cell.parent[before], nodes.paragraph):
                    introducers.append(cell.parent[before])
                cell.parent.remove(cell)
        # from the last: a paragraph joined to the one before it is closed first
        for paragraph in reversed(introducers):
            close_introduction(paragraph)
        for section, docname, checks, code in unprinted.values():
            if section is None:
                continue  # not expected: a notebook's cells stand under its title
            note = unprinted_note(checks, code, self.env.doc2path(docname, False),
                                  site_page(docname, baseurl))
            # the section's own text ends before its first subsection
            at = next((k for k, child in enumerate(section.children) if isinstance(child, nodes.section)),
                      len(section.children))
            # before the label targets of that subsection: a target must stand right
            # before its section, or LaTeX defines the label twice
            while at > 0 and isinstance(section.children[at - 1], nodes.target):
                at -= 1
            section.insert(at, note)


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


# -- a box that opens with a display keeps its title on the display's page -------------

TITLE_CHARS = 90        # characters of a box's title a line (bold, the text width less the padding)
LINE_CHARS = 110        # characters of a paragraph a line
# Calibrated on the book's boxes, each set at a page's foot with exactly its
# \needspace left (scripts/pdf_tools.py boxes): at 1.5 and 1.5 seven of 18 ran
# 7 to 24 pt into the footer (a display line with limits or a fraction is two
# baselines tall; a box that ends with its display adds its bottom padding).
DISPLAY_LINE = 2.0      # a line of a display (fractions, sums), in baselines
DISPLAY_SKIPS = 1.5     # the space above and below a display, in baselines
BOX_FRAME = 2.5         # the title row's padding and the box's top and bottom, in baselines
SHORT_LEAD = 5          # a paragraph of at most this many lines before a display is part of the opening


def _body_start(box: nodes.Element) -> list[nodes.Node]:
    """The first elements of a box's body: after its title, inside the untitled
    wrappers (sphinx-proof's content section)."""
    children = [c for c in box.children if not isinstance(c, (nodes.title, nodes.target, nodes.comment))]
    while (len(children) >= 1 and isinstance(children[0], (nodes.section, nodes.container, nodes.compound))
           and not (children[0].children and isinstance(children[0][0], nodes.title))
           and children[0].get("nb_element") is None):
        children = [c for c in children[0].children if not isinstance(c, (nodes.target, nodes.comment))]
    return children


def display_lines(latex: str) -> int:
    """The lines of a display: one more than its line breaks (aligned, split)."""
    return latex.count("\\\\") + 1 - len(re.findall(r"\\\\\s*$", latex.strip()))


def opening_lines(box: nodes.Element) -> int | None:
    """How many baselines a box's opening takes that LaTeX cannot break (its title,
    a short paragraph and the display after it: no page break may stand before a
    display), when the box opens with a display; None when it opens with text."""
    title = next((c for c in box.children if isinstance(c, nodes.title)), None)
    title_lines = math.ceil(len(title.astext()) / TITLE_CHARS) if title is not None else 0
    body = _body_start(box)
    lead = 0
    if len(body) >= 2 and isinstance(body[0], nodes.paragraph) and isinstance(body[1], nodes.math_block):
        lead = math.ceil(len(body[0].astext()) / LINE_CHARS)
        if lead > SHORT_LEAD:
            return None
        body = body[1:]
    if not body or not isinstance(body[0], nodes.math_block):
        return None
    height = (title_lines + BOX_FRAME + lead + DISPLAY_LINE * display_lines(body[0].astext())
              + DISPLAY_SKIPS + 1)  # and the line after it
    return math.ceil(height)


class PdfBoxOpenings(SphinxPostTransform):
    """A box (sphinx-proof's statements, exercises, admonitions) that opens with a
    display: LaTeX cannot break between its title and the display, so at the foot
    of a page the two ran into the footer (Proposition 9.2 stood 17.7 pt too high,
    issue 33).  A ``\\needspace`` before the box, as tall as that opening, moves the
    box to the next page when the opening does not fit."""

    builders = ("latex",)
    default_priority = 200

    def run(self, **kwargs) -> None:
        for box in list(self.document.findall(_draws_a_box)):
            parent = box.parent
            if parent is None or any(_draws_a_box(a) or isinstance(a, nodes.table) for a in _ancestors(box)):
                continue  # inside another box or a table the page's height is not known
            lines = opening_lines(box)
            if lines is None:
                continue
            at = parent.index(box)
            # before the index entries and labels that lead to the box: they go with it
            while at and isinstance(parent[at - 1], (addnodes.index, nodes.target)):
                at -= 1
            parent.insert(at, _raw(rf"\needspace{{{lines}\baselineskip}}"))


def _draws_a_box(node: nodes.Node) -> bool:
    """Whether LaTeX draws ``node`` as a box: an admonition, except sphinx-proof's
    proof node (a wrapper that writes nothing; its admonition inside is the box)."""
    return isinstance(node, nodes.Admonition) and type(node).__name__ != "proof_node"


def _ancestors(node: nodes.Node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


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
    app.add_post_transform(PdfBoxOpenings)
    app.connect("config-inited", _contents_name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
