"""Three small fixes for the Jupyter Book 1 / sphinx-proof stack, found by the
reader's check in a real browser (scripts/check_site.py).

1. sphinx-thebe's and sphinx-togglebutton's inline configuration scripts are
   registered twice (once with filename None, once with ""), so every page
   threw ``SyntaxError: Identifier 'THEBE_JS_URL' has already been declared``.
   Duplicate script entries are dropped from each page.
2. ``prf:proof`` renders as an admonition without a title and with the same
   id ``proof`` for every proof on a page.  A dropdown proof then crashed
   sphinx-togglebutton (it looks for the title) and did not fold.  Each proof
   gets a unique id, and a dropdown proof gets a "Proof" title (its body loses
   the then redundant leading "Proof. ").
3. Display equations wider than the text column were cut off (at 1280 px for a
   few, on phones for many): static/book_fixes.css lets them scroll.
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
        if "dropdown" in node["classes"] and not isinstance(node.children[0], nodes.title):
            first = node.children[0]
            if isinstance(first, nodes.paragraph) and first.children and isinstance(first[0], nodes.Text):
                text = str(first[0])
                if text.startswith("Proof. "):
                    first.replace(first[0], nodes.Text(text[len("Proof. "):]))
            node.insert(0, nodes.title("", "Proof"))


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
    app.connect("doctree-resolved", _fix_proofs)
    # last of the handlers: others add scripts to the page while handling this event
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
