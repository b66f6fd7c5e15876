"""No visible output is a table printed as text (issue 33 item 2).

A reader counted 29 visible outputs that were tables set in monospace ("Ho CP A3",
"/best 1-4"): results whose columns only the code explained.  Results are real
tables (``egmlib.report.markdown_table``, rendered by MyST on the site and in the
PDF) or figures.  This test reads the stored outputs of every chapter (no
execution, so it costs well under a second) and counts, per chapter, the code cells
whose visible text output is a table printed as text.

The heuristic (:func:`is_text_table`):

* the text of a cell is what a reader sees in monospace, on the site or in the PDF:
  its stream outputs, merged as the book merges them (``nb_merge_streams``), and the
  ``text/plain`` of a result that has no form the LaTeX builder renders (Markdown,
  LaTeX or an image).  A Markdown table's ``text/plain`` is never shown; an HTML-only
  result (a pandas DataFrame or Styler) is a table on the site, but myst-nb's LaTeX
  builder does not render ``text/html`` and prints its ``text/plain`` in the PDF,
  so it counts;
* a cell tagged ``remove-output``, ``hide-output``, ``remove-cell`` or ``hide-cell``
  shows no output until the reader asks for it, and is not counted;
* the text is a table when it has a block of 3 or more consecutive lines that
  either

  - each have 2 or more column gaps (a run of two or more spaces inside the line),
    with at least one column boundary (where a gap starts: right-aligned columns, or
    ends: left-aligned ones) at the same position in the 3 lines (columns that line
    up), or
  - are the rows of a printed 2-D numpy array (``[[ 0.54 -0.5 ]`` and the
    ``[ ... ]`` rows after it), or
  - are labelled numpy rows, a label then ``[...]`` opening at the same column
    (a transposed table).

* or the text prints a row per setting (issue 33, the student's second reading:
  the checks of alternative_mechanisms, elliptical_perturbations, optimal_scaling,
  zipf_experiments, ...):

  - 3 or more lines that are one sentence with other numbers in it
    (``alpha = 0.01: k^2 = 37.325, ...``, ``alpha = 1.00: ...``: the same line
    once the numbers are replaced by ``#``, :func:`skeleton`), or
  - 3 or more consecutive ``label: value`` lines whose colons line up, with
    right-aligned labels (``centred, p_C = 1/n: noise 54,323``).

Ordinary prints are not flagged: a one-line ``Check: ... ✓``, a sentence with
numbers, two lines that line up, or one line printed three times.  On the stored notebooks of commit b0a1764
(before this test) the heuristic counted 36 cells (:data:`BEFORE`): state_of_the_art
10, simulation 7, elliptical_perturbations 7, zipf_experiments 5, gaussian_data 2,
and one each in alternative_mechanisms, clipping_tradeoff, differential_privacy,
gaussian_mechanism and private_centre: the reader's count of 29 (issue 33), less
one of state_of_the_art's that it does not flag, plus eight the reader did not
list.  Zipf's fifth, a transposed table of labelled numpy rows
(``n_pow:           [1 2 3 4 5 6]``), is the third rule's.

The rows per setting (:data:`BEFORE_ROWS`): on the stored notebooks of commit
3196484, after the first conversion, the first three rules counted 0 and the hook
``before-stop`` (5 or more lines with 3 or more numbers) 3; the rows-per-setting
rules count 18 cells there, the hook's 3 among them.  Branch phone2 made them tables
(or, for ``plan_reproduction``, left them to its owner: :data:`_PENDING`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
HIDDEN = {"remove-output", "hide-output", "remove-cell", "hide-cell"}
# what myst-nb's LaTeX builder renders before text/plain (myst_nb.core.render)
RICH = ("text/markdown", "text/latex", "application/pdf", "image/png", "image/jpeg")
GAP = re.compile(r"(?<=\S) {2,}(?=\S)")
ARRAY_ROW = re.compile(r"^\s*\[{1,2}[-+\s\d.e,]+\]{1,2}\s*$")
LABELLED_ROW = re.compile(r"^\S[^\[]*?\s(\[)[-+\s\d.e,]+\]$")
# a number as the chapters print it: 1,234.5, 1e-06, 10⁶, 2.35 × 10⁻⁶⁵, −0.5
NUMBER = re.compile(r"[-+\u2212]?\d[\d,]*(?:\.\d*)?(?:e[-+]?\d+)?"
                    r"(?:\s*×\s*10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")
LABEL = re.compile(r"^( *)[^:\s][^:]*?: ")  # "label: ...", the first colon

# commit b0a1764, per chapter, as counted by this module (the report of issue 33)
BEFORE = {"state_of_the_art": 10, "simulation": 7, "elliptical_perturbations": 7,
          "zipf_experiments": 5, "gaussian_data": 2, "alternative_mechanisms": 1,
          "clipping_tradeoff": 1, "differential_privacy": 1, "gaussian_mechanism": 1,
          "private_centre": 1}
# commit 3196484, per chapter, the rows-per-setting rules (the student's second reading)
BEFORE_ROWS = {"zipf_experiments": 5, "elliptical_perturbations": 4, "alternative_mechanisms": 2,
               "gaussian_mechanism": 2, "bernstein": 1, "clipping_tradeoff": 1,
               "differential_privacy": 1, "optimal_scaling": 1, "plan_reproduction": 1}


def visible_text(cell: dict) -> str:
    """The monospace text a reader sees under a code cell ('' if none)."""
    if cell["cell_type"] != "code" or HIDDEN & set(cell.get("metadata", {}).get("tags", [])):
        return ""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append("".join(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            data = out.get("data", {})
            if not any(kind in data for kind in RICH):
                parts.append("".join(data.get("text/plain", "")))
    return "".join(parts)


def _gap_ends(line: str) -> set[tuple[str, int]]:
    """Where the columns of a line end (right-aligned) and start (left-aligned)."""
    found = set()
    for m in GAP.finditer(line):
        found |= {("end", m.start()), ("start", m.end())}
    return found


def skeleton(line: str) -> str:
    """A line with its numbers replaced by ``#`` and its spaces collapsed."""
    return " ".join(NUMBER.sub("#", line).split())


def _row_per_setting(lines: list[str]) -> bool:
    """3+ lines that are one sentence with other numbers in it (a row per setting:
    ``alpha = 0.01: k^2 = 37.325, ...``, then ``alpha = 1.00: ...``), or 3+
    consecutive ``label: value`` lines whose colons line up (right-aligned labels)."""
    rows: dict[str, set[str]] = {}
    for line in lines:
        if NUMBER.search(line):
            rows.setdefault(skeleton(line), set()).add(line.strip())
    if any(len(same) >= 3 for same in rows.values()):  # identical lines do not count
        return True
    for i in range(len(lines) - 2):
        found = [LABEL.match(x) for x in lines[i:i + 3]]
        if (all(found) and len({m.end() for m in found}) == 1
                and any(m[1] for m in found)
                and all(NUMBER.search(x[m.end():]) for x, m in zip(lines[i:i + 3], found))):
            return True
    return False


def is_text_table(text: str) -> bool:
    """Whether ``text`` holds 3+ consecutive lines whose columns line up, or rows
    printed one per setting (see above)."""
    lines = [line.rstrip() for line in text.splitlines()]
    if _row_per_setting(lines):
        return True
    for i in range(len(lines) - 2):
        block = lines[i:i + 3]
        ends = [_gap_ends(line) for line in block]
        if all(len(e) >= 4 for e in ends) and set.intersection(*ends):
            return True
        if block[0].lstrip().startswith("[[") and all(ARRAY_ROW.match(x) for x in block):
            return True
        opens = {LABELLED_ROW.match(x).start(1) if LABELLED_ROW.match(x) else -1 for x in block}
        if len(opens) == 1 and opens.pop() > 0:
            return True
    return False


def text_tables(path: Path) -> list[str]:
    """The ids of the cells of a notebook whose visible output is a text table."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [c.get("id", "?") for c in cells if is_text_table(visible_text(c))]


# ---------------------------------------------------------------- the heuristic

TABLE = """\
       n  largest |x|  median of the maximum  sqrt(2 ln n)
     100        2.117                  2.701         3.035
   1,000        3.401                  3.392         3.717
"""
GRID = """\
            alpha = 0.1   | alpha = 0.5   | alpha = 1.0   | alpha = 2.0
  d =   10:  Ho  CP  CP   |  Ho  Ho  CP   |  Ho  Ho  Ho   |  Ho  Ho  A3
  d =  100:  Ho  CP  CP   |  Ho  Ho  Ho   |  Ho  Ho  Ho   |  Ho  Ho  Ho
"""
MATRIX = """\
z-scores (rows t = 1..4):
 [[ 0.54 -0.5  -0.16]
 [ 0.79 -0.35  0.27]
 [-0.37 -1.37  0.28]]
"""
ORDINARY = [
    "Check: the clipped sum moves by at most 2C ✓\n",
    "true epsilon 0.2500, printed form 0.0625\n",
    "rho: usual bound 0.0175 < Canonne-Kamath-Steinke 0.0244 < exact 0.0280\n"
    "exact / CKS 1.15, exact / usual bound 1.60\n",
    "Var |eta|^2 = 2 sum_j s_j^4 = 2 (2 C sigma_opt)^4 S^2 sum_j sigma_j^2\n" * 3,
    "weights [0.996 0.004]: above C^2 0.99020 (target 0.99010), z = +0.62\n"
    "weights [0.9919 0.    ]: above C^2 0.99037 (target 0.99010), z = +1.77\n",
    "a  b  c\n1  2  3\n",  # two lines: not yet a table
    "sigma: [0.438  0.219  0.146  0.1095 0.0876]\n",
    "Theorem 4 bound: 64,279 sigma_opt^2\n"
    "  centred, p_C = 1/n: noise 54,323 sigma_opt^2\n",
    "d = 1..6: every leading principal minor equals the closed form;\n"
    "          orders >= 2 are negative\n",
]
# rows per setting (issue 33, second reading), as the chapters printed them
ROWS = """\
alpha =    0.01: k^2 = 37.325, C^2 = 1.227, E_box / E_Lemma = 30.416
alpha =    1.00: k^2 = 37.325, C^2 = 4.123, E_box / E_Lemma = 9.053
alpha =  100.00: k^2 = 37.325, C^2 = 23.928, E_box / E_Lemma = 1.560
"""
POWERS = """\
grid up to c = 100: max h = 0.4950617184
grid up to c = 10,000: max h = 0.4999500062
grid up to c = 10⁶: max h = 0.4999995000
epsilon_elliptical:      0.5000000000   (exact: a = 0.5)
"""
TWO_LINE_ROWS = """\
d =   10: alpha = 0  -> [1. 1.] (as printed: [0.1 0.1])
          alpha = 60 -> [10. 10.] (as printed: [1. 1.])
d =  100: alpha = 0  -> [1. 1.] (as printed: [0.01 0.01])
          alpha = 60 -> [100. 100.] (as printed: [1. 1.])
d = 1000: alpha = 0  -> [1. 1.] (as printed: [0.001 0.001])
"""
ALIGNED_LABELS = """\
Theorem 4 bound: 64,279 sigma_opt^2
        centred, p_C = 1/n: noise 54,323 sigma_opt^2
 off by sigma/2, p_C = 1/n: noise 67,472 sigma_opt^2
      centred, p_C = 1/n^3: noise 72,851 sigma_opt^2
"""
LABELLED = """\
n_pow:            [1 2 3 4 5 6]
original ratio:   [ 7.8125 12.5    17.1875 15.2893 13.3333 15.8967]
exact ratio:      [ 8.8099 12.4376 14.3234 15.4173 16.1232 16.6144]
"""


@pytest.mark.parametrize("text", [TABLE, GRID, MATRIX, LABELLED, ROWS, POWERS, TWO_LINE_ROWS,
                                  ALIGNED_LABELS],
                         ids=["columns", "winners", "matrix", "labelled-rows", "rows-per-setting",
                              "powers-of-ten", "two-line-rows", "aligned-labels"])
def test_heuristic_flags_text_tables(text: str) -> None:
    assert is_text_table(text)


@pytest.mark.parametrize("text", ORDINARY)
def test_heuristic_passes_ordinary_prints(text: str) -> None:
    assert not is_text_table(text)


def test_hidden_and_rich_outputs_are_not_seen() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": TABLE}
    shown = {"cell_type": "code", "metadata": {}, "outputs": [stream]}
    assert is_text_table(visible_text(shown))
    for tag in sorted(HIDDEN):
        assert visible_text({**shown, "metadata": {"tags": [tag]}}) == ""
    markdown = {"output_type": "display_data",
                "data": {"text/markdown": "| a |\n|--|\n| 1 |", "text/plain": TABLE}}
    assert visible_text({**shown, "outputs": [markdown]}) == ""
    html_only = {"output_type": "execute_result",
                 "data": {"text/html": "<table></table>", "text/plain": TABLE}}
    assert is_text_table(visible_text({**shown, "outputs": [html_only]})), \
        "the PDF prints an HTML-only table's text/plain"


def test_split_streams_are_merged() -> None:
    """nbclient may split one print loop into several stream outputs."""
    halves = [{"output_type": "stream", "name": "stdout", "text": line + "\n"}
              for line in TABLE.splitlines()]
    assert is_text_table(visible_text({"cell_type": "code", "metadata": {}, "outputs": halves}))


# ---------------------------------------------------------------- the chapters

# state_of_the_art was converted under issue 34 (branch contest outside the section
# "PLAN's own benchmark", branch plan that section): no chapter is pending.
_PENDING: set[str] = set()  # plan_reproduction c035 became a markdown_table (session 10)


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="rows per setting left to the chapter's owner"))
    if p.stem in _PENDING else p for p in CHAPTERS], ids=[p.stem for p in CHAPTERS])
def test_no_visible_output_is_a_text_table(path: Path) -> None:
    """0 in every chapter (one in _PENDING, strictly expected to fail, left to its owner)."""
    found = text_tables(path)
    assert not found, (f"{path.stem}: {len(found)} visible outputs are tables printed as "
                       f"text (cells {', '.join(found)}; {BEFORE.get(path.stem, 0)} at "
                       f"b0a1764, {BEFORE_ROWS.get(path.stem, 0)} rows per setting at 3196484): "
                       "show them with egmlib.report.markdown_table or a figure")


# ------------------------------------------- small printouts and code notation in view

# Issue 33, the student's third reading (session 11): two- and three-line printouts that
# the rules above let through ("border    : [1.7889, ...]" over "as printed: [...]") and
# code notation in visible text ("F(b*) = sigma_eps_delta^2 S^2", "H_2/H_1**2",
# "epsilon >= 3.6", "winner: False").  A result becomes a sentence with glued numbers,
# a small markdown table, or an assert when it is only a check; visible text uses the
# book's notation (α, σ_opt in the prose, ‖Δ‖₁², 10³).  :func:`printout_kinds` names
# what it finds:
#
# * ``label-value``: 2 or more lines that are ``label: value`` or ``name = value``
#   (a number, an array, ∞ or a Python literal after the first colon or equals sign),
#   or that open with a number and then say what it is (``  9.108 in the box ...``);
# * ``**``: Python's or SymPy's power;
# * ``_ subscript``: a letter or a Greek name with a ``_`` subscript (``sigma_j``,
#   ``C_t``, ``H_2``, ``p_C``; not a function name such as ``clip_radius``);
# * ``>=``: Python's comparisons ``>=``, ``<=``, ``!=``, ``==``;
# * ``||``: a norm typed as ``||x||``;
# * ``Greek``: a Greek letter spelled out (``alpha``, ``sigma``, ``eps``, ``Delta``);
# * ``literal``: ``True``, ``False``, ``None``;
# * ``exception``: an exception printed as Python's ``ValueError: ...``;
#
# and, from the student's fourth reading (session 11, branch outfix: single lines the
# rules above let through):
#
# * ``repr``: a Python dict or list (``{'PLAN': -0.29, ...}``, ``[]``, a bare ``[1]``)
#   or a numpy array (``[0.866 0.5  ]``) as Python prints it;
# * ``SymPy``: a SymPy or Python expression (``Interval.open(...)``, ``sqrt(2)/2``);
# * ``^``: a power typed with a caret (``2^-12``, ``x^2``): the book writes 2⁻¹² or $x^2$;
# * ``Greek _``: a Greek letter with a ``_`` subscript (``σ_opt``, ``σ_total``), also
#   in the title of a hidden cell's toggle (:func:`prompt_titles`).
#
# On main at 7a8674d these four kinds flagged 16 outputs in 9 chapters (the student's
# list among them) and 12 toggle titles in 7 chapters; branch outfix rewrote them all.

GREEK = ("alpha|beta|gamma|delta|epsilon|eps|zeta|eta|theta|kappa|lambda|lam|mu|nu|xi|rho|"
         "sigma|tau|phi|psi|omega|Delta|Sigma|Lambda|Phi|Gamma")
_LV = re.compile(r"^\s*[^\s:=][^:=]{0,50}?\s*[:=]\s+(?P<rest>.*)$")
_LV_VALUE = re.compile(r"[-+\u2212]?\d|∞|\b(?:True|False|None)\b|\[")
_VALUE_FIRST = re.compile(r"^\s*[-+\u2212]?\d[\d,.]*(?:\s*×\s*10\S*)?\s+[A-Za-z(]")
NOTATION = {
    "**": re.compile(r"\*\*"),
    "_ subscript": re.compile(rf"(?<![A-Za-z0-9_])(?:[A-Za-z]|{GREEK})_"
                              r"(?:\{|[A-Za-z0-9]{1,3}(?![A-Za-z0-9]))"),
    ">=": re.compile(r">=|<=|!=|=="),
    "||": re.compile(r"\|\|"),
    "Greek": re.compile(rf"(?<![A-Za-z_])(?:{GREEK})(?![A-Za-z])"),
    "literal": re.compile(r"\b(?:True|False|None)\b"),
    "exception": re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning): "),
    # the student's fourth reading (session 11, branch outfix): Python and SymPy reprs
    "repr": re.compile(r"\{'|\{\"|\['|\[\]"                          # dict, list of str, []
                       r"|^\s*\[[^\]\n]*\]\s*$"                       # a bare list: [1]
                       r"|\[\s*[-+]?\d[\d.e+-]*(?:\s+[-+]?\d[\d.e+-]*)+\s*\]"  # numpy: [0.866 0.5  ]
                       r"|\[\s*[-+]?\d[\d.e+-]*\s+\]", re.M),
    "SymPy": re.compile(r"\b(?:Interval|FiniteSet|Union|Complement)[.(]|\b(?:sqrt|exp|log)\("),
    "^": re.compile(r"\^"),
    "Greek _": re.compile(r"[\u0370-\u03ff]_\w"),
}


def _label_value(line: str) -> bool:
    m = _LV.match(line)
    return bool(m and _LV_VALUE.search(m["rest"])) or bool(_VALUE_FIRST.match(line))


def printout_kinds(text: str) -> list[str]:
    """What makes ``text`` a small printout or code notation in view (see above)."""
    lines = [line for line in text.splitlines() if line.strip()]
    found = ["label-value"] if sum(map(_label_value, lines)) >= 2 else []
    return found + [kind for kind, rx in NOTATION.items() if rx.search(text)]


def printouts(path: Path) -> dict[str, list[str]]:
    """Cell id -> kinds, for the cells of a notebook whose visible text is flagged."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = {c.get("id", "?"): printout_kinds(visible_text(c)) for c in cells}
    return {cell: kinds for cell, kinds in found.items() if kinds}


# the student's list, as printed on main at d33c694 (each flagged there; see the report)
SMALL = {
    "two labels": "border    : [1.7889, 3.2863, 7.0711]\nas printed: [1.004, 1.3156, 1.8493]\n",
    "continued labels": ("    Lemma 4.1: w = [0.9091 0.0909], C^2 = 6.1283,\n"
                         "               Monte Carlo interval [6.0711, 6.1630]\n"
                         "equal weights: w = [0.5 0.5], C^2 = 4.6052,\n"),
    "values first": ("Gaussian, d = 5: direct maximum\n    9.108 in the box of half-width 5\n"
                     "   95.577 in the box of half-width 50\n"),
    "infinities": "  Gaussian, a = 10⁻⁹: ε = ∞\n   uniform on a ball: ε = ∞\n",
    "literal": "winner: False\n",
    "subscripts": "d = 1..6: lambda solved from the constraint, gradient zero,\n"
                  "          F(b*) = sigma_eps_delta^2 S^2\n",
    "sympy power": "sigma_j(alpha)^2 / sigma_j(2 alpha) = H_2/H_1**2\n",
    "comparison": "epsilon >= 3.6: the clipping error is half the error\n",
    "norm": "Hessian entry 8 ||Delta||_1^2 > 0;\n",
    "greek": "Algorithm 3 at alpha and plain clipping at alpha/2 clip the same rows\n",
    "exception": "ValueError: log_f must be non-increasing on [0, inf)\n",
    # the student's fourth reading (session 11), as printed on main at 7a8674d
    "dict": "{'PLAN': -0.29, 'PLAN-NOSCALE': 1.75, 'Instance optimal': 0.62}\n",
    "dict in a sentence": "admissible in {'sqrt(ln n)': 8, 'ln n': 1} of 78\n",
    "sympy set": "|x^2 - 1| > x^2 exactly on Interval.open(-sqrt(2)/2, sqrt(2)/2)\n",
    "empty list": "centred conics through the unit l1 circle: []\n",
    "bare list": "[1]",
    "caret": "multiples of 2^-12: c_trans 544 of 544, c_normal 495 of 544;\n",
    "numpy array": "b* = [0.866 0.5  ] ; gain 1.2500\n",
    "greek subscript": "Check: every row of the file recomputed; the role of σ_total",
}
PLAIN = [
    "Check: the clipped sum moves by at most 2C ✓\n",
    "error 17.2, 0.0635% of the sum's norm\n",
    "mean squared noise 351, closed form 361, z = −1.08\n",
    "Algorithm 3 at α and plain clipping at α/2 clip the same rows in all 180 pairs of runs\n",
    "radius from the chi-square law 1.505237, clip_radius 1.505237\n",
    "ε ≥ 3.6: the clipping error is half the error\n",
]


@pytest.mark.parametrize("text", list(SMALL.values()), ids=list(SMALL))
def test_rule_flags_small_printouts_and_code_notation(text: str) -> None:
    assert printout_kinds(text)


@pytest.mark.parametrize("text", PLAIN)
def test_rule_passes_sentences_in_the_books_notation(text: str) -> None:
    assert printout_kinds(text) == []


# Cells the rule still flags, per chapter: the count may only go down.  On main at
# d33c694 it flagged 98 cells in 15 chapters (the student's list among them); session 11
# rewrote them all (branch tidy; the last five, in plan_reproduction and
# state_of_the_art, on branch rest), so none is allowed.
REMAINING: dict[str, int] = {}


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_small_printouts_or_code_notation(path: Path) -> None:
    found = printouts(path)
    allowed = REMAINING.get(path.stem, 0)
    assert len(found) <= allowed, (
        f"{path.stem}: {len(found)} visible outputs are small printouts or show code "
        f"notation ({allowed} allowed): "
        + "; ".join(f"{cell} {', '.join(kinds)}" for cell, kinds in found.items())
        + ". Write a sentence with glued numbers, a markdown table or an assert, in the "
        "book's notation")
    assert len(found) == allowed, f"{path.stem}: lower REMAINING to {len(found)}"


# The title of a hidden cell's toggle (``code_prompt_show``/``code_prompt_hide``) is
# text a reader sees too (the student's fourth reading: "the role of σ_total"): the
# same notation rules apply to it (not the label-value rule: a title is one line).
def prompt_titles(path: Path) -> dict[str, list[str]]:
    """Cell id -> kinds, for the cells whose toggle title shows code notation."""
    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        prompts = cell.get("metadata", {}).get("mystnb", {})
        text = "\n".join(prompts.get(key, "") for key in ("code_prompt_show", "code_prompt_hide"))
        kinds = [kind for kind, rx in NOTATION.items() if rx.search(text)]
        if kinds:
            found[cell.get("id", "?")] = kinds
    return found


def test_titles_are_seen(tmp_path: Path) -> None:
    cell = {"cell_type": "code", "id": "x", "metadata": {"mystnb": {
        "code_prompt_show": "Check: every row of the file recomputed; the role of σ_total"}}}
    path = tmp_path / "title.ipynb"
    path.write_text(json.dumps({"cells": [cell]}), encoding="utf-8")
    assert prompt_titles(path) == {"x": ["Greek _"]}


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_code_notation_in_titles(path: Path) -> None:
    found = prompt_titles(path)
    assert not found, (f"{path.stem}: toggle titles show code notation: "
                       + "; ".join(f"{cell} {', '.join(kinds)}" for cell, kinds in found.items()))
