"""The API reference (api.md) for readers: citations as links, readable type
aliases, and a compact form in the PDF.

1. Citations.  egmlib's numpydoc docstrings cite with BibTeX keys of
   references.bib (``References`` / ``----------`` / ``poulsen2023, balle2018``,
   or ``.. [1] imhof1961: J. P. Imhof, ...``).  Before napoleon reads a docstring,
   a line of known keys becomes ``:cite:p:`poulsen2023,balle2018``` and a
   ``.. [n] key:`` note starts with ``:cite:t:`key```: the site and the PDF show
   "(Poulsen, 2023)" linked to the bibliography instead of raw keys.  A key that is
   not in references.bib is left as it is (and a build warning names it).
2. Type aliases (``LogGenerator = Callable[[NDArray[np.float64]], ...]``): autodoc
   printed "alias of Callable[[ndarray[tuple[Any, ...], dtype[float64]]], ...]",
   the expanded numpy types.  The alias is shown as written in the source,
   "Type alias: ``Callable[[NDArray[np.float64]], NDArray[np.float64]]``".  An
   alias's ``#:`` comment of the form "A thing: what it does" is not read as
   "type: description" (napoleon did, and printed "Type: A thing").
3. The PDF.  There, every function, class and alias of egmlib keeps its
   signature (and its anchor, so the chapters' links and the Python module index
   work) and the first paragraph of its docstring, its one-line summary; the
   parameters, examples, notes and references stay on the website.  Measured
   (pdflatex, the whole book): 72 pages of the PDF before (issue 26), 18 after.
4. The index.  The general index (site and PDF) lists the book's concepts; egmlib's
   functions, classes, attributes and modules have no entry there (issue 33: "b",
   "lam", "kind", "mean" buried the concepts).  Their anchors stay, and the Python
   module index lists the modules.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

BIB_KEY = re.compile(r"^@\w+\s*\{\s*([^,\s]+)\s*,", re.M)
KEY_LIST = re.compile(r"(?P<indent>\s*)(?P<keys>[\w:-]+(?:\s*,\s*[\w:-]+)*)\s*,?\s*")
NOTE = re.compile(r"(?P<head>\s*\.\. \[\d+\]\s+)(?P<key>[\w:-]+):(?P<rest>\s.*)?$")
HEADER = re.compile(r"\s*-{3,}\s*")


def bib_keys(root: Path) -> set[str]:
    """The keys of references.bib."""
    return set(BIB_KEY.findall((Path(root) / "references.bib").read_text()))


def cite_references(lines: list[str], keys: set[str], unknown: list[str] | None = None) -> list[str]:
    """``lines`` of a numpydoc docstring with the References section's keys as roles;
    keys that look like BibTeX keys but are not in ``keys`` are appended to ``unknown``."""
    out = list(lines)
    in_refs = False
    for i, line in enumerate(out):
        is_header = i + 1 < len(out) and HEADER.fullmatch(out[i + 1]) and line.strip()
        if is_header:
            in_refs = line.strip() == "References"
            continue
        if not in_refs or not line.strip() or HEADER.fullmatch(line):
            continue
        found = KEY_LIST.fullmatch(line)
        if found:
            names = [k.strip() for k in found["keys"].split(",")]
            if all(name in keys for name in names):
                out[i] = f"{found['indent']}:cite:p:`{','.join(names)}`"
                continue
            if unknown is not None:
                unknown += [n for n in names if n not in keys and re.search(r"\d", n)]
        note = NOTE.match(line)
        if note and note["key"] in keys:
            out[i] = f"{note['head']}:cite:t:`{note['key']}`:{note['rest'] or ''}"
    return out


def _process_docstring(app, what, name, obj, options, lines):
    keys = getattr(app.env, "api_bib_keys", None)
    if keys is None:
        keys = app.env.api_bib_keys = bib_keys(Path(app.srcdir))
    unknown: list[str] = []
    lines[:] = cite_references(lines, keys, unknown)
    if unknown:
        logger.warning("docstring of %s cites %s, not in references.bib", name, ", ".join(unknown))
    if what == "data" and lines and re.match(r"^[A-Z][^:`]*: ", lines[0]):
        # napoleon reads "A log density generator: maps ..." as "type: description"
        lines[0] = lines[0].replace(": ", " — ", 1)


def alias_source(module, name: str) -> str | None:
    """The right-hand side of ``name = ...`` in ``module``'s source, as written."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
            return " ".join(ast.get_source_segment(source, node.value).split())
    return None


def _alias_documenter():
    from sphinx.ext.autodoc import DataDocumenter
    from sphinx.ext.autodoc import GenericAliasMixin
    from sphinx.util import inspect as sphinx_inspect

    class ReadableAliasDocumenter(DataDocumenter):
        """A module-level type alias, shown as its source writes it."""

        priority = DataDocumenter.priority + 1

        def update_content(self, more_content):
            if sphinx_inspect.isgenericalias(self.object):
                written = alias_source(self.module, self.objpath[-1])
                if written:
                    more_content.append(f"Type alias: ``{written}``", "")
                    more_content.append("", "")
                # skip GenericAliasMixin's "alias of <expanded types>"
                super(GenericAliasMixin, self).update_content(more_content)
                return
            super().update_content(more_content)

    return ReadableAliasDocumenter


def compact_descriptions(doctree: nodes.Node) -> int:
    """Keep of each Python object description its signature, the first paragraph of
    its content and the descriptions nested in it (a class's methods), compacted
    likewise; returns how many were compacted."""
    count = 0
    for desc in list(doctree.findall(addnodes.desc)):
        if desc.get("domain") != "py":
            continue
        for content in [c for c in desc.children if isinstance(c, addnodes.desc_content)]:
            first = next((c for c in content.children if isinstance(c, nodes.paragraph)), None)
            keep = ([first.deepcopy()] if first is not None else []) + [
                c for c in content.children if isinstance(c, (addnodes.desc, addnodes.index))]
            content.children = []
            for child in keep:
                content += child
        count += 1
    return count


def drop_api_index_entries(doctree: nodes.Node) -> int:
    """Remove the general index's entries of egmlib's objects (functions, classes,
    their attributes such as ``b``, ``lam``, ``kind``, ``mean``, and the modules):
    the index lists the book's concepts, and API names stay in the API chapter and the
    Python module index.  Targets stay, so ``{py:func}`` links still resolve.
    Returns how many entries were removed."""
    removed = 0
    for index in doctree.findall(addnodes.index):
        keep = [e for e in index.get("entries", [])
                if not str(e[2]).startswith(("egmlib.", "module-egmlib"))]
        removed += len(index.get("entries", [])) - len(keep)
        index["entries"] = keep
    return removed


def _drop_index_entries(app, doctree):
    if app.config.api_index_entries:
        return
    drop_api_index_entries(doctree)


def _compact_for_latex(app, doctree, docname):
    if app.builder.format != "latex" or not app.config.api_compact_latex:
        return
    compact_descriptions(doctree)


def setup(app):
    app.add_config_value("api_compact_latex", True, "env")
    app.add_config_value("api_index_entries", False, "env")
    app.connect("doctree-read", _drop_index_entries)
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)  # before napoleon (500)
    app.add_autodocumenter(_alias_documenter(), override=True)
    app.connect("doctree-resolved", _compact_for_latex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
