"""The machinery of ``make mutants`` (mutants/), without executing any chapter.

The patch must reach a chapter's ``from egmlib.x import f`` and egmlib's own internal
imports of ``f`` (also under another name), and come off again; the catalog must
cover every chapter that uses egmlib; the runner must fail when a mutant survives
or a control fails (checked on a two-cell notebook).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import egmlib  # noqa: E402
from mutants import catalog, run  # noqa: E402
from mutants.patch import patch, resolve  # noqa: E402


def _radius2_equal_weights() -> float:
    """C^2 for three equal weights 1/3 at p = 0.01, through scaling.clip_radius -> gchi2.isf."""
    return float(egmlib.scaling.clip_radius(np.ones(3), np.ones(3) / np.sqrt(3), 0.01) ** 2)


def test_patch_reaches_both_import_styles_and_comes_off():
    exact = chi2.isf(0.01, 3) / 3  # three equal weights: a scaled chi-square
    assert _radius2_equal_weights() == pytest.approx(exact, rel=1e-10)
    original = egmlib.gchi2.isf
    with patch("egmlib.gchi2.isf", catalog.times(1.21)) as p:
        from egmlib.gchi2 import isf  # the chapters' import style

        assert isf is p.mutant and egmlib.gchi2.isf is p.mutant
        assert egmlib.scaling.isf is p.mutant  # egmlib's own `from egmlib.gchi2 import isf`
        assert egmlib.optimal._gchi2_isf is p.mutant  # ... and under another name
        assert {"egmlib.gchi2.isf", "egmlib.scaling.isf", "egmlib.optimal._gchi2_isf"} <= set(p.sites)
        assert _radius2_equal_weights() == pytest.approx(1.21 * exact, rel=1e-10)  # called through scaling
    assert egmlib.gchi2.isf is original and egmlib.scaling.isf is original
    assert egmlib.optimal._gchi2_isf is original
    assert _radius2_equal_weights() == pytest.approx(exact, rel=1e-10)


def test_patch_reaches_the_package_namespace():
    with patch("egmlib.scaling.clip_radius", catalog.passthrough) as p:
        assert egmlib.clip_radius is p.mutant and egmlib.mechanisms.clip_radius is p.mutant
    assert egmlib.clip_radius is p.original


@pytest.mark.parametrize("target", ["egmlib.scaling._radius2", "egmlib.scaling.no_such_function",
                                    "numpy.sum", "clip_radius"])
def test_patch_refuses_what_is_not_a_public_egmlib_function(target):
    with pytest.raises(ValueError, match="target"):
        resolve(target)


def _chapters_using_egmlib() -> set[str]:
    found = set()
    for path in (ROOT / "chapters").glob("*.ipynb"):
        # the hidden Colab install cell (scripts/public_address.py) imports egmlib in
        # every chapter; it is not a use of the library
        code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                         if c["cell_type"] == "code"
                         and not "".join(c["source"]).startswith("# Colab: install egmlib"))
        # egmlib.report only formats numbers for the prose (issue 26): nothing to mutate
        code = re.sub(r"^\s*from egmlib\.report import .*$", "", code, flags=re.M)
        if re.search(r"^\s*(from egmlib\b|import egmlib\b)", code, re.M):
            found.add(path.stem)
    # the errata page reads the other chapters' stored outputs, which the mutants' scratch
    # run does not have (its control fails at c004); its one egmlib call, analytic_sigma
    # in err-s4-unit-ball's check, is mutated in the Gaussian mechanism chapter's mutants
    found.discard("errata")
    return found


def test_catalog_covers_every_chapter_that_uses_egmlib():
    mutants = catalog.MUTANTS
    assert len(mutants) >= 25
    assert len({m.name for m in mutants}) == len(mutants)
    assert {m.chapter for m in mutants} == _chapters_using_egmlib()
    assert sum(m.subtle for m in mutants) >= len(mutants) / 4
    for m in mutants:
        assert callable(resolve(m.target)), m.name
        if m.until is not None:
            cells = json.loads((ROOT / "chapters" / f"{m.chapter}.ipynb").read_text())["cells"]
            ids = [c.get("id") for c in cells]
            assert m.until in ids, m.name
            # cell ids drift when a chapter is re-converted: the cell must still be a check,
            # reached after the chapter has used the target
            stop = cells[ids.index(m.until)]
            source = "".join(stop["source"])
            assert stop["cell_type"] == "code" and "assert" in source, (m.name, m.until)
            upto = "".join("".join(c["source"]) for c in cells[: ids.index(m.until) + 1] if c["cell_type"] == "code")
            assert m.target.rsplit(".", 1)[1] + "(" in upto, (m.name, m.until)


def test_every_catalog_entry_installs_and_restores():
    for m in catalog.MUTANTS:
        original = resolve(m.target)
        with patch(m.target, m.make) as p:
            assert resolve(m.target) is p.mutant is not original
        assert resolve(m.target) is original


def _outcome(name: str, status: str) -> run.Outcome:
    job = run.Job(name, "x", "egmlib.x.f", "-", False, None, "x.ipynb")
    return run.Outcome(job, status, "", "", 0.0)


def test_exit_status():
    good = [_outcome("control:x", "passed"), _outcome("m1", "killed")]
    assert run.exit_status(good) == 0
    assert run.exit_status(good + [_outcome("m2", "survived")]) == 1
    assert run.exit_status([_outcome("control:x", "failed"), _outcome("m1", "killed")]) == 1
    assert run.exit_status(good + [_outcome("m3", "error")]) == 1


FAKE_CATALOG = '''
from mutants.catalog import Mutant, arg, patches_for as _patches_for, times

MUTANTS = [
    Mutant("isf_21pct", "tiny", "egmlib.gchi2.isf", "quantile 21% too large", times(1.21)),
    Mutant("equivalent", "tiny", "egmlib.gchi2.isf", "nothing (p unchanged)", arg("p", lambda p: p)),
]


def patches_for(name):
    return _patches_for(name, MUTANTS)
'''

TINY_CELLS = [
    "import numpy as np\nfrom scipy.stats import chi2\nfrom egmlib.scaling import clip_radius",
    "c2 = clip_radius(np.ones(3), np.ones(3) / np.sqrt(3), 0.01) ** 2\n"
    "assert abs(3 * c2 - chi2.isf(0.01, 3)) < 1e-9 * c2",
]


@pytest.mark.slow
def test_runner_kills_reports_and_fails_on_a_survivor(tmp_path):
    (tmp_path / "fake_catalog.py").write_text(FAKE_CATALOG)
    cells = [{"cell_type": "code", "id": f"t{i}", "metadata": {}, "source": s, "outputs": [],
              "execution_count": None} for i, s in enumerate(TINY_CELLS)]
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "tiny.ipynb").write_text(json.dumps(nb))
    sys.path.insert(0, str(tmp_path))
    try:
        import fake_catalog

        jobs = run.jobs_from_catalog(fake_catalog.MUTANTS, tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fake_catalog", None)
    assert [j.name for j in jobs] == ["control:tiny", "isf_21pct", "equivalent"]
    outcomes, status = run.run(jobs, workers=2, catalog_module="fake_catalog", sys_path=(str(tmp_path),))
    by_name = {o.job.name: o for o in outcomes}
    assert by_name["control:tiny"].status == "passed"
    killed = by_name["isf_21pct"]  # reached clip_radius's internal import of isf, in the kernel
    assert killed.status == "killed" and killed.cell == "t1"
    assert killed.check == "AssertionError: assert abs(3 * c2 - chi2.isf(0.01, 3)) < 1e-9 * c2"
    assert by_name["equivalent"].status == "survived"
    assert status == 1
    assert "**NO**" in run.table(outcomes)
