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
