"""egmlib as a library in a reader's own code: what it declares, what it needs.

These tests need egmlib, numpy, scipy and sympy only, so that
`make library-check` (scripts/library_check.py) runs them against the built
wheel too, at the lowest and the newest versions pyproject.toml allows.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
README_SECTION = "## Use egmlib in your own code"


def _name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[@]", spec, maxsplit=1)[0].lower()


def _third_party_imports() -> dict[str, set[str]]:
    """``{module file: top-level packages it imports}``, the standard library left out."""
    out = {}
    for path in sorted((ROOT / "egmlib").glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        out[path.name] = {n for n in names if n not in sys.stdlib_module_names and n not in ("egmlib", "__future__")}
    return out


def test_dependencies_are_what_the_library_imports():
    imports = _third_party_imports()
    everywhere = set().union(*imports.values())
    assert everywhere == {"numpy", "scipy", "sympy", "IPython"}, everywhere
    # IPython only for report.glue (the book's glue, in a kernel), imported inside it:
    # a module-level import would make `import egmlib` need the book's environment
    assert [name for name, mods in imports.items() if "IPython" in mods] == ["report.py"]
    top = ast.parse((ROOT / "egmlib" / "report.py").read_text()).body
    assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) and "IPython" in ast.dump(n) for n in top)
    assert [name for name, mods in imports.items() if "sympy" in mods] == ["symbolic.py"]
    assert {_name(s) for s in PROJECT["dependencies"]} == {"numpy", "scipy"}
    assert {_name(s) for s in PROJECT["optional-dependencies"]["symbolic"]} == {"sympy"}


def test_dependencies_are_ranges_up_to_the_next_major_version():
    """From a tested floor up to the next major version after the book's (its lock's)."""
    lock = (ROOT / "requirements" / "book.lock").read_text()
    for spec in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["symbolic"]:
        match = re.fullmatch(r"([a-z]+)>=(\d+)\.(\d+)(?:\.\d+)?,<(\d+)", spec)
        assert match, f"{spec}: want name>=X.Y[.Z],<N"
        locked = re.search(rf"^{match[1]}==(\d+)\.", lock, flags=re.M)
        assert locked and int(match[4]) == int(locked[1]) + 1, spec


def test_symbolic_without_sympy_names_the_extra():
    """A reader without SymPy: egmlib imports; egmlib.symbolic says what to install."""
    code = (
        "import sys; sys.modules['sympy'] = None\n"
        "import egmlib\n"
        "from egmlib import *\n"
        "assert callable(gaussian_data_mechanism)\n"
        "for how in ('import egmlib.symbolic', 'egmlib.symbolic'):\n"
        "    try:\n"
        "        exec(how)\n"
        "    except ImportError as error:\n"
        "        print(error)\n"
        "    else:\n"
        "        raise SystemExit(how + ' worked without sympy')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT / "tests")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert 'pip install "sympy>=1.13"' in line and "SymPy" in line


def test_symbolic_is_there_with_sympy():
    import egmlib

    assert egmlib.symbolic.symbols(2).sigma_eps_delta.is_positive
    assert "symbolic" not in egmlib.__all__  # `from egmlib import *` needs no SymPy


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    assert README_SECTION in text
    section = text.split(README_SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section has one python example"
    return blocks[0]


def test_readme_example_runs():
    code = _readme_example()
    assert len(code.strip().splitlines()) <= 6
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().split()
    assert len(printed) == 4  # the private sum and the noise's standard deviations, 2 coordinates each
    assert all(float(x.strip("[]")) == float(x.strip("[]")) for x in printed)
