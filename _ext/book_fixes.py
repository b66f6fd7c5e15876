"""Four small fixes for the Jupyter Book 1 / sphinx-proof stack, found by the
reader's check in a real browser (scripts/check_site.py).

1. sphinx-thebe's and sphinx-togglebutton's inline configuration scripts are
   registered twice (once with filename None, once with ""), so every page
   threw ``SyntaxError: Identifier 'THEBE_JS_URL' has already been declared``.
   Duplicate script entries are dropped from each page.
2. ``prf:proof`` renders as an admonition without a title and with the same
   id ``proof`` for every proof on a page.  A dropdown proof then crashed
   sphinx-togglebutton (it looks for the title) and did not fold.  Each proof
   gets a unique id, and a dropdown proof gets a "Proof" title (its body loses
   the then redundant leading "Proof. "); in the PDF every proof gets it, so no
   box has an empty title bar.
3. Display equations wider than the text column were cut off (at 1280 px for a
   few, on phones for many): static/book_fixes.css lets them scroll; an
   inline formula wider than its column (MathJax does not break inline math:
   the errata at 390 px) is marked by static/book_fixes.js and scrolls too.
4. A reference without a text of its own to a heading with math ("The noise
   scale enters as $\\Delta / \\sigma$") takes the heading's plain text as its
   text, so the PDF printed the raw TeX source ``\\Delta / \\sigma``.  The math
   of such headings is kept (``_note_math_titles``) and a link whose text is
   the plain text of one gets the heading's math back (``MathLinkTexts``).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes


def _fix_proofs(app, doctree, docname):
    count = 0
    for node in doctree.findall(nodes.admonition):
        if "proof" not in node["classes"] or node["ids"] != ["proof"]:
            continue
        count += 1
        node["ids"] = [f"proof-{count}"]
        # A dropdown needs the title to fold; the PDF needs one on every proof, or
        # LaTeX draws the box's title bar empty (issue 33 item 7).
        titled = "dropdown" in node["classes"] or app.builder.format == "latex"
        if titled and not isinstance(node.children[0], nodes.title):
            first = node.children[0]
            if isinstance(first, nodes.paragraph) and first.children and isinstance(first[0], nodes.Text):
                text = str(first[0])
                if text.startswith("Proof. "):
                    first.replace(first[0], nodes.Text(text[len("Proof. "):]))
            node.insert(0, nodes.title("", "Proof"))


def _segments(title: nodes.Element) -> list[tuple[str, str]]:
    """A title as ("text", s) and ("math", latex) pieces, in order."""
    out: list[tuple[str, str]] = []

    def walk(node):
        for child in node.children:
            if isinstance(child, nodes.math):
                out.append(("math", child.astext()))
            elif isinstance(child, nodes.Text):
                out.append(("text", str(child)))
            elif isinstance(child, (nodes.image, nodes.raw)):
                continue
            else:
                walk(child)

    walk(title)
    return out


def plain_text(segments: list[tuple[str, str]]) -> str:
    """The text a reference to the title gets (Sphinx's clean_astext)."""
    return "".join(text for _, text in segments)


def _note_math_titles(app, doctree):
    found = {}
    for title in doctree.findall(nodes.title):
        if any(True for _ in title.findall(nodes.math)):
            segments = _segments(title)
            found[plain_text(segments)] = segments
    store = getattr(app.env, "egm_math_titles", None)
    if store is None:
        store = app.env.egm_math_titles = {}
    if found:
        store[app.env.docname] = found
    else:
        store.pop(app.env.docname, None)


def _purge_math_titles(app, env, docname):
    getattr(env, "egm_math_titles", {}).pop(docname, None)


def _merge_math_titles(app, env, docnames, other):
    store = getattr(env, "egm_math_titles", None)
    if store is None:
        store = env.egm_math_titles = {}
    for docname in docnames:
        if docname in getattr(other, "egm_math_titles", {}):
            store[docname] = other.egm_math_titles[docname]


def math_link_text(reference: nodes.Element, titles: dict) -> bool:
    """Give a link whose whole text is the plain text of a heading with math the
    heading's math (in place); True if it was changed."""
    if any(True for _ in reference.findall(nodes.math)):
        return False
    segments = titles.get(reference.astext())
    if not segments:
        return False
    holder = reference  # the innermost element that holds all of the text
    while len(holder.children) == 1 and isinstance(holder.children[0], nodes.Element):
        holder = holder.children[0]
    holder.children = []
    for kind, text in segments:
        holder += nodes.math(text, text) if kind == "math" else nodes.Text(text)
    return True


def _math_link_texts():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class MathLinkTexts(SphinxPostTransform):
        default_priority = 20  # after the references are resolved (10)

        def run(self, **kwargs):
            titles = {}
            for found in getattr(self.env, "egm_math_titles", {}).values():
                titles.update(found)
            if not titles:
                return
            for reference in list(self.document.findall(nodes.reference)):
                math_link_text(reference, titles)

    return MathLinkTexts


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        key = (getattr(script, "filename", script) or "", tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def _add_static(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.connect("builder-inited", _add_static)
    app.add_css_file("book_fixes.css")
    app.add_css_file("phone_outputs.css")  # issue 33 item 2: check lines wrap on phones
    app.add_js_file("book_fixes.js")
    # issue 33: each lazily laid-out section's estimated height (book_fixes.css)
    app.setup_extension("section_heights")
    app.connect("doctree-resolved", _fix_proofs)
    app.connect("doctree-read", _note_math_titles)
    app.connect("env-purge-doc", _purge_math_titles)
    app.connect("env-merge-info", _merge_math_titles)
    app.add_post_transform(_math_link_texts())
    # last of the handlers: others add scripts to the page while handling this event
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
