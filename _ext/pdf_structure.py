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
"""

from __future__ import annotations

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
    app.connect("config-inited", _contents_name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
