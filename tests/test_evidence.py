"""Every check of every chapter is classified in ``evidence/<chapter>.yml``.

The format is fixed (see ``scripts/evidence_counts.py``): ``chapter: <name>`` and a list
``checks`` of entries ``{assert, class, evidence}``, one per check of the chapter, where
``assert`` is the check's first line.  The multiset of these lines must equal the
multiset of the first lines of the chapter's ``assert`` statements and
``np.testing.assert_*`` / ``assert_allclose`` calls, so that a check added to or removed
from a chapter without its classification fails here.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("evidence_counts", ROOT / "scripts" / "evidence_counts.py")
ev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ev)

CHAPTERS = [name for name in ev.toc_chapters() if ev.chapter_checks(name)]


def test_extractor_finds_every_kind_of_check():
    cell = '''import numpy as np
from numpy.testing import assert_allclose
x = "assert not a check  # nor is this"
assert x  # a comment
assert np.isclose(1.0,
                  1.0)
def f(y):
    assert y > 0, "positive"
    return y
np.testing.assert_allclose(f(1.0), 1.0)
assert_allclose(1.0, 1.0)
np.testing.assert_array_equal([1], [1]); assert True
np.isclose(1, 1)
%timeit f(1)
'''
    pairs = ev.cell_check_lines(cell)
    assert [bare for bare, _ in pairs] == [
        "assert x", "assert np.isclose(1.0,", 'assert y > 0, "positive"',
        "np.testing.assert_allclose(f(1.0), 1.0)", "assert_allclose(1.0, 1.0)",
        "np.testing.assert_array_equal([1], [1]); assert True",
        "np.testing.assert_array_equal([1], [1]); assert True"]
    assert pairs[0][1] == "assert x  # a comment"
    assert ev.normalise("assert x  # a comment", pairs) == "assert x"
    assert ev.normalise("assert x", pairs) == "assert x"


def test_every_chapter_with_checks_is_covered():
    assert CHAPTERS, "no chapter with checks found: the extractor is broken"
    stale = sorted(p.stem for p in (ROOT / "evidence").glob("*.yml") if p.stem not in CHAPTERS)
    assert not stale, f"evidence/*.yml for chapters without checks or not in _toc.yml: {stale}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_evidence(name):
    path = ROOT / "evidence" / f"{name}.yml"
    assert path.exists(), (f"{path.relative_to(ROOT)} is missing: `python scripts/evidence_counts.py --draft` "
                           "writes a draft listing the chapter's checks, then classify each one")
    data = yaml.safe_load(path.read_text())
    assert set(data) == {"chapter", "checks"}, f"{path.name}: top-level keys must be chapter and checks"
    assert data["chapter"] == name
    problems = []
    for i, entry in enumerate(data["checks"]):
        where = f"{path.name} check {i + 1} ({entry.get('assert', '?')!r})"
        if set(entry) != {"assert", "class", "evidence"}:
            problems.append(f"{where}: keys must be assert, class, evidence, not {sorted(entry)}")
            continue
        if entry["class"] not in ev.CLASSES:
            problems.append(f"{where}: class {entry['class']!r} is not one of {', '.join(ev.CLASSES)}")
        if not isinstance(entry["evidence"], str) or not entry["evidence"].strip():
            problems.append(f"{where}: the evidence text is empty")
    assert not problems, "\n".join(problems)

    pairs = ev.chapter_checks(name)
    listed = Counter(ev.normalise(str(e["assert"]), pairs) for e in data["checks"])
    actual = Counter(bare for bare, _ in pairs)
    missing, extra = actual - listed, listed - actual
    assert not missing and not extra, (
        f"{path.name} does not match chapters/{name}.ipynb:\n"
        + "".join(f"  not listed ({k}x): {line}\n" for line, k in missing.items())
        + "".join(f"  not in the chapter ({k}x): {line}\n" for line, k in extra.items()))
