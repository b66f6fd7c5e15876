"""A reader's check of the built site in a real browser (headless Chromium).

Serves ``_build/html`` on 127.0.0.1 and opens every page, with all other hosts
unresolvable, in headless Chromium (two browsers side by side, sharing the pages)
driven through its DevTools protocol (over a pipe: no extra package).  Each page
is loaded once, at 390 px (a phone), checked, then resized to 1280 px (a laptop)
and checked again: a resize lays the page out anew without typesetting its
formulas again, which is most of a load's cost.  It fails on
  * math left as raw TeX, or a page with math and no typeset formula (MathJax
    must typeset every formula offline),
  * a broken internal link or image (checked against the files of the site),
  * a console error or an uncaught exception reported by the page,
  * horizontal overflow: the page is wider than the window (its document
    scrolls sideways); a wide equation or table that scrolls inside its own box
    is fine.  The widest offending elements are named;
  * a display equation cut off (wider than a box that does not scroll), one
    that scrolls with no visible cue (shadow or scrollbar), or one that its
    number covers; an inline formula wider than its paragraph that does not
    scroll in a box of its own.
It also lists, at 390 px, every display equation wider than its box (folds
opened; issue 33 item 1: the book may have at most ``WIDE_EQUATIONS``), and
measures each page's time from navigation to typeset maths twice: by the clock,
in the page's own timeline (``TIMING``: what a reader waits, which grows with
the other jobs on the machine; the check prints the machine's load with it), and
as the CPU seconds of the browser's renderers in the same span
(``renderer_time``: what the page costs, which hardly does), and how many
formulas the page leaves to a MathJax in the browser (none: the maths is typeset
at build time, _ext/mathjax_prerender.py); the last lines of its output say
these, with the median and the slowest pages (issue 33 item 10).
It also compares, at both widths, each page's height at load (the sections
the browser lays out lazily at their estimated heights, _ext/section_heights.py)
with its height laid out whole, and prints the range and the furthest pages
(``page_heights``; tests/test_book_build.py bounds them by ``HEIGHT_TOLERANCE``).
``--json FILE`` writes the verdict of every page and width.

With ``--screenshots DIR`` (``make screenshots``, a review tool, not a test),
each page is also photographed whole at both widths (laid out whole first: the
sections the browser lays out lazily have an estimated height until then):
``<page>.w1280.<k>.png``
and ``<page>.w390.<k>.png``, the page cut into strips (``STRIP`` px high) laid
side by side, ``COLUMNS`` strips to a sheet, so that a reviewer can look at every
page at both widths, top to bottom.

Usage: python scripts/check_site.py [_build/html] [--json out.json] [--screenshots _build/screenshots]
"""

from __future__ import annotations

import argparse
import base64
import collections
import concurrent.futures
import fcntl
import html.parser
import io
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_math_offline import FLAGS, _serve  # noqa: E402

WIDTHS = (1280, 390)
LOAD_WIDTH = 390  # each page is loaded at this width (as a phone would), then resized
BROWSERS = 2  # headless browsers side by side (two cores)
HEIGHT = {1280: 900, 390: 844}  # the window of the checks (a laptop, a phone)
REDIRECT = re.compile(r'<meta http-equiv="refresh" content="\d+;\s*url=([^"]*)"', re.I)
RAW_TEX = re.compile(r'class="math[^"]*"[^>]*>\s*(\\\(|\\\[|\$)')
MATH = re.compile(r'class="math[ "]')
STRIP = 2000  # px of page per strip
COLUMNS = {1280: 1, 390: 4}  # strips side by side on one sheet
TIMEOUT = 600  # s for one answer of the browser (a long page on a machine shared by
# many jobs took more than 120 s to load: the limit is for a browser that hangs)
# Console errors that are no fault of the book: pydata-sphinx-theme reads the
# reader's colour mode from localStorage, which is empty on a first visit, and
# says so with console.error before it falls back to "auto".
HARMLESS = ("Got invalid theme mode: . Resetting to auto.",)


def browser_tmp() -> str:
    """The folder for a browser's temporary files: the system's (TMPDIR), unless
    its name is too long for the browser's singleton socket (a Unix socket's
    path has at most 107 bytes; Chromium's adds about 60 to it), then /tmp."""
    base = tempfile.gettempdir()
    return base if len(base) <= 40 else "/tmp"


class _DevTools:
    """One headless Chromium, driven through its DevTools protocol over a pipe
    (``--remote-debugging-pipe``: the browser reads commands on fd 3 and writes
    answers on fd 4, each a JSON text ended by a NUL byte)."""

    def __init__(self, width: int) -> None:
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            raise SystemExit("chromium not found (apt-get install chromium)")
        # The browser's profile and its temporary files (TMPDIR: its singleton
        # socket and lock, org.chromium.Chromium.*, 576 of them were left in /tmp,
        # one a launch) in one directory that close() removes.
        self.profile = tempfile.TemporaryDirectory(prefix="egm-c-", dir=browser_tmp(),
                                                   ignore_cleanup_errors=True)
        own_tmp = Path(self.profile.name) / "t"
        own_tmp.mkdir()
        to_browser, self._send = os.pipe()
        self._receive, from_browser = os.pipe()

        def pipes_as_3_and_4():  # in the child, before exec (moved high first: no clash)
            read = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10)
            write = fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={Path(self.profile.name) / 'p'}", "--remote-debugging-pipe",
             "--hide-scrollbars", f"--window-size={width},900", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=pipes_as_3_and_4, env={**os.environ, "TMPDIR": str(own_tmp)})
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self.next_id = 0
        self.session = None
        self.events: list[dict] = []  # events of the page, in order, until taken
        try:
            deadline = time.monotonic() + 60
            while True:
                pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
                if pages or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            self.session = self.call("Target.attachToTarget", targetId=pages[0]["targetId"],
                                     flatten=True)["sessionId"]
        except Exception:
            self.close()
            raise

    def _message(self) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._receive], [], [], TIMEOUT)
            chunk = os.read(self._receive, 1 << 20) if ready else b""
            if not chunk:
                raise RuntimeError("chromium stopped answering" if ready else
                                   f"chromium gave no answer in {TIMEOUT} s")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    def call(self, method: str, wait_event: str | None = None, **params):
        """Send a command (to the page once attached) and return its result; with
        ``wait_event``, also wait until that event of the page has come."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "SystemInfo.")):
            message["sessionId"] = self.session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        result, seen = None, wait_event is None
        while result is None or not seen:
            message = self._message()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message["result"]
            elif "method" in message:
                self.events.append(message)
                seen = seen or message["method"] == wait_event
        return result

    def evaluate(self, expression: str):
        answer = self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"in the page: {answer['exceptionDetails'].get('text')}")
        return answer["result"].get("value")

    def close(self) -> None:
        """Close the browser as a reader would (Browser.close: it removes its own
        singleton files), or stop it if it does not answer; then remove its
        profile and temporary files (nothing of it is left behind)."""
        if self.proc.poll() is None:
            try:
                self.next_id += 1
                os.write(self._send, json.dumps({"id": self.next_id, "method": "Browser.close"}).encode() + b"\0")
            except OSError:
                pass
        for fd in (self._send, self._receive):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.profile.cleanup()


# MathJax typesets after the load event; then fonts and images settle.
SETTLE = ("(window.MathJax && MathJax.startup && MathJax.startup.promise"
          " ? MathJax.startup.promise : Promise.resolve())"
          ".then(() => document.fonts.ready)"
          ".then(() => new Promise(r => setTimeout(r, {ms}))).then(() => true)")

# Issue 33 item 10: from navigation to typeset maths, in the page's own
# timeline (performance.now() counts from the navigation's start): the moment
# the load event has come, MathJax (if the page still loads it) has typeset
# every formula, and the fonts are in, and the browser has drawn the next frame
# (what the page's scripts did at the load event is laid out and painted: the
# reader sees the maths).  Installed in every new document before its own
# scripts run (Page.addScriptToEvaluateOnNewDocument).  A clock: on a machine
# shared with other jobs it grows with their load (the check prints the load).
TIMING = """window.__egmTypeset = null;
addEventListener('load', () => {
  const mj = window.MathJax;
  const typeset = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
  typeset.then(() => document.fonts.ready)
    .then(() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0))))
    .then(() => { window.__egmTypeset = Math.round(performance.now()); });
});"""

# Formulas left for the reader's browser to typeset: a MathJax script on the
# page, or TeX between MathJax's delimiters in the HTML as served.
CLIENT_TYPESET = """(() => {
  const scripts = [...document.scripts].filter(s => /mathjax/i.test(s.src || '')).length;
  return scripts ? document.querySelectorAll('.math').length : 0;
})()"""

# The document's width against the window's, and the outermost elements that
# stick out of the window (not those inside a box that scrolls or clips them).
OVERFLOW = """(() => {
  const root = document.documentElement, view = root.clientWidth;
  const wide = Math.max(root.scrollWidth, document.body ? document.body.scrollWidth : 0);
  const culprits = [];
  if (wide > view) {
    const clipped = el => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') return true;
      }
      return false;
    };
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
      if (r.width > 0 && r.right > view + 0.5 && p.right <= view + 0.5 && !clipped(el)) {
        const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
          + (typeof el.className === 'string' && el.className.trim()
             ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
        culprits.push(name + ' to ' + Math.round(r.right) + ' px: '
          + (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60));
        if (culprits.length >= 5) break;
      }
    }
  }
  return {view: view, wide: wide, culprits: culprits};
})()"""


# Issue 26: a display equation wider than the box that shows it must scroll in
# that box, with a visible cue (a shadow: background gradients, or a scrollbar
# that takes room), and its number must cover none of it.  Run last on a page.
EQUATIONS = """(() => {
  const problems = [], view = document.documentElement.clientWidth;
  // A scroll cue's covers (the first colour of its gradients) must be the
  // colour the formula stands on, or they show as patches at its two ends
  // (white in a lemma's green box, issue 26 item 9).
  const rgba = t => { const m = /rgba?\\(([^)]*)\\)/.exec(t || '');
    if (!m) return null; const v = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const patches = el => {
    const image = getComputedStyle(el).backgroundImage;
    if (!image.includes('gradient')) return null;
    const cue = rgba(image);
    if (!cue || cue[3] < 1) return null;
    const layers = [];
    for (let a = el; a; a = a.parentElement) {
      const c = rgba(getComputedStyle(a).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let under = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) {
      const c = layers[i]; under = under.map((x, k) => c[k] * c[3] + x * (1 - c[3]));
    }
    if (Math.max(...under.map((x, k) => Math.abs(x - cue[k]))) <= 4) return null;
    return 'shows patches: its scroll cue covers in rgb(' + cue.slice(0, 3).join(', ')
      + ') a box of rgb(' + under.map(Math.round).join(', ') + ')';
  };
  const name = m => { const d = m.closest('div.math');
    return d && d.id ? '#' + d.id : (m.textContent || '').trim().slice(0, 40); };
  for (const mjx of document.querySelectorAll('mjx-container[display="true"]')) {
    const content = mjx.querySelector('mjx-math');
    if (!content) continue;
    const c = content.getBoundingClientRect();
    if (c.width === 0) continue;  // in a closed fold: not laid out
    let box = null;  // the nearest box that clips it (scrolling or not)
    for (let a = mjx; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') { box = a; break; }
    }
    const b = box ? box.getBoundingClientRect() : {left: 0, right: view, top: c.top, bottom: c.bottom};
    if (c.right > b.right + 1 || c.left < b.left - 1) {
      const style = box ? getComputedStyle(box) : null;
      if (!box || !['auto', 'scroll'].includes(style.overflowX)) {
        problems.push('equation ' + name(mjx) + ' is cut off: ' + Math.round(c.width) + ' px in a '
                      + Math.round(b.right - b.left) + ' px box that does not scroll');
      } else if (!style.backgroundImage.includes('gradient') && box.offsetHeight - box.clientHeight < 2) {
        problems.push('equation ' + name(mjx) + ' scrolls with no visible cue: '
                      + Math.round(c.width) + ' px in a ' + Math.round(b.right - b.left) + ' px box');
      }
    }
    const patch = patches(mjx);
    if (patch) problems.push('equation ' + name(mjx) + ' ' + patch);
    const number = mjx.closest('div.math') && mjx.closest('div.math').querySelector('.eqno');
    if (number) {
      const e = number.getBoundingClientRect();
      const left = Math.max(c.left, b.left, e.left), right = Math.min(c.right, b.right, e.right);
      const top = Math.max(c.top, e.top), bottom = Math.min(c.bottom, e.bottom);
      if (right - left > 1 && bottom - top > 1) {
        problems.push('equation ' + name(mjx) + ' is covered by its number');
      }
    }
  }
  return problems;
})()"""


# Issue 26: MathJax does not break inline math, so a long inline formula on a
# phone ran past its paragraph and was cut by the article's edge.  An inline
# formula wider than the block it stands in must scroll in a box of its own
# (_ext/static/book_fixes.js marks it, book_fixes.css lets it scroll).
INLINE = """(() => {
  const problems = [];
  for (const mjx of document.querySelectorAll('mjx-container:not([display="true"])')) {
    let block = mjx.parentElement;
    while (block && getComputedStyle(block).display === 'inline') block = block.parentElement;
    if (!block) continue;
    const width = mjx.getBoundingClientRect().width, room = block.clientWidth;
    if (width === 0 || room === 0 || width <= room + 1) continue;
    if (!['auto', 'scroll'].includes(getComputedStyle(mjx).overflowX)) {
      problems.push('inline formula ' + (mjx.textContent || '').trim().slice(0, 40) + ' is cut off: '
                    + Math.round(width) + ' px in a ' + Math.round(room) + ' px paragraph');
    }
  }
  return problems;
})()"""


# Issue 33 item 1: every display equation that needs sideways scrolling, with
# the room it has (the box that scrolls it, or the page), by its label (the
# equation's anchor) or its first characters; the book may have at most
# WIDE_EQUATIONS of them at 390 px.  Folds (proofs, solutions, hidden cells) are
# opened for the count, so that what a reader unfolds counts too, then closed.
WIDE = """(() => {
  const opened = [];
  for (const d of document.querySelectorAll('details:not([open])')) { d.open = true; opened.push(d); }
  const hidden = [...document.querySelectorAll('.toggle-hidden')];
  for (const el of hidden) el.classList.remove('toggle-hidden');
  const view = document.documentElement.clientWidth, wide = [];
  for (const mjx of document.querySelectorAll('mjx-container[display="true"]')) {
    const content = mjx.querySelector('mjx-math');
    if (!content) continue;
    const c = content.getBoundingClientRect();
    if (c.width === 0) continue;
    let box = null;
    for (let a = mjx; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') { box = a; break; }
    }
    const b = box ? box.getBoundingClientRect() : {left: 0, right: view};
    if (c.right > b.right + 1 || c.left < b.left - 1) {
      const d = mjx.closest('div.math'), eqno = d && d.querySelector('.eqno');
      let label = d && d.id ? '#' + d.id : '';
      if (eqno) label += ' ' + eqno.textContent.replace(/[#\\s]/g, '');
      const mml = mjx.querySelector('mjx-assistive-mml');
      const text = ((mml || mjx).textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 50);
      wide.push({label: label.trim(), text: text, width: Math.round(c.width),
                 box: Math.round(b.right - b.left)});
    }
  }
  // Issue 33 item 1 (inline): every inline formula (a MathJax container that
  // is not a display; _ext/mathjax_prerender.py cuts a long one into pieces
  // after its relations, each its own container) whose typeset content reaches
  // past the right (or left) edge of the room it has: the content box of the
  // block it stands in (its paragraph, list item, table cell), the window, and
  // every box around it that clips or scrolls, the formula's own included (a
  // formula that book_fixes.js lets scroll in a box of its own is wider than
  // its line: it must be a display, not inline).  One entry per formula (the
  // span Sphinx wrote around its pieces), with how many of its pieces stick out.
  const inline = [], seen = new Map();
  const content = (el, r) => { const s = getComputedStyle(el);
    return {left: r.left + el.clientLeft + parseFloat(s.paddingLeft),
            right: r.left + el.clientLeft + el.clientWidth - parseFloat(s.paddingRight)}; };
  for (const mjx of document.querySelectorAll('mjx-container:not([display="true"])')) {
    const math = mjx.querySelector('mjx-math');
    if (!math) continue;
    const c = math.getBoundingClientRect();
    if (c.width === 0) continue;  // not laid out (hidden)
    if (mjx.closest('nav, header, .bd-sidebar-primary, .bd-sidebar-secondary')) continue;  // the text, not the drawers
    let left = -Infinity, right = Infinity, inScroller = false;
    let block = mjx.parentElement;
    while (block && getComputedStyle(block).display === 'inline') block = block.parentElement;
    if (block) { const r = content(block, block.getBoundingClientRect());
      left = Math.max(left, r.left); right = Math.min(right, r.right); }
    for (let a = mjx; a && a !== document.body; a = a.parentElement) {
      const overflow = getComputedStyle(a).overflowX;
      if (overflow === 'visible') continue;
      // a formula in a table (or an output) that scrolls sideways as a whole
      // is measured against its cell only: the box may be scrolled anywhere
      if (a !== mjx && ['auto', 'scroll'].includes(overflow)) { inScroller = true; break; }
      const r = a.getBoundingClientRect();
      left = Math.max(left, r.left + a.clientLeft); right = Math.min(right, r.left + a.clientLeft + a.clientWidth);
    }
    if (!inScroller) { left = Math.max(left, 0); right = Math.min(right, view); }
    if (c.right <= right + 1 && c.left >= left - 1) continue;
    const span = mjx.closest('span.math') || mjx;
    let entry = seen.get(span);
    if (!entry) {
      const text = [...span.querySelectorAll('mjx-assistive-mml')].map(m => m.textContent).join(' ')
        .replace(/\\s+/g, ' ').trim();
      const section = span.closest('section[id], div[id]');
      entry = {text: text.slice(0, 60), pieces: 0, over: 0, room: Math.round(right - left),
               where: section ? section.id : ''};
      seen.set(span, entry);
      inline.push(entry);
    }
    entry.pieces += 1;
    entry.over = Math.max(entry.over, Math.round(Math.max(c.right - right, left - c.left)));
  }
  // Code a reader is shown (a cell's input, a code block) wider than its box
  // (it scrolls, with a cue): the box, by its longest line (the quickstart's
  // code must fit a phone, issue 33 item 1).
  const code = [];
  for (const pre of document.querySelectorAll('div.highlight pre')) {
    if (pre.clientWidth === 0 || pre.scrollWidth <= pre.clientWidth + 1) continue;
    const lines = pre.textContent.split('\\n');
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a), '');
    code.push({line: longest.trim().slice(0, 60), chars: longest.length,
               width: pre.scrollWidth, box: pre.clientWidth});
  }
  for (const d of opened) d.open = false;
  for (const el of hidden) el.classList.add('toggle-hidden');
  return {display: wide, inline: inline, code: code};
})()"""
WIDE_EQUATIONS = 10  # at most this many display equations of the book scroll at 390 px


def equation_problems(browser: "_DevTools") -> list[str]:
    """What EQUATIONS and INLINE find on the page loaded in ``browser``."""
    return browser.evaluate(EQUATIONS) + browser.evaluate(INLINE)


def _problem(event: dict) -> str | None:
    """A console error, uncaught exception or failed load reported by the page."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text", "")
    elif method == "Runtime.consoleAPICalled":
        text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
        if params.get("type") not in ("error", "assert") and "error" not in text.lower():
            return None
    elif method == "Log.entryAdded":
        entry = params.get("entry", {})
        text = f"{entry.get('text', '')} {entry.get('url', '')}".strip()
        if entry.get("level") != "error" and "error" not in text.lower():
            return None
    else:
        return None
    if "favicon" in text or any(known in text for known in HARMLESS):
        return None
    return f"{method.split('.')[1]}: {text[:300]}"


# The checks measure the whole page as a reader who scrolls through it sees it:
# the sections the browser lays out lazily (content-visibility: auto,
# _ext/static/book_fixes.css) are laid out, and book_fixes.js's fixes, which it
# makes to each formula as it comes near the window, are made to every formula.
# Run after the time to typeset maths is taken (issue 33 item 10).
WHOLE_PAGE = """(() => {
  const s = document.createElement('style');
  s.textContent = '* { content-visibility: visible !important; }';
  document.head.appendChild(s);
  if (window.egmBookFixes) window.egmBookFixes.all();
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));
})()"""


def _seen(browser: _DevTools, thread: float | None = None) -> dict:
    """What the page now loaded in ``browser`` shows at the current window size
    (``thread``: the renderers' CPU seconds when its maths was typeset, if
    already taken)."""
    browser.evaluate(SETTLE.format(ms=300))
    if thread is None:
        thread = renderer_time(browser)
    browser.evaluate(WHOLE_PAGE)
    height = browser.evaluate(HEIGHT_NOW)
    dom = browser.evaluate("document.documentElement.outerHTML")
    overflow = browser.evaluate(OVERFLOW)
    equations = equation_problems(browser)
    phone = browser.evaluate("document.documentElement.clientWidth") < 600
    wide = browser.evaluate(WIDE) if phone else {"display": [], "inline": [], "code": []}
    browser.evaluate("new Promise(r => setTimeout(r, 0)).then(() => true)")  # late messages in
    return {"formulas": dom.count("<mjx-container"), "raw_tex": len(RAW_TEX.findall(dom)),
            "math": bool(MATH.search(dom)),
            "console": [p for p in map(_problem, browser.events) if p],
            "view": overflow["view"], "wide": overflow["wide"], "culprits": overflow["culprits"],
            "equations": equations, "wide_equations": wide["display"], "wide_inline": wide["inline"],
            "height_full": height,
            "wide_code": wide["code"],
            # issue 33 item 10: the page's own timeline (TIMING)
            "typeset_ms": browser.evaluate("window.__egmTypeset || null"), "thread_s": thread,
            "client_typeset": browser.evaluate(CLIENT_TYPESET)}


def set_width(browser: _DevTools, width: int) -> None:
    """The window of the checks at ``width`` px (a phone below 600 px)."""
    browser.call("Emulation.setDeviceMetricsOverride", width=width, height=HEIGHT[width],
                 deviceScaleFactor=1, mobile=width < 600)


def renderer_time(browser: _DevTools) -> float:
    """CPU seconds that the browser's renderer processes (the pages' main threads,
    their compositors and rasterisers) have used so far (DevTools'
    SystemInfo.getProcessInfo): unlike a clock, it hardly grows when other jobs
    share the machine's cores.  Summed over the renderers alive, so that a page
    that gets a new process on navigation is counted whole."""
    info = browser.call("SystemInfo.getProcessInfo")["processInfo"]
    return sum(p.get("cpuTime", 0.0) for p in info if p.get("type") == "renderer")


def warm(browser: _DevTools, url: str) -> None:
    """Open ``url`` in ``browser`` and wait until it has settled, measuring nothing."""
    set_width(browser, LOAD_WIDTH)
    browser.call("Page.navigate", wait_event="Page.loadEventFired", url=url)
    browser.evaluate(SETTLE.format(ms=300))
    browser.events.clear()


# Issue 33 (the site on a phone): the page's height as the browser has it now
# (its scroll bar's length): before the page is laid out whole (WHOLE_PAGE), the
# sections it lays out lazily count with their estimated heights
# (contain-intrinsic-size, _ext/section_heights.py); after, with their own.
HEIGHT_NOW = "document.documentElement.scrollHeight"


def check_page(browser: _DevTools, url: str, other_widths=(), width: int = LOAD_WIDTH) -> dict:
    """Load ``url`` once in ``browser`` and return what the page shows, with
    ``cpu_s``: the renderers' CPU seconds from navigation to typeset maths
    (issue 33 item 10; the page's own timeline, ``typeset_ms``, is a clock),
    and ``heights_at_load``: the page's height once loaded (its lazily laid-out
    sections at their estimates) at this width and, resized, at each of
    ``other_widths`` (the sections near the top, laid out at the first width,
    are laid out again at the next), by width."""
    browser.events.clear()
    before = renderer_time(browser)
    browser.call("Page.navigate", wait_event="Page.loadEventFired", url=url)
    browser.evaluate(SETTLE.format(ms=300))
    thread = renderer_time(browser)
    heights = {width: browser.evaluate(HEIGHT_NOW)}
    for other in other_widths:
        set_width(browser, other)
        browser.evaluate(NEXT_FRAME)
        heights[other] = browser.evaluate(HEIGHT_NOW)
    if other_widths:
        set_width(browser, width)
        browser.evaluate(NEXT_FRAME)
    seen = _seen(browser, thread)
    seen["cpu_s"] = round(seen["thread_s"] - before, 3)
    seen["heights_at_load"] = heights
    return seen


# two animation frames: the layout at a new window size is done
NEXT_FRAME = ("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
              ".then(() => true)")


def check_page_at_widths(browser: _DevTools, url: str, widths=WIDTHS) -> dict:
    """``url`` loaded ONCE, at the first of ``widths``, then the window resized to
    each of the others: what the page shows at each width (issue 22: typesetting
    a page's formulas is most of the cost of a load, and a resize re-lays the page
    out without it).  The console of each width holds what the page reported
    while it was loaded or resized to that width."""
    seen = {}
    for k, width in enumerate(widths):
        set_width(browser, width)
        if k == 0:
            seen[width] = check_page(browser, url, widths[1:], width)
            at_load = seen[width].pop("heights_at_load")
        else:
            browser.events.clear()
            browser.evaluate(NEXT_FRAME)
            seen[width] = _seen(browser)
    for width in widths:
        seen[width]["height_at_load"] = at_load.get(width)
    return seen


def screenshots(url: str, width: int, stem: Path) -> list[Path]:
    """The whole page at ``width`` CSS px, as sheets of side-by-side strips."""
    from PIL import Image

    browser = _DevTools(width)
    try:
        browser.call("Page.enable")
        # a viewport one strip high, scrolled strip by strip (capturing beyond the
        # viewport re-lays out the whole page for every strip: many times slower)
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=STRIP,
                     deviceScaleFactor=1, mobile=width < 600)
        browser.call("Page.navigate", wait_event="Page.loadEventFired", url=url)
        # MathJax typesets after the load event; then fonts and images settle.  Sticky
        # headers would cover the top of every strip: they scroll with the page here.
        browser.call("Runtime.evaluate", awaitPromise=True, expression=(
            "(window.MathJax && MathJax.startup && MathJax.startup.promise"
            " ? MathJax.startup.promise : Promise.resolve())"
            ".then(() => document.fonts.ready).then(() => {"
            " const s = document.createElement('style');"
            " s.textContent = '.bd-header-article, .header-article, .bd-header, .sticky-top"
            " { position: static !important; }';"
            " document.head.appendChild(s); })"
            ".then(() => new Promise(r => setTimeout(r, 500))).then(() => true)"))
        # the sections the browser lays out lazily (content-visibility, book_fixes.css)
        # stand in with an estimated height until laid out: the page's height was an
        # estimate, and the strips stopped about halfway down a long page.  Laid out
        # whole first (with every formula fixed, as the checks measure it).
        browser.evaluate(WHOLE_PAGE)
        height = int(browser.call("Page.getLayoutMetrics")["cssContentSize"]["height"])
        strips = []
        for top in range(0, height, STRIP):
            shown = min(top, max(height - STRIP, 0))  # the browser scrolls no further
            browser.call("Runtime.evaluate", awaitPromise=True, expression=(
                f"window.scrollTo(0, {shown}); new Promise(r => requestAnimationFrame("
                "() => requestAnimationFrame(() => r(true))))"))
            data = browser.call("Page.captureScreenshot", format="png")["data"]
            image = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
            # keep what this strip adds below the previous one
            strips.append(image.crop((0, top - shown, width, min(STRIP, height - shown))))
    finally:
        browser.close()
    columns, gap = COLUMNS.get(width, 1), 16
    sheets = []
    for k in range(0, len(strips), columns):
        group = strips[k:k + columns]
        sheet = Image.new("RGB", (columns * width + (columns - 1) * gap, max(s.height for s in group)),
                          (160, 160, 160))
        for i, strip in enumerate(group):
            sheet.paste(strip, (i * (width + gap), 0))
        path = stem.with_name(f"{stem.name}.w{width}.{k // columns + 1:02d}.png")
        sheet.save(path)
        sheets.append(path)
    return sheets


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if key in a and a[key] and tag in ("a", "img", "script", "link"):
                self.targets.append(a[key])


def broken_links(root: Path, page: Path, ids_of) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    bad = []
    for target in parser.targets:
        url = urllib.parse.urlparse(target)
        if url.scheme or url.netloc or target.startswith(("mailto:", "javascript:", "data:")):
            continue
        path = url.path
        dest = page if not path else (page.parent / urllib.parse.unquote(path)).resolve()
        if dest.is_dir():
            dest = dest / "index.html"
        if not dest.exists():
            bad.append(target)
        elif url.fragment and dest.suffix == ".html" and url.fragment not in ids_of(dest):
            bad.append(target)
    return bad


def site_pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html")
                  if "_static" not in p.parts and "_sources" not in p.parts
                  and p.name not in ("genindex.html", "search.html"))


def verdict(result: dict, width: int) -> list[str]:
    """What is wrong on one page at one width (nothing: the page passes)."""
    problems = []
    if result["raw_tex"]:
        problems.append(f"{result['raw_tex']} formulas left as raw TeX")
    if result["math"] and not result["formulas"]:
        problems.append("math on the page but no typeset formula")
    problems += result["console"][:5]
    problems += result.get("equations", [])[:5]
    if result["wide"] > result["view"]:
        problems.append(f"the page is {result['wide']} px wide in a {result['view']} px window at {width} px")
        problems += ["  sticks out: " + c for c in result["culprits"]]
    return problems


def _by_page(found: list[dict]) -> str:
    """"; page n, page n" for ``found``, most first ("" when empty)."""
    counts = collections.Counter(w["page"] for w in found).most_common()
    return "; " + ", ".join(f"{r} {n}" for r, n in counts) if counts else ""


def speed_and_width(report: dict, load: tuple[float, ...] | None = None) -> dict:
    """Issue 33 items 1 and 10 over the pages of ``report``: the display
    equations that scroll at 390 px, and each page's time from navigation to
    typeset maths (at its load, 390 px), with the median and the slowest pages,
    twice: ``times``, the wall clock (the page's own timeline, ``TIMING``), and
    ``cpu``, the CPU seconds of the browser's renderers (``renderer_time``) in
    the same span.  ``load``: the machine's load average while the check ran,
    printed with them (the wall clock grows with it)."""
    wide, inline, code, times, client, cpu = [], [], [], {}, {}, {}
    for rel, verdict in report.items():
        seen = verdict.get("widths", {}).get(str(LOAD_WIDTH))
        if not seen:
            continue
        wide += [dict(page=rel, **w) for w in seen.get("wide_equations", [])]
        inline += [dict(page=rel, **w) for w in seen.get("wide_inline", [])]
        code += [dict(page=rel, **w) for w in seen.get("wide_code", [])]
        if seen.get("typeset_ms") is not None:
            times[rel] = seen["typeset_ms"] / 1000
        client[rel] = seen.get("client_typeset", 0)
        if seen.get("cpu_s") is not None:
            cpu[rel] = seen["cpu_s"]
    ordered = sorted(times.items(), key=lambda kv: -kv[1])
    median = statistics.median(times.values()) if times else None
    lines = [f"display equations that scroll at {LOAD_WIDTH} px: {len(wide)}"
             f" (at most {WIDE_EQUATIONS})"]
    lines += [f"  {w['page']} {w['label'] or w['text']!r}: {w['width']} px in {w['box']} px"
              for w in wide]
    lines.append(f"inline formulas past the edge of their column at {LOAD_WIDTH} px: {len(inline)}"
                 f" ({sum(w['pieces'] for w in inline)} pieces) on"
                 f" {len({w['page'] for w in inline})} pages (must be 0)" + _by_page(inline))
    lines += [f"  {w['page']} #{w['where']} {w['text']!r}: {w['pieces']} piece(s), {w['over']} px past"
              f" {w['room']} px" for w in inline]
    lines.append(f"code boxes wider than their box at {LOAD_WIDTH} px (they scroll): {len(code)}"
                 + _by_page(code))
    # the two measures of the same span, each with its median and slowest pages:
    # the clock a reader waits (the page's own timeline), which grows with the
    # other jobs on the machine, and the renderers' CPU, which hardly does
    if times:
        lines.append(f"wall clock, navigation to typeset maths at {LOAD_WIDTH} px: median {median:.2f} s over "
                     f"{len(times)} pages; slowest " + ", ".join(f"{r} {s:.2f} s" for r, s in ordered[:5]))
    if cpu:
        by_cpu = sorted(cpu.items(), key=lambda kv: -kv[1])
        lines.append(f"renderer CPU, navigation to typeset maths at {LOAD_WIDTH} px: median "
                     f"{statistics.median(cpu.values()):.2f} s; "
                     "slowest " + ", ".join(f"{r} {s:.2f} s" for r, s in by_cpu[:5]))
    # the page's height at load against its height laid out, at each width
    # (issue 33, the site on a phone: the scroll bar's length while reading)
    heights = page_heights(report)
    for width, ratios in heights.items():
        off = sorted(ratios.items(), key=lambda kv: -abs(kv[1] - 1))
        lines.append(f"page height at load over its height laid out at {width} px: "
                     f"{min(ratios.values()):.2f} to {max(ratios.values()):.2f} over {len(ratios)} pages "
                     f"(within {HEIGHT_TOLERANCE:.0%} of 1); furthest " + ", ".join(f"{r} {x:.2f}" for r, x in off[:3]))
    if load:
        lines.append("machine load (1-minute average) at the start and end of the check: "
                     + " and ".join(f"{x:.1f}" for x in load))
    lines.append(f"formulas left to the browser's MathJax: {sum(client.values())}")
    return {"wide": wide, "inline": inline, "code": code, "times": times, "median": median, "client": client, "cpu": cpu,
            "heights": heights, "text": "\n".join(lines)}


HEIGHT_TOLERANCE = 0.25  # a page's height at load may be this far (relative) from its laid-out height


def page_heights(report: dict) -> dict[int, dict[str, float]]:
    """Each page's height at load over its height laid out whole, by width
    (issue 33, the site on a phone: the sections the browser lays out lazily
    count with their estimated heights until then, so this is how far the
    scroll bar at load is from the one the reader ends with)."""
    out: dict[int, dict[str, float]] = {}
    for rel, verdict in report.items():
        for width, seen in verdict.get("widths", {}).items():
            if seen and seen.get("height_at_load") and seen.get("height_full"):
                out.setdefault(int(width), {})[rel] = seen["height_at_load"] / seen["height_full"]
    return dict(sorted(out.items()))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=Path("_build/html"))
    parser.add_argument("--json", type=Path, default=None, help="write every verdict here")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="also photograph every page at both widths into this folder")
    parser.add_argument("--pages", nargs="*", default=None, metavar="GLOB",
                        help="only the pages matching these patterns, e.g. 'chapters/*' api.html")
    args = parser.parse_args(argv)
    root = args.site.resolve()
    pages = site_pages(root)
    if args.pages is not None:
        pages = [p for p in pages if any(p.relative_to(root).match(g) for g in args.pages)]
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    id_cache: dict[Path, set[str]] = {}

    def ids_of(p: Path) -> set[str]:
        if p not in id_cache:
            ps = _Links()
            ps.feed(p.read_text(encoding="utf-8"))
            id_cache[p] = ps.ids
        return id_cache[p]

    load_before = os.getloadavg()[0]
    # the browsers first, then the server's thread (a child is best started single-threaded)
    browsers = []
    try:
        for _ in range(BROWSERS):
            browsers.append(_DevTools(LOAD_WIDTH))
            for domain in ("Page", "Runtime", "Log"):
                browsers[-1].call(f"{domain}.enable")
            browsers[-1].call("Page.addScriptToEvaluateOnNewDocument", source=TIMING)
        server, port = _serve(root)
        failures, report = 0, {}
        try:
            # each page is loaded once, at LOAD_WIDTH, and resized to the other
            # widths (check_page_at_widths); the pages are shared between the
            # browsers, the largest first, so that both cores are busy to the end
            loaded = {rel: {} for rel in (p.relative_to(root).as_posix() for p in pages)
                      if not REDIRECT.search((root / rel).read_text(encoding="utf-8"))}
            queue = sorted(loaded, key=lambda rel: -(root / rel).stat().st_size)
            lock = threading.Lock()

            def load_all(browser: _DevTools) -> None:
                # The first page a fresh browser opens also pays for starting its
                # renderer and filling its empty caches (the theme's scripts and
                # styles, the fonts): about 1 s of renderer CPU on this machine, the
                # same for a page with nothing on it.  Each browser first opens the
                # site's smallest page, unmeasured (it is checked in its turn), so
                # that this cost is charged to no page: the largest, which come first,
                # seemed 1 s slower than they are (issue 33 item 10).  A site of a
                # few pages (the tests' small sites) is not worth the extra load.
                if len(loaded) > 2 * len(browsers):
                    warm(browser, f"http://127.0.0.1:{port}/{queue[-1]}")
                while True:
                    with lock:
                        if not queue:
                            return
                        rel = queue.pop(0)
                    started = time.monotonic()
                    widths = (LOAD_WIDTH, *(w for w in WIDTHS if w != LOAD_WIDTH))
                    try:
                        loaded[rel].update(check_page_at_widths(
                            browser, f"http://127.0.0.1:{port}/{rel}", widths))
                    except RuntimeError as error:
                        for width in WIDTHS:
                            loaded[rel][width] = f"at {width} px, the browser failed: {error}"
                    loaded[rel]["s"] = time.monotonic() - started

            with concurrent.futures.ThreadPoolExecutor(len(browsers)) as pool:
                list(pool.map(load_all, browsers))
            for page in pages:
                rel = page.relative_to(root).as_posix()
                url = f"http://127.0.0.1:{port}/{rel}"
                source = page.read_text(encoding="utf-8")
                bad = broken_links(root, page, ids_of)
                redirect = REDIRECT.search(source)
                problems, shots, results = [f"broken link: {b}" for b in bad[:10]], [], {}
                if redirect:  # index.html only sends the reader on: its target must exist
                    target = (page.parent / urllib.parse.unquote(redirect.group(1).split("#")[0])).resolve()
                    if not target.is_file():
                        problems.append(f"redirects to a missing page: {redirect.group(1)}")
                else:
                    for width in WIDTHS:
                        results[width] = loaded[rel][width]
                        if isinstance(results[width], str):
                            problems.append(results[width])
                            results[width] = None
                        else:
                            problems += [f"at {width} px: {p}" if not p.startswith("  ") else p
                                         for p in verdict(results[width], width)]
                    if args.screenshots:
                        stem = args.screenshots / rel.replace("/", "__").removesuffix(".html")
                        for old in args.screenshots.glob(f"{stem.name}.w*.png"):
                            old.unlink()
                        for width in WIDTHS:
                            try:
                                shots += screenshots(url, width, stem)
                            except Exception as error:  # a screenshot is for the reviewer, not a check
                                print(f"      no screenshot at {width} px: {error}")
                ok = not problems
                failures += not ok
                formulas = max((r["formulas"] for r in results.values() if r), default=0)
                print(f"{'ok  ' if ok else 'FAIL'} {rel}: {formulas} formulas, {len(bad)} broken links"
                      + "".join(f", {r['wide']} px wide at {w}" for w, r in results.items() if r)
                      + (f", {len(shots)} screenshots" if args.screenshots else "")
                      + (f" ({loaded[rel]['s']:.1f} s)" if rel in loaded else ""))
                for item in problems:
                    print("     ", item)
                report[rel] = {"ok": ok, "problems": problems, "broken_links": bad, "redirect": bool(redirect),
                               "widths": {str(w): r for w, r in results.items()}}
        finally:
            server.shutdown()
    finally:
        for browser in browsers:
            browser.close()
    summary = speed_and_width(report, load=(load_before, os.getloadavg()[0]))
    print(summary["text"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(f"{len(pages)} pages at {' and '.join(map(str, WIDTHS))} px, {failures} failing"
          + (f"; screenshots in {args.screenshots}" if args.screenshots else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
