"""Write the public address, version and date of pyproject.toml where files need them.

    python scripts/public_address.py write   # CITATION.cff and the chapters' install cell
    python scripts/public_address.py check   # exit 1, naming each file that is out of step

Idempotent: a file already in step is not touched, so it can be re-run at any time
(`make book` runs it; so should whoever merges a branch that adds or edits chapters).

The install cell is each chapter's first code cell, found by its first line
(``CELL_MARKER`` in _ext/public_address.py), tagged ``remove-cell`` (it stays in
the .ipynb, for Colab, and is not shown on the site) and silent when egmlib
imports.  When it is first inserted, the execution counts of the later cells move
up by one, which is what a fresh top-to-bottom run gives: it prints nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

from public_address import CELL_MARKER, citation_cff, install_cell_source, read  # noqa: E402


def with_install_cell(nb: dict, source: str) -> dict:
    """``nb`` (a notebook as JSON) with its install cell in place and up to date."""
    cells = nb["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(CELL_MARKER):
            cell["source"] = source
            return nb
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    for cell in cells[first_code:]:
        if cell["cell_type"] == "code" and cell.get("execution_count") is not None:
            cell["execution_count"] += 1
            for out in cell.get("outputs", []):
                if out.get("execution_count") is not None:
                    out["execution_count"] += 1
    cells.insert(first_code, {
        "cell_type": "code",
        "execution_count": 1,
        "id": "install-egmlib",
        "metadata": {"tags": ["remove-cell"]},
        "outputs": [],
        "source": source,
    })
    return nb


def _dump(nb: dict) -> str:
    """The text nbformat.write gives (scripts/execute_notebooks.py writes with it)."""
    import nbformat

    text = nbformat.writes(nbformat.from_dict(nb))
    return text if text.endswith("\n") else text + "\n"


def expected_files(root: Path = ROOT) -> dict[Path, str]:
    """Every file the settings reach, with the content it must have."""
    address = read(root)
    files = {root / "CITATION.cff": citation_cff(root, address)}
    source = install_cell_source(address)
    for path in sorted((root / "chapters").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:  # nbformat's own form of a source: one string
            cell["source"] = "".join(cell["source"])
        files[path] = _dump(with_install_cell(nb, source))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["write", "check"])
    args = parser.parse_args(argv)
    stale = [(path, text) for path, text in expected_files().items() if path.read_text() != text]
    for path, text in stale:
        name = path.relative_to(ROOT)
        if args.command == "write":
            path.write_text(text)
            print(f"updated {name}")
        else:
            print(f"{name} is out of step with pyproject.toml: run python scripts/public_address.py write")
    return 1 if stale and args.command == "check" else 0


if __name__ == "__main__":
    sys.exit(main())
