"""Write the audit of the book's single letters (issue 33 item 5) as Markdown.

For every Latin or Greek letter in the maths of the pages (markdown, fold titles,
errata texts; see _ext/letters.py): the meaning notation/*.yml gives it, the pages
where it has that meaning, the pages where it is a bound (dummy) variable and why,
the pages where it still has a second meaning (``pending``), and the places.

Usage: python scripts/symbols_audit.py [OUT.md]   (default: print to stdout)
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import letters  # noqa: E402
import notation  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().splitlines()[-1].strip())  # the usage line; an option
        return 2  # is no file name ('--help' once became a file of the repository)
    letters.set_compounds(letters.compound_symbols(ROOT))
    uses = letters.book_uses(ROOT)
    reg = letters.registry(ROOT)
    meaning: dict[str, list[str]] = collections.defaultdict(list)
    for page in notation.load(ROOT):
        for entry in page.symbols:
            for letter in letters.head_letters(entry.name):
                meaning[letter].append(f"${entry.name}$: {' '.join(entry.text.split())} "
                                       f"(`notation/{Path(page.docname).name}.yml`, where `{entry.where}`)")
    places: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for use in uses:
        places[use.letter][letters.page_name(use.page)].append(use.place)
    out = ["| letter | meaning (notation/*.yml) | same meaning in | bound (not a meaning) | "
           "second meaning still to rename (pending) |", "|---|---|---|---|---|"]
    for letter in sorted(places, key=lambda x: (not x.isascii(), x.lower(), x)):
        pages = places[letter]
        same, bound, pending = [], [], []
        for page, where in sorted(pages.items()):
            cells = ", ".join(sorted(set(where))[:6]) + (" …" if len(set(where)) > 6 else "")
            if letter in reg.bound.get(page, {}):
                bound.append(f"**{page}** ({reg.bound[page][letter]}; {cells})")
            elif letter in reg.pending.get(page, {}):
                pending.append(f"**{page}** ({reg.pending[page][letter]}; {cells})")
            elif page in reg.pages.get(letter, set()):
                same.append(f"{page} ({len(where)})")
            else:
                pending.append(f"**{page}** (not yet checked: {cells})")
        cell = lambda xs: "<br>".join(xs).replace("|", "\\|") or "–"  # noqa: E731
        out.append(f"| {letter} | {cell(meaning.get(letter, []))} | {cell(same)} | {cell(bound)} | {cell(pending)} |")
    text = "\n".join(out) + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    if len(argv) > 1:
        Path(argv[1]).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
