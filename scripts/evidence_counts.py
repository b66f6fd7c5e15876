"""Count the book's checks by kind of evidence, per chapter (``evidence/<chapter>.yml``).

Every code cell of a chapter may hold checks: ``assert`` statements and calls of
``np.testing.assert_*`` / ``assert_allclose``.  ``evidence/<chapter>.yml`` lists each of
them once, by the first line of the statement, with its class:

- ``independent``: another method reaches the same value (the only kind a claim in
  prose may rest on);
- ``consistency``: the same code path or formula twice (a regression guard);
- ``construction``: true because of how the input was built (shows attainment only).

``tests/test_evidence.py`` checks that the lists match the chapters.  This script

- prints the number of checks per class for every chapter listed in ``_toc.yml``, and the
  totals (``python scripts/evidence_counts.py``);
- with ``--draft``, writes ``evidence/<chapter>.yml`` for every chapter that has checks but
  no such file yet, listing its checks with class ``unclassified`` and no evidence text,
  to be filled in by hand (the test rejects both).  Existing files are never touched.

Usage: python scripts/evidence_counts.py [--draft]
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "evidence"
CLASSES = ("independent", "consistency", "construction")
UNCLASSIFIED = "unclassified"


def toc_chapters(root: Path = ROOT) -> list[str]:
    """Chapter names (``chapters/<name>.ipynb``) in the order of ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f.removeprefix("chapters/") for f in files if f.startswith("chapters/")]


def _code(source: str) -> str:
    # IPython magics and shell escapes are not Python; blank them (keeping line numbers).
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _strip_comments(code: str) -> list[str]:
    """The lines of ``code`` with their comments removed (found by the tokenizer)."""
    lines = code.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return lines


def _is_assert_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "assert_allclose":
        return True
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    return name.startswith("assert_") and "testing" in parts


def cell_check_lines(source: str) -> list[tuple[str, str]]:
    """(first line without its comment, first line as written), both stripped, of every check in a code cell."""
    code = _code(source)
    full, bare = code.splitlines(), _strip_comments(code)
    nodes = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Assert) or _is_assert_call(n)]
    nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    return [(bare[n.lineno - 1].strip(), full[n.lineno - 1].strip()) for n in nodes]


def notebook_cells(name: str, root: Path = ROOT) -> list[dict]:
    return json.loads((root / "chapters" / f"{name}.ipynb").read_text())["cells"]


def chapter_checks(name: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(first line without comment, first line as written) of every check in a chapter."""
    return [pair for c in notebook_cells(name, root) if c["cell_type"] == "code"
            for pair in cell_check_lines("".join(c["source"]))]


def load(name: str, root: Path = ROOT) -> dict | None:
    path = root / "evidence" / f"{name}.yml"
    return yaml.safe_load(path.read_text()) if path.exists() else None


def normalise(entry_assert: str, pairs: list[tuple[str, str]]) -> str:
    """An ``assert:`` string as the chapter's comment-free first line (a copy with the comment is accepted)."""
    full_to_bare = {full: bare for bare, full in pairs}
    s = entry_assert.strip()
    return full_to_bare.get(s, s)


def draft(name: str, root: Path = ROOT) -> str:
    lines = [f"chapter: {name}", "checks:"]
    for bare, _ in chapter_checks(name, root):
        lines += [f"  - assert: {json.dumps(bare)}", f"    class: {UNCLASSIFIED}", '    evidence: ""']
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--draft"]):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    names = [n for n in toc_chapters() if chapter_checks(n)]
    if argv == ["--draft"]:
        EVIDENCE.mkdir(exist_ok=True)
        for n in names:
            path = EVIDENCE / f"{n}.yml"
            if not path.exists():
                path.write_text(draft(n))
                print(f"wrote {path.relative_to(ROOT)}: {len(chapter_checks(n))} checks, all {UNCLASSIFIED}")
        return 0
    columns = (*CLASSES, UNCLASSIFIED)
    total: Counter = Counter()
    print(f"{'chapter':<32}" + "".join(f"{c:>14}" for c in columns) + f"{'checks':>8}  file")
    for n in names:
        data = load(n)
        counts = Counter(e.get("class") for e in (data or {}).get("checks") or [])
        total.update(counts)
        status = "" if data else "missing"
        print(f"{n:<32}" + "".join(f"{counts[c]:>14}" for c in columns)
              + f"{len(chapter_checks(n)):>8}  {status}")
    print(f"{'total':<32}" + "".join(f"{total[c]:>14}" for c in columns)
          + f"{sum(len(chapter_checks(n)) for n in names):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
