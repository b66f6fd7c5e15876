"""egmlib.report: the printed form of numbers (issue 26).

The expected strings are written out by hand from the rule in the module's docstring,
and a round trip (parse the text back, compare with the value at the stated precision)
checks the rule on random values, so a formatter that prints the right shape with the
wrong digits fails."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest

from egmlib import report
from egmlib.report import format_number, glue_number

SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def parse(text: str) -> float:
    """The value a reader takes from ``text`` (the inverse of the rule)."""
    text = text.replace("\u2212", "-").replace(",", "")
    m = re.fullmatch(r"(-?)(?:([\d.]+) × )?10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", text)
    if m:
        mant = float(m.group(2)) if m.group(2) else 1.0
        return float(m.group(1) + "1") * mant * 10.0 ** int(m.group(3).translate(SUP))
    return float(text)


@pytest.mark.parametrize("value, kwargs, expected", [
    (10_000, {}, "10,000"),
    (np.int64(-1234567), {"large": 1e7}, "\u22121,234,567"),
    (0, {}, "0"),
    (1.5525, {}, "1.55"),
    (1.5295, {"digits": 4}, "1.530"),
    (2.0, {}, "2.00"),
    (0.0280145, {}, "0.0280"),
    (4.77e-3, {}, "0.00477"),
    (9.996e-4, {}, "0.00100"),   # rounds up into the plain range
    (5.63e-6, {}, "5.63 × 10⁻⁶"),
    (-2.5e-7, {}, "\u22122.50 × 10⁻⁷"),
    (1e6, {}, "10⁶"),
    (1_000_000, {}, "10⁶"),
    (1.15e7, {}, "1.15 × 10⁷"),
    (999_999.0, {}, "1.00 × 10⁶"),  # rounds to a power of ten: precision kept
    (123_456.7, {}, "123,000"),
    (1234.5678, {"decimals": 1}, "1,234.6"),
    (-0.0001, {"decimals": 2}, "0.00"),  # no negative zero
    (1e-30, {"decimals": 3}, "0.000"),
    (0.0, {"digits": 3}, "0.00"),
    (3.0, {"digits": 1}, "3"),
])
def test_examples(value: float, kwargs: dict, expected: str) -> None:
    assert format_number(value, **kwargs) == expected


def test_round_trip_on_random_values() -> None:
    rng = np.random.default_rng(26)
    for x in rng.choice([-1, 1], 2000) * 10.0 ** rng.uniform(-12, 12, 2000):
        for digits in (1, 2, 3, 6):
            text = format_number(float(x), digits)
            assert "e" not in text and "E" not in text
            assert math.isclose(parse(text), x, rel_tol=0.5 * 10.0 ** (1 - digits) * 1.0000001), (x, text)


@pytest.mark.parametrize("kwargs, name", [
    ({"value": float("nan")}, "value"), ({"value": float("inf")}, "value"),
    ({"value": 1.0, "digits": 0}, "digits"), ({"value": 1.0, "digits": 18}, "digits"),
    ({"value": 1.0, "decimals": -1}, "decimals"), ({"value": 1.0, "small": 0.0}, "small"),
    ({"value": 1.0, "large": 0.5}, "large"),
])
def test_bad_input_names_the_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises((ValueError, TypeError), match=name):
        format_number(**kwargs)


def test_glue_number_refuses_a_bad_name() -> None:
    with pytest.raises(ValueError, match="name"):
        glue_number("not an identifier", 1.0)
    with pytest.raises(ValueError, match="name"):
        report.glue("not an identifier", 1.0)


def _displays(monkeypatch, module, attribute, glue, *args) -> list:
    """What ``glue(*args)`` passes to IPython's display (``module.attribute``)."""
    calls = []
    monkeypatch.setattr(module, attribute, lambda *a, **k: calls.append((a, k)))
    glue(*args)
    return calls


@pytest.mark.parametrize("display", [False, True])
def test_glue_writes_what_myst_nb_glue_writes(monkeypatch, display: bool) -> None:
    """egmlib.report.glue (no nbformat import) against myst-nb's own glue: the same
    display call, MIME types, prefix and metadata, for text, a float, LaTeX maths,
    a SymPy expression and a Markdown table, so the book reads both alike."""
    IPython = pytest.importorskip("IPython")
    myst_glue = pytest.importorskip("myst_nb.ext.glue")
    sp = pytest.importorskip("sympy")
    from IPython.display import Markdown, Math

    values = ["1.23 × 10⁻⁶", 0.25, Math(r"\sigma^2"), sp.sqrt(sp.Symbol("x")) / 2,
              Markdown("| a |\n|--|\n| 1 |")]
    for k, value in enumerate(values):
        ours = _displays(monkeypatch, IPython.display, "display", report.glue, f"key{k}", value, display)
        theirs = _displays(monkeypatch, myst_glue, "ipy_display", myst_glue.glue, f"key{k}", value, display)
        assert ours == theirs and len(ours) == 1, (value, ours, theirs)
        bundle = ours[0][0][0]
        assert all(mime.startswith("application/papermill.record/") != display for mime in bundle)
        assert ours[0][1]["metadata"]["scrapbook"]["name"] == f"key{k}"
    # glue_number glues its text through the same call
    number = _displays(monkeypatch, IPython.display, "display", glue_number, "n", 1234.5)
    assert number == _displays(monkeypatch, myst_glue, "ipy_display", myst_glue.glue, "n", format_number(1234.5), False)


def test_glue_does_not_import_nbformat() -> None:
    """The reason for egmlib.report.glue: a kernel that glues does not import
    nbformat (and jsonschema, whose format checkers cost seconds to import)."""
    pytest.importorskip("IPython")
    code = ("import sys; from egmlib.report import glue, glue_number; glue('a', 1.0, display=False); "
            "glue_number('b', 2.0); print(sorted(m for m in ('nbformat', 'jsonschema', 'myst_nb') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


# ---------------------------------------------------------------- markdown_table

from egmlib.report import markdown_table  # noqa: E402


def test_markdown_table_layout() -> None:
    text = markdown_table(["$d$", "error (lower is better)"], [["10", "0.25"], ["100", "1.5"]])
    assert text.splitlines() == ["| $d$ | error (lower is better) |", "|:--|--:|",
                                 "| 10 | 0.25 |", "| 100 | 1.5 |"]


def test_markdown_table_caption_name_align_and_pipes() -> None:
    text = markdown_table(["a", "b"], [["x|y", "2"]], align="cl", caption="A caption", name="tab-x")
    assert text.splitlines() == [":::{table} A caption", ":name: tab-x", "", "| a | b |",
                                 "|:-:|:--|", "| x\\|y | 2 |", ":::"]


@pytest.mark.parametrize("header, rows, kwargs, word", [
    ("ab", [["1"]], {}, "header"),
    (["a"], [], {}, "rows"),
    (["a", "b"], [["1"]], {}, "rows"),
    (["a"], [[1.5]], {}, "rows"),
    (["a"], [["1\n2"]], {}, "rows"),
    (["a"], [["1"]], {"align": "x"}, "align"),
    (["a"], [["1"]], {"align": "lr"}, "align"),
    (["a"], [["1"]], {"name": "t"}, "name"),
    (["a"], [["1"]], {"caption": "two\nlines"}, "caption"),
])
def test_markdown_table_refuses_bad_input(header, rows, kwargs, word) -> None:
    with pytest.raises((TypeError, ValueError), match=word):
        markdown_table(header, rows, **kwargs)
