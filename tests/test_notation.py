"""The "Notation and glossary" page (_ext/notation.py, notation/*.yml).

* Every notation/*.yml follows the format of notation/README.md (checked without a
  build, with the extension's own reader).
* Each rule of the format is enforced: unknown keys, missing or empty fields, a file
  named after no page, the same term or symbol twice -> NotationError naming the file
  and the entry; in a build, the same error stops it.
* A tiny Sphinx project with a sample yml renders the symbol table (with links to an
  equation, a section and a sphinx-proof definition) and the glossary, and its LaTeX
  puts the glossary term into the index.
* One meaning per letter in the prose (issue 33 item 5, _ext/letters.py): every single
  Latin or Greek letter in the maths of every page (markdown, fold titles, errata texts)
  is the letter of a notation entry listed for that page (the entry's own page or its
  ``pages``), or declared ``bound`` (a dummy variable) or ``pending`` (a second meaning
  still to be renamed, counted) in that page's notation file.  A planted chapter shows
  that a second meaning or an unregistered letter fails.

  What it cannot see (see _ext/letters.py's docstring): printed (stream) outputs of
  code cells (only Markdown outputs are read), ``\\mathcal``/``\\mathbb`` letters, and
  the sense of a use: a page in an entry's ``pages`` is covered wholesale, and a
  ``bound``/``pending`` letter is accepted everywhere on its page, so a second meaning
  on such a page passes; a green test is a necessary check, not a proof of one
  meaning per letter.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import letters  # noqa: E402
import notation  # noqa: E402

FILES = sorted((ROOT / "notation").glob("*.yml"))


def test_there_is_notation():
    assert FILES, "notation/ has no .yml file"
    assert (ROOT / "notation.md").read_text().count(notation.MARKER) == 1
    assert "notation" in notation.toc_pages(ROOT)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_format(path: Path):
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict) and set(data) <= {"symbols", "terms", "bound", "pending"}, path.name
    for kind, fields in notation.FIELDS.items():
        for item in data.get(kind) or []:
            assert set(fields) <= set(item) <= set(fields) | set(notation.OPTIONAL[kind]), (path.name, item)
            assert all(isinstance(item[f], str) and item[f].strip() for f in fields), (path.name, item)
    for key in notation.LETTER_KEYS:
        for letter, why in (data.get(key) or {}).items():
            assert len(letters._letter(letter)) == 1 and why.strip(), (path.name, key, letter)


def test_all_files_load_together():
    """The reader's own checks, over all files at once (duplicates across chapters)."""
    pages = notation.load(ROOT)
    assert [p.docname for p in pages] == [d for d in notation.toc_pages(ROOT)
                                          if d in {p.docname for p in pages}]
    assert sum(len(p.symbols) + len(p.terms) for p in pages) > 0


# ---------------------------------------------------------------- the rules, one by one

def _project(tmp: Path, files: dict[str, str]) -> Path:
    (tmp / "notation").mkdir(parents=True)
    (tmp / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                  "  - file: chapters/ch\n  - file: notation\n")
    for name, text in files.items():
        (tmp / "notation" / name).write_text(text)
    return tmp


GOOD = ("symbols:\n  - symbol: '\\sigma'\n    meaning: 'a scale'\n    where: ch-eq\n"
        "terms:\n  - term: 'clipping probability'\n    definition: 'the chance $p_C$'\n"
        "    where: ch-def\n")


@pytest.mark.parametrize("files, message", [
    ({"ch.yml": GOOD.replace("where: ch-eq", "where: ch-eq\n    units: none")}, r"unknown key\(s\) units"),
    ({"ch.yml": GOOD.replace("    meaning: 'a scale'\n", "")}, r"'meaning' is missing"),
    ({"ch.yml": GOOD.replace("'a scale'", "''")}, r"'meaning' is missing or empty"),
    ({"ch.yml": GOOD.replace("symbols:", "symbol:")}, r"unknown key\(s\) symbol"),
    ({"ch.yml": "- just a list\n"}, r"must be a mapping"),
    ({"ch.yml": GOOD.replace("'\\sigma'", "'$\\sigma$'")}, r"without dollars"),
    ({"ch.yml": GOOD.replace("where: ch-eq", "where: two labels")}, r"one label"),
    ({"other.yml": GOOD}, r"no page named 'other'"),
    ({"ch.yml": GOOD.replace("symbols:\n", "symbols:\n  - symbol: '\\sigma'\n    meaning: 'again'\n"
                             "    where: ch-eq\n", 1)}, r"duplicate symbol '\\\\sigma'"),
    ({"ch.yml": GOOD, "intro.yml": "terms:\n  - term: 'Clipping  Probability'\n"
                                    "    definition: 'x'\n    where: y\n"}, r"duplicate term"),
    ({"ch.yml": GOOD.replace("where: ch-eq", "where: ch-eq\n    pages: ch")}, r"'pages' must be a list"),
    ({"ch.yml": GOOD + "bound:\n  - t\n"}, r"'bound' must map letters to reasons"),
    ({"ch.yml": GOOD + "pending:\n  t: ''\n"}, r"'pending' must map letters to reasons"),
], ids=["unknown-key", "missing", "empty", "top-key", "not-mapping", "dollars", "label",
        "no-page", "dup-symbol", "dup-term", "pages-not-list", "bound-not-mapping", "pending-empty"])
def test_malformed_files_are_refused(tmp_path: Path, files, message):
    root = _project(tmp_path, files)
    with pytest.raises(notation.NotationError, match=message) as err:
        notation.load(root)
    assert "notation/" in str(err.value) or "duplicate" in str(err.value)


def test_a_symbol_has_one_meaning_book_wide(tmp_path: Path):
    """One meaning per symbol (issue 33 item 5): the same symbol in two chapters'
    files, with two meanings, is refused and both places are named; spaces do not
    make two symbols of one."""
    other = GOOD.split("terms:")[0].replace("'a scale'", "'another meaning'").replace("'\\sigma'", "' \\sigma '")
    root = _project(tmp_path, {"ch.yml": GOOD, "intro.yml": other})
    with pytest.raises(notation.NotationError, match=r"one symbol, two meanings\): in notation/\w+\.yml"):
        notation.load(root)


def test_no_symbol_of_the_book_has_two_meanings():
    """Read directly from the files (not through the reader), so that this holds even if
    the reader's rule were relaxed: each symbol, spaces ignored, is listed once."""
    places: dict[str, list[str]] = {}
    for path in FILES:
        for item in yaml.safe_load(path.read_text()).get("symbols") or []:
            places.setdefault(re.sub(r"\s+", "", item["symbol"]), []).append(path.name)
    twice = {symbol: where for symbol, where in places.items() if len(where) > 1}
    assert twice == {}, f"symbols with two meanings: {twice}"


def test_reading_order_and_rendering(tmp_path: Path):
    root = _project(tmp_path, {"ch.yml": GOOD, "intro.yml": GOOD.replace("\\sigma", "n").replace(
        "clipping probability", "row").replace("ch-", "intro-")})
    pages = notation.load(root)
    assert [p.docname for p in pages] == ["intro", "chapters/ch"]
    text = notation.render(pages)
    assert "| $\\sigma$ | a scale | [](#ch-eq) |" in text
    assert text.index("```{glossary}") > text.index("| $n$ |")
    assert ":sorted:" in text and "\nclipping probability\n  the chance $p_C$" in text


# ---------------------------------------------------------------- a tiny build

CONF = """\
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser", "sphinx_proof", "notation"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
root_doc = "intro"
numfig = True
math_numfig = True
"""

PAGES = {
    "intro.md": "# Landing\n\n```{toctree}\nchapters/ch\nnotation\n```\n",
    "chapters/ch.md": ("# The chapter\n\n(ch-sec)=\n## A section\n\n$$\n\\sigma = 1\n$$ (ch-eq)\n\n"
                       ":::{prf:definition} Clipping\n:label: ch-def\nA row is clipped.\n:::\n\n"
                       "The {term}`clipping probability` is small.\n"),
    "notation.md": f"# Notation and glossary\n\n{notation.MARKER}\n",
}


def _sphinx(tmp: Path, builder: str, files: dict[str, str]) -> subprocess.CompletedProcess:
    root = _project(tmp, files)
    (root / "conf.py").write_text(CONF.format(ext=str(ROOT / "_ext")))
    for name, text in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", builder, "-W", "-n", "--keep-going",
                           "-q", str(root), str(root / "_build" / builder)],
                          capture_output=True, text=True, timeout=300)


def test_tiny_build_renders_table_and_glossary(tmp_path: Path):
    proc = _sphinx(tmp_path, "html", {"ch.yml": GOOD.replace("where: ch-eq", "where: ch-eq\n"
                   "  - symbol: 'C'\n    meaning: 'the radius, $|x| \\le C$'\n    where: ch-sec")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (tmp_path / "_build" / "html" / "notation.html").read_text()
    flat = re.sub(r"\s+", " ", page)
    assert '<dt id="term-clipping-probability">clipping probability' in flat
    assert r"\(p_C\)" in flat  # the definition's math is math
    assert re.search(r'<a class="reference internal" href="chapters/ch.html#ch-def">Definition 1</a>', flat)
    table = flat[flat.index("<table"):flat.index("</table>")]
    assert r"\(\sigma\)" in table and "a scale" in table
    assert 'href="chapters/ch.html#equation-ch-eq">(1)</a>' in table
    assert 'href="chapters/ch.html#ch-sec"' in table and r"\(|x| \le C\)" in table
    assert re.search(r"<h3>The chapter<a class=\"headerlink\"", flat)  # grouped under the chapter's title
    chapter = (tmp_path / "_build" / "html" / "chapters" / "ch.html").read_text()
    assert 'href="../notation.html#term-clipping-probability"' in chapter  # {term} links


def test_tiny_latex_indexes_the_terms(tmp_path: Path):
    """Only the .tex source is read: no LaTeX installation is needed."""
    proc = _sphinx(tmp_path, "latex", {"ch.yml": GOOD})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tex = "".join(p.read_text() for p in (tmp_path / "_build" / "latex").glob("*.tex"))
    assert r"\index{clipping probability@\spxentry{clipping probability}" in tex
    assert r"\sphinxcrossref{Definition 1}" in tex
    # the index entry stands where the term is defined (the chapter's definition),
    # not in the glossary (issue 26: every concept pointed to the glossary page)
    chapter, glossary = tex.split(r"\chapter{Notation and glossary}")
    assert r"\index{clipping probability@" in chapter.split(r"\chapter{The chapter}")[1]
    assert r"\index{clipping probability@" not in glossary
    assert chapter.index(r"\index{clipping probability@") < chapter.index("ch-def}")
    # the table's columns are set (ragged right, fixed widths): no hyphenated narrow column
    assert "\\begin{tabulary}{\\linewidth}[t]{" + notation.TABULAR_COLUMNS in tex


def test_index_entries_move_to_the_definitions():
    """move_index_entries on a small tree; a term whose place is not found stays."""
    from docutils import nodes
    from sphinx import addnodes

    chapter = nodes.section(ids=["ch"])
    chapter += nodes.title("", "Chapter")
    definition = nodes.paragraph("", "A row is clipped.", ids=["ch-def"])
    chapter += definition
    glossary = nodes.section(ids=["g"])
    for name in ("clipping probability", "lost term"):
        term = nodes.term("", name)
        term += addnodes.index(entries=[("single", name, "term-x", "main", None)])
        glossary += nodes.definition_list_item("", term)
    found = {"ch-def": definition}
    left = notation.move_index_entries(
        glossary, {"clipping probability": ("clipping probability", "ch-def"),
                   "lost term": ("lost term", "nowhere")}, found.get)
    assert left == ["lost term"]
    moved = chapter[1]
    assert isinstance(moved, addnodes.index) and moved["entries"][0][1] == "clipping probability"
    kept = [e[1] for index in glossary.findall(addnodes.index) for e in index["entries"]]
    assert kept == ["lost term"]


def test_tiny_build_stops_on_a_malformed_file(tmp_path: Path):
    proc = _sphinx(tmp_path, "html", {"ch.yml": GOOD.replace("where: ch-eq", "where: ch-eq\n    note: x")})
    assert proc.returncode != 0
    assert "Notation and glossary: notation/ch.yml, symbols[0]: unknown key(s) note" in proc.stdout + proc.stderr


# ---------------------------------------------------------------- one meaning per letter, in the prose

# Pages whose letters are not checked (none: state_of_the_art joined when sota landed).
NOT_YET_CHECKED: tuple[str, ...] = ()
# Second meanings still to be renamed, declared as `pending` in notation/*.yml: this
# number may only go down (each rename lowers it).
PENDING_AT_MOST = 33


@functools.cache
def _registry() -> letters.Registry:
    return letters.registry(ROOT)


def test_every_letter_of_the_prose_has_its_one_meaning():
    """Every single letter in the maths of every page (markdown, fold titles, errata
    texts) is a registered letter listed for that page, or declared bound or pending
    there; the message names the letter, the page and the cells."""
    found = letters.check(ROOT, skip=NOT_YET_CHECKED)
    assert found == [], "letters without their one meaning:\n" + "\n".join(found)


def test_pending_second_meanings_only_shrink():
    reg = _registry()
    pending = sorted(f"{page}: {letter} ({why})" for page, items in reg.pending.items()
                     for letter, why in items.items())
    assert len(pending) <= PENDING_AT_MOST, "new second meanings:\n" + "\n".join(pending)
    if len(pending) < PENDING_AT_MOST:
        pytest.fail(f"{len(pending)} pending second meanings: lower PENDING_AT_MOST to {len(pending)}")


def test_a_letter_is_not_both_a_meaning_and_bound_on_one_page():
    reg = _registry()
    both = sorted((page, letter) for kind in (reg.bound, reg.pending) for page, items in kind.items()
                  for letter in items if page in reg.pages.get(letter, set()))
    assert both == [], f"declared bound or pending where the letter's meaning is listed: {both}"


def test_one_plain_entry_per_letter():
    """A letter may head several entries only as decorated symbols (σ_opt, σ_*, ...):
    two entries that are the bare letter (with at most an argument, as F(b)) would be
    two meanings of one letter."""
    plain: dict[str, list[str]] = {}
    for page in notation.load(ROOT):
        for entry in page.symbols:
            for part in re.split(r",\s*", entry.name):
                if re.fullmatch(r"\\?[A-Za-z]+(\(.*\))?", part.strip()):
                    for letter in letters.head_letters(part):
                        plain.setdefault(letter, []).append(entry.source)
    assert {k: v for k, v in plain.items() if len(v) > 1} == {}


def test_the_scanner_reads_letters_not_words():
    assert letters.math_letters(r"\sigma_{\mathrm{opt}} + \mathbb E\lVert x\rVert + \operatorname{Err}_t") == ["σ", "x", "t"]
    assert letters.math_letters(r"\mathcal E_n + \text{for all } k") == ["n", "k"]
    text = ("A $t$ and\n$x +\ny$; `$z$` is code.\n```{math}\n:label: eq-a\n\\beta\n```\n"
            "```python\nq = '$w$'\n```\n:::{prf:lemma} On $\\alpha$\nfor $s$\n:::\n")
    assert sorted(letters.math_letters(f) for f in letters.markdown_formulas(text)) == [["s"], ["t"], ["x", "y"], ["α"], ["β"]]
    assert letters.title_letters("Check: E[Y²] = 2σ⁴ at t = 1, a K-norm, 2 s.e.") == ["σ", "Y", "t"]


def _letters_project(tmp: Path, chapter_md: str, yml: dict[str, str], title: str = "") -> Path:
    (tmp / "notation").mkdir(parents=True)
    (tmp / "chapters").mkdir()
    (tmp / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                  "  - file: chapters/ch\n  - file: chapters/other\n")
    for name, text in yml.items():
        (tmp / "notation" / name).write_text(text)
    for name, md, fold in (("ch", "# Ch\n\nLet $t$ be the deviation, $t > 0$.\n", ""),
                           ("other", chapter_md, title)):
        cells = [{"cell_type": "markdown", "id": "m1", "metadata": {}, "source": md},
                 {"cell_type": "code", "id": "k1", "metadata": {"mystnb": {"code_prompt_show": fold}},
                  "source": "", "outputs": [], "execution_count": None}]
        (tmp / "chapters" / f"{name}.ipynb").write_text(json.dumps({"cells": cells, "metadata": {},
                                                                    "nbformat": 4, "nbformat_minor": 5}))
    return tmp


T_ENTRY = "symbols:\n  - symbol: 't'\n    meaning: 'the deviation'\n    where: ch-t\n"


@pytest.mark.parametrize("chapter, yml, title, message", [
    ("# Other\n\nScale $b$ by $t > 0$.\n", {}, "",
     r"'t' means what notation/ch.yml, symbols\[0\] \(t\) says; other is not among its pages"),
    ("# Other\n\nThe weight $q$.\n", {}, "", r"'q' has no meaning in notation/\*.yml"),
    ("# Other\n\nNothing here.\n", {}, "Check: the noise at t = 1", r"'t' means what .*fold k1"),
    ("# Other\n\nThe $\\beta$ of CoinPress.\n", {}, "", r"'β' has no meaning"),
], ids=["second-meaning", "unregistered", "fold-title", "greek"])
def test_a_planted_second_meaning_fails(tmp_path: Path, chapter, yml, title, message):
    root = _letters_project(tmp_path, chapter, {"ch.yml": T_ENTRY, **yml}, title)
    found = letters.check(root)
    assert any(re.search(message, line) for line in found), found


@pytest.mark.parametrize("chapter, yml", [
    ("# Other\n\nThe same $t$.\n", {"ch.yml": T_ENTRY + "    pages: [other]\n"}),
    ("# Other\n\nA sum over $k$, $\\sum_k t_k$.\n",
     {"ch.yml": T_ENTRY + "    pages: [other]\n", "other.yml": "bound:\n  k: 'a summation index'\n"}),
    ("# Other\n\nThe radius $C_t$.\n",
     {"ch.yml": T_ENTRY + "  - symbol: 'C_t'\n    meaning: 'a radius'\n    where: ch-c\n    pages: [other]\n"}),
    ("# Other\n\nPLAN's $\\beta$.\n", {"ch.yml": T_ENTRY, "other.yml": "pending:\n  '\\beta': 'a second meaning, to rename'\n"}),
], ids=["listed", "bound", "compound", "pending"])
def test_declared_uses_pass(tmp_path: Path, chapter, yml):
    root = _letters_project(tmp_path, chapter, yml)
    assert letters.check(root) == []
