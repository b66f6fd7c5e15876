"""The machine-readable errata list is well formed and points at real checks.

Schema and rules: errata/README.md.  Each entry's target sits in the markdown cell right
before a code cell with a check, every computed number of its text is a reference to a
value its chapter glues, and the book quotes counts of errors by class only.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("evidence_counts", ROOT / "scripts" / "evidence_counts.py")
ev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ev)

CLASSES = {"wrong-result", "wrong-proof-step", "wrong-pseudo-code", "numerical-inaccuracy", "notation-typo",
           "unstated-hypothesis"}
FIELDS = {"label", "location", "class", "says", "correction", "chapter"}
OPTIONAL = {"literals"}
ENTRIES = [e for f in sorted((ROOT / "errata").glob("*.yml")) for e in yaml.safe_load(f.read_text())]
# Targets known not to sit right before a check yet (chapters/errata.ipynb lists the same
# set as NOT_YET).  Strict: a fixed one fails here until it is removed from both lists.
NOT_YET: set[str] = set()
REF = re.compile(r"\{glue\}`([A-Za-z0-9_]+)(?::([^`]*))?`")
# A number typed by hand that looks like a result: a decimal, a percentage or scientific
# notation.  Numbers of parts of a text (Lemma 4.1, Sections 2.1 and 2.2, Theorem 7.12)
# are not results; integers cannot be told from parameters here (README: reviewers check).
PARTS = re.compile(r"\b(?:Lemma|Theorem|Corollary|Proposition|Definition|Section|Algorithm|Figure|Table|Appendix"
                   r"|Step|Example|Remark|Chapter|[Ee]quation|[Ee]q\.)s? \d+(?:\.\d+)*(?:(?:, | and | or |-)\d+(?:\.\d+)*)*")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+|%)|(?<![\w.])\d+\.\d+")


# Mathematics is MyST math ($...$).  ASCII mathematics outside it ("sum_j", "sigma_j",
# "b^{-2}", "||x||", "<=") is refused.
ASCII_MATH = re.compile(r"\b(?:sum|prod|max|min)_|\bsigma\b|sigma_|\^|_\{|\b[A-Za-z]+_[A-Za-z0-9]|sqrt\(|<=|>=|\|\||\bmu-hat|\beps\b")


def math_problems(text: str) -> list[str]:
    """What keeps a field from reading as mathematics: unbalanced $, or ASCII
    mathematics outside $...$ (references {glue}`key` and `code` do not count)."""
    text = REF.sub("", text).replace(r"\$", "")
    if text.count("$") % 2:
        return ["unbalanced $"]
    text = re.sub(r"`[^`]*`", " ", text)  # code is not mathematics
    return ASCII_MATH.findall(re.sub(r"\$[^$]*\$", " ", text))


def hand_numbers(text: str) -> list[str]:
    return NUMBER.findall(PARTS.sub("", REF.sub("", text)))


@cache
def cells(chapter: str) -> list[dict]:
    return json.loads((ROOT / chapter).read_text())["cells"]


@cache
def glued(chapter: str) -> dict[str, str]:
    """The values a chapter glues, as stored in its outputs (text/plain)."""
    return {o["metadata"]["scrapbook"]["name"]: o["data"].get("application/papermill.record/text/plain", "")
            for c in cells(chapter) if c["cell_type"] == "code"
            for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


def test_labels_unique():
    labels = [e["label"] for e in ENTRIES]
    assert len(labels) == len(set(labels))


def test_number_pattern():
    text = ("off by 21% and 0.15 or 1e-9 times, {glue}`key:.2f` and 0.5-0.65; Lemmas 4.1 and 4.2, "
            "Theorem 7.12 and equation (7) hold for 2 < 3 and x_1.5")
    assert hand_numbers(text) == ["21%", "0.15", "1e-9", "0.5", "0.65"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["label"])
def test_entry(entry):
    if "kind" in entry:
        pytest.fail(f"{entry['label']}: `kind` was replaced by `class` (errata/README.md)")
    assert FIELDS <= set(entry) <= FIELDS | OPTIONAL, f"fields: {sorted(entry)}"
    assert entry["class"] in CLASSES, f"class {entry['class']!r} is not one of {sorted(CLASSES)}"
    assert entry["label"].startswith("err-")
    assert (ROOT / entry["chapter"]).exists()
    name = entry["chapter"].removeprefix("chapters/").removesuffix(".ipynb")
    assert entry["chapter"] == f"chapters/{name}.ipynb" and name in ev.toc_chapters(), \
        f"{entry['chapter']} is not a chapter listed in _toc.yml"


@pytest.mark.parametrize("entry", [
    pytest.param(e, marks=pytest.mark.xfail(strict=True, reason="target not yet before a check")) if e["label"] in NOT_YET
    else e for e in ENTRIES], ids=lambda e: e["label"])
def test_target_right_before_a_check(entry):
    target = f"({entry['label']})="
    nb = cells(entry["chapter"])
    where = [i for i, c in enumerate(nb) if c["cell_type"] == "markdown"
             and any(line.strip() == target for line in "".join(c["source"]).splitlines())]
    assert len(where) == 1, f"{target} is a target in {len(where)} markdown cells of {entry['chapter']}, not 1"
    i = where[0]
    after = nb[i + 1] if i + 1 < len(nb) else None
    assert after is not None and after["cell_type"] == "code", \
        f"{target}: the cell after its markdown cell in {entry['chapter']} is not a code cell"
    assert ev.cell_check_lines("".join(after["source"])), \
        f"{target}: the code cell after it in {entry['chapter']} has no assert (the check of the erratum)"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["label"])
def test_numbers_are_glued(entry):
    values = glued(entry["chapter"])
    literals = [str(x) for x in entry.get("literals", [])]
    used = []
    for field in ("says", "correction"):
        text = entry[field]
        for key, spec in REF.findall(text):
            assert key in values, f"{entry['label']}: {key} is not glued in {entry['chapter']}"
            value = ast.literal_eval(values[key])
            assert isinstance(value, (int, float)) and not isinstance(value, bool), \
                f"{entry['label']}: {key} = {values[key]!r} is not a number"
            format(value, spec)  # the format specification must suit the value
        assert "{glue}" not in REF.sub("", text), f"{entry['label']}: malformed glue reference in {field}"
        for number in hand_numbers(text):
            assert number in literals, (
                f"{entry['label']}: {number} in {field!r} is typed by hand; make it a reference "
                "{glue}`key:format` to a value its chapter glues, or list it under `literals` "
                "if it is a parameter or a quotation of the study (errata/README.md)")
            used.append(number)
    assert set(literals) <= set(used), f"{entry['label']}: unused literals {sorted(set(literals) - set(used))}"


def test_math_pattern():
    assert math_problems(r"$\sum_j (b_j\sigma_j)^2 = 1$ and {glue}`a_b:.2f`") == []
    assert math_problems("sum_j (b_j sigma_j)^2 = 1") != []
    assert math_problems("$x") == ["unbalanced $"]
    assert "^" in math_problems("sigma_ed^2 b_i^{-3}")


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["label"])
def test_math_is_myst_math(entry):
    for field in ("location", "says", "correction"):
        problems = math_problems(entry[field])
        assert not problems, f"{entry['label']}: {field} has mathematics outside $...$: {problems[:5]}"


def test_not_yet_matches_the_errata_chapter():
    source = "\n".join("".join(c["source"]) for c in cells("chapters/errata.ipynb") if c["cell_type"] == "code")
    match = re.search(r"^NOT_YET = (.*)$", source, re.M)
    assert match, "chapters/errata.ipynb defines no NOT_YET"
    listed = set() if match[1].strip() == "set()" else set(ast.literal_eval(match[1]))
    assert listed == NOT_YET


def test_counts_quoted_by_class():
    """The landing page quotes the errata counts by class (glued by the errata chapter), never a bare total."""
    intro = (ROOT / "intro.md").read_text()
    for cls in CLASSES:
        key = f"chapters/errata.ipynb::errata_n_{cls.replace('-', '_')}"
        assert key in intro, f"intro.md does not quote {key}"
    assert "errata_total" not in intro
    keys = glued("chapters/errata.ipynb")
    for cls in CLASSES:
        assert int(keys[f"errata_n_{cls.replace('-', '_')}"]) == sum(e["class"] == cls for e in ENTRIES), \
            "chapters/errata.ipynb is stale: re-execute it"


def test_no_e_notation_on_the_page():
    """Numbers for people (issue 26): the entries as the errata page prints them
    (the stored list of chapters/errata.ipynb) have no e-notation outside $...$."""
    stored = "".join("".join(o["data"].get("application/papermill.record/text/markdown", ""))
                     for c in cells("chapters/errata.ipynb") if c["cell_type"] == "code"
                     for o in c.get("outputs", []) if "errata_list" in json.dumps(o.get("metadata", {})))
    assert len(re.findall(r"^\d+\. \(erratum-", stored, re.M)) == len(ENTRIES), "chapters/errata.ipynb is stale"
    prose = re.sub(r"\$[^$]*\$", " ", stored)
    found = re.findall(r"\S*\d(?:\.\d+)?[eE][-+]?\d+\S*", prose)
    assert not found, f"e-notation on the errata page: {found[:5]}"
