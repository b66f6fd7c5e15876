"""Fits every screen (issue #26): scripts/check_site.py's equation check.

On every page of the site, at 1280 and 390 px, a display equation wider than
the box that shows it must scroll in that box with a visible cue (a shadow or
a scrollbar), and its number must cover none of it (``EQUATIONS`` in
scripts/check_site.py; the site's own run is tests/test_book_build.py's
browser check, which reports these problems with the others).  Here the check
is run on a small site of pages that each break it, with and without the
book's stylesheet, so that it cannot pass vacuously, and the book's
stylesheet is shown to mend a page laid out as the theme lays out a numbered
equation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK_SITE = ROOT / "scripts" / "check_site.py"
CSS = ROOT / "_ext" / "static" / "book_fixes.css"
pytestmark = [pytest.mark.book,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")]

# A display equation as MathJax (CHTML) and Sphinx write it, with the theme's rules
# for a numbered one (pydata-sphinx-theme: number beside the formula, the formula's
# box scrolls).  MathJax itself is not loaded: a wide inline-block stands for the
# typeset formula.
THEME = ("<style>div.math{display:flex;flex-direction:row-reverse;gap:.5em;max-width:100%;"
         "overflow:hidden;align-items:center}div.math mjx-container{flex-grow:1;overflow:auto}"
         "mjx-math{display:inline-block;white-space:nowrap}</style>")
WIDE = '<mjx-math style="width: {w}px">x + y</mjx-math>'


def _equation(width: int, number: bool = True, container_style: str = "") -> str:
    eqno = '<span class="eqno">(1.1)</span>' if number else ""
    return (f'<div class="math" id="equation-e">{eqno}<mjx-container display="true" '
            f'style="display:block;{container_style}">{WIDE.format(w=width)}</mjx-container></div>')


BAD_PAGES = {
    # cut: the box clips and does not scroll
    "cut.html": THEME + _equation(600, container_style="overflow:hidden"),
    # scrolls, but nothing shows that it does (no shadow, hidden scrollbars)
    "nocue.html": THEME + _equation(600),
    # the number sits on the formula
    "covered.html": '<div class="math"><span class="eqno" style="position:absolute;left:40px">(1.1)</span>'
                    '<mjx-container display="true" style="display:block">'
                    + WIDE.format(w=200) + "</mjx-container></div>",
    # fits: nothing to report
    "fine.html": THEME + _equation(100),
}


def _site(tmp_path: Path, pages: dict[str, str], css: bool) -> Path:
    link = f'<link rel="stylesheet" href="{CSS.name}">' if css else ""
    if css:
        shutil.copy(CSS, tmp_path / CSS.name)
    for name, body in pages.items():
        (tmp_path / name).write_text(
            '<!DOCTYPE html><html><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{name}</title>{link}</head><body>{body}</body></html>")
    return tmp_path


def _check(site: Path) -> dict:
    report = site / "report.json"
    proc = subprocess.run([sys.executable, str(CHECK_SITE), str(site), "--json", str(report)],
                          capture_output=True, text=True, timeout=900)
    assert report.is_file(), proc.stdout + proc.stderr
    return {rel: " ".join(v["problems"]) for rel, v in json.loads(report.read_text()).items()}


def test_the_equation_check_fails_bad_pages(tmp_path):
    problems = _check(_site(tmp_path, BAD_PAGES, css=False))
    assert "is cut off" in problems["cut.html"]
    assert "no visible cue" in problems["nocue.html"]
    assert "covered by its number" in problems["covered.html"]
    assert problems["fine.html"] == ""


def test_the_books_stylesheet_mends_a_wide_numbered_equation(tmp_path):
    """With book_fixes.css the theme's numbered equation, 600 px wide, scrolls
    with a cue at both widths (at 390 px its number goes below it)."""
    problems = _check(_site(tmp_path, {"nocue.html": BAD_PAGES["nocue.html"],
                                       "fine.html": BAD_PAGES["fine.html"]}, css=True))
    assert problems == {"nocue.html": "", "fine.html": ""}


# An inline formula wider than its paragraph (MathJax does not break inline math:
# the errata at 390 px, issue 26).  A stub stands for MathJax's startup promise.
INLINE = ('<p style="width: 300px">The study: <mjx-container class="MathJax" jax="CHTML">'
          '<mjx-math style="display: inline-block; white-space: nowrap; width: 500px">x + y'
          '</mjx-math></mjx-container> holds.</p>')
JS = ROOT / "_ext" / "static" / "book_fixes.js"


def _without_and_with_the_script(tmp_path, name: str, body: str,
                                 bad_css: bool) -> tuple[dict, dict]:
    """The check's verdicts on a page without book_fixes.js (stylesheet as ``bad_css``
    says) and on the same page with the script and the stylesheet; a stub stands for
    MathJax's startup promise."""
    (tmp_path / "bad").mkdir()
    bad = _check(_site(tmp_path / "bad", {name: body}, css=bad_css))
    (tmp_path / "good").mkdir()
    shutil.copy(JS, tmp_path / "good" / JS.name)
    script = ('<script>window.MathJax = {startup: {promise: Promise.resolve()}};</script>'
              f'<script src="{JS.name}"></script>')
    good = _check(_site(tmp_path / "good", {name: body + script}, css=True))
    return bad, good


def test_a_wide_inline_formula_scrolls_with_the_books_script(tmp_path):
    bad, good = _without_and_with_the_script(tmp_path, "inline.html", INLINE, bad_css=False)
    assert "inline formula x + y is cut off: 500 px in a 300 px paragraph" in bad["inline.html"]
    assert good == {"inline.html": ""}


# A numbered equation inside a lemma's box: sphinx-proof tints the box with a
# translucent green over the page (issue 26 item 9: at 390 px the scroll cue's
# white covers showed as white patches at both ends of the formula).
LEMMA = ('<div style="background: #fff"><div class="lemma" style="background-color: '
         'rgba(54, 207, 3, 0.1); padding: 8px; width: 300px">'
         + THEME + _equation(600) + "</div></div>")


def test_the_scroll_cue_takes_the_colour_of_the_box_it_stands_in(tmp_path):
    bad, good = _without_and_with_the_script(tmp_path, "lemma.html", LEMMA, bad_css=True)
    assert "shows patches" in bad["lemma.html"]
    assert "rgb(255, 255, 255) a box of rgb(235, 250, 230)" in bad["lemma.html"]
    assert good == {"lemma.html": ""}


# A formula followed by punctuation: on a phone a line began with the colon
# ("... + δ\n: (ε, δ)-DP", the errata at 390 px, issue 26 item 9).
PUNCTUATED = ('<p style="width: 300px">Correct: <span class="math notranslate nohighlight">'
              '<mjx-container class="MathJax" jax="CHTML">'
              '<mjx-math style="display: inline-block; white-space: nowrap; width: 120px">x'
              '</mjx-math></mjx-container></span>: the rest, and <mjx-container class="MathJax" '
              'jax="CHTML"><mjx-math style="display: inline-block; white-space: nowrap; '
              'width: 500px">y</mjx-math></mjx-container>, wide.</p>')


SOLUTION = ('<div class="solution dropdown admonition"><p class="admonition-title">'
            'Solution to<a class="reference internal" href="#ex-1"> Exercise 6.1</a></p></div>'
            '<p style="width: 200px"><code class="literal"><span class="pre">'
            'egmlib.mechanisms.gaussian_data_mechanism</span></code></p>')


def test_punctuation_after_a_formula_stays_on_its_line(tmp_path):
    sys.path.insert(0, str(CHECK_SITE.parent))
    import check_site
    shutil.copy(CSS, tmp_path / CSS.name)
    shutil.copy(JS, tmp_path / JS.name)
    (tmp_path / "p.html").write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="stylesheet" href="{CSS.name}">'
        f"</head><body>{PUNCTUATED}{SOLUTION}<script>window.MathJax = {{startup: {{promise: Promise.resolve()}}}};"
        f'</script><script src="{JS.name}"></script></body></html>')
    browser = check_site._DevTools(390)
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", wait_event="Page.loadEventFired", url=(tmp_path / "p.html").as_uri())
        browser.evaluate(check_site.SETTLE.format(ms=100))
        spans = browser.evaluate("[...document.querySelectorAll('span.egm-nobr')].map("
                                 "s => s.textContent + '|' + s.style.whiteSpace)")
        text = browser.evaluate("document.querySelector('p').textContent")
        name = browser.evaluate("[document.querySelector('code span.pre').textContent,"
                                " document.querySelectorAll('code span.pre wbr').length]")
        title = browser.evaluate("[document.querySelector('.solution p').textContent,"
                                 " document.querySelector('.solution a').textContent]")
    finally:
        browser.close()
    # the narrow formula keeps its colon; the wide one scrolls on its own line
    assert spans == ["x:|nowrap", "y,|normal"]
    assert text == "Correct: x: the rest, and y, wide."
    # sphinx-exercise's "Solution to<a> Exercise 6.1</a>": the link's underline
    # no longer starts with a blank
    assert title == ["Solution to Exercise 6.1", "Exercise 6.1"]
    # a dotted name in inline code may break after its dots, and reads whole
    assert name == ["egmlib.mechanisms.gaussian_data_mechanism", 2]


def _inline(text: str, widths: tuple[int, ...]) -> str:
    """An inline formula as Sphinx and _ext/mathjax_prerender.py write it: a span
    around its pieces (one container each, cut after relations), each with the
    hidden MathML that names it."""
    pieces = "<wbr>".join(
        '<mjx-container class="MathJax" jax="CHTML"><mjx-math style="display: inline-block; '
        f'white-space: nowrap; width: {w}px">x</mjx-math><mjx-assistive-mml style="display: none">'
        f"{text}{k}</mjx-assistive-mml></mjx-container>" for k, w in enumerate(widths))
    return f'<span class="math notranslate nohighlight">{pieces}</span>'


# Issue 33 item 1, inline formulas and code: a paragraph of a phone's column with
# a formula of three pieces, one of them wider than the column; one in a closed
# fold that a scroll box of its own (book_fixes.js's egm-wide-inline) cannot save;
# one that fits; a code box with a line too long for a phone and one that fits.
INLINE_PAGE = (
    '<p style="max-width: 340px">Wide: ' + _inline("wide", (80, 420, 60)) + " and narrow: "
    + _inline("narrow", (60, 60)) + ".</p>"
    + '<details><summary>Solution</summary><p style="max-width: 340px">'
    + _inline("scrolls", (500,)).replace('class="MathJax"', 'class="MathJax egm-wide-inline"')
    + "</p></details>"
    + '<div class="highlight" style="max-width: 340px"><pre style="overflow-x: auto">'
    + "x = 1  # " + "a comment too long for a phone " * 3 + "\ny = 2</pre></div>"
    + '<div class="highlight" style="max-width: 340px"><pre style="overflow-x: auto">z = 3</pre></div>')


def test_the_phone_count_lists_every_wide_display_equation(tmp_path):
    """Issue 33 item 1: the browser check lists, at 390 px, each display equation
    wider than its box, also one in a closed fold (a proof a reader opens), by
    its anchor and number, and none that fits; likewise each inline formula
    whose content reaches past its column (also one that scrolls in a box of its
    own), by its text, and each code box whose lines are too long for it."""
    sys.path.insert(0, str(CHECK_SITE.parent))
    from check_site import speed_and_width

    page = (THEME + "<details><summary>Proof</summary>" + _equation(600) + "</details>"
            + _equation(100).replace("equation-e", "equation-f") + INLINE_PAGE)
    site = _site(tmp_path, {"wide.html": page}, css=True)
    report = site / "report.json"
    subprocess.run([sys.executable, str(CHECK_SITE), str(site), "--json", str(report)],
                   capture_output=True, text=True, timeout=900)
    verdicts = json.loads(report.read_text())
    wide = verdicts["wide.html"]["widths"]["390"]["wide_equations"]
    assert [(w["label"], w["width"]) for w in wide] == [("#equation-e (1.1)", 600)]
    assert verdicts["wide.html"]["widths"]["1280"]["wide_equations"] == []
    summary = speed_and_width(verdicts)
    assert len(summary["wide"]) == 1 and "wide.html '#equation-e (1.1)': 600 px" in summary["text"]
    inline = verdicts["wide.html"]["widths"]["390"]["wide_inline"]
    assert [(w["text"], w["pieces"], w["room"]) for w in inline] == [
        ("wide0 wide1 wide2", 1, 340), ("scrolls0", 1, 340)]
    assert inline[0]["over"] == 420 - 340
    assert verdicts["wide.html"]["widths"]["1280"]["wide_inline"] == []
    assert len(summary["inline"]) == 2 and "on 1 pages (must be 0); wide.html 2" in summary["text"]
    code = verdicts["wide.html"]["widths"]["390"]["wide_code"]
    assert [(c["line"][:12], c["chars"] > 90, c["box"]) for c in code] == [("x = 1  # a c", True, 340)]
    # no MathJax on the page: nothing left for the browser to typeset, and a time
    assert summary["client"] == {"wide.html": 0} and 0 < summary["times"]["wide.html"] < 60


# Issue 33 item 10: pydata-sphinx-theme's tab stops for boxes that scroll, as its
# script (the version in the lock) finds them at the load event and after every
# change to the article; book_fixes.js takes that search over and gives the same
# tab stops lazily, as each box comes near the window.
THEME_SCROLLERS = ('["pre",".nboutput > .output_area",".cell_output > .output",'
                   '".jp-RenderedHTMLCommon",".pst-scrollable-table-container"].join(", ")')
TAB_STOPS = (
    '<div id="main-content"><pre id="wide" style="width: 200px; overflow: auto">'
    + "x" * 200 + '</pre><pre id="narrow" style="width: 200px; overflow: auto">x</pre>'
    '<div style="height: 20000px"></div><pre id="far" style="width: 200px; overflow: auto">'
    + "y" * 200 + "</pre></div>")


def test_the_themes_tab_stops_come_lazily(tmp_path):
    """The theme measured every code block and output of a page at load (which
    laid out the sections the browser skips, content-visibility): with
    book_fixes.js its search finds none, and each box gets the theme's tab stop
    (0 if it scrolls, -1 if not) when it comes near the window."""
    import importlib.util

    theme_js = (Path(importlib.util.find_spec("pydata_sphinx_theme").origin).parent / "theme" / "pydata_sphinx_theme" / "static"
                / "scripts" / "pydata-sphinx-theme.js").read_text()
    assert theme_js.count(THEME_SCROLLERS) == 1, "the theme's search for boxes that scroll has changed"
    sys.path.insert(0, str(CHECK_SITE.parent))
    import check_site

    shutil.copy(JS, tmp_path / JS.name)
    # the theme's own code, as it stands in its script, run at the load event
    theme = ("<script>addEventListener('load', () => { window.themeFound = document.querySelectorAll("
             + THEME_SCROLLERS + ").length; });</script>")
    results = {}
    browser = check_site._DevTools(390)
    try:
        browser.call("Page.enable")
        for name, script in (("theme.html", ""), ("book.html", f'<script src="{JS.name}"></script>')):
            (tmp_path / name).write_text(
                '<!DOCTYPE html><html><head><meta charset="utf-8">' + script + theme
                + f"</head><body>{TAB_STOPS}</body></html>")
            browser.call("Page.navigate", wait_event="Page.loadEventFired", url=(tmp_path / name).as_uri())
            browser.evaluate(check_site.SETTLE.format(ms=200))
            tabs = "['wide', 'narrow', 'far'].map(i => document.getElementById(i).getAttribute('tabindex'))"
            at_load = browser.evaluate(f"[window.themeFound, {tabs}]")
            browser.evaluate("document.getElementById('far').scrollIntoView(); "
                             "new Promise(r => setTimeout(r, 300)).then(() => true)")
            results[name] = at_load + [browser.evaluate(tabs)]
    finally:
        browser.close()
    assert results["theme.html"] == [3, [None, None, None], [None, None, None]]
    assert results["book.html"] == [0, ["0", "-1", None], ["0", "-1", "0"]]


# Issue 33 (the site on a phone): the sections of a page are laid out lazily
# (content-visibility, book_fixes.css) and stand in with an estimated height
# until then.  With one height for every section (main before this test: 1,000
# px) state_of_the_art measured 14,378 px at load against 83,240 px laid out
# (390 px), and the scroll bar jumped while the reader read.  A page of long
# sections as the theme nests them, its estimates written by the build's code
# (_ext/section_heights.py): at both widths its height at load is within
# check_site.HEIGHT_TOLERANCE of its height laid out; without the estimates
# (main's single height) it is not.
def _long_page(sections: int = 8, paragraphs: int = 40) -> str:
    words = ("the scaled rows are clipped to a ball around an estimate of the centre and the"
             " sum gets Gaussian noise of the calibrated scale ")
    body = "".join(
        f'<section id="s{k}"><h2>Section {k}</h2>'
        + "".join(f"<p>{k}.{j} {words * (1 + (j % 3))}</p>" for j in range(paragraphs))
        + "</section>" for k in range(sections))
    return ('<style>p { margin: 0 0 1em }</style>'
            '<div style="display: flex; justify-content: center"><article class="bd-article" '
            'style="width: 720px; max-width: 100%; padding: 0 16px; box-sizing: border-box; '
            'font-size: 16px; line-height: 1.65">'
            f'<section id="top"><h1>A long chapter</h1>{body}</section></article></div>')


def test_a_long_page_keeps_its_height_at_load(tmp_path):
    import importlib.util

    sys.path.insert(0, str(CHECK_SITE.parent))
    from check_site import HEIGHT_TOLERANCE, page_heights

    spec = importlib.util.spec_from_file_location("section_heights", ROOT / "_ext" / "section_heights.py")
    heights = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heights)
    page = _long_page()
    estimated = heights.annotate(page, tmp_path / "page.html")
    assert estimated.count("--egm-h-phone") == 8 and "--egm-h-phone" not in page
    # one run of the check on both pages: main's single height, and the estimates
    site = _site(tmp_path, {"main.html": page, "estimated.html": estimated}, css=True)
    report = site / "report.json"
    subprocess.run([sys.executable, str(CHECK_SITE), str(site), "--json", str(report)],
                   capture_output=True, text=True, timeout=900)
    ratios = page_heights(json.loads(report.read_text()))
    for width in (390, 1280):
        assert abs(ratios[width]["estimated.html"] - 1) <= HEIGHT_TOLERANCE, ratios
        assert abs(ratios[width]["main.html"] - 1) > HEIGHT_TOLERANCE, ratios
