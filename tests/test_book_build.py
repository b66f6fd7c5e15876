"""The whole site builds with warnings as errors, serves MathJax locally, and
passes a reader's check in a real browser.

The site is built once per run (``built_site``, tests/conftest.py), from the
chapters' stored outputs (execution "off"): the nbval run in the same pytest
invocation proves that a fresh execution reproduces them, and `make book`
executes every chapter itself.  If Debian's chromium is installed, every page
is opened headless with no network, loaded once at 390 px and resized to 1280 px
(scripts/check_site.py, run once for the tests below): the typeset math, the
links, the console and the page's width are checked.  Photographs of the pages
are a review tool, not a test: `make screenshots`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_site import WIDTHS, site_pages  # noqa: E402

BIN = Path(sys.executable).parent
CHECK_SITE = ROOT / "scripts" / "check_site.py"
pytestmark = pytest.mark.book  # run once in CI (tests/conftest.py)
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Debian's chromium is not installed")


def _check_site(site: Path, report: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([sys.executable, str(CHECK_SITE), str(site), "--json", str(report)],
                          capture_output=True, text=True, timeout=1800, env=env)
    return proc, (json.loads(report.read_text()) if report.is_file() else {})


@pytest.fixture(scope="module")
def browser_check(built_site: Path, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """scripts/check_site.py on the whole site, once: its run and its verdicts."""
    return _check_site(built_site, tmp_path_factory.mktemp("browser") / "report.json")


def test_site_has_every_page(built_site: Path):
    assert (built_site / "index.html").exists()
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        assert (built_site / "chapters" / f"{nb.stem}.html").exists(), nb.name


def test_maths_is_typeset_at_build_time(built_site: Path):
    """Issue 33 item 10: MathJax runs at build time (_ext/mathjax_prerender.py), so
    a page holds its formulas typeset (CHTML), links one stylesheet with the fonts
    beside it, and sends the reader no MathJax script and no TeX to typeset."""
    import re

    page = (built_site / "chapters" / "differential_privacy.html").read_text()
    assert page.count("<mjx-container") > 50
    assert not re.search(r'class="math[^"]*"[^>]*>(<span class="eqno">.*?</span>)?\s*\\[(\[]', page)
    assert "tex-chtml.js" not in page and "cdn.jsdelivr" not in page and "mathjax@3" not in page
    assert "_static/egm-mathjax/mathjax.css" in page
    css = built_site / "_static" / "egm-mathjax" / "mathjax.css"
    fonts = re.findall(r'url\("([^"]+\.woff)"\)', css.read_text())
    assert len(fonts) > 10 and all((css.parent / f).is_file() for f in fonts)
    # the book's macros (_config.yml mathjax3_config): \R is typeset as a blackboard R
    assert "TEX-A" in page and "mjx-c211D" in page


@needs_chromium
def test_every_page_in_a_real_browser(built_site: Path, browser_check):
    """No raw TeX, no broken internal link or image, no console error, no page wider
    than the window, on any page at 1280 or 390 px."""
    proc, report = browser_check
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    pages = [p.relative_to(built_site).as_posix() for p in site_pages(built_site)]
    assert sorted(report) == pages and len(pages) > 20
    for rel, verdict in report.items():
        assert verdict["ok"], (rel, verdict["problems"])
        if not verdict["redirect"]:
            assert sorted(verdict["widths"]) == sorted(map(str, WIDTHS)), rel


@needs_chromium
def test_math_typesets_offline_in_chromium(browser_check):
    """The chapter with the most basic formulas: MathJax (served locally, no
    network) typesets them all, at both widths."""
    proc, report = browser_check
    page = report["chapters/differential_privacy.html"]
    for width, seen in page["widths"].items():
        assert seen["formulas"] > 50 and seen["raw_tex"] == 0, (width, seen)


@needs_chromium
def test_no_page_is_wider_than_a_phone(browser_check):
    """At 390 px, no page scrolls sideways (a wide equation or table scrolls in its
    own box instead)."""
    proc, report = browser_check
    # a page the browser could not load is test_every_page_in_a_real_browser's failure
    wide = {rel: (v["widths"]["390"]["wide"], v["widths"]["390"]["culprits"])
            for rel, v in report.items() if v["widths"].get("390")
            and v["widths"]["390"]["wide"] > v["widths"]["390"]["view"]}
    assert wide == {}


@needs_chromium
def test_display_equations_fit_a_phone(browser_check):
    """Issue 33 item 1: at 390 px at most WIDE_EQUATIONS display equations of the
    whole book (folds opened) are wider than their box; those scroll with a cue
    (test_every_page_in_a_real_browser: EQUATIONS in scripts/check_site.py)."""
    from check_site import WIDE_EQUATIONS, speed_and_width

    proc, report = browser_check
    summary = speed_and_width(report)
    print(summary["text"])
    assert len(summary["wide"]) <= WIDE_EQUATIONS, summary["text"]


def test_long_inline_formulas_break_as_tex_breaks_them():
    """_ext/mathjax_prerender.py cuts a long inline formula (30 TeX characters or
    more) into pieces, each typeset alone, with a place to break between them:
    after a relation, and after a binary operator between two operands, outside
    braces, brackets and |...| (issue 33 item 1); a sign is no operator."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mathjax_prerender", ROOT / "_ext" / "mathjax_prerender.py")
    prerender = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prerender)
    split = prerender.split_inline
    assert split(r"a + b = c") == [r"a + b = c"]  # short: whole
    assert split(r"-2\sigma^2 b_j^{-3} + 2\lambda b_j = 0 \iff \lambda b_j = \sigma^2") == [
        r"-2\sigma^2 b_j^{-3} + {}", r" 2\lambda b_j = {}", r" 0 \iff {}", r" \lambda b_j = {}", r" \sigma^2"]
    assert split(r"\mathbb E|Z-1|^k \ge \mathbb E Z^{k-1} - 2\Pr[Z + 1 > 0] \cdot (-x)") == [
        r"\mathbb E|Z-1|^k \ge {}", r" \mathbb E Z^{k-1} - {}", r" 2\Pr[Z + 1 > {}", r" 0] \cdot {}", r" (-x)"]
    assert split(r"\sum_j \sigma_j = -\big(1 - \tfrac12\big) \sum_i \sigma_i^{-2} + x_{i + j}") == [
        r"\sum_j \sigma_j = {}", r" -\big(1 - \tfrac12\big) \sum_i \sigma_i^{-2} + {}", r" x_{i + j}"]


@needs_chromium
def test_inline_formulas_fit_a_phone(browser_check):
    """Issue 33 item 1, inline formulas: at 390 px no inline formula of the book
    (folds opened) reaches past the edge of its column, the window or a box that
    clips it, its own scroll box included (a formula too wide for a phone's line
    is a display, which scrolls with a cue; scripts/check_site.py lists them
    with their page and text; the check fails a bad page:
    tests/test_reader_screen.py).  Nor is a code line of the quickstart wider
    than its box at 390 px (a reader copies it from a phone)."""
    from check_site import speed_and_width

    proc, report = browser_check
    summary = speed_and_width(report)
    print(summary["text"])
    assert summary["inline"] == [], summary["text"]
    assert all("wide_inline" in v["widths"]["390"] for v in report.values() if v["widths"].get("390"))
    quickstart = report["chapters/quickstart.html"]["widths"]["390"]
    assert quickstart["formulas"] > 0 and quickstart["wide_code"] == [], quickstart["wide_code"]
    # the landing page's `make` targets too (issue 33: its code box scrolled at 390 px;
    # the check listed it, but only the quickstart's were asserted)
    landing = yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]
    front = report[f"{landing}.html"]["widths"]["390"]
    assert front["formulas"] > 0 and front["wide_code"] == [], front["wide_code"]


@needs_chromium
def test_pages_keep_their_height_at_load(browser_check):
    """Issue 33 (the site on a phone): at 390 and 1280 px every page's height at
    load (its lazily laid-out sections at the estimates of
    _ext/section_heights.py) is within HEIGHT_TOLERANCE of its height laid out
    whole, so that the scroll bar does not jump while the reader reads.  With
    one height for every section (1,000 px, main before this test)
    state_of_the_art measured 14,378 px at load against 83,240 px at 390 px
    (0.17), api 0.17, and 11 other pages were off by more than a quarter
    (tests/test_reader_screen.py fails that stylesheet on a small page).  The
    check prints the furthest pages (pytest -s)."""
    from check_site import HEIGHT_TOLERANCE, speed_and_width

    proc, report = browser_check
    summary = speed_and_width(report)
    print(summary["text"])
    heights = summary["heights"]
    assert sorted(heights) == sorted(WIDTHS)
    pages = {rel for rel, v in report.items() if not v["redirect"]}
    off = {(width, rel): round(x, 2) for width, ratios in heights.items() for rel, x in ratios.items()
           if abs(x - 1) > HEIGHT_TOLERANCE}
    assert all(set(ratios) == pages for ratios in heights.values()), heights
    assert off == {}, summary["text"]


# Issue 33 item 10's bounds (a median of 1 s and 2 s a page, from navigation to
# typeset maths) are asserted on the renderers' CPU in that span, not on the clock.
# The clock is what a reader waits, and scripts/check_site.py measures and prints
# it too (the page's own timeline, with the machine's load), but on this 2-core
# machine shared by many jobs it measures the other jobs: the errata page took
# 2.3 to 5.9 s by the clock in four loads in a row (load average 11 to 14,
# 2026-11-28, its renderer CPU 1.08 to 1.37 s), and the student referee's 4.0 to
# 4.3 s were at a load of about 5.  A bound on the clock would fail at random
# under `make test` (which runs on every core) and pass a slow page on an idle
# machine.  The CPU, each with this margin for a machine shared with other jobs
# (one site measured 0.87 s and 1.25 s median at two loads of this machine, the
# book now 0.60 s and 0.70 s): the check fails only on a clear excess.
# No page is exempt: the errata (2.8 s to 4.7 s, its list laid out whole) and
# state_of_the_art (2.2 s to 3.9 s, the theme measuring every output) were, until
# the errata list came in lazily laid-out boxes and book_fixes.js took over the
# theme's measuring (_ext/static/book_fixes.js; both now about 1 to 1.5 s).
OPEN_MEDIAN_S, OPEN_PAGE_S, OPEN_MARGIN = 1.0, 2.0, 1.5


def slow_pages(summary: dict) -> dict[str, float]:
    """The pages whose renderer CPU, navigation to typeset maths, is over the bound."""
    return {rel: s for rel, s in summary["cpu"].items() if s > OPEN_PAGE_S * OPEN_MARGIN}


@needs_chromium
def test_pages_open_fast(browser_check):
    """Issue 33 item 10: no formula is left for a MathJax in the reader's
    browser (the maths is typeset at build time, _ext/mathjax_prerender.py), and
    every page's time from navigation to typeset maths is measured and printed
    with the median and the slowest pages (pytest -s shows them), by two
    measures: the wall clock (the page's own timeline, printed, not asserted)
    and the CPU time of Chromium's renderer processes (its own count,
    scripts/check_site.py ``renderer_time``), which hardly grows when other
    jobs share the cores, as the clock does under `make test` (see
    OPEN_MEDIAN_S).  Asserted on the CPU: the median is at most OPEN_MEDIAN_S
    and every page at most OPEN_PAGE_S, each with OPEN_MARGIN for the load of
    a shared machine (a page over it fails:
    test_the_browser_check_fails_a_bad_page's heavy.html)."""
    from check_site import speed_and_width

    proc, report = browser_check
    summary = speed_and_width(report)
    print(summary["text"])
    assert summary["client"] and not any(summary["client"].values()), summary["client"]
    assert len(summary["cpu"]) == len(summary["client"]) == len(summary["times"])
    assert all(s > 0 for s in summary["cpu"].values()), summary["cpu"]
    import statistics

    assert statistics.median(summary["cpu"].values()) <= OPEN_MEDIAN_S * OPEN_MARGIN, summary["text"]
    slow = slow_pages(summary)
    assert not slow, (slow, summary["text"])


@needs_chromium
def test_the_browsers_leave_nothing_behind(monkeypatch, request):
    """Issue 33: /tmp held 576 org.chromium.Chromium.* folders (each a singleton
    socket and cookie), one for each launch of a browser by the checks.  A
    browser of scripts/check_site.py and one of scripts/check_math_offline.py,
    launched with this test's own temporary folder, leave it empty."""
    import tempfile

    import check_math_offline
    import check_site

    own_tmp = Path(tempfile.mkdtemp(prefix="egm-t-", dir="/tmp"))  # a short name (check_site.browser_tmp)
    request.addfinalizer(lambda: shutil.rmtree(own_tmp, ignore_errors=True))
    monkeypatch.setenv("TMPDIR", str(own_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))
    browser = check_site._DevTools(390)
    try:
        assert browser.evaluate("1 + 1") == 2
        assert list(own_tmp.glob("org.chromium.*")) == []  # not even while it runs
    finally:
        browser.close()
    assert "<body>" in check_math_offline._chromium(["--dump-dom", "about:blank"])
    assert list(own_tmp.iterdir()) == []


def heavy_page() -> str:
    """A page whose script, before the load event, costs its renderer one and a half times
    the bound of test_pages_open_fast in CPU: a fixed count of steps of a loop, the
    count from the speed of the same loop in node (V8, as in Chromium) here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mathjax_prerender", ROOT / "_ext" / "mathjax_prerender.py")
    prerender = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prerender)
    loop = "let x = 1; for (let i = 0; i < {n}; i++) {{ x = (x * 48271) % 2147483647; }}"
    steps = 20_000_000
    timed = ("const t = process.cpuUsage(); " + loop.format(n=steps)
             + "; const u = process.cpuUsage(t); console.log(x > 0 ? (u.user + u.system) / 1e6 : 0);")
    seconds = float(subprocess.run([prerender.node_executable(), "-e", timed], capture_output=True, text=True,
                                   check=True, timeout=120).stdout)
    n = int(steps * 1.5 * OPEN_PAGE_S * OPEN_MARGIN / max(seconds, 1e-3))
    return f"<script>{loop.format(n=n)} document.title = String(x);</script><p>text</p>"


BAD_PAGES = {
    # each page breaks one rule of the check; the last ones break none
    "raw.html": '<p><span class="math notranslate nohighlight">\\(x^2\\)</span></p>',
    "console.html": '<script>console.error("boom")</script><p>text</p>',
    "exception.html": '<script>null.x</script><p>text</p>',
    "link.html": '<p><a href="missing.html">a page that is not there</a></p>',
    "anchor.html": '<p><a href="fine.html#nowhere">an anchor that is not there</a></p>',
    "image.html": '<p><img src="missing.png" alt="x"></p>',
    "wide.html": '<div style="width: 800px">a block wider than a phone</div>',
    "word.html": '<p><code>' + "a_name_without_any_break_" * 4 + '</code></p>',
    "fine.html": '<p id="here">text, <a href="fine.html#here">a link</a></p>'
                 '<div style="overflow-x: auto"><div style="width: 800px">scrolls in its box</div></div>',
}


@needs_chromium
def test_the_browser_check_fails_a_bad_page(tmp_path: Path):
    """scripts/check_site.py on a small site of pages that each break one rule."""
    # and one page that breaks no rule of the check but is slow to open
    for name, body in {**BAD_PAGES, "heavy.html": heavy_page()}.items():
        (tmp_path / name).write_text(
            '<!DOCTYPE html><html><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{name}</title></head><body>{body}</body></html>")
    (tmp_path / "index.html").write_text('<meta http-equiv="refresh" content="0; url=fine.html" />')
    import tempfile

    # the check's temporary folder (a short name: check_site.browser_tmp), empty at its end
    own_tmp = Path(tempfile.mkdtemp(prefix="egm-t-", dir="/tmp"))
    try:
        proc, report = _check_site(tmp_path, tmp_path / "report.json", env={**os.environ, "TMPDIR": str(own_tmp)})
        litter = list(own_tmp.iterdir())
    finally:
        shutil.rmtree(own_tmp, ignore_errors=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert litter == []
    failing = {rel for rel, verdict in report.items() if not verdict["ok"]}
    assert failing == set(BAD_PAGES) - {"fine.html"}, proc.stdout
    from check_site import speed_and_width

    assert set(slow_pages(speed_and_width(report))) == {"heavy.html"}, speed_and_width(report)["text"]
    problems = {rel: " ".join(v["problems"]) for rel, v in report.items()}
    assert "raw TeX" in problems["raw.html"]
    assert "boom" in problems["console.html"] and "null" in problems["exception.html"]
    assert "broken link" in problems["anchor.html"] and "broken link" in problems["image.html"]
    assert "at 390 px: the page is" in problems["wide.html"] and "at 1280" not in problems["wide.html"]
    assert "at 390 px: the page is" in problems["word.html"]  # no break: this site has no book_fixes.css


# Issue 33: links to anchors far down a long page (the student referee's two in
# chapters/derivation.html) landed in the wrong place: the sections above the
# target, laid out lazily (content-visibility, _ext/static/book_fixes.css), had
# estimated heights, and once the browser laid them out the target moved away.
# Each anchor with the widths it is loaded at and those at which it is also reached
# by a hash change.  Page loads cost about 4 CPU-s each, so the test loads only
# where main failed (derivation, both widths) and one target inside a lazily laid-out
# box of the errata list, at the phone's width (state_of_the_art#sota-sec-arena-a,
# tried when the test was written, landed right before the fix too).
DEEP_ANCHORS = {"chapters/derivation.html#deriv-thm-minors": (WIDTHS, (390,)),
                "chapters/errata.html#erratum-s4-hat-tilde": ((390,), ())}
ANCHOR_PX = 3  # the target's top may be this far from where the theme puts it

# Where the target of the page's hash is against where the theme puts a target:
# the page's scroll-padding-top (below the sticky header) plus the target's
# scroll-margin-top from the window's top; and how far the page is scrolled.
TARGET_PLACE = """(() => {
  const t = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!t) return null;
  const want = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop || '0')
    + parseFloat(getComputedStyle(t).scrollMarginTop || '0');
  const header = document.querySelector('.bd-header-article');
  return {top: t.getBoundingClientRect().top, want: want, scroll: scrollY,
          header: header ? header.getBoundingClientRect().bottom : 0};
})()"""


def anchor_places(site: Path, anchors=DEEP_ANCHORS) -> dict[tuple[str, int, str], dict]:
    """Each of ``anchors`` (anchor: (load widths, hash-change widths)) opened in
    headless Chromium: at each load width loaded with the hash (``load``); at each
    hash-change width loaded at the page's top, then the hash set (``hashchange``,
    as a click on a link within the page does).  Where its target stands a second
    after the page has settled (TARGET_PLACE)."""
    import check_site

    server, port = check_site._serve(site)
    browser = check_site._DevTools(check_site.LOAD_WIDTH)
    places = {}
    try:
        browser.call("Page.enable")
        for anchor, (loads, changes) in anchors.items():
            page, _, target = anchor.partition("#")
            runs = [(w, "load") for w in loads] + [(w, "hashchange") for w in changes]
            for width, how in runs:
                check_site.set_width(browser, width)
                browser.call("Page.navigate", wait_event="Page.loadEventFired", url="about:blank")
                url = f"http://127.0.0.1:{port}/{page}"
                browser.call("Page.navigate", wait_event="Page.loadEventFired",
                             url=url + ("#" + target if how == "load" else ""))
                browser.evaluate(check_site.SETTLE.format(ms=300))
                if how == "hashchange":
                    browser.evaluate(f"location.hash = {json.dumps(target)}; true")
                browser.evaluate(check_site.SETTLE.format(ms=1000))
                places[anchor, width, how] = browser.evaluate(TARGET_PLACE)
    finally:
        browser.close()
        server.shutdown()
        server.server_close()
    return places


def misplaced_anchors(places: dict) -> dict:
    """The anchors whose target is missing, not where the theme puts a target
    (to ANCHOR_PX), or under the sticky header."""
    return {key: p for key, p in places.items()
            if p is None or p["top"] < p["header"] - 1 or abs(p["top"] - p["want"]) > ANCHOR_PX}


def test_misplaced_anchors_are_found():
    good = {"top": 64.0, "want": 64.0, "header": 48}
    assert misplaced_anchors({"good": good, "near": {**good, "top": 64 + ANCHOR_PX}}) == {}
    for bad in ({**good, "top": 64 + ANCHOR_PX + 1}, {**good, "top": 1973}, {**good, "top": -900},
                {**good, "top": 30, "want": 30}):
        assert list(misplaced_anchors({"bad": bad})) == ["bad"]
    assert list(misplaced_anchors({"missing": None})) == ["missing"]


@needs_chromium
def test_deep_anchors_land_on_their_target(built_site: Path):
    """Issue 33: a link to a place far down a long page (derivation at 390 and
    1280 px on load and at 390 px on a hash change; errata, inside a lazily
    laid-out box, at 390 px on load) puts its target where the theme puts one, below the sticky
    header, to ANCHOR_PX, and keeps it there (book_fixes.js lays out what lies
    above it).  Each target is more than ten windows down its page.  With the
    book_fixes.js and .css of main before this test (2026-11-28), the
    derivation's target stood 1,879 to 1,973 px too low at both widths: the
    sections above it, estimated 1,000 px each, made the page seem too short
    to scroll that far."""
    places = anchor_places(built_site)
    assert len(places) == sum(len(a) + len(c) for a, c in DEEP_ANCHORS.values())
    assert misplaced_anchors(places) == {}, misplaced_anchors(places)
    assert all(p["scroll"] > 10 * 900 for p in places.values()), places


def test_api_reference_documents_every_public_name(built_site: Path):
    """Each module of egmlib has a section in api.md, and every name in its __all__
    is rendered there with an anchor the chapters can link to."""
    import importlib
    import inspect
    import pkgutil

    import egmlib

    page = (built_site / "api.html").read_text()
    source = (ROOT / "api.md").read_text()
    modules = [m.name for m in pkgutil.iter_modules(egmlib.__path__) if not m.name.startswith("_")]
    assert modules
    for name in modules:
        assert f".. automodule:: egmlib.{name}" in source, f"egmlib.{name} is missing from api.md"
        module = importlib.import_module(f"egmlib.{name}")
        assert module.__all__, f"egmlib.{name} exports nothing"
        for public in module.__all__:
            obj = getattr(module, public)
            if inspect.isfunction(obj) or inspect.isclass(obj):  # aliases carry a #: comment instead
                doc = inspect.getdoc(obj) or ""
                assert doc.strip(), f"egmlib.{name}.{public} has no docstring"
                # dataclasses and NamedTuples get "Name(field, ...)" when undocumented
                assert not doc.startswith(f"{public}("), f"egmlib.{name}.{public} has only a generated docstring"
            if inspect.isfunction(obj) and inspect.signature(obj).parameters:
                assert "Parameters\n----------" in doc, f"egmlib.{name}.{public}: no numpydoc Parameters section"
            assert f'id="egmlib.{name}.{public}"' in page, f"egmlib.{name}.{public} is not in the API reference"


def test_site_links_only_addresses_the_setting_produces(built_site: Path):
    """No page of the book links the project's hosts (GitHub, Binder, Colab) except where
    the public address of pyproject.toml says (tests/test_public_address.py)."""
    from test_public_address import assert_only_produced, governed_links, pa

    address = pa.read(ROOT)
    chapters = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "chapters").glob("*.ipynb"))]
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > len(chapters)
    for page in pages:
        links = governed_links(page.read_text(errors="replace"))
        assert_only_produced(links, address, chapters, str(page.relative_to(built_site)))


def test_landing_page_bibtex_parses(built_site: Path):
    """The "How to cite" box of the landing page is BibTeX that pybtex reads, with the
    version, year and (when set) URL of pyproject.toml."""
    import html
    import re

    from pybtex.database import parse_string
    from test_public_address import pa

    landing = yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]  # index.html only redirects there
    page = (built_site / f"{landing}.html").read_text()
    box = re.search(r'<div class="[^"]*how-to-cite[^"]*".*?<pre>(.*?)</pre>', page, re.S)
    assert box, "no BibTeX box on the landing page"
    entries = parse_string(html.unescape(re.sub(r"<[^>]+>", "", box.group(1))), "bibtex").entries
    assert len(entries) == 1
    entry = next(iter(entries.values()))
    address = pa.read(ROOT)
    assert entry.fields["version"] == address.version
    assert entry.fields["year"] == str(address.date.year)
    assert entry.fields.get("url") == (address.repository or None)
    assert entry.fields["howpublished"] and entry.fields["title"]  # issue 33 item 11


def test_section_height_estimates(tmp_path: Path):
    """_ext/section_heights.py writes each lazily laid-out box's estimated heights
    into its own start tag, and nothing else: a formula (its glyphs, not its
    hidden MathML) and a code block count once, a closed fold counts its title
    only, a tall figure scales to the column, and the page around is unchanged."""
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location("section_heights", ROOT / "_ext" / "section_heights.py")
    sh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sh)
    math = ('<mjx-container class="MathJax" jax="CHTML"><mjx-math>' + '<mjx-c class="mjx-c1"></mjx-c>' * 5
            + "</mjx-math><mjx-assistive-mml>" + "x" * 500 + "</mjx-assistive-mml></mjx-container>")
    text = "word " * 200
    fold = ('<details class="admonition hide above-input"><summary><p class="collapsed admonition-title">'
            "Show the code</p></summary><pre>" + "x = 1\n" * 300 + "</pre></details>")
    # a PNG header of 1000 x 2000 px
    (tmp_path / "tall.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + (1000).to_bytes(4, "big")
                                        + (2000).to_bytes(4, "big"))
    page = ('<nav><section id="n"><section id="m">outside</section></section></nav>'
            '<article class="bd-article"><section id="top"><h1>T</h1>'
            f'<section id="a" style="color: red"><h2>A</h2><p>{text} {math}</p></section>'
            f'<section id="b"><h2>B</h2><p>{text}</p>{fold}</section>'
            f'<section id="c"><h2>C</h2><p>{text}</p><pre>' + "y = 2\n" * 20 + "</pre></section>"
            '<section id="d"><h2>D</h2><img src="tall.png"/></section>'
            '<div class="egm-lazy"><p>one</p></div></section></article>')
    out = sh.annotate(page, tmp_path / "page.html")
    found = re.findall(r'<(section|div)([^>]*) style="([^"]*)--egm-h-phone: (\d+)px; --egm-h-wide: (\d+)px"', out)
    assert [(t, a) for t, a, *_ in found] == [("section", ' id="a"'), ("section", ' id="b"'), ("section", ' id="c"'),
                                             ("section", ' id="d"'), ("div", ' class="egm-lazy"')]
    assert found[0][2] == "color: red; "  # an existing style is kept
    estimates = re.compile(r"(; )?--egm-h-phone: \d+px; --egm-h-wide: \d+px")
    assert estimates.sub("", out).replace(' style=""', "") == page
    # a page that an earlier build wrote (Sphinx rewrites only the pages that changed)
    assert sh.annotate(out, tmp_path / "page.html") == out
    h = {f[1].split('"')[1]: (int(f[3]), int(f[4])) for f in found}
    # a phone's column holds fewer characters: more lines, a taller box
    assert h["a"][0] > h["a"][1] and h["b"][0] > h["b"][1]
    # the hidden MathML counts for nothing, the five glyphs for little
    assert abs(h["a"][0] - h["b"][0]) < 3 * sh.WEIGHTS["phone"]["fold"]
    # the folded code counts as its title (300 lines would be 5,000 px); 20 open lines count
    assert h["b"][0] < h["c"][0] - 15 * sh.WEIGHTS["phone"]["code"]
    # the figure scales to the column's width, keeping its shape
    assert h["d"][0] > 2 * sh.COLUMNS["phone"] and h["d"][1] > 2 * sh.COLUMNS["wide"] * 0.9
