"""Every exercise stands on its own (issue 33 item 8).

For each ``{exercise}`` of every chapter, read with the code of its solution
(the cells between ``{solution-start}`` and ``{solution-end}``):

* every egmlib function the solution calls is named in the exercise and linked
  (``{py:func}`` or ``{py:obj}`` to it, so the reader finds its documentation), and no
  egmlib function is named there as plain code (```analytic_sigma```) without a link;
* every name the solution takes from the chapter's own cells (a helper function, a
  constant such as ``SIGMA_OPT``, a result such as ``delta_mech``) is shown in the
  exercise: named as code, or set as ``$d = 5$``, next to what it is.

Names that only make the run reproducible or its printout readable (``SEED``,
``rng``, the number helpers) need no mention.  The reading is plain Python (ast); the
check is tested on a small notebook that breaks each rule.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
# How a solution shows its result (numbers for people, glue, a table), not what the
# exercise asks the reader to use: no link needed.
QUIET = {"SEED", "rng", "format_number", "num", "glue", "glue_number", "markdown_table"}


def egmlib_names() -> set[str]:
    import egmlib

    names = set(getattr(egmlib, "__all__", []))
    for info in pkgutil.iter_modules(egmlib.__path__):
        if not info.name.startswith("_"):
            names |= set(getattr(importlib.import_module(f"egmlib.{info.name}"), "__all__", []))
    return names


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def exercises(nb: dict) -> list[tuple[str, str, list[str], list[str]]]:
    """(label, exercise text, solution code cells, code cells outside solutions)."""
    texts, solutions, outside, current = {}, {}, [], None
    for cell in nb["cells"]:
        src = _source(cell)
        if cell["cell_type"] == "markdown":
            for m in re.finditer(r":::\{exercise\}[^\n]*\n:label:\s*(\S+)\n(.*?)\n:::", src, re.S):
                texts[m[1]] = m[2]
            start = re.search(r"solution-start\}\s*(\S+)", src)
            if start:
                current = start[1]
                solutions.setdefault(current, [])
            if "solution-end" in src and (start is None or "solution-end" in src.split(start[0], 1)[1]):
                current = None
        elif current:
            solutions[current].append(src)
        else:
            outside.append(src)
    return [(label, text, solutions.get(label, []), outside) for label, text in texts.items()]


def _bound(tree: ast.AST) -> tuple[set[str], set[str], set[str]]:
    """(names bound, names imported from egmlib, names imported from elsewhere)."""
    bound, from_egmlib, imported = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) or isinstance(node, ast.arguments):
            pass
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {a.asname or a.name for a in node.names}
            (from_egmlib if (node.module or "").startswith("egmlib") else imported).update(names)
    return bound, from_egmlib, imported


def _parse(sources: list[str]) -> ast.Module:
    body = []
    for src in sources:
        try:
            body += ast.parse(src).body
        except SyntaxError:  # a cell magic
            continue
    return ast.Module(body=body, type_ignores=[])


def problems(text: str, solution: list[str], outside: list[str], library: set[str]) -> list[str]:
    """What the exercise ``text`` fails to name, link or show for its solution."""
    tree = _parse(solution)
    bound, sol_egmlib, sol_imported = _bound(tree)
    _, nb_egmlib, nb_imported = _bound(_parse(outside))
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    # egmlib.x.f(...) and egmlib.f(...) written out
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                  and isinstance(n.value, (ast.Name, ast.Attribute))
                  and ast.unparse(n.value).split(".")[0] == "egmlib"}
    found = []
    used_egmlib = ((loaded - (bound - sol_egmlib)) & (sol_egmlib | nb_egmlib) & library) | (attributes & library)
    for name in sorted(used_egmlib - QUIET):
        if not re.search(r"\{py:(func|obj|class)\}`~?egmlib\.[\w.]*\b" + re.escape(name) + "`", text):
            found.append(f"egmlib's {name} is used but not linked")
    for name in sorted(set(re.findall(r"(?<![\w{}])`(\w+)`", text)) & library):
        found.append(f"egmlib's {name} is named as plain code, without a link")
    from_chapter = loaded - bound - sol_egmlib - nb_egmlib - sol_imported - nb_imported - QUIET
    from_chapter = {n for n in from_chapter if not hasattr(builtins, n)}
    for name in sorted(from_chapter):
        if not (re.search(r"`" + re.escape(name) + r"[`(\[]", text)
                or re.search(r"\$" + re.escape(name) + r"\s*=", text)):
            found.append(f"the chapter's {name} is used but not shown")
    return found


LIBRARY = egmlib_names()
CASES = [(path.stem, label, text, solution, outside) for path in CHAPTERS
         for label, text, solution, outside in exercises(json.loads(path.read_text()))]


def test_there_are_exercises_with_solutions():
    assert len(CASES) >= 30
    assert sum(bool(solution) for *_, solution, _ in CASES) >= 30


@pytest.mark.parametrize("chapter, label, text, solution, outside", CASES,
                         ids=[f"{c}:{label}" for c, label, *_ in CASES])
def test_exercise_stands_on_its_own(chapter, label, text, solution, outside):
    assert problems(text, solution, outside, LIBRARY) == []


def test_the_check_finds_what_is_missing():
    outside = ["import numpy as np\nimport egmlib\nfrom egmlib import analytic_sigma, gaussian_delta\n"
               "delta_mech = 0.1\nSIGMA_OPT = analytic_sigma(1.0, 1e-6)\n"]
    solution = ["x = gaussian_delta(1.5, 0.5)\nassert abs(x - delta_mech) < 1e-9\n"
                "y = np.log(SIGMA_OPT) + egmlib.scaling.noise_error(1)\n"]
    # Exercise 1.3 as it was: plain `egmlib.gaussian_delta`, delta_mech not shown
    old = "`egmlib.gaussian_delta` computes its exact $\\delta$; compare with the quadrature."
    found = problems(old, solution, outside, {"gaussian_delta", "analytic_sigma", "noise_error"})
    assert "egmlib's gaussian_delta is used but not linked" in found
    assert "egmlib's noise_error is used but not linked" in found
    assert "the chapter's delta_mech is used but not shown" in found
    assert "the chapter's SIGMA_OPT is used but not shown" in found
    good = ("{py:func}`~egmlib.privacy.gaussian_delta` against the chapter's `delta_mech`, "
            "at `SIGMA_OPT`, with {py:func}`~egmlib.scaling.noise_error`.")
    assert problems(good, solution, outside, {"gaussian_delta", "analytic_sigma", "noise_error"}) == []
    assert problems(good + " Or `analytic_sigma`.", solution, outside,
                    {"gaussian_delta", "analytic_sigma", "noise_error"}) == [
        "egmlib's analytic_sigma is named as plain code, without a link"]
