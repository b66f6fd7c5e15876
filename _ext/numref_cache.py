"""Numbered references ({numref}) resolved from one read of each
target's doctree per build, not one a reference.

Sphinx 7.4's ``StandardDomain._resolve_numref_xref`` unpickles the whole doctree
of the page a reference points to, for every reference, to find the target's
node (its type and number): the book's chapters refer to their own figures and
tables many times, and in the LaTeX build, where every reference of the book is
resolved at once, this was about a quarter of the build's CPU (2026-11-28,
sampled with py-spy).  Here each target page's doctree is read once per build
and kept, only for that lookup: the resolver only reads the node (its ids, type
and title), and the doctrees do not change while the pages are written.  The
site and the LaTeX source are the same as without it (compared file by file,
2026-11-28).
"""

from __future__ import annotations

from sphinx.domains.std import StandardDomain

_ORIGINAL = StandardDomain._resolve_numref_xref


def _resolve_numref_xref(self, env, fromdocname, builder, *args, **kwargs):
    cache = builder.__dict__.setdefault("_egm_numref_doctrees", {})
    read = env.get_doctree

    def get_doctree(docname: str):
        if docname not in cache:
            cache[docname] = read(docname)
        return cache[docname]

    env.get_doctree = get_doctree  # for this call only (the instance's, over the class's)
    try:
        return _ORIGINAL(self, env, fromdocname, builder, *args, **kwargs)
    finally:
        del env.get_doctree


def setup(app):
    StandardDomain._resolve_numref_xref = _resolve_numref_xref
    return {"parallel_read_safe": True, "parallel_write_safe": False}
