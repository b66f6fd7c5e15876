"""Estimated heights of the parts of a page that the browser lays out lazily.

Issue 33 (the site on a phone): the sections of a page (and the errata's boxes
of entries) are laid out lazily (``content-visibility: auto``,
static/book_fixes.css): until the reader scrolls near one, it stands in with
the height ``contain-intrinsic-size`` gives it.  With one height for all
(1,000 px a section) the page's height at load was far from its height laid out
(state_of_the_art at 390 px: 14,378 px against 83,240 px), so the scroll bar
jumped while the reader read.  Here each such box gets an estimate of its own
height at two widths of the text column, a phone's and a laptop's, from what it
holds: lines of text (its characters over the characters a line holds),
paragraphs, headings, display equations (taller with fractions and
aligned rows), lines of code and output, table rows, figures (their pixel
size, scaled to the column) and folds (closed: their title only).  The HTML of
each page is rewritten once the site is built (``build-finished``): each box
gets ``style="--egm-h-phone: Npx; --egm-h-wide: Mpx"``, which book_fixes.css
hands to ``contain-intrinsic-size``.  Nothing runs in the reader's browser.

The weights (``WEIGHTS``) were fitted (non-negative least squares, 2026-11-28)
to the heights of the 340 such boxes of the book laid out in headless Chromium
at 390 and 1280 px, the heights of a line of code (17.5 px) and of output
(15 px) fixed at the theme's; on the book as fitted, every page's height at load
came within 8 % of its height laid out at both widths, and on the book built
later within 7 % (0.95 to 1.05 at 390 px, 0.94 to 1.03 at 1280 px).  The
browser check, scripts/check_site.py, compares each page's height at load with
its height laid out, at both widths, and tests/test_book_build.py bounds them:
a chapter whose make-up departs from the fit (a new kind of box) shows there.
Parsing the built pages costs about 2 CPU-s a build (formulas and code blocks
are summarised before they are parsed, ``_reduce``).
"""

from __future__ import annotations

import bisect
import html.parser
import math
import re
import struct
from pathlib import Path

# the text column's width (px) and the characters of body text a line holds,
# for each width class (measured: the article's width at 390 and 1280 px)
COLUMNS = {"phone": 358, "wide": 720}
CHAR_PX = 8.1   # mean advance of a character of body text (16 px)
CODE_PX = 8.4   # of code (14 px monospace)
OUT_PX = 7.2    # of cell output (12 px monospace), which wraps on a phone (phone_outputs.css)

# px per unit of each feature, per width class (fitted: see the module's doc;
# a box's padding came out at nothing beside the lines it holds)
WEIGHTS = {
    "phone": {"line": 28.9, "block": 16.1, "heading": 75.2, "eq": 105.1, "eq_extra": 12.1,
              "code": 17.5, "out": 15.0, "row": 38.5, "fold": 92.6, "box": 0.0, "img": 1.06},
    "wide": {"line": 28.5, "block": 14.2, "heading": 15.2, "eq": 96.7, "eq_extra": 12.9,
             "code": 17.5, "out": 15.0, "row": 40.8, "fold": 108.7, "box": 0.0, "img": 1.03},
}


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIP = {"script", "style", "mjx-assistive-mml", "template", "button", "svg"}
TEXT_BLOCKS = {"p", "dt", "figcaption", "caption", "summary", "h1", "h2", "h3", "h4", "h5", "h6"}
HEADINGS = {"h2", "h3", "h4", "h5", "h6"}


class Node:
    __slots__ = ("tag", "attrs", "children", "text", "start", "end", "open_end", "parent")

    def __init__(self, tag, attrs, parent, start):
        self.tag, self.attrs, self.parent, self.start = tag, attrs, parent, start
        self.children, self.text, self.end, self.open_end = [], [], None, None

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())


class _Tree(html.parser.HTMLParser):
    """A light DOM: elements with their children, text, and where their start tag is."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.lines = [0]
        for m in re.finditer("\n", source):
            self.lines.append(m.end())
        self.root = Node("#root", {}, None, 0)
        self.cur = self.root
        self.feed(source)
        self.close()

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur, self._offset())
        node.open_end = node.start + len(self.get_starttag_text())
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur, self._offset())
        node.open_end = node.start + len(self.get_starttag_text())
        self.cur.children.append(node)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


# A typeset formula (MathJax's CHTML, _ext/mathjax_prerender.py) is most of the
# tags of a page with maths: each is parsed as one summary element that keeps
# what its height and width depend on (glyphs, rows of an array, fractions).
# Likewise a block of code (Pygments' many spans): its text, without the tags.
BULK = re.compile(r"<mjx-container\b.*?</mjx-container>|(<pre\b[^>]*>)(.*?)</pre>", re.S)
TAG = re.compile(r"<[^>]*>")


def _reduce(source: str) -> tuple[str, list[int], list[int]]:
    """``source`` with every formula replaced by a summary, and the map back:
    the reduced text's offset after each formula, and the characters removed
    up to there."""
    out, ends, removed, last, total, size = [], [], [], 0, 0, 0
    for m in BULK.finditer(source):
        block = m.group(0)
        if m.group(1):
            summary = m.group(1) + TAG.sub("", m.group(2)) + "</pre>"
        else:
            summary = (f'<mjx-container data-egm="{block.count("<mjx-c ")} {block.count("<mjx-mtr")}'
                       f' {block.count("<mjx-mfrac")}"></mjx-container>')
        out += [source[last:m.start()], summary]
        size += m.start() - last + len(summary)
        total += len(block) - len(summary)
        ends.append(size)
        removed.append(total)
        last = m.end()
    out.append(source[last:])
    return "".join(out), ends, removed


def _png_size(path: Path):
    try:
        with open(path, "rb") as f:
            head = f.read(24)
        if head[:8] == b"\x89PNG\r\n\x1a\n":
            return struct.unpack(">II", head[16:24])
    except OSError:
        pass
    return None


def _svg_size(path: Path):
    try:
        head = path.read_text(errors="replace")[:2000]
    except OSError:
        return None
    w = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', head)
    h = re.search(r'<svg[^>]*\sheight="([\d.]+)(pt|px)?"', head)
    if w and h:
        k = 4 / 3 if w.group(2) == "pt" else 1
        return float(w.group(1)) * k, float(h.group(1)) * k
    return None


class _Features:
    """The features of a subtree at one column width: a dict feature -> amount."""

    def __init__(self, width: int, image_size):
        self.width = width
        self.image_size = image_size

    def hidden(self, node: Node) -> bool:
        c = node.classes()
        return node.tag in SKIP or "headerlink" in c or "toggle-hidden" in c

    def inline_chars(self, node) -> float:
        if isinstance(node, str):
            return len(" ".join(node.split()))
        if self.hidden(node):
            return 0
        if node.tag == "mjx-container":
            return 1.2 * _math(node)[0]
        if node.tag == "img":
            return 3
        return sum(self.inline_chars(c) for c in node.children)

    def lines(self, chars: float, px: float, room: float) -> int:
        per = max(8, int(room / px))
        return max(1, math.ceil(chars / per)) if chars > 0.5 else 0

    def walk(self, node, f: dict, room: float) -> None:
        if isinstance(node, str):
            return
        if self.hidden(node):
            return
        tag, c = node.tag, node.classes()
        add = lambda k, v: f.__setitem__(k, f.get(k, 0) + v)  # noqa: E731
        if (tag == "details" and "open" not in node.attrs) or ("dropdown" in c and "admonition" in c):
            # closed (a details, or a dropdown that sphinx-togglebutton folds): its title
            title = next((t for t in _iter_any(node) if "admonition-title" in t.classes()), None)
            add("fold", 1)
            add("line", max(self.lines(self.inline_chars(title), CHAR_PX, room - 64) - 1, 0) if title else 0)
            return
        if tag == "div" and "math" in c:  # a display equation
            rows = fracs = 0
            for m in _iter(node, "mjx-container"):
                rows, fracs = rows + _math(m)[1], fracs + _math(m)[2]
            add("eq", 1)
            add("eq_extra", max(rows - 1, 0) + 0.5 * fracs)
            return
        if tag == "pre":
            text = "".join(_texts(node))
            lines = text.rstrip("\n").split("\n")
            out = any(a.tag == "div" and "cell_output" in a.classes() for a in _ancestors(node))
            wraps = out and self.width < 600
            px = OUT_PX if out else CODE_PX
            n = sum(self.lines(len(l), px, room - 16) or 1 for l in lines) if wraps else len(lines)
            add("out" if out else "code", n)
            add("block", 1)
            return
        if tag == "img":
            size = self.image_size(node.attrs.get("src", ""))
            if size:
                w, h = size
                scale = min(1.0, room / w) if w else 1
                add("img", h * scale)
            else:
                add("img", 0.6 * room)
            return
        if tag == "tr":
            add("row", 1)
            cells = [ch for ch in node.children if not isinstance(ch, str) and ch.tag in ("td", "th")]
            if cells:
                per = room / len(cells)
                extra = max(self.lines(self.inline_chars(ch), CHAR_PX * 0.9, per) for ch in cells) - 1
                add("line", max(extra, 0))
            return
        if tag in TEXT_BLOCKS or (tag in ("li", "dd", "td", "th") and not _has_blocks(node)):
            add("line", self.lines(self.inline_chars(node), CHAR_PX, room))
            add("heading" if tag in HEADINGS else "block", 1)
            return
        if "admonition" in c or "cell_output" in c or "cell_input" in c:
            add("box", 1)
            room = room - 32
        elif tag in ("ul", "ol", "dl", "blockquote"):
            room = room - 24
            add("block", 1)
        # a container: its children (stray inline text in a block as one paragraph)
        loose = 0.0
        for ch in node.children:
            if isinstance(ch, str) or ch.tag in INLINE:
                loose += self.inline_chars(ch)
            else:
                self.walk(ch, f, room)
        if loose > 0.5:
            add("line", self.lines(loose, CHAR_PX, room))


INLINE = {"a", "span", "em", "strong", "code", "mjx-container", "sub", "sup", "b", "i", "abbr", "cite", "br", "wbr",
          "small", "kbd", "var", "samp", "q", "s", "u", "mark", "label"}


def _has_blocks(node: Node) -> bool:
    return any(not isinstance(ch, str) and ch.tag not in INLINE for ch in node.children)


def _math(node: Node) -> tuple[int, int, int]:
    """A formula's glyphs, rows of arrays and fractions (its summary, _reduce)."""
    g, r, f = (node.attrs.get("data-egm") or "0 0 0").split()
    return int(g), int(r), int(f)


def _iter_any(node):
    for ch in node.children:
        if not isinstance(ch, str):
            yield ch
            yield from _iter_any(ch)


def _iter(node, tag):
    for ch in node.children:
        if isinstance(ch, str):
            continue
        if ch.tag == tag:
            yield ch
        yield from _iter(ch, tag)


def _texts(node):
    for ch in node.children:
        if isinstance(ch, str):
            yield ch
        elif ch.tag not in SKIP:
            yield from _texts(ch)


def _ancestors(node):
    a = node.parent
    while a is not None:
        yield a
        a = a.parent


def lazy_boxes(tree: _Tree) -> list[Node]:
    """The boxes book_fixes.css lays out lazily, in document order: sections
    inside a section of the article, and the errata's div.egm-lazy."""
    found = []

    def visit(node, in_article, depth):
        for ch in node.children:
            if isinstance(ch, str):
                continue
            art = in_article or (ch.tag == "article" and "bd-article" in ch.classes())
            d = depth + (ch.tag == "section" and in_article)
            if in_article and ((ch.tag == "section" and depth >= 1) or (ch.tag == "div" and "egm-lazy" in ch.classes())):
                found.append(ch)
            visit(ch, art, d)

    visit(tree.root, False, 0)
    return found


def features(box: Node, width_class: str, image_size) -> dict:
    f = {}
    _Features(COLUMNS[width_class] + 0, image_size).walk(box, f, COLUMNS[width_class])
    return f


def estimate(feats: dict, width_class: str) -> int:
    w = WEIGHTS[width_class]
    return int(round(sum(w[k] * v for k, v in feats.items())))


ESTIMATES = re.compile(r"(; )?--egm-h-phone: \d+px; --egm-h-wide: \d+px")
STYLE = re.compile(r'\sstyle="([^"]*)"')


def annotate(source: str, page: Path) -> str:
    """``source`` (a built page at ``page``) with each lazily laid-out box's
    estimated heights in its style attribute."""
    first = source.find('<article class="bd-article"')
    last = source.find("</article>", first)
    if first < 0 or last < 0:
        return source
    reduced, ends, removed = _reduce(source[first:last + len("</article>")])
    tree = _Tree(reduced)
    cache = {}

    def original(at: int) -> int:  # an offset of the reduced text in ``source``
        k = bisect.bisect_right(ends, at)
        return first + at + (removed[k - 1] if k else 0)

    def image_size(src):
        if src not in cache:
            path = (page.parent / src.split("#")[0].split("?")[0]).resolve()
            cache[src] = _png_size(path) if path.suffix == ".png" else _svg_size(path) if path.suffix == ".svg" else None
        return cache[src]

    edits = []
    for box in lazy_boxes(tree):
        heights = {k: estimate(features(box, k, image_size), k) for k in COLUMNS}
        style = f"--egm-h-phone: {heights['phone']}px; --egm-h-wide: {heights['wide']}px"
        start, end = original(box.start), original(box.open_end)
        tag = source[start:end]
        assert tag == reduced[box.start:box.open_end], tag  # the map back is exact
        clean = ESTIMATES.sub("", tag).replace(' style=""', "")  # a page an earlier build wrote
        old = STYLE.search(clean)
        if old is None:
            new = clean[:-1].rstrip("/").rstrip() + f' style="{style}"' + (" />" if clean.endswith("/>") else ">")
        else:
            new = clean[:old.start(1)] + old.group(1).rstrip("; ") + "; " + style + clean[old.end(1):]
        edits.append((start, end, new))
    out, last = [], 0
    for start, end, new in sorted(edits):
        out.append(source[last:start])
        out.append(new)
        last = end
    out.append(source[last:])
    return "".join(out)


def _build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        if "bd-article" not in text or "<section" not in text:
            continue
        new = annotate(text, page)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
