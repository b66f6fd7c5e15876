"""Helpers of ``make pdf``.

``python scripts/pdf_tools.py needs``
    Exit 0 if LaTeX has everything the PDF build uses; otherwise print what is
    missing and the exact Debian command that installs it, and exit 1.  One
    file stands for each Debian package (found with ``kpsewhich``); the list
    was taken from the ``.fls`` record of a successful build.

``python scripts/pdf_tools.py check _build/latex/egm-book.log``
    Fail if LaTeX reported an undefined reference or citation (they print as
    "??" in the PDF), pdfTeX a link to a missing destination, or no PDF was
    written; print the page count, and (as warnings) what sticks out of the
    text block: overfull lines wider than ``OVERFULL_PT``, pages taller than
    the text block by more than ``OVERFULL_VBOX_PT`` and figures taller
    than the page (``layout_problems``; tests/test_pdf_structure.py fails on them).

``python scripts/pdf_tools.py boxes _build/latex``
    The worst case of every ``\\needspace`` that _ext/pdf_structure.py puts
    before a box opening with a display: each such box is set at the foot of a
    page of its own with exactly its \\needspace left (``stress_tex``), one
    pdflatex run (about half a minute), and each box that then runs more than
    ``OVERFULL_VBOX_PT`` into the footer is printed: its estimate is too small.
    A review tool, not part of `make test`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

# Debian package -> files of that package the build reads.
NEEDED = {
    "latexmk": ["latexmk"],  # a program
    "texlive-latex-recommended": ["pdflatex", "fancyvrb.sty", "cmap.sty", "booktabs.sty",
                                  "etoolbox.sty"],
    "texlive-latex-extra": ["fncychap.sty", "titlesec.sty", "tabulary.sty", "varwidth.sty",
                            "wrapfig.sty", "capt-of.sty", "needspace.sty", "framed.sty", "upquote.sty"],
    "texlive-fonts-recommended": ["t1txtt.fd", "utmr8a.pfb"],
    "tex-gyre": ["tgtermes.sty", "tgheros.sty"],
}
APT = ("apt-get update && apt-get install -y texlive-latex-recommended texlive-latex-extra "
       "texlive-fonts-recommended tex-gyre latexmk")


def missing() -> list[tuple[str, str]]:
    kpsewhich = shutil.which("kpsewhich")
    out = []
    for package, files in NEEDED.items():
        for name in files:
            if "." not in name:
                found = shutil.which(name) is not None
            elif kpsewhich is None:
                found = False
            else:
                found = subprocess.run([kpsewhich, name], capture_output=True, text=True).stdout.strip() != ""
            if not found:
                out.append((package, name))
    return out


def needs() -> int:
    gaps = missing()
    if not gaps:
        return 0
    packages = sorted({p for p, _ in gaps})
    print("make pdf needs LaTeX packages that are not installed:")
    for package, name in gaps:
        print(f"  {name:18s} (Debian package {package})")
    print(f"Install them with:\n  {APT}")
    print("(about 70 MB; missing now: " + ", ".join(packages) + ")")
    return 1


UNDEFINED = re.compile(r"(?:LaTeX|Package \w+) Warning: (?:Reference|Citation|Hyper reference) [`'](.+?)' "
                       r"on page (\S+) undefined")
# pdfTeX: a link to a destination that no label created.
DANGLING = re.compile(r"pdfTeX warning \(dest\): name\{(.+?)\} has been referenced but does not exist")
# A label set twice: a link to it may land on either place.
MULTIPLY = re.compile(r"LaTeX Warning: Label [`'](.+?)' multiply defined")
WRITTEN = re.compile(r"Output written on (.+?) \((\d+) pages?")


OVERFULL = re.compile(r"^Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) (.*?)$", re.M)
FLOAT_TOO_LARGE = re.compile(r"LaTeX Warning: Float too large for page by (\d+(?:\.\d+)?)pt on input line (\d+)")
OVERFULL_PT = 1.0  # TeX's own tolerance is 0.1 pt; below 1 pt nothing shows
# A page whose material is taller than the text block: TeX sets it anyway and its last
# lines run towards the footer (issue 33: a box 23.9 pt too high, two lines, its output
# orphaned on the next page).  Below half a line (the 12 pt baseline) the last line stays
# clear of the footer: a box ending in a display equation runs 4.4 pt over (chapter 9).
OVERFULL_VBOX = re.compile(r"^Overfull \\vbox \((\d+(?:\.\d+)?)pt too high\) (.*?)$", re.M)
OVERFULL_VBOX_PT = 6.0


def layout_problems(log: str) -> list[str]:
    """What sticks out of the text block, from a LaTeX log: lines (hboxes) more than
    OVERFULL_PT too wide (text past the right margin), pages (vboxes) more than
    OVERFULL_VBOX_PT too high (a last line in the footer) and floats taller than the
    page (a figure whose caption runs over the footer)."""
    joined = re.sub(r"(?m)^(.{79})\n", r"\1", log)
    out = [f"overfull line, {float(pt):.1f} pt too wide, {where}"
           for pt, where in OVERFULL.findall(joined) if float(pt) > OVERFULL_PT]
    out += [f"overfull page, {float(pt):.1f} pt too high, {where}"
            for pt, where in OVERFULL_VBOX.findall(joined) if float(pt) > OVERFULL_VBOX_PT]
    out += [f"float too large for the page by {pt} pt (input line {line})"
            for pt, line in FLOAT_TOO_LARGE.findall(joined)]
    return out


def check(log_path: Path) -> int:
    if not log_path.is_file():
        print(f"no LaTeX log at {log_path}: the PDF build did not run")
        return 1
    log = log_path.read_text(encoding="latin-1")
    # TeX folds log lines at 79 characters: join them before matching.
    joined = re.sub(r"(?m)^(.{79})\n", r"\1", log)
    bad = UNDEFINED.findall(joined)
    written = WRITTEN.findall(joined)
    if bad:
        print(f"{len(bad)} undefined references in the PDF (printed as ??):")
        for key, page in bad[:20]:
            print(f"  page {page}: {key}")
        return 1
    for pattern, what in ((DANGLING, "links to missing destinations"),
                          (MULTIPLY, "labels defined twice")):
        keys = pattern.findall(joined)
        if keys:
            print(f"{len(keys)} {what} in the PDF:")
            for key in keys[:20]:
                print(f"  {key}")
            return 1
    if "There were undefined references" in joined or "There were undefined citations" in joined:
        print("LaTeX reports undefined references")
        return 1
    pdf = log_path.with_suffix(".pdf")
    if not written or not pdf.is_file() or pdf.stat().st_mtime < log_path.stat().st_mtime - 1:
        print(f"LaTeX wrote no PDF ({pdf} is missing or older than its log)")
        return 1
    print(f"PDF: {written[-1][0]}, {written[-1][1]} pages, no undefined references")
    layout = layout_problems(log)
    if layout:
        print(f"warning: {len(layout)} places stick out of the text block:")
        for problem in layout[:20]:
            print(f"  {problem}")
    return 0


_NEEDSPACE = re.compile(r"\\needspace\{(\d+)\\baselineskip\}")


def stress_tex(tex: str) -> tuple[str, int]:
    """``tex`` with each ``\\needspace{N\\baselineskip}`` on a new page, after a
    space that leaves exactly N baselines (and a marker in the log); and how many."""
    count = 0

    def at_the_foot(match: re.Match) -> str:
        nonlocal count
        count += 1
        lines = match.group(1)
        return (r"\clearpage\noindent\vspace*{\dimexpr\textheight-" + lines + r"\baselineskip-\topskip\relax}"
                r"\par\typeout{EGMBOX " + str(count) + " " + lines + "}\n" + match.group(0))

    return _NEEDSPACE.sub(at_the_foot, tex), count


def stress_problems(log: str) -> list[str]:
    """Each stressed box (its number and \\needspace) followed in the log by a page
    more than OVERFULL_VBOX_PT too high before the next box."""
    joined = re.sub(r"(?m)^(.{79})\n", r"\1", log)
    out = []
    for box, lines, rest in re.findall(r"^EGMBOX (\d+) (\d+)$(.*?)(?=^EGMBOX |\Z)", joined, re.M | re.S):
        worst = max((float(pt) for pt, _ in OVERFULL_VBOX.findall(rest)), default=0.0)
        if worst > OVERFULL_VBOX_PT:
            out.append(f"box {box} (needspace {lines} lines): {worst:.1f} pt too high")
    return out


def boxes(latex: Path) -> int:
    tex = (latex / "egm-book.tex").read_text(encoding="utf-8")
    stressed, count = stress_tex(tex)
    (latex / "egm-stress.tex").write_text(stressed, encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "egm-stress.tex"], cwd=latex,
                   capture_output=True, timeout=900)
    log = (latex / "egm-stress.log").read_text(encoding="latin-1")
    found = re.findall(r"^EGMBOX", log, re.M)
    problems = stress_problems(log)
    print(f"{count} boxes with a \\needspace, {len(found)} set at a page's foot; "
          f"{len(problems)} run into the footer")
    for problem in problems:
        print("  " + problem)
    return 1 if problems or len(found) != count else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["needs"]:
        return needs()
    if argv[:1] == ["boxes"] and len(argv) == 2:
        return boxes(Path(argv[1]))
    if argv[:1] == ["check"] and len(argv) == 2:
        return check(Path(argv[1]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
