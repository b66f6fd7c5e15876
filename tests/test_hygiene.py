"""House rules for the chapter notebooks (see STYLE.md): every chapter is in the
table of contents and vice versa, only allowed cell tags, kernelspec python3,
every code cell executed in order with stored outputs, no stderr or errors, and
a closing Summary whose every point links to the result it states."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
ALLOWED_TAGS = {
    "hide-input", "hide-output", "hide-cell", "remove-output", "remove-cell",
    "raises-exception", "nbval-ignore-output",
}


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    walk(toc.get("chapters", []))
    return files


def test_there_are_chapters():
    assert CHAPTERS, "no chapter notebooks found"


def test_toc_and_chapters_match():
    toc = set(_toc_files())
    chapters = {str(p.relative_to(ROOT).with_suffix("")) for p in CHAPTERS}
    assert chapters - toc == set(), "chapters missing from _toc.yml"
    for entry in toc:
        candidates = [ROOT / f"{entry}{ext}" for ext in (".md", ".ipynb")]
        assert any(c.exists() for c in candidates), f"_toc.yml lists {entry}, which does not exist"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_notebook_hygiene(path: Path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), "code cells not executed once, in order, from a fresh kernel"
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        assert tags <= ALLOWED_TAGS, f"disallowed tags {tags - ALLOWED_TAGS}"
        if "execution" in cell.get("metadata", {}):
            raise AssertionError("cell metadata holds execution timestamps")
        for out in cell.get("outputs", []):
            if out["output_type"] == "error":
                assert "raises-exception" in tags, "a stored error output in a cell not tagged raises-exception"
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), "a cell writes to stderr"
            text = json.dumps(out)
            assert " at 0x" not in text, "an output shows a memory address"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and first["source"][0].startswith("("), "chapter must open with a (label)= target"
    assert sum(1 for line in "".join(first["source"]).splitlines() if line.startswith("# ")) == 1, "one H1 title"


# A role that points the reader to a result: a statement, equation, figure,
# section, page or API entry (a glued number alone is not a link).
LINK = re.compile(r"\{(?:prf:ref|numref|eq|ref|doc|py:func|py:obj|py:mod)\}`[^`]+`")


def _summary_points(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    found = re.search(r"^## Summary\n(.*?)(?=^#{1,2} |\Z)", text, re.S | re.M)
    assert found, "the chapter has no '## Summary' section"
    points = re.split(r"\n(?=- )", found.group(1).strip())
    assert points and all(p.startswith("- ") for p in points), "the Summary is not a list of points"
    return points


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_summary_links_to_results(path: Path):
    for point in _summary_points(path):
        assert LINK.search(point), f"a Summary point links to no result: {point[:120]!r}"


def test_summary_check_can_fail(tmp_path: Path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["## Summary\n", "\n",
              "- linked {prf:ref}`x`.\n", "- a bare number {glue:text}`n`.\n"]}]
    bad = tmp_path / "bad.ipynb"
    bad.write_text(json.dumps({"cells": cells}))
    with pytest.raises(AssertionError, match="links to no result"):
        test_summary_links_to_results(bad)
    bad.write_text(json.dumps({"cells": cells[:0]}))
    with pytest.raises(AssertionError, match="no '## Summary'"):
        test_summary_links_to_results(bad)


# ----------------------------------------------------------------------------
# Code that fits the page: the text column shows about 78 characters of code.
CODE_WIDTH = 80
OUTPUT_WIDTH = 100
HIDDEN = {"remove-cell", "remove-input"}


def _fenced_code(cell: dict) -> list[str]:
    """Lines of the code fences of a markdown cell.  Every fence (```{math},
    ```{figure}, ...) is tracked to its closing line, so that the closing line of a
    non-code fence is not taken for the opening of a code fence."""
    lines, fence, code = [], None, False
    for line in "".join(cell["source"]).splitlines():
        mark = re.match(r"\s*(`{3,}|~{3,})\s*(\S*)", line)
        if fence is None and mark:
            fence = mark.group(1)
            info = mark.group(2)
            code = not info.startswith("{") or info.startswith(("{code", "{code-cell"))
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None and code:
            lines.append(line)
    return lines


def _visible_code_lines(nb: dict) -> list[str]:
    lines = []
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] == "code" and not tags & HIDDEN:
            lines += "".join(cell["source"]).splitlines()
        elif cell["cell_type"] == "markdown":
            lines += _fenced_code(cell)
    return lines


def _text_output_lines(nb: dict) -> list[str]:
    lines = []
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or "remove-cell" in tags or "remove-output" in tags:
            continue
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                lines += "".join(out["text"]).splitlines()
            elif "data" in out:
                data = out["data"]
                rich = {"image/png", "image/svg+xml", "text/html", "text/latex", "text/markdown"}
                if "text/plain" in data and not rich & set(data):
                    lines += "".join(data["text/plain"]).splitlines()
    return lines


def long_lines(nb: dict) -> tuple[list[str], list[str]]:
    """Visible code lines over CODE_WIDTH and text output lines over OUTPUT_WIDTH."""
    code = [line for line in _visible_code_lines(nb) if len(line) > CODE_WIDTH]
    out = [line for line in _text_output_lines(nb) if len(line) > OUTPUT_WIDTH]
    return code, out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_code_fits_the_page(path: Path):
    code, out = long_lines(json.loads(path.read_text()))
    assert not code, f"{len(code)} code lines over {CODE_WIDTH} characters, e.g. {code[0]!r}"
    assert not out, f"{len(out)} output lines over {OUTPUT_WIDTH} characters, e.g. {out[0]!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_walrus_in_literals(path: Path):
    """Plain code: no assignment expressions inside dict, list, set or call literals."""
    import ast

    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "\n".join(line for line in "".join(cell["source"]).splitlines()
                        if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.Tuple, ast.Call)):
                inner = [n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)]
                assert not inner, f"walrus assignment inside a literal or call: {ast.unparse(node)[:80]!r}"


def test_line_length_check_can_fail():
    nb = {"cells": [
        {"cell_type": "code", "metadata": {}, "source": ["x = 1  # " + "a" * 80],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["b" * 101]}]},
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": ["y" * 200], "outputs": []},
        {"cell_type": "markdown", "metadata": {}, "source": ["```python\n", "z" * 81, "\n```\n", "w" * 300]},
    ]}
    code, out = long_lines(nb)
    assert [len(x) for x in code] == [89, 81] and [len(x) for x in out] == [101]


# ----------------------------------------------------------------------------
# Figures that can be read at the text width (about 700 px): stored images at
# most FIGURE_PX wide (figsize <= 7 in at matplotlib's 100 dpi), so they are not
# scaled down and matplotlib's 10 pt default text stays at least 9 pt on screen;
# no more than two panels in a row; no font size below 9 pt.
FIGURE_PX = 720
SMALL_FONT = re.compile(r"\b(?:fontsize|labelsize|size)\s*=\s*(?:([0-8](?:\.\d+)?)\b|[\"'](?:small|x-small|xx-small)[\"'])")
SUBPLOTS = re.compile(r"subplots\(\s*(\d+)\s*,\s*(\d+)|subplots\([^)]*ncols\s*=\s*(\d+)")


def figure_problems(nb: dict) -> list[str]:
    import base64
    import struct

    problems = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        for m in SUBPLOTS.finditer(src):
            cols = int(m.group(2) or m.group(3))
            if cols > 2:
                problems.append(f"{cols} panels in a row: {m.group(0)!r}")
        for m in SMALL_FONT.finditer(src):
            problems.append(f"font below 9 pt: {m.group(0)!r}")
        for out in cell.get("outputs", []):
            png = out.get("data", {}).get("image/png")
            if png:
                width = struct.unpack(">I", base64.b64decode(png)[16:20])[0]
                if width > FIGURE_PX:
                    problems.append(f"image {width} px wide (> {FIGURE_PX})")
    return problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_figures_can_be_read(path: Path):
    problems = figure_problems(json.loads(path.read_text()))
    assert not problems, "; ".join(problems)


def test_figure_check_can_fail():
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": [
        "fig, axes = plt.subplots(1, 3, figsize=(7, 3))\n", "ax.legend(fontsize=7)\n",
        "ax.tick_params(labelsize='small')\n", "plt.subplots(ncols=4)\n", "ax.plot(x, fontsize=9)\n"]}]}
    assert len(figure_problems(nb)) == 4


def test_fenced_code_skips_math_fences():
    cell = {"source": ["```{math}\n", "x = 1\n", "```\n", "prose " * 30 + "\n",
                       "```python\n", "y = 2\n", "```\n", "```{code-cell}\n", "z\n", "```\n"]}
    assert _fenced_code(cell) == ["y = 2", "z"]


# ----------------------------------------------------------------------------
# A string written without r"" turns "\rho", "\frac", "\big", "\top" into a
# carriage return, form feed, backspace or tab: the page then shows "ho", "rac".
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]|\t")


def control_characters(text: str) -> list[str]:
    return [text[max(0, m.start() - 20):m.end() + 20] for m in CONTROL.finditer(text)]


@pytest.mark.parametrize("path", CHAPTERS + sorted(ROOT.glob("*.md")), ids=lambda p: p.name)
def test_no_control_characters_in_text(path: Path):
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text()
    found = control_characters(text)
    assert not found, f"control characters (a lost backslash?) near {found[:3]!r}"


def test_control_character_check_can_fail():
    assert control_characters("budget $\rho$, $\\rho$") and not control_characters("$\\rho$\n")


SITE_PAGES = sorted(p for p in ROOT.glob("*.md") if p.name not in ("README.md", "CONTRIBUTING.md"))


@pytest.mark.parametrize("path", SITE_PAGES, ids=lambda p: p.name)
def test_page_code_fits(path: Path):
    """The site's markdown pages (landing page, Reproduce, ...): code blocks fit too."""
    code = _fenced_code({"source": [path.read_text()]})
    long = [line for line in code if len(line) > CODE_WIDTH]
    assert not long, f"{len(long)} code lines over {CODE_WIDTH} characters, e.g. {long[0]!r}"


def test_bibliography_parses_with_unique_keys():
    """references.bib is read by pybtex (as sphinxcontrib-bibtex reads it) without a
    syntax error, and no key is defined twice (a merge that drops a closing brace or
    appends an entry twice fails here, not only in the book build)."""
    import re

    from pybtex.database import parse_file

    text = (ROOT / "references.bib").read_text()
    keys = re.findall(r"^@\w+\{([^,\s]+),", text, flags=re.M)
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    entries = parse_file(str(ROOT / "references.bib")).entries
    assert sorted(entries.keys()) == sorted(keys)
