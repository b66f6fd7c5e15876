"""One way to build the book for the tests: from the stored outputs (execution off),
with warnings as errors, into a temporary folder; and to compile its LaTeX source
into the PDF as `make pdf` does.  tests/conftest.py does each once per run."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def build_book(out: Path, builder: str | None = None) -> Path:
    """Build the book into ``out`` (``builder`` e.g. "latex"; default HTML) and
    return ``out / "_build"``; fails the test with the build's log if it fails."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    cfg = out / "_config.yml"
    cfg.write_text(yaml.safe_dump(config))
    # local_extensions resolve beside the config; a second build in the same
    # folder (another builder, sharing the doctrees) finds them there already
    shutil.copytree(ROOT / "_ext", out / "_ext", dirs_exist_ok=True)
    cmd = [str(BIN / "jupyter-book"), "build", str(ROOT), "--path-output", str(out),
           "--config", str(cfg), "-W", "-n", "--keep-going"]
    if builder:
        cmd[3:3] = ["--builder", builder]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out / "_build"


_DOC_LABEL = re.compile(r"\\label\{\\detokenize\{([^}:]+)::doc\}\}")


def pdf_tools():
    """scripts/pdf_tools.py as a module."""
    spec = importlib.util.spec_from_file_location("pdf_tools", ROOT / "scripts" / "pdf_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_pdf(latex: Path) -> Path:
    """Compile Sphinx's LaTeX source in ``latex`` (Sphinx's Makefile, pdflatex) and
    check the log as `make pdf` does; skips the test where LaTeX is not installed,
    fails it naming the chapter of the first LaTeX errors."""
    import pytest

    tools = pdf_tools()
    if shutil.which("make") is None or tools.missing():
        pytest.skip("LaTeX is not installed (scripts/pdf_tools.py needs): the PDF is not compiled")
    proc = subprocess.run(["make", "-C", str(latex), "all-pdf"], capture_output=True, text=True,
                          errors="replace", timeout=1800)
    log = latex / "egm-book.log"
    text = log.read_text(encoding="latin-1") if log.is_file() else ""
    errors = re.findall(r"^! .*(?:\n.*){0,3}", text, re.M)
    # name the document each error comes from (the last chapter label before its line)
    lines = (latex / "egm-book.tex").read_text(encoding="utf-8").splitlines()
    where = []
    for number in re.findall(r"^l\.(\d+) ", text, re.M)[:3]:
        docs = _DOC_LABEL.findall("\n".join(lines[:int(number)]))
        where.append(f"line {number} of egm-book.tex is in {docs[-1] if docs else 'the preface'}")
    where = list(dict.fromkeys(where))
    assert proc.returncode == 0, "pdflatex failed:\n" + "\n".join(where + errors[:4]) + "\n" + proc.stdout[-800:]
    assert tools.check(log) == 0
    return latex
