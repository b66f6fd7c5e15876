"""The single letters of the book's mathematics, page by page (issue 33 item 5).

One meaning per symbol, book-wide, in the prose: this module finds every single
Latin or Greek letter written in the mathematics a reader sees, so that
``tests/test_notation.py`` can compare them with what notation/*.yml declares.

Where the maths is read:

* the markdown cells of every chapter (``$...$``, ``$$...$$``, ``{math}`` roles
  and directives), intro.md and study_map.md;
* the texts of errata/*.yml (``location``, ``says``, ``correction``), counted for
  the chapter each entry belongs to (its ``chapter``); ``says`` quotes the study
  and is read too: the book keeps the study's letters;
* figure captions (cell metadata) and the Markdown outputs of code cells (tables);
* the titles of folded cells (``code_prompt_show``/``code_prompt_hide``), which are
  plain text: there a Greek letter is a letter, and so is a Latin letter standing
  alone between non-letters ("t = 1", "k²"), apart from the words "a", "A", "I".

What is a letter: a Latin letter in maths outside a ``\\text``-like group (whose
content is words: ``\\mathrm{opt}``, ``\\operatorname{Err}``), a Greek letter
command (``\\alpha``, ``\\varepsilon``, ...) or a Unicode Greek letter, ``\\ell``.
``\\mathbb{E}``, ``\\mathcal{E}`` and the like are not single letters of the
alphabet (they are their own symbols). Letters are reported as written
(``\\varepsilon`` and ``\\epsilon`` are both ``ε``).

What the check cannot see (read these limits before trusting a green test):

* printed (stream) outputs of code cells, ``print(...)``: plain text with no maths
  markers, so "z = +0.38" or "K = 66" there is not read (only ``text/markdown``
  outputs are); a chapter writes a check's score in words or in Markdown;
* ``\\mathcal``, ``\\mathbb``, ``\\mathfrak``, ``\\mathscr`` letters: not letters of
  the alphabet here, so two meanings of ``\\mathcal E`` are not caught;
* the meaning itself: a use is accepted by letter and page, never by sense. A page
  listed in an entry's ``pages`` is covered wholesale (every use of the letter on
  that page passes, whatever it means there), and a ``bound`` or ``pending``
  declaration covers every use of the letter on its page, including a later use
  with another meaning; the reasons written there are for the reader, not checked;
* code (variable names), code comments, and pages other than the chapters,
  intro.md, study_map.md and errata/*.yml (notation.md, api.md, reproduce.md,
  docstrings shown by autodoc, references.bib).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "φ",
    "varphi": "ϕ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ",
}
# Unicode Greek written directly (in fold titles, sometimes in maths).
UNICODE_GREEK = set("αβγδεζηθϑικλμνξπρσςτυφϕχψωΓΔΘΛΞΠΣΥΦΨΩℓ")
# Groups whose content is words or a font of its own (not letters of the alphabet).
WORDS = ("text", "textrm", "textit", "textsf", "texttt", "textbf", "mathrm", "operatorname",
         "mbox", "label", "tag", "begin", "end", "mathsf", "mathtt", "href", "url")
FONTS = ("mathbb", "mathcal", "mathfrak", "mathscr")
# A Latin letter that is a word in a fold title, not a symbol.
TITLE_WORDS = {"a", "A", "I"}


@dataclass(frozen=True)
class Use:
    letter: str  # "t", "β", ...
    page: str  # "chapters/bernstein", "intro", "study_map"
    place: str  # "cell c012", "fold c019", "erratum err-bern-L"
    math: str  # the formula (or title) it stands in


def _group(text: str, start: int) -> int:
    """The index after the brace group that opens at text[start] == '{'."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def math_letters(tex: str) -> list[str]:
    """The single letters of one LaTeX formula, in order, with repeats."""
    out: list[str] = []
    i = 0
    n = len(tex)
    while i < n:
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+)\*?", tex[i:])
            if not m:
                i += 2  # \, \; \{ \\ ...
                continue
            name = m.group(1)
            i += m.end()
            if name in GREEK:
                out.append(GREEK[name])
            elif name in WORDS or name in FONTS:
                while i < n and tex[i] == " ":
                    i += 1
                if i < n and tex[i] == "{":
                    i = _group(tex, i)
                elif i < n and tex[i].isalpha():
                    i += 1  # \mathcal E, \mathrm K
            continue
        if c == "{" and tex.startswith("{glue", i):  # {glue}`key` inside maths
            j = tex.find("`", tex.find("`", i) + 1)
            i = j + 1 if j > 0 else n
            continue
        if c.isascii() and c.isalpha():
            out.append(c)
        elif c in UNICODE_GREEK:
            out.append(c)
        i += 1
    return out


_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$]+?)(?<!\\)\$")
_ROLE = re.compile(r"\{math\}`([^`]+)`")
_FENCE = re.compile(r"^(`{3,}|:{3,})\{(math|prf:[a-z]+|admonition|note|[a-z-]+)\}([^\n]*)\n(.*?)^\1\s*$",
                    re.S | re.M)
_CODE = re.compile(r"^(`{3,})(?!\{)[^\n]*\n.*?^\1\s*$", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def markdown_formulas(text: str) -> list[str]:
    """Every formula of a MyST markdown text: displays, inline maths, {math} roles
    and directives; code blocks and inline code are skipped."""
    formulas: list[str] = []

    def fence(m: re.Match) -> str:
        if m.group(2) == "math":
            body = "\n".join(line for line in m.group(4).splitlines() if not line.startswith(":"))
            formulas.append(body)
            return ""
        if m.group(2) in ("code", "code-block", "code-cell", "raw", "literalinclude"):
            return ""
        return m.group(3) + "\n" + m.group(4)  # other directives: their title and body are prose

    # directives may nest (a proof holding a math block): unwrap until stable
    for _ in range(6):
        new = _FENCE.sub(fence, text)
        if new == text:
            break
        text = new
    text = _CODE.sub("", text)
    text = _ROLE.sub(lambda m: formulas.append(m.group(1)) or "", text)
    text = _DISPLAY.sub(lambda m: formulas.append(m.group(1)) or "", text)
    # glue references inside inline maths carry backticks: keep them, drop other code
    text = re.sub(r"(\{glue(?::[a-z]+)?\}`[^`]*`)", lambda m: m.group(1).replace("`", "\x00"), text)
    text = _INLINE_CODE.sub("", text).replace("\x00", "`")
    text = _INLINE.sub(lambda m: formulas.append(m.group(1)) or "", text)
    return formulas


def title_letters(title: str) -> list[str]:
    """The letters of a fold title (plain text with Unicode maths)."""
    out = [c for c in title if c in UNICODE_GREEK]
    for m in re.finditer(r"(?<![A-Za-z0-9_'’.\-])([A-Za-z])(?![A-Za-z'’\-]|\.[A-Za-z])", title):
        if m.group(1) == "E" and title[m.end():m.end() + 1] in "[|":
            continue  # the expectation operator, E[...] or E|...|
        if m.group(1) not in TITLE_WORDS:
            out.append(m.group(1))
    return out


def _squash(tex: str) -> str:
    """A formula without spaces and without braces around one character after _ or ^."""
    tex = re.sub(r"\s+", "", tex)
    return re.sub(r"([_^])\{(\\?[A-Za-z]+|.)\}", r"\1\2", tex)


# Registered symbols of more than one letter ('C_t', 't_{\max}', 'D_\zeta'): their
# further letters are part of the symbol, not uses of those letters (set by
# book_uses from notation/*.yml).
COMPOUNDS: list[tuple[str, list[str]]] = []


def _absorbed(tex: str) -> list[str]:
    flat = _squash(tex)
    out: list[str] = []
    for name, extra in COMPOUNDS:
        out += extra * flat.count(name)
    return out


def _uses(letters: list[str], page: str, place: str, math: str) -> list[Use]:
    left = list(letters)
    if COMPOUNDS and "\n" not in place:
        for x in _absorbed(math):
            if x in left:
                left.remove(x)
    return [Use(x, page, place, math) for x in dict.fromkeys(left)]


def set_compounds(symbols: list[str]) -> None:
    """Register the multi-letter symbols of notation/*.yml (see COMPOUNDS)."""
    COMPOUNDS.clear()
    for symbol in symbols:
        for part in re.split(r",\s*(?![^{(]*[})])", symbol):
            part = part.strip()
            if part in (r"\dots", ""):
                continue
            found = math_letters(part)
            heads = head_letters(part)
            extra = list(found)
            for h in heads[:1]:
                if h in extra:
                    extra.remove(h)
            if extra:
                COMPOUNDS.append((_squash(part), extra))


def notebook_uses(path: Path, root: Path) -> list[Use]:
    page = str(path.relative_to(root).with_suffix(""))
    nb = json.loads(path.read_text())
    out: list[Use] = []
    for cell in nb["cells"]:
        cid = cell.get("id", "?")
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for tex in markdown_formulas(source):
                out += _uses(math_letters(tex), page, f"cell {cid}", tex)
        meta = cell.get("metadata", {}).get("mystnb", {})
        for key in ("code_prompt_show", "code_prompt_hide"):
            if key in meta:
                out += _uses(title_letters(meta[key]), page, f"fold {cid}", meta[key])
        caption = meta.get("figure", {}).get("caption", "")
        for tex in markdown_formulas(caption):
            out += _uses(math_letters(tex), page, f"caption {cid}", tex)
        for output in cell.get("outputs", []):  # tables and text shown as Markdown
            text = output.get("data", {}).get("text/markdown", "")
            text = "".join(text) if isinstance(text, list) else text
            for tex in markdown_formulas(text):
                out += _uses(math_letters(tex), page, f"output {cid}", tex)
    return out


def markdown_uses(path: Path, root: Path) -> list[Use]:
    page = str(path.relative_to(root).with_suffix(""))
    return [u for tex in markdown_formulas(path.read_text())
            for u in _uses(math_letters(tex), page, "text", tex)]


def errata_uses(path: Path, root: Path) -> list[Use]:
    out: list[Use] = []
    for entry in yaml.safe_load(path.read_text()) or []:
        page = str(Path(entry["chapter"]).with_suffix(""))
        for field in ("location", "says", "correction"):
            for tex in markdown_formulas(str(entry.get(field, ""))):
                out += _uses(math_letters(tex), page, f"erratum {entry['label']} ({field})", tex)
    return out


def book_uses(root: Path) -> list[Use]:
    """Every letter use of the book (chapters, intro, study map, errata)."""
    out: list[Use] = []
    for path in sorted((root / "chapters").glob("*.ipynb")):
        out += notebook_uses(path, root)
    for name in ("intro.md", "study_map.md"):
        if (root / name).exists():
            out += markdown_uses(root / name, root)
    for path in sorted((root / "errata").glob("*.yml")):
        out += errata_uses(path, root)
    return out


# ---------------------------------------------------------------- the registry

def head_letters(symbol: str) -> list[str]:
    """The letters a notation entry gives a meaning to: the first letter of each
    comma-separated part (``'b^*, \\lambda^*'`` -> b, λ; ``'(\\varepsilon, \\delta)'``
    -> ε, δ; ``'\\sigma_{\\mathrm{opt}}'`` -> σ; ``'\\mathcal E_t'`` -> none)."""
    text = symbol.strip()
    if text[:1] + text[-1:] in ("()", "[]"):
        text = text[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "({[" 
        depth -= ch in ")}]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        if part.strip() in (r"\dots", r"\ldots", "..."):
            continue
        if re.match(r"\s*\\(%s)\b" % "|".join(WORDS + FONTS), part):
            continue  # \mathcal E_t, \operatorname{Err}: no letter of the alphabet heads it
        found = math_letters(part)
        if found and found[0] not in out:
            out.append(found[0])
    return out


def page_name(page: str) -> str:
    """'chapters/bernstein' -> 'bernstein' (the name notation/*.yml files use)."""
    return Path(page).name


@dataclass
class Registry:
    owners: dict[str, list[str]]  # letter -> the notation entries (sources) that give its meaning
    pages: dict[str, set[str]]  # letter -> the pages whose maths may use it
    bound: dict[str, dict[str, str]]  # page -> letter -> why it is bound there
    pending: dict[str, dict[str, str]]  # page -> letter -> its second meaning, to rename


def registry(root: Path) -> Registry:
    """The letters notation/*.yml gives meanings to, and where each may appear."""
    import sys
    sys.path.insert(0, str(Path(root) / "_ext"))
    import notation

    owners: dict[str, list[str]] = {}
    pages: dict[str, set[str]] = {}
    for page in notation.load(Path(root)):
        for entry in page.symbols:
            for letter in head_letters(entry.name):
                owners.setdefault(letter, []).append(f"{entry.source} ({entry.name})")
                pages.setdefault(letter, set()).update({page_name(page.docname), *entry.pages})
    bound: dict[str, dict[str, str]] = {}
    pending: dict[str, dict[str, str]] = {}
    for path in sorted((Path(root) / "notation").glob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        for key, store in (("bound", bound), ("pending", pending)):
            for letter, why in (data.get(key) or {}).items():
                store.setdefault(path.stem, {})[_letter(letter)] = why
    return Registry(owners, pages, bound, pending)


def _letter(name: str) -> str:
    """A letter as notation/*.yml writes it ('t', '\\beta' or 'β') -> 'β'."""
    name = name.strip()
    if name.startswith("\\"):
        return GREEK.get(name[1:], name)
    return name


def problems(uses: list[Use], reg: Registry) -> list[str]:
    """Every letter use that notation/*.yml does not allow, as readable lines."""
    out: dict[tuple[str, str], list[str]] = {}
    for use in uses:
        page = page_name(use.page)
        if use.letter in reg.bound.get(page, {}) or use.letter in reg.pending.get(page, {}):
            continue
        if page in reg.pages.get(use.letter, set()):
            continue
        out.setdefault((use.letter, page), []).append(use.place)
    lines = []
    for (letter, page), places in sorted(out.items()):
        if letter in reg.owners:
            why = (f"'{letter}' means what {reg.owners[letter][0]} says; {page} is not among its pages "
                   f"{sorted(reg.pages[letter])} (a second meaning? rename it, or add the page)")
        else:
            why = f"'{letter}' has no meaning in notation/*.yml and is not declared bound in {page}"
        lines.append(f"{why}: {', '.join(sorted(set(places))[:4])}")
    return lines


def compound_symbols(root: Path) -> list[str]:
    import sys
    sys.path.insert(0, str(Path(root) / "_ext"))
    import notation
    return [e.name for page in notation.load(Path(root)) for e in page.symbols]


def check(root: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """The problems of the whole book (pages named in ``skip`` left out)."""
    set_compounds(compound_symbols(root))
    uses = [u for u in book_uses(Path(root)) if page_name(u.page) not in skip]
    return problems(uses, registry(Path(root)))
