"""The public address is one setting (pyproject.toml [tool.egm-book]); the citation is valid.

* CITATION.cff validates with cffconvert (its own environment: the Makefile makes
  it and passes its path in CFFCONVERT).
* The BibTeX of the "How to cite" box parses with pybtex, and carries the
  version, year and (when set) URL of the settings.
* With the address empty, no page, button, citation or notebook links the
  project's hosts; with it set, every button points where the setting says, and
  nowhere else.  The site of the book itself is checked in test_book_build.py;
  here a small Sphinx project with the book's theme and extension is built both
  ways.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from pybtex.database import parse_string

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import public_address as pa  # noqa: E402

# Hosts that carry the project's own address (repository, issues, site, launch
# buttons): a link to one of them must be one the setting produces ...
GOVERNED = re.compile(r"https?://(?:[\w.-]+\.)?(?:github\.com|github\.io|gitlab\.com|mybinder\.org"
                      r"|colab\.research\.google\.com)(?:[/?#][^\s\"'<>)}\]]*)?")
# ... or one of these other projects' (cited as sources, not ours).
THIRD_PARTY = {
    "https://github.com/TSPoulsen/egm",  # the original study's code (references.bib, data/README.md)
    "https://github.com/TSPoulsen/egm/blob/c024974/report/main.pdf",  # its report (intro.md)
    "https://github.com/OWNER/REPO",  # the documented form of the setting (README, pyproject.toml), in code
}
SET = "https://github.com/someone/egm-fork"


def governed_links(text: str) -> set[str]:
    return {html.unescape(m.group(0)).rstrip(".,;") for m in GOVERNED.finditer(text)}


def produced_links(address: pa.PublicAddress, chapter_paths: list[str]) -> set[str]:
    """Every link the setting produces (issue links are the repository's /issues/new?...)."""
    if not address.repository:
        return set()
    links = {address.repository}
    for path in chapter_paths:
        links |= {address.binder_url(path), address.colab_url(path)}
    return links


def assert_only_produced(links: set[str], address: pa.PublicAddress, chapter_paths: list[str], where: str):
    allowed = produced_links(address, chapter_paths) | THIRD_PARTY
    issues = f"{address.repository}/issues/new?" if address.repository else None
    stray = {u for u in links if u not in allowed and not (issues and u.startswith(issues))}
    assert not stray, f"{where} links addresses the setting does not produce: {sorted(stray)}"


def _with_settings(tmp: Path, **tool) -> Path:
    """A copy of pyproject.toml and CITATION.cff with other [tool.egm-book] values."""
    text = (ROOT / "pyproject.toml").read_text()
    for key, value in tool.items():
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {json.dumps(value)}", text, flags=re.M)
        assert n == 1, key
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "pyproject.toml").write_text(text)
    shutil.copy(ROOT / "CITATION.cff", tmp / "CITATION.cff")
    return tmp


# ---------------------------------------------------------------- the settings

def test_settings_are_read_and_checked(tmp_path):
    address = pa.read(ROOT)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert address.version == project["project"]["version"]
    import egmlib
    assert egmlib.__version__ == address.version  # installed metadata, not a second copy
    for bad, match in [({"repository": "https://github.com/egm-book/egm-book/"}, "repository"),
                       ({"repository": "github.com/a/b"}, "repository"),
                       ({"repository": "https://github.com/a/b.git"}, "repository"),
                       ({"branch": "a b"}, "branch"),
                       ({"date-released": "2026-02-30"}, "date-released")]:
        root = _with_settings(tmp_path / str(abs(hash(str(bad)))), **bad)
        with pytest.raises(ValueError, match=rf"\[tool\.egm-book\] {match} must be"):
            pa.read(root)


def test_files_are_in_step_with_the_settings():
    """CITATION.cff and the chapters' install cell say what pyproject.toml says."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "public_address.py"), "check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_sync_script_is_idempotent_and_counts_follow_a_fresh_run(tmp_path):
    from importlib import util
    spec = util.spec_from_file_location("pa_script", ROOT / "scripts" / "public_address.py")
    script = util.module_from_spec(spec)
    spec.loader.exec_module(script)
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "(x)=\n# X"},
                    {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "1",
                     "outputs": [{"output_type": "execute_result", "execution_count": 1, "data": {}, "metadata": {}}]},
                    {"cell_type": "code", "execution_count": 2, "metadata": {}, "source": "2", "outputs": []}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    once = script.with_install_cell(json.loads(json.dumps(nb)), "# Colab: install egmlib when it is missing.\nA")
    assert [c.get("execution_count") for c in once["cells"]] == [None, 1, 2, 3]
    assert once["cells"][2]["outputs"][0]["execution_count"] == 2
    assert once["cells"][1]["metadata"]["tags"] == ["remove-cell"] and once["cells"][1]["outputs"] == []
    twice = script.with_install_cell(json.loads(json.dumps(once)), "# Colab: install egmlib when it is missing.\nB")
    assert [c.get("execution_count") for c in twice["cells"]] == [None, 1, 2, 3]
    assert twice["cells"][1]["source"].endswith("B") and len(twice["cells"]) == 4


# ---------------------------------------------------------------- the citation

def test_citation_cff_validates_with_cffconvert(tmp_path):
    exe = os.environ.get("CFFCONVERT") or str(ROOT / ".venv" / "tools" / "cffconvert" / "bin" / "cffconvert")
    if not Path(exe).is_file():
        if os.environ.get("CFFCONVERT"):
            pytest.fail(f"CFFCONVERT={exe} does not exist")
        pytest.skip("cffconvert's environment is missing: `make test` creates it")
    ok = subprocess.run([exe, "--validate", "-i", str(ROOT / "CITATION.cff")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "valid according to schema version 1.2.0" in ok.stdout
    # the check can fail: an impossible date is refused
    bad = tmp_path / "CITATION.cff"
    bad.write_text((ROOT / "CITATION.cff").read_text().replace("date-released:", "date-released: '2026-13-45'\nx-:"))
    refused = subprocess.run([exe, "--validate", "-i", str(bad)], capture_output=True, text=True)
    assert refused.returncode != 0


@pytest.mark.parametrize("repository", ["", SET])
def test_citation_carries_version_date_and_url(tmp_path, repository):
    root = _with_settings(tmp_path, repository=repository)
    address = pa.read(root)
    cff = yaml.safe_load(pa.citation_cff(root, address))
    assert cff["version"] == address.version
    assert cff["date-released"] == address.date.isoformat()
    assert cff.get("url") == cff.get("repository-code") == (repository or None)
    entry = next(iter(parse_string(pa.bibtex(root, address), "bibtex").entries.values()))
    assert entry.type == "misc"
    assert entry.fields["version"] == address.version
    assert entry.fields["year"] == str(address.date.year)
    assert entry.fields.get("url") == (repository or None)
    original = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert entry.fields["title"] == original["title"]
    # howpublished in every case (issue 33 item 11): the address when set, else what
    # the work is, with no invented address
    published = entry.fields["howpublished"]
    assert (repository in published) if repository else ("http" not in published and "report" in published)


def test_title_page_carries_version_and_release_date(tmp_path):
    """The PDF's title page prints Sphinx's release (after ``releasename``) and
    ``today``: the version and the release date of the settings, not the build date."""
    from types import SimpleNamespace

    root = _with_settings(tmp_path)
    address = pa.read(root)
    config = SimpleNamespace(html_theme_options={}, latex_elements={"preamble": "% kept"},
                             today=" ", version="", release="")
    pa._configure(SimpleNamespace(srcdir=str(root)), config)
    assert config.release == config.version == address.version
    assert config.today == pa.release_date_text(address.date)
    assert re.fullmatch(rf"{address.date.day} [A-Z][a-z]+ {address.date.year}", config.today)
    assert config.latex_elements == {"preamble": "% kept", "releasename": "Version"}


@pytest.mark.parametrize("repository", ["", SET])
def test_bibtex_lines_fit_the_box(tmp_path, repository):
    """Lines of at most BIBTEX_WIDTH characters (the PDF prints them without continuation
    markers), and a line break inside a value changes nothing once parsed."""
    root = _with_settings(tmp_path, repository=repository)
    for text in (pa.bibtex(root, pa.read(root)), pa.reference_bibtex(ROOT, pa.STUDY_KEY)):
        long = [line for line in text.splitlines() if len(line) > pa.BIBTEX_WIDTH]
        assert not long, long
    entry = next(iter(parse_string(pa.bibtex(root, pa.read(root)), "bibtex").entries.values()))
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert " ".join(entry.fields["title"].split()) == cff["title"]
    study = parse_string(pa.reference_bibtex(ROOT, pa.STUDY_KEY), "bibtex").entries[pa.STUDY_KEY]
    original = parse_file_entries()[pa.STUDY_KEY]
    assert study.type == original.type
    assert {k: " ".join(v.split()) for k, v in study.fields.items()} == \
        {k.lower(): " ".join(v.split()) for k, v in original.fields.items()}
    assert study.persons == original.persons


def parse_file_entries():
    from pybtex.database import parse_file

    return parse_file(str(ROOT / "references.bib"), "bibtex").entries


def format_plain(bib: str) -> dict[str, str]:
    """``bib`` formatted by pybtex's classic ``plain`` style, in strict mode: a
    missing required field, an entry type the style does not know, or any warning
    raises."""
    from pybtex import errors
    from pybtex.plugin import find_plugin

    errors.set_strict_mode(True)
    data = parse_string(bib, "bibtex")
    style = find_plugin("pybtex.style.formatting", "plain")()
    return {entry.key: entry.text.render_as("text") for entry in style.format_entries(data.entries.values())}


@pytest.mark.parametrize("repository", ["", SET])
def test_both_citations_format_in_a_classic_style(tmp_path, repository):
    """The book's entry and the study's, as the "How to cite" boxes show them, format
    with pybtex's ``plain`` style with no warning and no missing field, and say what a
    reader needs: authors, title, year, the version; the institution of the study."""
    root = _with_settings(tmp_path, repository=repository)
    formatted = format_plain(pa.bibtex(root, pa.read(root)) + "\n\n" + pa.reference_bibtex(ROOT, pa.STUDY_KEY))
    book, study = formatted[f"egmbook{pa.read(root).date.year}"], formatted[pa.STUDY_KEY]
    assert book.startswith("The egm-book authors. Differentially private vector sums")
    assert "Version 0.1.0" in book and "2026" in book
    assert (repository in book) if repository else ("http" not in book)
    assert study.startswith("Tim Sehested Poulsen. Differentially private vector sums in the case")
    assert "University of Copenhagen" in study and "2023" in study


def test_the_classic_style_check_can_fail():
    """A report without its institution is refused (pybtex formats @software, unlike
    the classic plain.bst: that case is checked with bibtex itself, below)."""
    from pybtex.style.template import FieldIsMissing

    report = pa.reference_bibtex(ROOT, pa.STUDY_KEY).replace("institution", "publisher")
    with pytest.raises(FieldIsMissing, match="institution"):
        format_plain(report)


def test_both_citations_pass_classic_bibtex(tmp_path):
    """The real thing, where LaTeX is installed: bibtex with plain.bst formats both
    entries without a warning."""
    if shutil.which("bibtex") is None:
        pytest.skip("bibtex is not installed")
    (tmp_path / "refs.bib").write_text(pa.bibtex(ROOT, pa.read(ROOT)) + "\n\n" + pa.reference_bibtex(ROOT, pa.STUDY_KEY))
    key = f"egmbook{pa.read(ROOT).date.year}"
    (tmp_path / "doc.aux").write_text(f"\\citation{{{key}}}\n\\citation{{{pa.STUDY_KEY}}}\n"
                                      "\\bibstyle{plain}\n\\bibdata{refs}\n")
    proc = subprocess.run(["bibtex", "doc"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Warning" not in proc.stdout, proc.stdout
    bbl = (tmp_path / "doc.bbl").read_text()
    assert bbl.count("\\bibitem") == 2 and "University of Copenhagen" in bbl and "Version 0.1.0" in bbl
    # the check can fail: classic plain.bst warns about an unknown entry type
    (tmp_path / "refs.bib").write_text(f"@software{{{key},\n  author = {{A, B}},\n  title = {{T}},\n"
                                       "  year = {2026}\n}\n")
    (tmp_path / "doc.aux").write_text(f"\\citation{{{key}}}\n\\bibstyle{{plain}}\n\\bibdata{{refs}}\n")
    proc = subprocess.run(["bibtex", "doc"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "Warning" in proc.stdout


# ---------------------------------------------------------------- links

def test_repository_files_link_only_produced_addresses():
    address = pa.read(ROOT)
    chapters = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "chapters").glob("*.ipynb"))]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    texts = [p for p in tracked if p.endswith((".md", ".yml", ".yaml", ".cff", ".toml", ".ipynb", ".bib", ".cfg", ".txt"))]
    assert "CITATION.cff" in texts and "intro.md" in texts
    for name in texts:
        path = ROOT / name
        if path.is_file():
            assert_only_produced(governed_links(path.read_text(errors="replace")), address, chapters, name)


def test_the_link_check_can_fail():
    address = pa.PublicAddress("", "main", "0.1.0", pa.read(ROOT).date)
    with pytest.raises(AssertionError, match="egm-book.github.io"):
        assert_only_produced(governed_links('<a href="https://egm-book.github.io/egm-book/">'), address, [], "x")
    set_address = pa.PublicAddress(SET, "main", "0.1.0", address.date)
    with pytest.raises(AssertionError, match="blob/master"):
        assert_only_produced({f"{pa.COLAB}/github/someone/egm-fork/blob/master/chapters/x.ipynb"},
                             set_address, ["chapters/x.ipynb"], "x")


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "(x)=\n# A chapter\n\nText."},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "1 + 1"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _small_book(tmp: Path, repository: str) -> Path:
    """index.md (with the citation box) and chapters/x.ipynb, the book's theme and extension."""
    src = _with_settings(tmp / "src", repository=repository)
    (src / "chapters").mkdir()
    (src / "chapters" / "x.ipynb").write_text(json.dumps(NOTEBOOK))
    (src / "index.md").write_text("# Top\n\n```{how-to-cite}\n```\n\n```{toctree}\nchapters/x\n```\n")
    # the theme options _config.yml gives the book (jupyter-book passes them the same way)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    theme = {"launch_buttons": config["launch_buttons"], "repository_url": config["repository"]["url"],
             "use_repository_button": config["html"]["use_repository_button"],
             "use_issues_button": config["html"]["use_issues_button"]}
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'public_address']\n"
        "html_theme = 'sphinx_book_theme'\n"
        f"html_theme_options = {theme!r}\n"
        "nb_execution_mode = 'off'\n"
        "exclude_patterns = ['_build']\n"
    )
    out = tmp / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", "-E", str(src), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.mark.parametrize("repository", ["", SET])
def test_buttons_follow_the_setting(tmp_path, repository):
    out = _small_book(tmp_path, repository)
    address = pa.read(tmp_path / "src")
    page = (out / "chapters" / "x.html").read_text()
    index = (out / "index.html").read_text()
    links = governed_links(page) | governed_links(index)
    assert_only_produced(links, address, ["chapters/x.ipynb"], "the small book")
    if not repository:
        assert links == set()
        return
    hrefs = {html.unescape(h) for h in re.findall(r'href="([^"]+)"', page)}
    assert SET in hrefs  # the repository button
    assert any(h.startswith(f"{SET}/issues/new?") for h in hrefs)  # the issues button
    assert "https://mybinder.org/v2/gh/someone/egm-fork/main?urlpath=lab/tree/chapters/x.ipynb" in hrefs
    assert "https://colab.research.google.com/github/someone/egm-fork/blob/main/chapters/x.ipynb" in hrefs
    # the citation box parses and carries the URL
    box = re.search(r'<div class="[^"]*how-to-cite[^"]*".*?<pre>(.*?)</pre>', index, re.S)
    assert box, "no how-to-cite block on the page"
    bib = html.unescape(re.sub(r"<[^>]+>", "", box.group(1)))
    entry = next(iter(parse_string(bib, "bibtex").entries.values()))
    assert entry.fields["url"] == SET


def test_binder_and_colab_have_what_they_need():
    """Binder builds environment.yml, which installs egmlib from the repository; the Colab
    cell's extra covers every package the chapters import besides the standard library."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    provided = {re.split(r"[=<>\[ ]", s)[0].lower().replace("-", "_")
                for s in project["dependencies"] + project["optional-dependencies"]["colab"]}
    import_names = {"pyyaml": "yaml"}
    provided = {import_names.get(p, p) for p in provided} | {"egmlib", "IPython"}  # IPython: every kernel has it
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
                for name in names:
                    top = name.split(".")[0]
                    assert top in sys.stdlib_module_names or top in provided, \
                        f"{path.name} imports {top}, which the Colab install cell does not install"


@pytest.mark.parametrize("repository", ["", SET])
def test_install_cell(tmp_path, repository, monkeypatch):
    """Silent when egmlib imports; with an address, it clones that repository at the branch,
    installs egmlib with the Colab extra from it, and moves into its chapters/."""
    address = pa.read(_with_settings(tmp_path / "s", repository=repository))
    source = pa.install_cell_source(address)
    assert source.startswith(pa.CELL_MARKER)
    monkeypatch.chdir(tmp_path)
    exec(compile(source, "cell", "exec"), {})  # egmlib imports here: nothing happens
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]
    if not repository:
        assert "http" not in source
        return
    calls = []
    (tmp_path / "egm-book" / "chapters").mkdir(parents=True)
    fake_subprocess = type(sys)("subprocess")
    fake_subprocess.run = lambda cmd, check: calls.append(cmd)
    real_import = __builtins__["__import__"] if isinstance(__builtins__, dict) else __builtins__.__import__

    def fake_import(name, *args, **kwargs):
        if name == "egmlib":
            raise ModuleNotFoundError("No module named 'egmlib'")
        if name == "subprocess":
            return fake_subprocess
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr("builtins.__import__", fake_import)
    exec(compile(source, "cell", "exec"), {})
    cwd = Path.cwd()
    monkeypatch.undo()
    assert calls[0] == ["git", "clone", "--quiet", "--depth", "1", "--branch", "main", SET, "egm-book"]
    assert calls[1][1:] == ["-m", "pip", "install", "--quiet", "./egm-book[colab]"]
    assert cwd == tmp_path / "egm-book" / "chapters"
