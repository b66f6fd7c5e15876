"""The reader sees the argument, not the bookkeeping, and numbers for people
(issue #26), checked on the built site (``built_site``, tests/conftest.py):

* no cell input on any page, folded or not, calls ``glue(``, ``keep(`` or
  ``glue_number(`` (glue calls live in removed cells), and the errata page shows
  none of its generator's code (``import ast``, ``re.compile``, ...);
* no Python e-notation ("1.15e+07", "4.77e-03") in the prose: paragraphs, list
  items, captions, admonitions, table cells, headings, the fold buttons' texts,
  and what cells print as Markdown (the errata), but not code, printed output
  or mathematics;
* no glued value ({glue:text}, wherever it is pasted) in e-notation;
* no Markdown escape printed in inline code (``data/zipf\\_improvement.csv``: the
  errata's renderer escaped ``_`` inside backticks too, issue 33).

Each check is a plain function of one page's HTML, tested on small pages that
break it (and one that does not), so that none can pass vacuously.  Run as a
script on a built site, this file prints the offenders per page:
``python tests/test_reader_site.py _build/html``.
"""

from __future__ import annotations

import functools
import html.parser
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

# What a chapter calls to glue a value (myst_nb.glue, egmlib.report.glue_number, the
# chapters' local keep helpers) and imports it by.
BOOKKEEPING = re.compile(r"\b(?:glue|keep|glue_number)\(|\bimport\s+glue\b|from\s+myst_nb\s+import")
# The errata page's generator: it reads the chapters' sources and the YAML.
GENERATOR = re.compile(r"\bimport\s+(?:ast|re|yaml)\b|\bre\.compile\(|\bast\.(?:parse|walk)\(|"
                       r"\byaml\.safe_load\(")
# Python's e-notation: 1e+06, 4.77e-03, 1.5E7.
E_NOTATION = re.compile(r"\b\d+(?:\.\d+)?[eE][+-]?\d+\b")
# What is not prose: code, printed output (text, streams, HTML tables of a cell),
# mathematics, API signatures, the page's navigation.
NOT_PROSE = ("pre", "code", "kbd", "samp", "script", "style", "mjx-container", "nav",
             "div.cell_input", "div.output", ".math", ".sig", "a.headerlink",
             "div.bd-sidebar-primary", "div.bd-sidebar-secondary", "header", "footer")


def _soup(html: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def _article(soup):
    return soup.select_one("article.bd-article") or soup.select_one("main") or soup.body or soup


_MJX = re.compile(r"(<mjx-container\b[^>]*>)(.*?)(</mjx-container>)", re.S)
_MJX_TEXT = re.compile(r"<mjx-assistive-mml\b.*?</mjx-assistive-mml>", re.S)


def _slim(html: str) -> str:
    """The part of a page the checks read: its article (cell inputs, glued values
    and prose are all inside it; the sidebars' tables of contents are not), with
    each formula typeset at build time reduced to its text (the MathML a screen
    reader reads; the glyph boxes around it are most of a page's elements).  What
    the checks find is the same as on the whole page (every page of the book,
    2026-11-28); html.parser then takes about a third less time."""
    start, end = html.find('<article class="bd-article"'), html.rfind("</article>")
    if 0 <= start < end:
        html = html[start:end + len("</article>")]
    return _MJX.sub(lambda m: m.group(1) + "".join(_MJX_TEXT.findall(m.group(2))) + m.group(3), html)


def _read_soup(html: str) -> dict:
    """What the checks read from a page, by BeautifulSoup (html.parser): the lines
    of its cell inputs, its glued values, and its prose text (read last: reading
    it removes the code, output and mathematics from the parse).  The reference
    that _Reader must agree with (test_the_reader_agrees_with_beautifulsoup), and
    the reader of a page without the book's article."""
    soup = _soup(_slim(html))
    inputs = [cell.get_text() for cell in soup.select("div.cell_input")]
    glued = [span.get_text() for span in soup.select("span.pasted-text, span.pasted-inline")]
    code = [span.get_text() for span in soup.select("code.literal")]
    article = _article(soup)
    for selector in NOT_PROSE:
        for node in article.select(selector):
            node.decompose()
    return {"inputs": inputs, "glued": glued, "code": code, "prose": article.get_text(" ")}


# NOT_PROSE as what _Reader matches: tag names, and (tag or None for any, class)
_NOT_PROSE_TAGS = frozenset(s for s in NOT_PROSE if "." not in s)
_NOT_PROSE_CLASSES = tuple((s.split(".")[0] or None, s.split(".")[1]) for s in NOT_PROSE if "." in s)
# BeautifulSoup's rules for html.parser: elements without an end tag, elements whose
# text get_text leaves out, elements whose whitespace is kept as it is
_VOID = frozenset("area base basefont bgsound br col command embed frame hr image img input isindex "
                  "keygen link menuitem meta nextid param source spacer track wbr".split())
_NOT_TEXT = frozenset(("script", "style", "template", "rt", "rp"))
_PRE = frozenset(("pre", "textarea"))


class _Reader(html.parser.HTMLParser):
    """_read_soup's three readings in one pass of html.parser, without building a
    tree: every text run (the text between two tags, as BeautifulSoup's strings)
    goes to the cell inputs and glued values it is inside, and to the prose unless
    it is inside one of NOT_PROSE.  End tags close elements as BeautifulSoup's
    tree does (up to the last open element of that name; a stray one is ignored).
    The same readings as BeautifulSoup on every page of the book (2026-11-28) in
    about a fifth of the time."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[tuple[str, int, int, int, bool]] = []  # tag, collector, glued, code, not prose
        self.inputs: list[list[str]] = []
        self.glued: list[list[str]] = []
        self.code: list[list[str]] = []  # inline code (code.literal)
        self.open_inputs: list[list[str]] = []
        self.open_glued: list[list[str]] = []
        self.open_code: list[list[str]] = []
        self.prose: list[str] = []
        self.run: list[str] = []
        self.not_prose = self.not_text = self.pre = 0

    def _flush(self) -> None:
        if not self.run:
            return
        text = "".join(self.run)
        self.run = []
        if not self.pre and not text.strip(" \t\n\r\f"):
            text = "\n" if "\n" in text else " "
        if self.not_text:
            return
        for parts in self.open_inputs:
            parts.append(text)
        for parts in self.open_glued:
            parts.append(text)
        for parts in self.open_code:
            parts.append(text)
        if not self.not_prose:
            self.prose.append(text)

    def handle_starttag(self, tag, attrs) -> None:
        self._flush()
        if tag in _VOID:
            return
        classes = set()
        for key, value in attrs:
            if key == "class" and value:
                classes = set(value.split())
        collect = glue = code = 0
        if tag == "code" and "literal" in classes:
            self.code.append([])
            self.open_code.append(self.code[-1])
            code = 1
        if tag == "div" and "cell_input" in classes:
            self.inputs.append([])
            self.open_inputs.append(self.inputs[-1])
            collect = 1
        if tag == "span" and classes & {"pasted-text", "pasted-inline"}:
            self.glued.append([])
            self.open_glued.append(self.glued[-1])
            glue = 1
        excluded = tag in _NOT_PROSE_TAGS or any(
            c in classes and (t is None or t == tag) for t, c in _NOT_PROSE_CLASSES)
        self.not_prose += excluded
        self.not_text += tag in _NOT_TEXT
        self.pre += tag in _PRE
        self.stack.append((tag, collect, glue, code, excluded))

    def handle_startendtag(self, tag, attrs) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag) -> None:
        self._flush()
        if not any(t == tag for t, *_ in self.stack):
            return
        while True:
            name, collect, glue, code, excluded = self.stack.pop()
            if collect:
                self.open_inputs.pop()
            if glue:
                self.open_glued.pop()
            if code:
                self.open_code.pop()
            self.not_prose -= excluded
            self.not_text -= name in _NOT_TEXT
            self.pre -= name in _PRE
            if name == tag:
                return

    def handle_data(self, data) -> None:
        self.run.append(data)

    def handle_charref(self, name) -> None:
        from bs4.builder._htmlparser import BeautifulSoupHTMLParser

        dereferenced, _, extra = BeautifulSoupHTMLParser._dereference_numeric_character_reference(name)
        self.run.extend(part for part in (dereferenced, extra) if part is not None)

    def handle_entityref(self, name) -> None:
        from bs4.dammit import EntitySubstitution

        self.run.append(EntitySubstitution.HTML_ENTITY_TO_CHARACTER.get(name, "&" + name))

    def handle_comment(self, data) -> None:  # a comment ends a text run and is no text
        self._flush()

    handle_decl = handle_pi = unknown_decl = handle_comment

    def readings(self, html: str) -> dict:
        self.feed(html)
        self.close()
        self._flush()
        return {"inputs": ["".join(parts) for parts in self.inputs],
                "glued": ["".join(parts) for parts in self.glued],
                "code": ["".join(parts) for parts in self.code], "prose": " ".join(self.prose)}


@functools.lru_cache(maxsize=None)
def _read(html: str) -> dict:
    """What the checks read from a page, in one pass (_Reader; a page's parse into a
    tree took seconds, each check parsing every page took minutes): the lines of
    its cell inputs, its glued values, and its prose text.  A page without the
    book's article (``article.bd-article``) is read by _read_soup."""
    slim = _slim(html)
    if not slim.startswith('<article class="bd-article"'):
        return _read_soup(html)
    return _Reader().readings(slim)


def bookkeeping_inputs(html: str, pattern: re.Pattern = BOOKKEEPING) -> list[str]:
    """The lines of the page's cell inputs (folded ones too) that match ``pattern``."""
    return [line.strip() for cell in _read(html)["inputs"] for line in cell.splitlines()
            if pattern.search(line)]


def prose_text(html: str) -> str:
    """The page's text as a reader reads it, without code, output or mathematics."""
    return _read(html)["prose"]


def e_notation_in_prose(html: str) -> list[str]:
    """Each e-notation number of the prose, with a few words around it."""
    text = re.sub(r"\s+", " ", prose_text(html))
    return [text[max(m.start() - 30, 0):m.end() + 10].strip() for m in E_NOTATION.finditer(text)]


def e_notation_in_glue(html: str) -> list[str]:
    """Each glued value of the page (prose, captions, tables) in e-notation."""
    return [text for text in _read(html)["glued"] if E_NOTATION.search(text)]


# A Markdown escape (a backslash before _ * ` [ ] #) that reached the page: in a
# code span Markdown prints it as it stands.
ESCAPE = re.compile(r"\\[_*`\[\]#]")


def escapes_in_code(html: str) -> list[str]:
    """Each inline code span of the page that shows a Markdown escape (``a\\_b``)."""
    return [text for text in _read(html)["code"] if ESCAPE.search(text)]


def pages(site: Path) -> dict[str, str]:
    from check_site import site_pages

    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site_pages(site)}


def offenders(site_pages: dict[str, str], check) -> dict[str, list[str]]:
    """Per page, what ``check`` finds (pages with nothing left out)."""
    found = {rel: check(html) for rel, html in site_pages.items()}
    return {rel: items for rel, items in found.items() if items}


def _summary(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{len(items):4d}  {rel}: {items[:3]}" for rel, items in sorted(found.items()))


# -- the checks fail on small bad pages -------------------------------------------------------

def _page(body: str) -> str:
    return f'<html><body><article class="bd-article">{body}</article></body></html>'


CELL = ('<div class="cell docutils container"><div class="cell_input docutils container">'
        '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre>{}</pre></div></div>'
        '</div>{}</div>')
OUTPUT = '<div class="cell_output docutils container">{}</div>'
FOLDED = ('<details class="admonition hide above-input"><summary><p class="collapsed admonition-title">'
          'Show code cell source</p></summary>{}</details>')


@pytest.mark.parametrize("line", [
    'glue("gm_gain", gain, display=False)',
    'keep("zipf_rows", n_rows)',
    'glue_number("sim_k", k)',
    'report.glue_number("sim_k", k, digits=3)',
    'from myst_nb import glue',
])
def test_bookkeeping_is_found_in_a_cell_input(line):
    shown = _page(CELL.format("x = 1\n" + line, ""))
    folded = _page(FOLDED.format(CELL.format(line, "")))
    assert bookkeeping_inputs(shown) == [line] and bookkeeping_inputs(folded) == [line]


def test_bookkeeping_is_not_found_elsewhere():
    fine = _page("<p>We glue( nothing here: prose.</p>"
                 + CELL.format("gain = glued_value(x)\nkeeper(3)", OUTPUT.format("<pre>glue(1)</pre>")))
    assert bookkeeping_inputs(fine) == []


def test_generator_code_is_found():
    bad = _page(CELL.format("import ast\nPATTERN = re.compile(r'x')\nrows = yaml.safe_load(f)", ""))
    assert len(bookkeeping_inputs(bad, GENERATOR)) == 3
    assert bookkeeping_inputs(_page(CELL.format("from egmlib import report", "")), GENERATOR) == []


@pytest.mark.parametrize("prose", [
    "<p>the error is 1.15e+07 times the best</p>",
    "<ul><li>n = 1e+06 rows</li></ul>",
    "<table><tr><td>delta</td><td>4.77e-03</td></tr></table>",
    '<figure><figcaption><p>Figure 1: at 2E5 draws</p></figcaption></figure>',
    '<div class="admonition note"><p class="admonition-title">Note</p><p>tol 1e-10</p></div>',
    "<h2>Error 3e-5 on this grid</h2>",
    FOLDED.replace("Show code cell source", "Check: agrees to 1e-10").format(CELL.format("x", "")),
    # a cell's Markdown output (the errata entries) is prose
    OUTPUT.format("<ol><li><p>Correct: delta = 4.77e-03</p></li></ol>"),
])
def test_e_notation_is_found_in_prose(prose):
    assert len(e_notation_in_prose(_page(prose))) == 1


def test_e_notation_is_not_found_outside_prose():
    fine = _page(
        "<p>the gain is 1.55, at n = 10,000 and delta = 4.77 × 10⁻³; version 1.2e; "
        "commit 3e5f0a1; sha a1e5</p>"
        + CELL.format("tol = 1e-10", OUTPUT.format(
            '<div class="output stream highlight-myst-ansi notranslate"><div class="highlight">'
            "<pre>4.77e-03</pre></div></div>"
            '<div class="output text_html"><table><tr><td>1e+06</td></tr></table></div>'))
        + '<p>inline <code class="literal"><span class="pre">1e-6</span></code></p>'
        + '<span class="math notranslate nohighlight">\\(10^{-6} = 1e-6\\)</span>'
        + '<div class="math notranslate nohighlight">\\[1e-6\\]</div>'
        + '<dl><dt class="sig sig-object py"><span class="pre">tol=1e-12</span></dt></dl>')
    assert e_notation_in_prose(fine) == []


def test_e_notation_is_found_in_glued_values():
    bad = _page('<p>gain <span class="pasted-text">1.15e+07</span>, n '
                '<span class="pasted-text">10,000</span></p>'
                '<table><tr><td><span class="pasted-text">4.8E-3</span></td></tr></table>')
    assert e_notation_in_glue(bad) == ["1.15e+07", "4.8E-3"]
    fine = _page('<p><span class="pasted-text">5.63 × 10⁻⁶</span> <span class="pasted-text">1.55</span></p>')
    assert e_notation_in_glue(fine) == []


def test_escapes_in_code_are_found():
    code = '<code class="docutils literal notranslate"><span class="pre">{}</span></code>'
    bad = _page("<p>in " + code.format("data/zipf\\_improvement.csv") + " and "
                + code.format("a\\*b") + "</p>")
    assert escapes_in_code(bad) == ["data/zipf\\_improvement.csv", "a\\*b"]
    fine = _page("<p>in " + code.format("data/zipf_improvement.csv") + ", a\\_b in prose</p>"
                 + CELL.format("s = 'a\\_b'", ""))
    assert escapes_in_code(fine) == []


def test_the_slim_page_keeps_what_the_checks_read():
    """_slim drops the sidebars and a typeset formula's glyph boxes, not a formula's
    text nor anything of the article."""
    formula = ('<mjx-container class="MathJax" jax="CHTML"><mjx-math><mjx-mi><mjx-c>'
               '</mjx-c></mjx-mi></mjx-math><mjx-assistive-mml><math><mn>4.8e-3</mn></math>'
               '</mjx-assistive-mml></mjx-container>')
    page = ('<html><body><nav class="bd-sidebar-primary">toc 1e-3</nav>'
            '<article class="bd-article"><p>gain <span class="pasted-inline">' + formula
            + '</span></p>' + CELL.format('glue("k", 1)', "") + "<p>n = 1e+06</p></article>"
            "<footer>2e-3</footer></body></html>")
    slim = _slim(page)
    assert "toc" not in slim and "footer" not in slim and "<mjx-c>" not in slim
    assert "<mn>4.8e-3</mn>" in slim
    assert e_notation_in_glue(page) == ["4.8e-3"]
    assert bookkeeping_inputs(page) == ['glue("k", 1)']
    assert len(e_notation_in_prose(page)) == 1


TRICKY = [  # what BeautifulSoup's tree does that a one-pass reader could get wrong
    "<p>a &amp; b &lt;1e-3&gt; &#x3b1; &#945;&nbsp;x &unknown; 2&times;10</p>",
    "<p>before<!-- a comment 1e-3 -->after</p><p>one<br>two<img src=x alt=y>three<br/>four</p>",
    "<div><p>not closed<div>inner 1e-5</div></p></span>stray end tag</div>",
    '<div class="output"><p>out</p></span> still output 1e-3</div><p>prose 2e-3</p>',
    '<div class="output"><p>not closed 1e-3</div><p>prose 2e-3</p>',
    "<p>1.5<b>e-3</b> split <i>2</i>e+4 and <template>3e-3</template><script>var x = 1e-9;</script></p>",
    CELL.format("x = 1\n\n   \n<span>glue</span>(\"k\", x)  # 1e-3", OUTPUT.format("<p>printed 2e-2</p>")),
    '<p><span class="pasted-inline">outer <span class="pasted-text">inner 1e-3</span> 2e-4</span></p>',
    '<p>  \n  </p><p> </p><pre>  kept  \n  spaces 1e-3 </pre><p class="math">1e-3</p>'
    '<a class="headerlink" href="#x">1e-3</a><a href="#y">link 1e-3</a><span class="sig">1e-4</span>',
    FOLDED.format(CELL.format('glue("a", 1)', "")) + "<h2>Title 3e-5<a class='headerlink'>#</a></h2>",
]


@pytest.mark.parametrize("body", [*TRICKY, CELL.format('keep("zipf_rows", n_rows)', ""),
                                  "<ul><li>n = 1e+06 rows</li></ul>",
                                  '<figure><figcaption><p>Figure 1: at 2E5 draws</p></figcaption></figure>'])
def test_the_reader_agrees_with_beautifulsoup(body):
    """_Reader (one pass) reads what BeautifulSoup's tree gives (_read_soup), also on
    markup with entities, comments, void and unclosed elements, stray end tags,
    preformatted whitespace and nested glued values; on the built site, every page
    (checked 2026-11-28)."""
    page = _page(body)
    assert _Reader().readings(_slim(page)) == _read_soup(page)
    assert _read(page) == _read_soup(page)


def test_offenders_counts_per_page():
    site = {"a.html": _page("<p>1e+06 and 2e-3</p>"), "b.html": _page("<p>1.55</p>")}
    assert {rel: len(items) for rel, items in offenders(site, e_notation_in_prose).items()} == {"a.html": 2}


# -- the built site ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site_pages(built_site: Path) -> dict[str, str]:
    found = pages(built_site)
    assert len(found) > 20 and "chapters/errata.html" in found
    return found


@pytest.mark.book
def test_no_glue_call_in_any_cell_input(site_pages):
    found = offenders(site_pages, bookkeeping_inputs)
    assert found == {}, "glue/keep calls in cell inputs (lines per page):\n" + _summary(found)


@pytest.mark.book
def test_no_generator_code_on_the_errata_page(site_pages):
    found = bookkeeping_inputs(site_pages["chapters/errata.html"], GENERATOR)
    assert found == [], f"{len(found)} lines of the errata's generator are shown: {found[:5]}"


API_PAGE = "api.html"  # egmlib's docstrings: apart, since the chapters' engineers do not own them


@pytest.mark.book
def test_no_e_notation_in_prose(site_pages):
    found = offenders({rel: html for rel, html in site_pages.items() if rel != API_PAGE}, e_notation_in_prose)
    assert found == {}, "e-notation in prose (numbers per page):\n" + _summary(found)


@pytest.mark.book
def test_no_e_notation_in_the_api_reference(site_pages):
    """egmlib's docstrings write a Python literal as code (``1e-12``) or a power of ten
    as mathematics, not 1e-12 in the text."""
    found = e_notation_in_prose(site_pages[API_PAGE])
    assert found == [], f"{len(found)} e-notation numbers in the API reference's text: {found[:5]}"


@pytest.mark.book
def test_no_glued_value_in_e_notation(site_pages):
    found = offenders(site_pages, e_notation_in_glue)
    assert found == {}, "glued values in e-notation (per page):\n" + _summary(found)


@pytest.mark.book
def test_no_markdown_escape_in_inline_code(site_pages):
    """Issue 33: the errata page showed ``data/zipf\\_improvement.csv``."""
    found = offenders(site_pages, escapes_in_code)
    assert found == {}, "Markdown escapes shown in inline code (per page):\n" + _summary(found)


if __name__ == "__main__":  # the to-do list of a built site: python tests/test_reader_site.py _build/html
    site = pages(Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html"))
    for title, check in [("glue/keep lines in cell inputs", bookkeeping_inputs),
                         ("generator lines (errata's inputs)", lambda h: bookkeeping_inputs(h, GENERATOR)),
                         ("e-notation in prose", e_notation_in_prose),
                         ("glued values in e-notation", e_notation_in_glue),
                         ("Markdown escapes in inline code", escapes_in_code)]:
        found = offenders(site, check)
        if title.startswith("generator"):
            found = {k: v for k, v in found.items() if k == "chapters/errata.html"}
        print(f"== {title}: {sum(map(len, found.values()))} on {len(found)} pages")
        print(_summary(found))
