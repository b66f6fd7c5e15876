"""The page study_map.md: the numbered items of the study and of Reimherr & Awan,
each with where the book restates and checks it and its status.

The data are study_map/*.yml (schema: study_map/README.md).  At build time a
``source-read`` hook appends the generated MyST to the page's source, so the page
shows the list and no generator code.  Each item defines its target
``study-<kind>-<number>`` (``ra-...`` for Reimherr & Awan), which the chapters link
to; each corrected item links to its entries of the errata page
(chapters/errata.ipynb), and the errata page links back.

The functions below are also used by tests/test_study_map.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCNAME = "study_map"
SOURCES = ("poulsen2023", "reimherr2019")
STATUS = {
    "checked": "checked",
    "corrected": "corrected",
    "not-treated": "not treated",
}
KINDS = {
    "def": "Definition", "lemma": "Lemma", "cor": "Corollary", "thm": "Theorem",
    "alg": "Algorithm", "eq": "Equation", "fig": "Figure", "sec": "Section",
    "ex": "Example",
}
LABEL = re.compile(r"^(study|ra)-(def|lemma|cor|thm|alg|eq|fig|sec|ex)-([0-9a-z]+(?:-[0-9]+)*)$")


def load(source: str, root: Path = ROOT) -> dict:
    return yaml.safe_load((root / "study_map" / f"{source}.yml").read_text())


def number(label: str) -> tuple[str, str]:
    """('Lemma', '4.1') for study-lemma-4-1; ('Appendix', 'A') for study-sec-a."""
    _, kind, num = LABEL.match(label).groups()
    num = num.replace("-", ".")
    if kind == "sec" and num.isalpha():
        return "Appendix", num.upper()
    return KINDS[kind], num


def toc_docs(root: Path = ROOT) -> list[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    docs = [toc["root"]]
    for part in toc["parts"]:
        docs += [c["file"] for c in part["chapters"]]
    return docs


def _markdown_sources(doc: str, root: Path) -> tuple[list[str], list[str]]:
    """(markdown cell sources, figure names) of a notebook or a .md page."""
    nb = root / f"{doc}.ipynb"
    if nb.exists():
        cells = json.loads(nb.read_text())["cells"]
        texts = ["".join(c["source"]) if c["cell_type"] == "markdown" else ""
                 for c in cells]
        figs = [c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
                for c in cells]
        return texts, [f for f in figs if f]
    md = root / f"{doc}.md"
    return ([md.read_text()] if md.exists() else []), []


def book_labels(root: Path = ROOT) -> dict[str, tuple[str, str, int]]:
    """Every label of the book's sources: label -> (how to link, document, cell).

    How to link: 'eq' (a labelled equation), 'prf' (a proof-style directive),
    'numref' (a figure), 'ref' (a target before a heading, or a directive such as
    an exercise), 'text' (a target before a paragraph: needs a link text).
    """
    labels = {}
    for doc in toc_docs(root):
        texts, figs = _markdown_sources(doc, root)
        for name in figs:
            labels[name] = ("numref", doc, -1)
        for i, text in enumerate(texts):
            lines = text.splitlines()
            for j, line in enumerate(lines):
                m = re.match(r"\s*:label:\s*(\S+)\s*$", line)
                if m:
                    opener = next((lines[k] for k in range(j - 1, -1, -1)
                                   if re.match(r"\s*(```|:::)", lines[k])), "")
                    how = ("eq" if "{math}" in opener or "{glue:math}" in opener else
                           "prf" if "{prf:" in opener else "ref")
                    labels[m[1]] = (how, doc, i)
                m = re.match(r"\s*\(([\w-]+)\)=\s*$", line)
                if m:
                    after = next((x for x in lines[j + 1:] if x.strip()), "")
                    labels[m[1]] = ("ref" if after.lstrip().startswith("#")
                                    else "text", doc, i)
    return labels


def enclosing_sections(root: Path = ROOT) -> dict[str, tuple[str, str | None]]:
    """label -> (document, label of the heading it stands under, or None when that
    heading has no label), for every target before a paragraph ('text' labels)."""
    found = {}
    for doc in toc_docs(root):
        texts, _ = _markdown_sources(doc, root)
        heading, pending = None, None
        for text in texts:
            lines = text.splitlines()
            for j, line in enumerate(lines):
                m = re.match(r"\s*\(([\w-]+)\)=\s*$", line)
                if m:
                    after = next((x for x in lines[j + 1:] if x.strip()), "")
                    if after.lstrip().startswith("#"):
                        pending = m[1]
                    else:
                        found[m[1]] = (doc, heading)
                    continue
                if re.match(r"#{1,6} ", line):
                    heading, pending = pending, None
                elif line.strip():
                    pending = None
    return found


# The classes of errata/README.md in the order of the errata page: wrong results first.
CLASS_ORDER = ("wrong-result", "wrong-pseudo-code", "numerical-inaccuracy", "wrong-proof-step",
               "unstated-hypothesis", "notation-typo")


def errata_entries(root: Path = ROOT) -> list[dict]:
    """The entries of errata/*.yml in the order of the errata page: class (in
    CLASS_ORDER), then chapter in the table of contents, then the cell of the
    entry's target."""
    docs = toc_docs(root)
    labels = book_labels(root)
    entries = []
    for path in sorted((root / "errata").glob("*.yml")):
        for entry in yaml.safe_load(path.read_text()):
            chapter = entry["chapter"].removesuffix(".ipynb")
            cell = labels.get(entry["label"], ("", "", -1))[2]
            rank = CLASS_ORDER.index(entry["class"])
            entries.append({**entry, "order": (rank, docs.index(chapter), cell)})
    entries.sort(key=lambda e: e["order"])
    return entries


def erratum_target(err_label: str) -> str:
    """The target of an entry of the errata page: err-x -> erratum-x."""
    return "erratum-" + err_label.removeprefix("err-")


def _doc_tops(labels: dict) -> dict[str, str]:
    """document -> the label before its title (the first heading target of its first cell)."""
    tops = {}
    for label, (how, doc, cell) in labels.items():
        if how == "ref" and cell in (0, -1) and doc not in tops:
            tops[doc] = label
    return tops


class _EntryLinks:
    """The links of one entry of the map, each link text once.

    A target before a paragraph (a check) has no title: such links are numbered
    within the entry ("check 1", "check 2"), and the place they stand in is named once
    per place, and not at all when the entry already links that place."""

    def __init__(self, labels: dict, sections: dict, tops: dict):
        self.labels, self.sections, self.tops = labels, sections, tops
        self.n_checks = 0
        self.linked: set[str] = set()

    def _place(self, label: str) -> tuple[str, str | None]:
        doc, heading = self.sections.get(label, (self.labels[label][1], None))
        if heading:
            return heading, f"under {{ref}}`{heading}`"
        return self.tops.get(doc, doc), f"in {{doc}}`/{doc}`"

    def render(self, targets: list[str], texts: dict[str, str] | None = None) -> str:
        """The links to ``targets`` (in order), checks grouped by place."""
        texts = texts or {}
        self.linked.update(t for t in targets
                           if t not in texts and self.labels.get(t, ("ref",))[0] != "text")
        parts, groups = [], {}
        for target in targets:
            if target in texts:
                parts.append(texts[target])
            elif self.labels.get(target, ("ref",))[0] == "text":
                self.n_checks += 1
                key, place = self._place(target)
                link = f"{{ref}}`check {self.n_checks} <{target}>`"
                if key in groups:
                    groups[key][0].append(link)
                else:
                    groups[key] = ([link], place)
                    parts.append(key)
            else:
                parts.append(_link(target, self.labels, self.sections))
        out = []
        for part in parts:
            if part in groups:
                links, place = groups.pop(part)
                text = ", ".join(links[:-1]) + " and " + links[-1] if len(links) > 1 else links[0]
                if part not in self.linked:
                    self.linked.add(part)
                    text += f" {place}"
                out.append(text)
            else:
                out.append(part)
        return ", ".join(out)


def _link(label: str, labels: dict, sections: dict | None = None) -> str:
    how = labels.get(label, ("ref",))[0]
    if how == "eq":
        return f"equation {{eq}}`{label}`"
    if how == "prf":
        return f"{{prf:ref}}`{label}`"
    if how == "numref":
        return f"{{numref}}`{label}`"
    if how == "text":
        # a target before a paragraph has no title: name the check by where it stands
        doc, heading = (sections or {}).get(label, (labels[label][1], None))
        where = f"{{ref}}`{heading}`" if heading else f"{{doc}}`/{doc}`"
        return f"{{ref}}`the check <{label}>` under {where}"
    return f"{{ref}}`{label}`"


def _heading_level(label: str) -> int:
    _, num = number(label)
    return 2 + num.count(".")


def render(root: Path = ROOT) -> str:
    """The MyST of the list, appended to study_map.md."""
    labels = book_labels(root)
    sections = enclosing_sections(root)
    numbers = {e["label"]: i for i, e in enumerate(errata_entries(root), 1)}
    tops = _doc_tops(labels)
    out = []
    for source in SOURCES:
        data = load(source, root)
        if data["prefix"] == "ra":
            out.append("(study-map-ra)=\n## Reimherr & Awan (2019)\n\n"
                       "The numbered items of {cite:t}`reimherr2019` that the book "
                       "cites; their errata are listed in "
                       "{ref}`the chapter that checks them <ell-errata>`.\n")
        for item in data["items"]:
            kind, num = number(item["label"])
            status = STATUS[item["status"]]
            links = _EntryLinks(labels, sections, tops)
            where = links.render(item.get("where", []))
            # in the errata page's order (its numbers), whatever the order in the YAML
            errata = sorted(item.get("errata", []), key=lambda e: numbers.get(e, len(numbers) + 1))
            fixes = links.render(errata, {err: f"{{ref}}`erratum {numbers[err]} "
                                               f"<{erratum_target(err)}>`"
                                          for err in errata if err in numbers})
            body = [f"**Status: {status}.**"]
            if where and item["status"] == "not-treated":
                body.append(f"See also {where}.")
            elif where:
                body.append(f"Restated and checked in {where}.")
            if fixes:
                body.append(f"Corrected in {fixes}.")
            if item.get("note"):
                body.append(item["note"])
            whose = data["name"]
            if kind in ("Section", "Appendix") and data["prefix"] == "study":
                hashes = "#" * _heading_level(item["label"])
                title = f"{kind} {num}: {item['title']}"
                if kind == "Appendix":
                    hashes, title = "##", f"Appendix {num}: {item['title']}"
                out.append(f"({item['label']})=\n{hashes} {title}\n\n"
                           + " ".join(body) + "\n")
            else:
                head = f"**{whose[0].upper() + whose[1:]}'s {kind} {num}**"
                if kind == "Equation":
                    head = f"**{whose[0].upper() + whose[1:]}'s equation ({num})**"
                out.append(f"({item['label']})=\n{head}: {item['title']}. "
                           + " ".join(body) + "\n")
    return "\n".join(out)


def _source_read(app, docname, source):
    if docname == DOCNAME:
        source[0] = source[0].rstrip("\n") + "\n\n" + render(Path(app.srcdir)) + "\n"


def _always_outdated(app, env, added, changed, removed):
    """The page depends on study_map/*.yml, errata/*.yml and the chapters."""
    return [DOCNAME] if DOCNAME in env.found_docs else []


def setup(app):
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _always_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
