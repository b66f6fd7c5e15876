"""Numbers for people: how the book prints a number in its prose.

One rule for every chapter (:func:`format_number`), one call that formats a
number and glues it for the text (:func:`glue_number`; :func:`glue` glues any
value, as myst-nb's ``glue`` does; both need IPython, i.e. a Jupyter kernel), and a
table for results (:func:`markdown_table`: MyST Markdown, which the book renders
as a real table on the site and in the PDF, not as a monospace printout):

* integers with thousands separators: ``10,000``;
* other numbers with a stated precision, either ``digits`` significant digits or
  ``decimals`` places, trailing zeros kept (the precision is part of the number);
* very small or very large numbers as a power of ten, ``1.23 × 10⁻⁶``, never in
  Python's e-notation (``1.23e-06``); an exact power of ten as ``10⁶``;
* the minus sign is the typographic one (U+2212).

The text form uses Unicode (the multiplication sign and superscript digits), so
that it reads the same in the HTML and, with the PDF's preamble, in LaTeX.
"""

from __future__ import annotations

import numbers

import numpy as np

from egmlib._validation import check_int, check_real

__all__ = ["format_number", "glue", "glue_number", "markdown_table"]

# myst-nb reads a glued value from a display output whose MIME types carry this
# prefix and whose metadata names it (myst_nb.ext.glue, the version in the lock).
_GLUE_PREFIX = "application/papermill.record/"

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MINUS = "\u2212"


def _is_integer(value: object) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)


def _signed(text: str, negative: bool) -> str:
    return (_MINUS + text) if negative else text


def format_number(
    value: float,
    digits: int = 3,
    *,
    decimals: int | None = None,
    small: float = 1e-3,
    large: float = 1e6,
) -> str:
    """The book's printed form of ``value``.

    Parameters
    ----------
    value : float or int
        A finite real number.  A Python or numpy integer is printed exactly, with
        thousands separators, unless it is at least ``large`` in absolute value.
    digits : int, optional
        Significant digits (1 to 17) of a non-integer, trailing zeros kept.
    decimals : int, optional
        Fixed places after the point (0 to 17) instead of ``digits``; the number is
        then never printed as a power of ten.
    small, large : float, optional
        A nonzero number below ``small`` or at least ``large`` in absolute value
        (after rounding) is printed as ``m × 10^k`` (``small`` in (0, 1],
        ``large`` >= 1).

    Returns
    -------
    str
        The number as text: ``10,000``, ``0.0280``, ``1.55``, ``−2.50 × 10⁻⁷``,
        ``10⁶``.

    Examples
    --------
    >>> format_number(10000)
    '10,000'
    >>> format_number(1.5525, 3)
    '1.55'
    >>> format_number(2.0, 3)
    '2.00'
    >>> format_number(4.77e-3, 3)
    '0.00477'
    >>> format_number(5.63e-6, 3)
    '5.63 × 10⁻⁶'
    >>> format_number(1e6)
    '10⁶'
    >>> format_number(1.15e7, 3)
    '1.15 × 10⁷'
    >>> format_number(-0.25, decimals=3)
    '−0.250'
    >>> format_number(1234.5678, decimals=1)
    '1,234.6'
    """
    digits = check_int("digits", digits, low=1, high=17)
    if decimals is not None:
        decimals = check_int("decimals", decimals, low=0, high=17)
    small = check_real("small", small, low=0.0, high=1.0, low_open=True)
    large = check_real("large", large, low=1.0)
    exact_integer = _is_integer(value)
    x = check_real("value", value)
    negative = x < 0  # a zero, signed or not, prints without a sign (both branches below)
    a = abs(x)
    if exact_integer and abs(int(value)) < large:  # type: ignore[call-overload]
        return _signed(f"{abs(int(value)):,d}", int(value) < 0)  # type: ignore[call-overload]
    if decimals is not None:
        text = f"{a:,.{decimals}f}"
        negative = negative and any(c not in "0.," for c in text)
        return _signed(text, negative)
    if a == 0.0:
        return "0" if digits == 1 else "0." + "0" * (digits - 1)
    # round to the significant digits first, then decide the form
    mantissa, exponent = f"{a:.{digits - 1}e}".split("e")
    k = int(exponent)
    rounded = float(f"{mantissa}e{k}")
    if rounded < small or rounded >= large:
        power = "10" + str(k).translate(_SUPERSCRIPT)
        if float(mantissa) == 1.0 and a == float(f"1e{k}"):  # an exact power of ten
            return _signed(power, negative)
        return _signed(f"{mantissa} × {power}", negative)
    places = max(digits - 1 - k, 0)
    return _signed(f"{rounded:,.{places}f}", negative)


def glue_number(
    name: str,
    value: float,
    digits: int = 3,
    *,
    decimals: int | None = None,
    small: float = 1e-3,
    large: float = 1e6,
) -> str:
    """Format ``value`` by :func:`format_number` and glue it (:func:`glue`) as ``name``.

    The text then reads ``{glue:text}`name``` (no format spec: the number is
    already text).  Returns the text.  Needs IPython (a Jupyter kernel), as :func:`glue`.

    Parameters
    ----------
    name : str
        The glue key: a Python identifier.
    value, digits, decimals, small, large
        As for :func:`format_number`.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier, got {name!r}"[:120])
    text = format_number(value, digits, decimals=decimals, small=small, large=large)
    glue(name, text, display=False)
    return text


def glue(name: str, variable: object, display: bool = True) -> None:
    """Glue ``variable`` into the cell's outputs as ``name``, for ``{glue}`` in the text.

    The same output as myst-nb's ``myst_nb.glue`` (the display data of
    ``variable``, its MIME types prefixed so that the page does not show them
    where the cell is, and the name in the output's metadata), without its
    import: that imports nbformat and with it jsonschema, whose format checkers
    build a grammar on import (about 3 s of CPU in every kernel that glues).
    Needs IPython (a Jupyter kernel).

    Parameters
    ----------
    name : str
        The glue key: a Python identifier.
    variable : object
        The value; what is stored is how IPython displays it (text, LaTeX, ...).
    display : bool
        Also show the value where the cell is (myst-nb's default, True).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier, got {name!r}"[:120])
    if not isinstance(display, (bool, np.bool_)):
        raise TypeError(f"display must be True or False, got {type(display).__name__}")
    from IPython.core.formatters import format_display_data  # a kernel's package
    from IPython.display import display as ipy_display

    mimebundle, metadata = format_display_data(variable)
    prefix = "" if display else _GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)


def _cell_text(name: str, cell: object) -> str:
    if not isinstance(cell, str):
        raise TypeError(f"{name} must hold text (format numbers with format_number), got {type(cell).__name__}"[:160])
    if "\n" in cell:
        raise ValueError(f"{name} must hold one-line text, got {cell!r}"[:160])
    return cell.strip().replace("|", "\\|") or " "


def markdown_table(
    header: list[str],
    rows: list[list[str]],
    *,
    align: str | None = None,
    caption: str | None = None,
    name: str | None = None,
) -> str:
    """A result table as MyST Markdown, for ``IPython.display.Markdown``.

    The book parses Markdown outputs as MyST (``nb_render_markdown_format``), so
    the table is a real one in the HTML and in the PDF.  Cells are text: format
    numbers with :func:`format_number` first, and put the units and the direction
    ("lower is better") in the header.

    Parameters
    ----------
    header : list of str
        The column headings, one line each (Markdown and ``$...$`` allowed).
    rows : list of list of str
        The rows, each as long as ``header``.
    align : str, optional
        One letter per column, ``l``, ``c`` or ``r``; by default the first column
        left and the others right (numbers).
    caption : str, optional
        With a caption the table is numbered (a ``table`` directive).
    name : str, optional
        The table's label for ``{numref}``, only with ``caption``.

    Returns
    -------
    str
        The Markdown text.

    Examples
    --------
    >>> print(markdown_table(["$d$", "error (lower is better)"], [["10", "0.25"]]))
    | $d$ | error (lower is better) |
    |:--|--:|
    | 10 | 0.25 |
    """
    if isinstance(header, str) or not isinstance(header, (list, tuple)) or not header:
        raise TypeError(f"header must be a non-empty list of column headings, got {type(header).__name__}")
    heads = [_cell_text("header", h) for h in header]
    if isinstance(rows, str) or not isinstance(rows, (list, tuple)) or not rows:
        raise TypeError(f"rows must be a non-empty list of rows, got {type(rows).__name__}")
    body = []
    for row in rows:
        if isinstance(row, str) or not isinstance(row, (list, tuple)):
            raise TypeError(f"rows must hold lists of cells, got a {type(row).__name__}")
        if len(row) != len(heads):
            raise ValueError(f"rows must each have {len(heads)} cells (as header), got {len(row)}")
        body.append([_cell_text("rows", c) for c in row])
    if align is None:
        align = "l" + "r" * (len(heads) - 1)
    if not isinstance(align, str) or len(align) != len(heads) or set(align) - set("lcr"):
        raise ValueError(f"align must be one of l, c, r per column ({len(heads)} letters), got {align!r}"[:160])
    for key, value in (("caption", caption), ("name", name)):
        if value is not None and (not isinstance(value, str) or "\n" in value or not value.strip()):
            raise ValueError(f"{key} must be one line of text, got {value!r}"[:160])
    if name is not None and caption is None:
        raise ValueError("name needs a caption (a table without a caption has no number)")
    rule = {"l": ":--", "c": ":-:", "r": "--:"}
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(rule[a] for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    if caption is None:
        return "\n".join(lines)
    opening = [f":::{{table}} {caption}"] + ([f":name: {name}"] if name else []) + [""]
    return "\n".join(opening + lines + [":::"])
