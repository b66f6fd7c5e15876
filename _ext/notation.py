"""The "Notation and glossary" page, generated from notation/*.yml.

Each chapter that defines symbols or concepts has one file ``notation/<page>.yml``
(``<page>`` is the file name, without extension, of a page in _toc.yml: ``intro``,
``gaussian_mechanism``, ...); the format is in notation/README.md::

    symbols:
      - symbol: '\\sigma_{\\mathrm{opt}}'   # LaTeX, no dollars
        meaning: 'noise scale of the Gaussian mechanism at sensitivity 1'
        where: gm-eq-sigma-opt             # label of the defining place
    terms:
      - term: 'clipping probability'
        definition: 'the probability $p_C$ that a row is clipped'
        where: gd-def-clipping

At ``source-read`` of the page ``notation`` the marker line (``MARKER``) is
replaced by MyST: for each page in reading order, a heading with the page's
title and a table of its symbols ($symbol$, meaning, a link to the defining
place), then one sorted ``{glossary}`` of all terms, each definition ending with
a link to its defining place.  Sphinx indexes glossary terms, so the PDF's
general index lists the concepts too; in the PDF each term's index entry is moved
from the glossary to its defining place (``IndexAtDefinitions``), and the symbol
tables have fixed, ragged-right columns (``TABULAR_COLUMNS``).

Malformed files (not a mapping, unknown keys, missing or empty fields, a file
named after no page of _toc.yml, the same term or symbol twice anywhere in the
book: one meaning per symbol) stop the build
with an error that names the file, the entry and the problem.  A ``where`` label
that does not exist is a broken cross-reference, reported by the build (-n).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

MARKER = "<!-- notation-and-glossary -->"
PAGE = "notation"
FIELDS = {"symbols": ("symbol", "meaning", "where"), "terms": ("term", "definition", "where")}
# Optional keys of an entry: the other pages whose maths may use a symbol's letter with
# this meaning (its own page is implied; tests/test_notation.py checks the prose).
OPTIONAL = {"symbols": ("pages",), "terms": ()}
# Optional top-level keys about a page's single letters (issue 33 item 5, read by
# _ext/letters.py, not rendered): letters used there as bound (dummy) variables, and
# letters with a second meaning still to be renamed; each a mapping letter -> reason.
LETTER_KEYS = ("bound", "pending")
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")


class NotationError(ValueError):
    """A notation/*.yml file does not follow the format of notation/README.md."""


@dataclass(frozen=True)
class Entry:
    kind: str  # "symbols" or "terms"
    name: str  # the symbol (LaTeX) or the term
    text: str  # the meaning or the definition (MyST)
    where: str  # a label
    source: str  # "notation/x.yml, symbols[2]"
    pages: tuple[str, ...] = ()  # other pages whose maths may use the symbol's letter


@dataclass(frozen=True)
class Page:
    docname: str  # e.g. "chapters/gaussian_mechanism"
    title: str
    symbols: tuple[Entry, ...]
    terms: tuple[Entry, ...]


# ---------------------------------------------------------------- reading the files

def toc_pages(root: Path) -> list[str]:
    """The docnames of _toc.yml in reading order (root first)."""
    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(str(entry["file"]).removesuffix(".md").removesuffix(".ipynb"))
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


def page_title(root: Path, docname: str) -> str:
    """The first level-1 heading of a page (.md or the markdown cells of .ipynb)."""
    md, nb = Path(root) / f"{docname}.md", Path(root) / f"{docname}.ipynb"
    if md.is_file():
        lines = md.read_text().splitlines()
    elif nb.is_file():
        cells = json.loads(nb.read_text())["cells"]
        lines = [line for c in cells if c["cell_type"] == "markdown"
                 for line in "".join(c["source"]).splitlines()]
    else:
        return docname
    for line in lines:
        if line.startswith("# "):
            return line[2:].strip()
    return docname


def _entries(path: Path, kind: str, items) -> list[Entry]:
    name_field, text_field, _ = FIELDS[kind]
    where = f"notation/{path.name}"
    if items is None:
        return []
    if not isinstance(items, list):
        raise NotationError(f"{where}: '{kind}' must be a list of entries, got {type(items).__name__}")
    out = []
    for i, item in enumerate(items):
        at = f"{where}, {kind}[{i}]"
        if not isinstance(item, dict):
            raise NotationError(f"{at}: an entry must be a mapping with keys {', '.join(FIELDS[kind])}, "
                                f"got {item!r}")
        unknown = sorted(set(item) - set(FIELDS[kind]) - set(OPTIONAL[kind]))
        if unknown:
            raise NotationError(f"{at}: unknown key(s) {', '.join(map(str, unknown))}; "
                                f"the keys are {', '.join(FIELDS[kind] + OPTIONAL[kind])}")
        pages = item.get("pages", [])
        if not isinstance(pages, list) or not all(isinstance(p, str) and p.strip() for p in pages):
            raise NotationError(f"{at}: 'pages' must be a list of page names, got {pages!r}")
        for field in FIELDS[kind]:
            value = item.get(field)
            if not isinstance(value, str) or not value.strip():
                raise NotationError(f"{at}: '{field}' is missing or empty (a non-empty string)")
        if "$" in item[name_field] and kind == "symbols":
            raise NotationError(f"{at}: write the symbol as LaTeX without dollars, got {item['symbol']!r}")
        if not LABEL.fullmatch(item["where"]):
            raise NotationError(f"{at}: 'where' must be one label (letters, digits, - _ . :), "
                                f"got {item['where']!r}")
        out.append(Entry(kind, item[name_field].strip(), item[text_field].strip(), item["where"], at,
                         tuple(p.strip() for p in pages)))
    return out


def load(root: Path) -> list[Page]:
    """Every notation/*.yml, checked, as pages in the reading order of _toc.yml."""
    root = Path(root)
    pages = toc_pages(root)
    by_stem = {}
    for docname in pages:
        by_stem.setdefault(Path(docname).name, docname)
    found: dict[str, tuple[list[Entry], list[Entry]]] = {}
    for path in sorted((root / "notation").glob("*.yml")):
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as err:
            raise NotationError(f"notation/{path.name}: not valid YAML: {err}") from None
        if data is None:
            continue
        if not isinstance(data, dict):
            raise NotationError(f"notation/{path.name}: must be a mapping with keys symbols, terms")
        unknown = sorted(set(data) - set(FIELDS) - set(LETTER_KEYS))
        if unknown:
            raise NotationError(f"notation/{path.name}: unknown key(s) {', '.join(map(str, unknown))}; "
                                "the keys are symbols, terms, bound, pending")
        for key in LETTER_KEYS:
            value = data.get(key) or {}
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()):
                raise NotationError(f"notation/{path.name}: '{key}' must map letters to reasons, got {value!r}")
        if path.stem not in by_stem:
            raise NotationError(f"notation/{path.name}: no page named {path.stem!r} in _toc.yml "
                                "(name the file after the chapter that defines its entries)")
        found[by_stem[path.stem]] = (_entries(path, "symbols", data.get("symbols")),
                                     _entries(path, "terms", data.get("terms")))
    # A term is defined once in the book (one glossary), and so is a symbol: one
    # meaning per symbol, book-wide (issue 33 item 5).  A chapter that needs a letter
    # another chapter has taken renames its own use (and says so where a source
    # writes it differently); the table lists each symbol under the chapter that
    # defines it first.
    seen: dict[tuple[str, ...], Entry] = {}
    for doc, (symbols, terms) in found.items():
        for entry in symbols + terms:
            key = (entry.kind, _normalise(entry.name, entry.kind))
            if key in seen:
                what = "symbol" if entry.kind == "symbols" else "term"
                meanings = " (one symbol, two meanings)" if entry.kind == "symbols" else ""
                raise NotationError(f"duplicate {what} {entry.name!r}{meanings}: in {seen[key].source} and in "
                                    f"{entry.source} (define it once, where it is first defined)")
            seen[key] = entry
    titles = {pages[0]: "The landing page"}
    return [Page(doc, titles.get(doc) or page_title(root, doc), tuple(found[doc][0]), tuple(found[doc][1]))
            for doc in pages if doc in found]


def _normalise(name: str, kind: str) -> str:
    if kind == "symbols":
        return re.sub(r"\s+", "", name)
    return " ".join(name.split()).casefold()


# ---------------------------------------------------------------- writing MyST

def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _link(label: str, equations: frozenset) -> str:
    """A link to ``label``: {eq} for an equation (a plain MyST link to one resolves on the
    site but names a LaTeX label that does not exist, so the PDF printed ??)."""
    return f"{{eq}}`{label}`" if label in equations else f"[](#{label})"


# The PDF's column widths (fractions of the line; the site ignores them), set
# ragged right so that a narrow column breaks between words instead of
# hyphenating; the symbol column fits the longest symbol (math does not break).
COLUMNS = (0.22, 0.5, 0.28)
TABULAR_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\Y{{{w}}}" for w in COLUMNS)


def render(pages: list[Page], equations: frozenset = frozenset()) -> str:
    """The MyST that replaces the marker: symbol tables by chapter, then the glossary.
    ``equations``: the labels that name equations."""
    out = ["## Symbols", ""]
    if not any(page.symbols for page in pages):
        out += ["No symbols are listed yet.", ""]
    for page in pages:
        if not page.symbols:
            continue
        out += [f"### {page.title}", "", f"```{{tabularcolumns}} {TABULAR_COLUMNS}", "```", "",
                "| Symbol | Meaning | Defined in |", "| :-- | :-- | :-- |"]
        out += [f"| ${_cell(e.name)}$ | {_cell(e.text)} | {_link(e.where, equations)} |" for e in page.symbols]
        out.append("")
    out += ["## Glossary", ""]
    terms = [e for page in pages for e in page.terms]
    if not terms:
        return "\n".join(out + ["No terms are listed yet.", ""])
    out += ["```{glossary}", ":sorted:", ""]
    for entry in terms:
        out.append(" ".join(entry.name.split()))
        body = entry.text.splitlines() + ["", f"Defined in {_link(entry.where, equations)}."]
        out += [f"  {line}" if line.strip() else "" for line in body]
        out.append("")
    out += ["```", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- Sphinx

def _check(app):
    """Read and check the files once per build: a malformed file stops it at once."""
    from sphinx.errors import ExtensionError

    try:
        # kept on the app, not the environment: the environment is pickled, and a test
        # that unpickles it would have to import this module under its name
        app.notation_pages = load(Path(app.srcdir))
    except NotationError as err:
        raise ExtensionError(f"Notation and glossary: {err}") from None


def _expand(app, docname, source):
    if docname != PAGE:
        return
    root = Path(app.srcdir)
    for path in [root / "_toc.yml", *sorted((root / "notation").glob("*.yml"))]:
        app.env.note_dependency(str(path))
    pages = getattr(app, "notation_pages", None) or load(root)
    if MARKER not in source[0]:
        from sphinx.errors import ExtensionError

        raise ExtensionError(f"Notation and glossary: {PAGE}.md needs the marker line {MARKER}")
    # the chapters are read before this page (Sphinx reads in sorted order, and this
    # page is reread after any change), so the math domain knows their equations
    equations = frozenset(app.env.get_domain("math").data.get("objects", {}))
    source[0] = source[0].replace(MARKER, render(pages, equations))


def _always_reread(app, env, added, changed, removed):
    """notation.md shows the other pages' titles: reread it when anything is read."""
    if PAGE in env.found_docs and (added or changed or removed):
        return [PAGE]
    return []


def _proof_links():
    from docutils import nodes
    from sphinx import addnodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class ProofLinks(SphinxPostTransform):
        """A link ``[](#label)`` on the page to a sphinx-proof label (definition,
        lemma, ...) becomes ``{prf:ref}`label```: the myst resolver does not find
        those labels (sphinx-proof resolves only its own role)."""

        default_priority = 8  # before myst's resolver (9) and Sphinx's (10)

        def run(self, **kwargs):
            proofs = getattr(self.env, "proof_list", {})
            for node in self.document.findall(addnodes.pending_xref):
                if (node.get("refdoc") == PAGE and node.get("reftype") == "myst"
                        and node.get("reftarget") in proofs):
                    node["refdomain"], node["reftype"] = "prf", "ref"
                    if not node.astext().strip():  # sphinx-proof numbers a bare label
                        target = node["reftarget"]
                        node.children = []
                        node += nodes.inline(target, target)

    return ProofLinks


def target_ids(env, label: str) -> tuple[str | None, list[str]]:
    """(document, candidate node ids) of a ``where`` label: a section or paragraph
    target (std domain), an equation, a sphinx-proof directive."""
    std = env.get_domain("std")
    if label in std.labels:
        doc, node_id, _ = std.labels[label]
        return doc, [node_id]
    if label in std.anonlabels:
        doc, node_id = std.anonlabels[label]
        return doc, [node_id]
    equation = env.get_domain("math").data.get("objects", {}).get(label)
    if equation:
        return equation[0], [f"equation-{label}", label]
    proof = getattr(env, "proof_list", {}).get(label)
    if proof:
        return proof["docname"], [label]
    return None, []


def move_index_entries(glossary_page, terms: dict[str, tuple[str, str]], locate) -> list[str]:
    """The PDF's index entry of each glossary term at the place that defines it.

    ``glossary_page``: the (LaTeX-assembled) page of the glossary; ``terms``: normalised term -> (term, where label); ``locate(label)`` -> the node
    the label names in ``document`` (or None).  The glossary's own entry of a term
    whose defining place is found is dropped (so the index gives one page, the
    definition's); returns the terms left at the glossary."""
    from sphinx import addnodes
    from docutils import nodes

    placed = set()
    for key, (name, where) in terms.items():
        node = locate(where)
        if node is None or node.parent is None:
            continue
        entry = addnodes.index(entries=[("single", name, (node["ids"] or [""])[0], "main", None)],
                               inline=False)
        if isinstance(node, nodes.section):
            node.insert(1 if node.children and isinstance(node[0], nodes.title) else 0, entry)
        else:
            node.parent.insert(node.parent.index(node), entry)
        placed.add(key)
    for index in list(glossary_page.findall(addnodes.index)):
        if not isinstance(index.parent, nodes.term):
            continue
        index["entries"] = [e for e in index["entries"]
                            if _normalise(e[1], "terms") not in placed]
    return sorted(set(terms) - placed)


def _index_at_definitions():
    from docutils import nodes
    from sphinx import addnodes
    from sphinx.transforms.post_transforms import SphinxPostTransform
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    class IndexAtDefinitions(SphinxPostTransform):
        """In the PDF, a concept's index entry points to where it is defined (the
        term's ``where`` label), not to the glossary page (LaTeX: one assembled
        document, the chapters in ``start_of_file`` nodes, whose subtrees' own
        parent links are not set: each page is searched within its node)."""

        builders = ("latex",)
        default_priority = 850

        def run(self, **kwargs):
            pages = getattr(self.app, "notation_pages", None)
            if not pages or not any(True for _ in self.document.findall(addnodes.start_of_file)):
                return
            root = self.config.root_doc
            docs = {node["docname"]: node for node in self.document.findall(addnodes.start_of_file)}
            terms = {_normalise(e.name, "terms"): (" ".join(e.name.split()), e.where)
                     for page in pages for e in page.terms}

            def locate(label):
                doc, ids = target_ids(self.env, label)
                if doc is None:
                    return None
                scope = docs.get(doc, self.document if doc == root else None)
                if scope is None:
                    return None
                for node in scope.findall(nodes.Element):
                    if any(i in node.get("ids", ()) for i in ids):
                        return node
                return None

            left = move_index_entries(docs.get(PAGE, self.document), terms, locate)
            if left:
                logger.info("notation: %d glossary terms indexed at the glossary (defining "
                            "place not found): %s", len(left), ", ".join(left))

    return IndexAtDefinitions


def setup(app):
    app.connect("builder-inited", _check)
    app.add_post_transform(_index_at_definitions())
    app.add_post_transform(_proof_links())
    app.connect("source-read", _expand)
    app.connect("env-get-outdated", _always_reread)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
