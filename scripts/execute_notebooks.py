"""Re-execute chapter notebooks in place, reproducibly (``make notebooks``).

Each notebook runs top to bottom in a fresh ``python3`` kernel with its own
folder as working directory.  nbclient is used with ``record_timing=False`` so
that no timestamps are written into cell metadata (``jupyter execute`` would),
and the notebook-level metadata is normalised, so that a re-run of unchanged
code gives a byte-identical file.

Usage: python scripts/execute_notebooks.py [PATH ...]   (files or folders)
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def _normalise(nb: nbformat.NotebookNode) -> None:
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    lang = nb.metadata.get("language_info", {})
    nb.metadata["language_info"] = {"name": "python", "version": lang.get("version", "3.11")}
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("collapsed", None)
            cell.metadata.pop("scrolled", None)


def execute(path: Path, timeout: int = 900) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        allow_errors=False,
    )
    client.execute()
    _normalise(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    targets = [Path(a) for a in argv] or [Path("chapters")]
    paths: list[Path] = []
    for t in targets:
        paths.extend(sorted(t.glob("*.ipynb")) if t.is_dir() else [t])
    # The errata chapter reads the glued values stored in the other chapters,
    # so it runs after them.
    paths.sort(key=lambda p: p.stem == "errata")
    for p in paths:
        print(f"executing {p}", flush=True)
        execute(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
