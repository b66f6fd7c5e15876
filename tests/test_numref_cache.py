"""_ext/numref_cache.py: a numbered reference reads its target page's doctree once a
build, and resolves as Sphinx's own resolver does (on the book: the site and the
LaTeX source were compared file by file with and without it, 2026-11-28)."""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import numref_cache  # noqa: E402


class _Env:
    """The part of Sphinx's environment the resolver reads: pages' doctrees, fresh
    from the pickle on every read (counted)."""

    def __init__(self, pages: dict[str, list[str]]) -> None:
        self.pages, self.reads = pages, []

    def get_doctree(self, docname: str) -> nodes.document:
        self.reads.append(docname)
        return _page(self.pages[docname])


def _page(ids: list[str]) -> nodes.document:
    doc = new_document("page", get_default_settings(Parser))
    for name in ids:
        figure = nodes.figure(ids=[name])
        figure += nodes.caption(text=f"caption of {name}")
        doc += figure
        doc.ids[name] = figure
    return doc


def test_each_target_page_is_read_once_and_resolved_alike(monkeypatch):
    seen = []

    def original(self, env, fromdocname, builder, typ, target, node, contnode):
        docname, labelid = target.split("#")
        found = env.get_doctree(docname).ids.get(labelid)  # what Sphinx 7.4's resolver does
        seen.append((fromdocname, found.astext() if found is not None else None))
        return found

    monkeypatch.setattr(numref_cache, "_ORIGINAL", original)
    env = _Env({"a": ["fig-1", "fig-2"], "b": ["tab-1"]})
    builder = type("Builder", (), {})()
    targets = ["a#fig-1", "a#fig-2", "b#tab-1", "a#fig-1", "a#missing"]
    for target in targets:
        numref_cache._resolve_numref_xref(None, env, "from", builder, "numref", target, None, None)
    assert env.reads == ["a", "b"]  # one read a page, not one a reference
    assert seen == [("from", "caption of fig-1"), ("from", "caption of fig-2"), ("from", "caption of tab-1"),
                    ("from", "caption of fig-1"), ("from", None)]
    assert "get_doctree" not in vars(env)  # the environment's own method again after each call
    # another build (another builder) reads afresh
    numref_cache._resolve_numref_xref(None, env, "from", type("Builder", (), {})(), "numref", "a#fig-1", None, None)
    assert env.reads == ["a", "b", "a"]


def test_the_book_loads_it():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["local_extensions"]["numref_cache"] == "_ext"
    from sphinx.domains.std import StandardDomain

    # the Sphinx whose resolver it wraps reads the target's doctree in it
    import inspect

    assert "env.get_doctree(docname)" in inspect.getsource(numref_cache._ORIGINAL)
    assert StandardDomain._resolve_numref_xref in (numref_cache._ORIGINAL, numref_cache._resolve_numref_xref)
