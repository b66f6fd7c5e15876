"""The PDF has the site's structure, and both number alike (issue #18).

``_ext/pdf_structure.py`` shapes the LaTeX document; ``_toc.yml`` numbers the
chapters.  Checked here, against ``_toc.yml``:

* the LaTeX source (Sphinx's ``latex`` builder: no LaTeX installation needed,
  about 20 s; built once per run, tests/conftest.py): an unnumbered preface, each part a ``\\part`` in order, the
  chapters in order numbered 1..N through the parts, the back matter last
  and unnumbered;
* the numbers the site shows (Sphinx's environment, which the HTML builder
  reads them from): every figure, table, equation and sphinx-proof statement
  of a chapter is numbered "<chapter>.<k>", <chapter> the chapter's position
  in ``_toc.yml``, and nothing outside the chapters is numbered;
* when LaTeX is installed (``scripts/pdf_tools.py needs``; CI has none), the
  same source is compiled: the PDF passes ``make pdf``'s checks, its table of
  contents (``.toc``) is the expected outline, and every figure, table and
  equation has in the PDF (``.aux``) the number it has on the site.

The comparisons are plain functions, tested on wrong structures too.
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import pytest
import yaml


ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PREFACE = "Preface"
# Sphinx's own indices, after the book's last document (latex_domain_indices).
INDICES = ("Proof Index", "Python Module Index", "Index")
pytestmark = pytest.mark.book  # run once in CI (tests/conftest.py)
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]


# -- what _toc.yml asks for ------------------------------------------------------------

def toc_parts(toc: dict) -> list[tuple[str, bool, list[str]]]:
    """(caption, numbered, documents) of each part, ``defaults`` applied."""
    default = bool(toc.get("defaults", {}).get("numbered", False))
    return [(part["caption"], bool(part.get("numbered", default)),
             [entry["file"] for entry in part["chapters"]])
            for part in toc["parts"]]


def expected_outline(parts: list[tuple[str, bool, list[str]]]) -> list[tuple]:
    """("chapter", number or None, document) and ("part", number or None, caption)
    in reading order; the preface is the document None."""
    outline = [("chapter", None, None)]
    n_part = n_chapter = 0
    for caption, numbered, docs in parts:
        if numbered:
            n_part += 1
        outline.append(("part", ROMAN[n_part - 1] if numbered else None, caption))
        for doc in docs:
            if numbered:
                n_chapter += 1
            outline.append(("chapter", n_chapter if numbered else None, doc))
    return outline


def chapter_numbers(parts) -> dict[str, int]:
    return {doc: n for kind, n, doc in expected_outline(parts) if kind == "chapter" and n}


def outline_problems(parts) -> list[str]:
    """What in the parts of _toc.yml itself would break the PDF's structure."""
    problems = []
    flags = [numbered for _, numbered, _ in parts]
    if True not in flags:
        problems.append("no part is numbered (numbered: true in _toc.yml)")
    if True in flags:
        first, last = flags.index(True), len(flags) - flags[::-1].index(True)
        if False in flags[first:last]:
            problems.append("an unnumbered part between numbered ones: front matter comes first, "
                            "the back matter last")
    if flags and flags[-1]:
        problems.append("the last part is numbered: there is no back matter")
    return problems


# -- what the LaTeX source says ----------------------------------------------------------

_EVENT = re.compile(
    r"\\setcounter\{secnumdepth\}\{(?P<depth>-?\d+|\\egmSavedSecnumdepth)\}"
    r"|\\edef\\egmSavedSecnumdepth"
    r"|\\(?P<kind>part|chapter)\{(?P<title>(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"
    r"(?:\s*\\label\{\\detokenize\{[^}]*\}\})*")
_DOC_LABEL = re.compile(r"\\label\{\\detokenize\{([^}:]+)::doc\}\}")


def tex_outline(tex: str) -> tuple[list[tuple], dict[str, str]]:
    """The document's \\part and \\chapter sequence as LaTeX numbers it (following
    \\setcounter{secnumdepth}), and each document's chapter title."""
    preamble, _, body = tex.partition(r"\begin{document}")
    found = re.findall(r"\\setcounter\{secnumdepth\}\{(-?\d+)\}", preamble)
    depth = int(found[-1]) if found else 2  # the report class's default
    saved, n_part, n_chapter = depth, 0, 0
    outline, titles = [], {}
    for match in _EVENT.finditer(body):
        if match.group(0).startswith(r"\edef"):
            saved = depth
        elif match.group("depth") is not None:
            value = match.group("depth")
            depth = saved if value == r"\egmSavedSecnumdepth" else int(value)
        elif match.group("kind") == "part":
            if depth >= -1:
                n_part += 1
            outline.append(("part", ROMAN[n_part - 1] if depth >= -1 else None, match.group("title")))
        else:
            numbered = depth >= 0
            if numbered:
                n_chapter += 1
            labels = _DOC_LABEL.findall(match.group(0))
            doc = labels[0] if labels else None
            if doc is not None:
                titles[doc] = match.group("title")
            elif match.group("title") != PREFACE:
                doc = "?" + match.group("title")  # a heading that is no document's title
            outline.append(("chapter", n_chapter if numbered else None, doc))
    return outline, titles


def toc_file_outline(toc: str) -> list[tuple]:
    """(kind, number or None, title) of each part and chapter line of LaTeX's .toc."""
    out = []
    for kind, entry in re.findall(r"\\contentsline \{(part|chapter)\}\{(.*)\}\{[^{}]*\}\{[^{}]*\}%", toc):
        number = None
        if kind == "part":
            roman = re.match(r"([IVX]+)\\hspace \{1em\}", entry)
            if roman:
                number, entry = roman.group(1), entry[roman.end():]
        else:
            numberline = re.match(r"\\numberline \{(\d+)\}", entry)
            if numberline:
                number, entry = int(numberline.group(1)), entry[numberline.end():]
        out.append((kind, number, entry))
    return out


def _squash(latex: str) -> str:
    return re.sub(r"\\protect\s*|\s+", "", latex)


def compare(expected: list[tuple], actual: list[tuple]) -> list[str]:
    problems = []
    for i in range(max(len(expected), len(actual))):
        want = expected[i] if i < len(expected) else None
        got = actual[i] if i < len(actual) else None
        if want != got:
            problems.append(f"entry {i + 1}: expected {want}, found {got}")
    return problems


# -- the builds (latex_build and compiled_pdf: tests/conftest.py, once per run) ----------

@pytest.fixture(scope="module")
def parts() -> list[tuple[str, bool, list[str]]]:
    return toc_parts(yaml.safe_load((ROOT / "_toc.yml").read_text()))


@pytest.fixture(scope="module")
def tex(latex_build: Path) -> str:
    return (latex_build / "latex" / "egm-book.tex").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def environment(latex_build: Path):
    with open(latex_build / ".doctrees" / "environment.pickle", "rb") as f:
        return pickle.load(f)


# -- the tests -------------------------------------------------------------------------------

def test_toc_has_a_back_matter_last(parts):
    assert outline_problems(parts) == []
    back = [doc for _, numbered, docs in parts if not numbered for doc in docs]
    assert back[-1] == "bibliography", "the bibliography is the book's last document"


def test_latex_source_has_the_sites_structure(parts, tex):
    outline, _ = tex_outline(tex)
    assert compare(expected_outline(parts), outline) == []
    assert re.search(r"\\chapter\{" + PREFACE + r"\}", tex)


def test_latex_numbers_figures_and_equations_within_chapters(tex):
    options = re.search(r"\\usepackage\[([^]]*)\]\{sphinx\}", tex).group(1).split(",")
    assert "numfigreset=1" in options and "mathnumfig" in options


def test_site_numbers_within_chapters(parts, environment):
    """Every number of a chapter is <chapter>.<k>, k = 1, 2, ... per kind; nothing
    outside the numbered chapters has a number."""
    numbers = chapter_numbers(parts)
    every_doc = [doc for _, _, docs in parts for doc in docs] + [yaml.safe_load(
        (ROOT / "_toc.yml").read_text())["root"]]
    seen = 0
    for doc in every_doc:
        fignumbers = environment.toc_fignumbers.get(doc, {})
        if doc not in numbers:
            assert not any(fignumbers.values()), f"{doc} is not a numbered chapter but numbers {fignumbers}"
            assert not environment.toc_secnumbers.get(doc, {}).get("")
            continue
        chapter = numbers[doc]
        assert environment.toc_secnumbers[doc][""] == (chapter,), doc
        for kind, labels in fignumbers.items():
            assert all(len(n) == 2 and n[0] == chapter for n in labels.values()), (doc, kind, labels)
            assert sorted(n[1] for n in labels.values()) == list(range(1, len(labels) + 1)), (doc, kind)
            seen += len(labels)
    assert seen > 50
    # the first definition of the first chapter
    first = next(docs[0] for _, numbered, docs in parts if numbered)  # the first chapter (front matter first)
    assert environment.toc_fignumbers[first]["definition"]["def-neighbours"] == (numbers[first], 1)


def test_proof_statements_carry_the_site_numbers_into_the_latex(parts, tex, environment):
    """sphinx-proof writes its numbers as text: the LaTeX shows the site's."""
    numbers = chapter_numbers(parts)
    first = next(docs[0] for _, numbered, docs in parts if numbered)
    assert numbers[first] == 1
    chapter = tex.split(r"\label{\detokenize{" + first + "::doc}}")[1]
    assert r"\sphinxcrossref{Definition 1.1}" in chapter or "Definition 1.1 " in chapter


def test_pdf_toc_has_the_sites_structure(parts, tex, compiled_pdf):
    _, titles = tex_outline(tex)
    expected = [(kind, n, PREFACE if doc is None else (titles.get(doc, doc) if kind == "chapter" else doc))
                for kind, n, doc in expected_outline(parts)]
    # pdflatex copies the UTF-8 of a title (the study’s: a typographic apostrophe) into .toc
    actual = toc_file_outline((compiled_pdf / "egm-book.toc").read_text(encoding="utf-8", errors="replace"))
    while actual and actual[-1][0] == "chapter" and actual[-1][1] is None and actual[-1][2] in INDICES:
        actual.pop()
    squash = [(k, n, _squash(t)) for k, n, t in expected]
    assert compare(squash, [(k, n, _squash(t)) for k, n, t in actual]) == []


def test_pdf_numbers_what_the_site_numbers(environment, compiled_pdf):
    """Each figure, table and equation: the number in the PDF's .aux is the site's."""
    aux = (compiled_pdf / "egm-book.aux").read_text(encoding="utf-8", errors="replace")
    pdf = {key.lower(): number for key, number in re.findall(r"\\newlabel\{(.+?)\}\{\{([^{}]*)\}", aux)}
    checked, wrong = 0, []
    for doc, kinds in environment.toc_fignumbers.items():
        for kind, labels in kinds.items():
            for label, number in labels.items():
                if kind == "displaymath":
                    key = f"equation:{doc}:{label.removeprefix('equation-')}"
                elif kind in ("figure", "table", "code-block"):
                    key = f"{doc}:{label}"
                else:
                    continue  # sphinx-proof: written as text from the same numbers
                checked += 1
                site = ".".join(map(str, number))
                if pdf.get(key.lower()) != site:
                    wrong.append(f"{key}: site {site}, PDF {pdf.get(key.lower())}")
    assert checked > 30
    assert wrong == []


# -- the comparisons fail on wrong structures -----------------------------------------------

PARTS = [("Foundations", True, ["a", "b"]), ("Data", True, ["c"]), ("Back matter", False, ["z"])]


def _tex(body: str) -> str:
    return "\\documentclass{sphinxmanual}\n\\begin{document}\n" + body


def _chapter(doc: str) -> str:
    return "\\chapter{Title of " + doc + "}\n\\label{\\detokenize{" + doc + ":x}}\\label{\\detokenize{" \
        + doc + "::doc}}\n"


GOOD = _tex("\\edef\\egmSavedSecnumdepth{\\the\\value{secnumdepth}}\n\\setcounter{secnumdepth}{-1}\n"
            "\\chapter{Preface}\n\\section{How to cite}\n"
            "\\setcounter{secnumdepth}{\\egmSavedSecnumdepth}\n\\part{Foundations}\n" + _chapter("a")
            + _chapter("b") + "\\setcounter{secnumdepth}{\\egmSavedSecnumdepth}\n\\part{Data}\n"
            + _chapter("c") + "\\setcounter{secnumdepth}{-2}\n\\part{Back matter}\n" + _chapter("z"))


def test_the_comparison_passes_the_right_structure():
    outline, titles = tex_outline(GOOD)
    assert compare(expected_outline(PARTS), outline) == []
    assert titles["c"] == "Title of c"
    assert expected_outline(PARTS)[-1] == ("chapter", None, "z")


@pytest.mark.parametrize("wrong", [
    # the structure before issue 18: the landing page's headings as chapters, the
    # chapters as sections of "Map of the book", no parts
    _tex("\\chapter{What the book finds}\n\\chapter{Map of the book}\n\\section{Title of a}\n"
         "\\label{\\detokenize{a::doc}}\n\\section{Title of b}\n\\label{\\detokenize{b::doc}}\n"),
    GOOD.replace("\\part{Data}", ""),                                   # a part lost
    GOOD.replace("\\part{Foundations}", "\\part{Data}", 1),               # parts out of order
    GOOD.replace(_chapter("a") + _chapter("b"), _chapter("b") + _chapter("a")),  # chapters out of order
    GOOD.replace("\\setcounter{secnumdepth}{-1}\n", ""),                 # a numbered preface
    GOOD.replace("\\setcounter{secnumdepth}{-2}", "\\setcounter{secnumdepth}{\\egmSavedSecnumdepth}"),
    GOOD.replace("\\chapter{Preface}\n\\section{How to cite}", "\\chapter{Preface}\n\\chapter{How to cite}"),
])
def test_the_comparison_fails_a_wrong_structure(wrong):
    outline, _ = tex_outline(wrong)
    assert compare(expected_outline(PARTS), outline) != []


def test_the_toc_check_fails_a_back_matter_before_the_end():
    assert outline_problems([PARTS[0], PARTS[2], PARTS[1]]) != []
    assert outline_problems(PARTS[:2]) != []
    assert outline_problems([(c, False, d) for c, _, d in PARTS]) != []


def test_the_toc_check_accepts_front_matter_first():
    front = ("Start here", False, ["q"])
    assert outline_problems([front, *PARTS]) == []
    assert outline_problems([PARTS[0], front, *PARTS[1:]]) != []
    # the front matter takes no number: the chapters after it keep 1..N
    assert chapter_numbers([front, *PARTS]) == chapter_numbers(PARTS)


GOOD_TOC = r"""\babel@toc {english}{}\relax
\contentsline {chapter}{Preface}{1}{chapter*.3}%
\contentsline {section}{How to cite}{2}{section*.7}%
\contentsline {part}{I\hspace {1em}Foundations}{3}{part.1}%
\contentsline {chapter}{\numberline {1}Title of a}{5}{chapter.1}%
\contentsline {section}{\numberline {1.1}Datasets}{6}{section.1.1}%
\contentsline {chapter}{\numberline {2}Title of b}{15}{chapter.2}%
\contentsline {part}{II\hspace {1em}Data}{39}{part.2}%
\contentsline {chapter}{\numberline {3}Title of c}{41}{chapter.3}%
\contentsline {part}{Back matter}{181}{section*.50}%
\contentsline {chapter}{Title of z}{183}{chapter*.51}%
"""


def test_the_toc_file_comparison():
    titles = {doc: f"Title of {doc}" for doc in "abcz"}
    expected = [(k, n, PREFACE if d is None else (titles[d] if k == "chapter" else d))
                for k, n, d in expected_outline(PARTS)]
    assert compare(expected, toc_file_outline(GOOD_TOC)) == []
    numbered_back = GOOD_TOC.replace("{Title of z}", "{\\numberline {4}Title of z}")
    assert compare(expected, toc_file_outline(numbered_back)) != []
    as_sections = GOOD_TOC.replace("{chapter}{\\numberline {2}", "{section}{\\numberline {1.2}")
    assert compare(expected, toc_file_outline(as_sections)) != []


# -- nothing sticks out of the text block (issue 26, the PDF review) -----------------------

BAD_LOG = """\
Overfull \\hbox (9.69247pt too wide) in paragraph at lines 19228--19228
[]\\T1/qtm/m/n/10 hy-phen-ated
Overfull \\hbox (0.889pt too wide) in paragraph at lines 18943--18943

LaTeX Warning: Float too large for page by 48.18pt on input line 5946.

Overfull \\vbox (23.92827pt too high) detected at line 12162
 []

Overfull \\vbox (1.5669pt too high) detected at line 2452
"""


def test_layout_problems_found_in_a_log():
    problems = pdf_tools().layout_problems(BAD_LOG)
    assert len(problems) == 3  # the 0.9 pt line and the 1.6 pt page are within the tolerances
    assert pdf_tools().OVERFULL_VBOX_PT == 6.0  # half a line
    assert problems[0].startswith("overfull line, 9.7 pt too wide, in paragraph at lines 19228")
    assert problems[1] == "overfull page, 23.9 pt too high, detected at line 12162"
    assert problems[2] == "float too large for the page by 48.18 pt (input line 5946)"
    assert pdf_tools().layout_problems("Overfull \\vbox (2pt too high) has occurred\n") == []
    assert pdf_tools().layout_problems("Overfull \\vbox (6.5pt too high) has occurred while "
                                       "\\output is active\n") != []


def test_pdf_nothing_sticks_out_of_the_text_block(compiled_pdf):
    """No line more than 1 pt too wide (the notation table's narrow columns were 9.7 pt),
    no page more than 6 pt (half a line) too high (a box 23.9 pt into the footer, issue 33),
    no figure taller than the page (captions printed over the footer)."""
    log = (compiled_pdf / "egm-book.log").read_text(encoding="latin-1")
    assert pdf_tools().layout_problems(log) == []


def test_the_box_stress_tool_finds_a_box_too_tall_for_its_needspace():
    """scripts/pdf_tools.py boxes (a review tool): each \\needspace of a box goes to the
    foot of a page of its own; a box then more than 6 pt too high is named."""
    tex = "a\\needspace{8\\baselineskip}\n\\begin{box}\nb\\needspace{9\\baselineskip}\n"
    stressed, count = pdf_tools().stress_tex(tex)
    assert count == 2 and stressed.count("\\clearpage") == 2
    assert "\\textheight-8\\baselineskip" in stressed and "\\typeout{EGMBOX 2 9}" in stressed
    log = ("EGMBOX 1 8\nOverfull \\vbox (10.48749pt too high) detected at line 14740\n"
           "EGMBOX 2 9\nOverfull \\vbox (3.2pt too high) detected at line 15000\n")
    assert pdf_tools().stress_problems(log) == ["box 1 (needspace 8 lines): 10.5 pt too high"]


def pdf_tools():
    from book_builds import pdf_tools as tools

    return tools()


def opens_chapters_on_any_page(tex: str) -> bool:
    """Whether the document class lets a chapter open on the next page (openany);
    Sphinx's manual class opens it on a right-hand page, leaving blank pages."""
    options = re.search(r"\\documentclass\[([^\]]*)\]\{sphinxmanual\}", tex)
    return bool(options) and "openany" in options.group(1).split(",")


def test_the_openany_check():
    assert not opens_chapters_on_any_page(r"\documentclass[letterpaper,10pt,english]{sphinxmanual}")
    assert opens_chapters_on_any_page(r"\documentclass[letterpaper,10pt,english,openany]{sphinxmanual}")


def test_chapters_open_on_any_page(tex):
    """No blank page before a chapter (issue 26: openright left 24 of them)."""
    assert opens_chapters_on_any_page(tex)


# -- tables take their column widths from their content (issue 33: "dp-accountin") ----------

def _pdf_structure():
    sys.path.insert(0, str(ROOT / "_ext"))
    import pdf_structure

    return pdf_structure


LIBRARY_TABLE = [  # the head of gaussian_mechanism's comparison of libraries
    ["Task", "Library", "Method", "Largest relative error against exact (lower is better)",
     "Unsafe answers, of 16 (0 is required)", "Time per call ÷ egmlib's (lower is better)"],
    ["calibration (sigma)", "dp-accounting", "get_sigma_gaussian (exact, tol 10⁻¹²)", "2.0 × 10⁻¹³",
     "10", "27"],
    ["zCDP conversion (epsilon)", "OpenDP", "make_zCDP_to_approxDP", "4.7 × 10⁻¹⁶", "0", "100"],
]


def _cells(rows, n_header=1):
    ps = _pdf_structure()
    return [[[ps.glyphs(text, "text", r < n_header)] for text in row] for r, row in enumerate(rows)]


def test_table_columns_hold_their_longest_words():
    """Each column is at least as wide as its longest unbreakable piece ("accounting"
    after the hyphen, "approxDP" after an underscore), and the table fills the line."""
    ps = _pdf_structure()
    available = ps.TEXT_WIDTH_EM - 6 * ps.COLUMN_PADDING_EM
    widths = ps.column_widths(_cells(LIBRARY_TABLE), 1, available)
    assert widths is not None and abs(sum(widths) - available) < 1e-9
    assert widths[1] >= ps.text_width("accounting") > ps.text_width("OpenDP")
    assert widths[2] >= ps.text_width("approxDP")
    assert widths[2] > widths[4]  # the long method names get more room than "0" and "10"
    # the pieces: a break after the hyphen and the underscores, none inside a formula
    assert len(ps.piece_widths(ps.glyphs("make_zCDP_to_approxDP"))) == 4
    assert len(ps.piece_widths(ps.glyphs(r"\sqrt{2 \ln n} + x", "math"))) == 1
    assert ps.math_text(r"\sqrt{2\ln n}") == "xx2lnn"


def test_a_narrow_table_keeps_its_natural_widths():
    ps = _pdf_structure()
    rows = [["n", "error"], ["1,000", "0.25"], ["10,000", "0.031"]]
    widths = ps.column_widths(_cells(rows), 1, 40.0)
    assert widths == [ps.text_width("10,000"), ps.text_width("0.031")]


def test_a_table_whose_words_cannot_fit_is_refused():
    ps = _pdf_structure()
    rows = [["a"] * 12, ["incomprehensibilities"] * 12]
    assert ps.column_widths(_cells(rows), 1, 40.0) is None
    # hyphenated, the long words take about two thirds of their width
    assert ps.column_widths(_cells(rows), 1, 200.0, hyphenate=True) is not None
    assert ps.cell_size([ps.glyphs("incomprehensibilities")], hyphenate=True)[0] < \
        0.7 * ps.text_width("incomprehensibilities")


def _docutils_table(rows, align=None):
    from docutils import nodes

    table = nodes.table()
    group = nodes.tgroup(cols=len(rows[0]))
    table += group
    for _ in rows[0]:
        group += nodes.colspec(colwidth=1)
    for part, part_rows in ((nodes.thead(), rows[:1]), (nodes.tbody(), rows[1:])):
        group += part
        for cells in part_rows:
            row = nodes.row()
            part += row
            for k, text in enumerate(cells):
                entry = nodes.entry(classes=[f"text-{align[k]}"] if align else [])
                entry += nodes.paragraph(text, text)
                row += entry
    return table


def test_the_table_transform_sets_widths_from_the_content():
    from docutils import nodes
    from docutils.utils import new_document
    from sphinx import addnodes

    ps = _pdf_structure()
    document = new_document("test")
    document += _docutils_table(LIBRARY_TABLE, ["left", "left", "left", "right", "right", "right"])
    given = _docutils_table([["a", "b"], ["1", "2"]])
    document += addnodes.tabular_col_spec(spec="ll")
    document += given
    ps.PdfTableWidths(document).run()
    specs = [n["spec"] for n in document.children if isinstance(n, addnodes.tabular_col_spec)]
    assert len(specs) == 2 and specs[1] == "ll"  # a table with widths of its own keeps them
    shares = [float(x) for x in re.findall(r"\\Y\{([\d.]+)\}", specs[0])]
    assert len(shares) == 6 and 0.99 < sum(shares) <= 1.0
    assert specs[0].count(r"\raggedleft") == 3 and specs[0].count(r"\raggedright") == 3
    breaks = [n for n in document.findall(nodes.raw) if n.astext() == r"\allowbreak{}"]
    assert len(breaks) == 2 + 3  # get_sigma_gaussian, make_zCDP_to_approxDP
    text = "".join(str(t) for t in document.children[1].findall(nodes.Text)
                   if not isinstance(t.parent, nodes.raw))
    assert "make_zCDP_to_approxDP" in text  # the text itself is unchanged


def test_a_wide_table_is_set_smaller_not_past_the_margin():
    """13 columns of numbers (state_of_the_art's contest) fit only in a smaller size
    with narrower gaps: the transform sets them so (and leaves a table that fits at
    the text size alone)."""
    from docutils import nodes
    from docutils.utils import new_document
    from sphinx import addnodes

    ps = _pdf_structure()
    header = ["cell (ε, R, d, α, n)", "best", "plain", "alg3", "coinpress", "hybrid", "hybrid_opt",
              "hly", "plan", "plan_noscale", "verdict (gap)", "ratio at 2 s.e. (top two)",
              "ratio at 2 s.e. (coinpress/hybrid)"]
    body = ["(1, 1000, 10, 1, 1000)", "hybrid_opt: 4.36 × 10⁻⁴ ± 9.9 × 10⁻⁶", "136,000", "137,000",
            "2.13", "1.18", "1.00", "21,000", "4.49 × 10⁸", "4.03 × 10⁶", "simulation only (4.1 s.e.)",
            "1.06", "2,460"]
    assert ps.column_widths(_cells([header, body]), 1, ps.TEXT_WIDTH_EM - 13 * ps.COLUMN_PADDING_EM,
                            hyphenate=True) is None
    document = new_document("test")
    document += _docutils_table([header, body])
    document += _docutils_table([["n", "error"], ["1,000", "0.25"]])
    ps.PdfTableWidths(document).run()
    raw = [n.astext() for n in document.children if n.tagname == "raw"]
    assert len(raw) == 2
    assert raw[0].strip().startswith((r"\begingroup\footnotesize", r"\begingroup\scriptsize"))
    assert raw[1].strip() == r"\endgroup"
    specs = [n["spec"] for n in document.children if isinstance(n, addnodes.tabular_col_spec)]
    assert len(specs) == 2
    assert sum(float(x) for x in re.findall(r"\\Y\{([\d.]+)\}", specs[0])) <= 1.0
    # TeX breaks after neither an underscore nor a slash: the transform lets it
    wide = next(document.findall(nodes.table))
    texts = [str(t) for t in wide.findall(nodes.Text) if not isinstance(t.parent, nodes.raw)]
    assert "ratio at 2 s.e. (coinpress/" in texts and "hybrid)" in texts and "hybrid_" in texts
    # the small table: natural widths, far narrower than the line
    assert sum(float(x) for x in re.findall(r"\\Y\{([\d.]+)\}", specs[1])) < 0.3


def test_a_table_taller_than_a_page_breaks_across_pages():
    """A table whose rows wrap to more lines than a page holds becomes a longtable
    (state_of_the_art's contest ran over the footer as one tabulary)."""
    from docutils.utils import new_document

    ps = _pdf_structure()
    long_text = "hybrid_opt: 2.88 × 10⁻⁴ ± 4.1 × 10⁻⁶ " * 3
    rows = [["a", "b"]] + [[long_text, long_text]] * 25
    assert ps.table_lines(_cells(rows), [5.0, 5.0]) > ps.PAGE_LINES
    document = new_document("test")
    document += _docutils_table(rows)
    document += _docutils_table([["n", "error"], ["1,000", "0.25"]])
    ps.PdfTableWidths(document).run()
    tables = list(document.findall(lambda n: n.tagname == "table"))
    assert ["longtable" in t["classes"] for t in tables] == [True, False]
