"""Convert between chapter notebooks and a plain-text "percent" form for editing.

The ``.ipynb`` files in ``chapters/`` are the source of the book (they carry the
stored outputs that nbval compares).  For editing, a notebook can be written out
as a percent-format text file and read back in:

    python scripts/nbpercent.py to-text chapters/foo.ipynb /tmp/foo.py
    python scripts/nbpercent.py to-nb /tmp/foo.py chapters/foo.ipynb

Cell markers: ``# %%`` starts a code cell, ``# %% [markdown]`` a markdown cell
(its lines are prefixed with ``# ``); options follow as JSON-ish ``key=value``:
``# %% tags=["hide-input"]`` or ``# %% mystnb={"figure": {"name": "f", "caption": "c"}}``.
Outputs are not converted: run ``make notebooks`` afterwards.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

_MARK = re.compile(r"^# %%(?: \[(markdown|md)\])?(.*)$")
_OPT = re.compile(r"\s*(\w+)=(\S.*?)(?=\s+\w+=|$)")


def _parse_options(text: str) -> dict:
    meta = {}
    for key, value in _OPT.findall(text.strip()):
        meta[key] = json.loads(value)
    return meta


def to_notebook(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cells: list[tuple[str, dict, list[str]]] = []
    for line in text.splitlines():
        m = _MARK.match(line)
        if m:
            kind = "markdown" if m.group(1) else "code"
            cells.append((kind, _parse_options(m.group(2)), []))
        elif cells:
            cells[-1][2].append(line)
    for kind, meta, lines in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if kind == "markdown":
            body = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in lines)
            cell = nbformat.v4.new_markdown_cell(body)
        else:
            cell = nbformat.v4.new_code_cell("\n".join(lines))
        cell.metadata.update(meta)
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
    return nb


def to_text(nb: nbformat.NotebookNode) -> str:
    out: list[str] = []
    for cell in nb.cells:
        opts = "".join(f" {k}={json.dumps(v)}" for k, v in cell.metadata.items() if k in ("tags", "mystnb"))
        if cell.cell_type == "markdown":
            out.append(f"# %% [markdown]{opts}")
            out.extend(("# " + l) if l else "#" for l in cell.source.splitlines())
        else:
            out.append(f"# %%{opts}")
            out.extend(cell.source.splitlines())
        out.append("")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("to-nb", "to-text"):
        print(__doc__)
        return 2
    src, dst = Path(argv[1]), Path(argv[2])
    if argv[0] == "to-nb":
        nbformat.write(to_notebook(src.read_text()), dst)
    else:
        dst.write_text(to_text(nbformat.read(src, as_version=4)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
