"""The book's public address, version and date: one setting, every link derived.

``pyproject.toml`` holds them, and nothing else does::

    [project]
    version = "0.1.0"

    [tool.egm-book]
    repository = ""              # or "https://github.com/OWNER/REPO"
    branch = "main"
    date-released = "2026-11-21"

From them this module derives

* in the site (a Sphinx extension): the repository and issues buttons, the Binder
  and Colab launch buttons of every chapter, the copyright year, and the BibTeX
  of the landing page's "How to cite" box (directive ``{how-to-cite}``);
* for ``scripts/public_address.py``: CITATION.cff's version, date and URLs, and
  the chapters' Colab install cell.

Empty repository: no button, no launch link and no citation field points
anywhere.  Set: all of them point to that repository (Binder builds it from
environment.yml; a chapter opened in Colab installs egmlib from it).
"""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

GITHUB = re.compile(r"https://github\.com/(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)"
                    r"/(?P<name>[A-Za-z0-9._-]+)")
BRANCH = re.compile(r"[A-Za-z0-9._/-]+")
BINDERHUB = "https://mybinder.org"
COLAB = "https://colab.research.google.com"
# The first line of the chapters' install cell: how scripts/public_address.py finds it.
CELL_MARKER = "# Colab: install egmlib when it is missing."


@dataclass(frozen=True)
class PublicAddress:
    """The settings of ``pyproject.toml`` that links and citations derive from."""

    repository: str  #: "" or "https://github.com/OWNER/REPO"
    branch: str
    version: str
    date: datetime.date

    @property
    def owner_and_name(self) -> tuple[str, str]:
        found = GITHUB.fullmatch(self.repository)
        return found["owner"], found["name"]

    def binder_url(self, path: str) -> str:
        """Binder (mybinder.org builds the repository from environment.yml), JupyterLab on ``path``."""
        owner, name = self.owner_and_name
        return f"{BINDERHUB}/v2/gh/{owner}/{name}/{self.branch}?urlpath=lab/tree/{path}"

    def colab_url(self, path: str) -> str:
        owner, name = self.owner_and_name
        return f"{COLAB}/github/{owner}/{name}/blob/{self.branch}/{path}"


def read(root: Path) -> PublicAddress:
    """The settings, checked: a ValueError names the setting, the accepted form and the value."""
    data = tomllib.loads((Path(root) / "pyproject.toml").read_text())
    tool = data.get("tool", {}).get("egm-book", {})
    repository = tool.get("repository", "")
    if not isinstance(repository, str) or (repository and (not GITHUB.fullmatch(repository)
                                                            or repository.endswith(".git"))):
        raise ValueError("pyproject.toml [tool.egm-book] repository must be \"\" or "
                         f"\"https://github.com/OWNER/REPO\" (no trailing slash or .git), got {repository!r}")
    branch = tool.get("branch", "")
    if not isinstance(branch, str) or not BRANCH.fullmatch(branch):
        raise ValueError("pyproject.toml [tool.egm-book] branch must be a git branch name "
                         f"(letters, digits, . _ / -), got {branch!r}")
    raw_date = tool.get("date-released")
    try:  # a TOML date (unquoted) or a string
        date = raw_date if type(raw_date) is datetime.date else datetime.date.fromisoformat(raw_date)
    except (TypeError, ValueError):
        raise ValueError("pyproject.toml [tool.egm-book] date-released must be a date "
                         f"\"YYYY-MM-DD\", got {raw_date!r}") from None
    version = data["project"]["version"]
    return PublicAddress(repository=repository, branch=branch, version=version, date=date)


# ---------------------------------------------------------------- the citation

def citation_cff(root: Path, address: PublicAddress) -> str:
    """CITATION.cff with the version, date and URLs of ``address``; every other line kept.

    ``version`` and ``date-released`` go before the top-level ``license:`` line,
    ``repository-code`` and ``url`` (only when the address is set) after it.
    """
    derived = re.compile(r"^(version|date-released|repository-code|url):")
    lines = [line for line in (Path(root) / "CITATION.cff").read_text().splitlines() if not derived.match(line)]
    at = next((i for i, line in enumerate(lines) if line.startswith("license:")), None)
    if at is None:
        raise ValueError("CITATION.cff needs a top-level license: line (the derived fields go around it)")
    before = [f"version: {json.dumps(address.version)}", f"date-released: {json.dumps(address.date.isoformat())}"]
    after = ([f"repository-code: {json.dumps(address.repository)}", f"url: {json.dumps(address.repository)}"]
             if address.repository else [])
    return "\n".join(lines[:at] + before + lines[at:at + 1] + after + lines[at + 1:]) + "\n"


# BibTeX lines are broken here, at spaces, to at most this many characters: the
# PDF's code column prints them without continuation markers (a URL, which has no
# space, is kept whole), and the site's box wraps what a phone cannot show.
BIBTEX_WIDTH = 64
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# The study the book re-derives: its entry in references.bib is the one the box shows.
STUDY_KEY = "poulsen2023"


def release_date_text(date: datetime.date) -> str:
    """The release date as the title page prints it: "21 November 2026"."""
    return f"{date.day} {date:%B %Y}"


def format_bibtex(entry_type: str, key: str, fields: list[tuple[str, str]]) -> str:
    """One BibTeX entry, ``fields`` as (name, value written as BibTeX: ``{...}`` or a
    month macro), aligned and broken at spaces to ``BIBTEX_WIDTH`` characters."""
    pad = max(len(name) for name, _ in fields)
    lines = [f"@{entry_type}{{{key},"]
    for i, (name, value) in enumerate(fields):
        head = f"  {name:<{pad}} = "
        words = (value + ("," if i < len(fields) - 1 else "")).split(" ")
        line = head + words[0]
        for word in words[1:]:
            if len(line) + 1 + len(word) > BIBTEX_WIDTH:
                lines.append(line)
                line = " " * len(head) + word
            else:
                line += " " + word
        lines.append(line)
    return "\n".join(lines + ["}"])


def bibtex(root: Path, address: PublicAddress) -> str:
    """The landing page's BibTeX of the book: title and authors from CITATION.cff, the
    rest from ``address``.  ``@misc``, which every classic BibTeX style formats (they
    drop or warn about ``@software``); ``version`` and ``url`` for the styles that read
    them, the version in ``note`` and the address (or, without one, what the work is)
    in ``howpublished`` for those that do not."""
    cff = yaml.safe_load((Path(root) / "CITATION.cff").read_text())
    authors = " and ".join(
        f"{{{a['name']}}}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
        for a in cff["authors"])
    title = cff["title"]
    fields = [("author", f"{{{authors}}}"), ("title", f"{{{title}}}")]
    # How it is published: the repository when one is set; otherwise what it is,
    # with no invented address.
    if address.repository:
        fields.append(("howpublished", f"{{\\url{{{address.repository}}}}}"))
    else:
        fields.append(("howpublished", "{Executable report (Jupyter Book) and Python library egmlib}"))
    fields += [("year", f"{{{address.date.year}}}"), ("month", MONTHS[address.date.month - 1]),
               ("version", f"{{{address.version}}}"), ("note", f"{{Version {address.version}}}")]
    if address.repository:
        fields.append(("url", f"{{{address.repository}}}"))
    return format_bibtex("misc", f"egmbook{address.date.year}", fields)


def reference_bibtex(root: Path, key: str) -> str:
    """The entry ``key`` of references.bib, written as the box shows it (fields in the
    file's order, months as macros, lines broken as the book's entry)."""
    from pybtex.database import parse_file

    data = parse_file(str(Path(root) / "references.bib"), "bibtex")
    if key not in data.entries:
        raise ValueError(f"references.bib has no entry {key!r}")
    entry = data.entries[key]
    fields = []
    for role, persons in entry.persons.items():
        fields.append((role, "{" + " and ".join(str(p) for p in persons) + "}"))
    month_names = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                               "august", "september", "october", "november", "december"))}
    for name, value in entry.fields.items():
        value = " ".join(str(value).split())
        if name.lower() == "month" and value.lower() in month_names:
            fields.append((name.lower(), MONTHS[month_names[value.lower()]]))
        else:
            fields.append((name.lower(), f"{{{value}}}"))
    # authors first, then title, then the rest in the file's order
    order = {"author": 0, "title": 1}
    fields.sort(key=lambda f: order.get(f[0], 2))
    return format_bibtex(entry.type, key, fields)


# ---------------------------------------------------------------- Colab install cell

def install_cell_source(address: PublicAddress) -> str:
    """The code of the chapters' first code cell (hidden on the site, silent when egmlib imports)."""
    if not address.repository:
        return (f"{CELL_MARKER}\n"
                "# No public repository is set (pyproject.toml [tool.egm-book]), so there is\n"
                "# nothing to install from: run the chapters after `make lab` instead.\n"
                "import egmlib  # noqa: F401")
    return (f"{CELL_MARKER}\n"
            "# A fresh Colab session has no egmlib: fetch the book's repository, install\n"
            "# egmlib from it, and work in its chapters/ folder, as a local run does.\n"
            "try:\n"
            "    import egmlib  # noqa: F401\n"
            "except ModuleNotFoundError:\n"
            "    import importlib, os, subprocess, sys\n"
            f"    subprocess.run([\"git\", \"clone\", \"--quiet\", \"--depth\", \"1\", \"--branch\", {json.dumps(address.branch)},\n"
            f"                    {json.dumps(address.repository)}, \"egm-book\"], check=True)\n"
            "    subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"--quiet\", \"./egm-book[colab]\"], check=True)\n"
            "    os.chdir(\"egm-book/chapters\")\n"
            "    importlib.invalidate_caches()")


# ---------------------------------------------------------------- Sphinx

def _configure(app, config):
    """The theme's buttons, the canonical URL and the copyright year, from the settings."""
    address = read(Path(app.srcdir))
    options = dict(config.html_theme_options or {})
    if address.repository:
        options |= {
            "repository_url": address.repository,
            "repository_branch": address.branch,
            "path_to_docs": "",
            "use_repository_button": True,
            "use_issues_button": True,
            "launch_buttons": {"notebook_interface": "jupyterlab", "binderhub_url": BINDERHUB,
                               "colab_url": COLAB},
        }
    else:
        options |= {
            "repository_url": "",
            "use_repository_button": False,
            "use_issues_button": False,
            "use_edit_page_button": False,
            "use_source_button": False,
            "launch_buttons": {"notebook_interface": "jupyterlab", "binderhub_url": "", "colab_url": ""},
        }
    config.html_theme_options = options
    config.html_baseurl = ""
    config.copyright = str(address.date.year)
    # The PDF's title page: "Version 0.1.0" and the release date (not the build
    # date: rebuilding gives the same book).
    config.version = config.release = address.version
    config.today = release_date_text(address.date)
    config.latex_elements = {**(config.latex_elements or {}), "releasename": "Version"}


def _how_to_cite_directive():
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    class HowToCite(SphinxDirective):
        """The BibTeX entry of the book, from pyproject.toml and CITATION.cff; with an
        argument, the entry of references.bib with that key (``{how-to-cite} poulsen2023``)."""

        has_content = False
        optional_arguments = 1

        def run(self):
            root = Path(self.env.srcdir)
            for name in ("pyproject.toml", "CITATION.cff", "references.bib"):
                self.env.note_dependency(str(root / name))
            text = reference_bibtex(root, self.arguments[0]) if self.arguments else bibtex(root, read(root))
            block = nodes.literal_block(text, text, language="bibtex", classes=["how-to-cite"])
            return [block]

    return HowToCite


def setup(app):
    app.connect("config-inited", _configure, priority=100)
    app.add_directive("how-to-cite", _how_to_cite_directive())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
