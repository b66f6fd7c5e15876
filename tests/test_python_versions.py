"""Which Pythons the book takes, and what make and .ci/run do with the others.

The Makefile and .ci/run are run for real, in a scratch copy of the files they
read (Makefile, pyproject.toml, requirements/book.lock, scripts/python_version.py), with fake or
real interpreters: `make -n` and `MAKE=echo` show what would run, without
creating any environment.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import python_version  # noqa: E402

SUPPORTED = python_version.supported_range()


def test_range_is_requires_python():
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    lo, hi = SUPPORTED
    assert spec == f">=3.{lo},<3.{hi + 1}"
    assert lo == 11
    assert sys.version_info[:2] >= (3, lo) and sys.version_info[:2] <= (3, hi)  # this run is on one of them


@pytest.mark.parametrize("version, verdict", [
    ((3, 10, 13), "older than 3.11"), ((3, 6, 15), "older than 3.11"), ((2, 7, 18), "older than 3.11"),
    ((3, 14, 0), "newer than 3.13"), ((3, 11, 0), "3.11"), ((3, 13, 9), "3.13"), ((3, 12, 1), "3.12")])
def test_verdict(version, verdict):
    line = python_version.verdict("python3", version, SUPPORTED)
    assert verdict in line
    assert line.startswith("error:") == ("older" in verdict or "newer" in verdict)
    assert "\n" not in line


def _scratch(tmp: Path) -> Path:
    (tmp / "scripts").mkdir(parents=True)
    (tmp / "requirements").mkdir()
    (tmp / "_ext" / "mathjax").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "requirements/book.lock", "scripts/python_version.py",
                 "_ext/mathjax/package.json", "_ext/mathjax/package-lock.json"):
        shutil.copy(ROOT / name, tmp / name)
    return tmp


def _fake_python(tmp: Path, version: tuple[int, int, int]) -> Path:
    """The real interpreter, told it is ``version`` (sys.version_info replaced before the script runs)."""
    fake = tmp / f"python{version[0]}.{version[1]}"
    fake.write_text(
        "#!/bin/sh\n"
        f"exec {sys.executable} -c 'import runpy, sys; sys.version_info = {version!r}; "
        "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name=\"__main__\")' \"$@\"\n")
    fake.chmod(0o755)
    return fake


def _make(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """make in ``cwd``, free of the variables of a `make test` this may run under (MAKEFLAGS)."""
    env = {k: v for k, v in (os.environ if env is None else env).items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHON", "VENV", "JOBS", "PYTEST_ARGS")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def _old_pythons() -> list[str]:
    """Real Pythons older than 3.11 on this machine (pyenv's, or python3.X on PATH)."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    found += [p for v in range(6, 11) if (p := shutil.which(f"python3.{v}"))]
    out = []
    for path in found:
        proc = subprocess.run([path, "-c", "import sys; print(sys.version_info[1])"], capture_output=True, text=True)
        if proc.returncode == 0 and int(proc.stdout) < 11:
            out.append(path)
    return out[:2]


@pytest.mark.parametrize("kind", ["fake 3.10", "fake 3.14", "missing"] + [f"real {p}" for p in _old_pythons()])
def test_unsupported_python_stops_make_in_one_line(tmp_path, kind):
    scratch = _scratch(tmp_path / "repo")
    if kind == "missing":
        python = str(tmp_path / "no-such-python3")
    elif kind.startswith("fake"):
        python = str(_fake_python(tmp_path, (3, int(kind[-2:]), 0)))
    else:
        python = kind.split(" ", 1)[1]
    proc = _make(scratch, "test", f"PYTHON={python}")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and proc.stdout == "", proc.stdout + proc.stderr
    assert "3.11" in lines[0] and "PYTHON=" in lines[0], lines[0]
    assert re.search(r"older than 3\.11|newer than 3\.13|does not run", lines[0])
    assert not list(scratch.glob(".venv*")), "make created an environment"
    assert _make(scratch, "help", f"PYTHON={python}").returncode == 0  # help needs no Python


def test_each_python_has_its_own_environment(tmp_path):
    scratch = _scratch(tmp_path / "repo")
    version = "3.%d" % sys.version_info[1]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    env.pop("PYTHON", None)
    default = _make(scratch, "-n", "venv", env=env)
    assert default.returncode == 0, default.stderr
    assert "python3 -m venv .venv\n" in default.stdout  # the README's default: .venv
    chosen = _make(scratch, "-n", "venv", f"PYTHON={sys.executable}", env=env)
    assert f"-m venv .venv-{version}\n" in chosen.stdout
    assert f".venv-{version}/.installed-{version}-" in chosen.stdout


def test_ci_run_takes_oldest_and_newest_and_skips_what_is_missing(tmp_path):
    """A fake PATH and pyenv: 3.11 on PATH; 3.13 in pyenv (two patch releases); or one of
    them; or nothing.  The first one found runs `make test`, the other `make test-python`."""
    repo = _scratch(tmp_path / "repo")
    (repo / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    path_bin, pyenv = tmp_path / "bin", tmp_path / "pyenv"
    path_bin.mkdir()
    for name in ("sed", "sort", "uniq", "ls", "printf", "dirname"):  # what .ci/run uses, nothing else
        if shutil.which(name):
            (path_bin / name).symlink_to(shutil.which(name))
    _fake_version_reporter(path_bin / "python3.11", "3.11")
    for patch in ("3.13.0", "3.13.2"):
        (pyenv / "versions" / patch / "bin").mkdir(parents=True)
        _fake_version_reporter(pyenv / "versions" / patch / "bin" / "python3.13", "3.13")
    _fake_version_reporter(path_bin / "python3.12", "3.12")
    env = {"PATH": str(path_bin), "PYENV_ROOT": str(pyenv), "MAKE": "echo", "HOME": str(tmp_path)}  # nothing inherited
    run = subprocess.run([shutil.which("bash"), str(repo / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    # the whole `make test` once, with the oldest; the newest runs what depends on the Python
    assert f"\ntest PYTHON={path_bin}/python3.11\n" in run.stdout
    assert f"\ntest-python PYTHON={pyenv}/versions/3.13.2/bin/python3.13\n" in run.stdout
    assert "test PYTHON=" not in run.stdout.replace(f"test PYTHON={path_bin}/python3.11", "", 1)
    assert "3.12" not in run.stdout  # neither oldest nor newest
    lines = run.stdout.strip().splitlines()
    assert re.fullmatch(r"\.ci/run: \d+ s in all, exit status 0", lines[-1])  # CI's time in the log
    assert lines[-2] == f"mutants PYTHON={path_bin}/python3.11"  # once, oldest, last
    # 3.11 missing: the newest runs the whole `make test`
    (path_bin / "python3.11").rename(tmp_path / "python3.11")
    run = subprocess.run([shutil.which("bash"), str(repo / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert run.returncode == 0
    assert "Python 3.11 not found" in run.stdout and "test-python" not in run.stdout
    assert f"\ntest PYTHON={pyenv}/versions/3.13.2/bin/python3.13\n" in run.stdout
    (tmp_path / "python3.11").rename(path_bin / "python3.11")
    # 3.13 missing: a line, and on
    shutil.rmtree(pyenv)
    run = subprocess.run([shutil.which("bash"), str(repo / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert run.returncode == 0
    assert "Python 3.13 not found" in run.stdout and f"\ntest PYTHON={path_bin}/python3.11\n" in run.stdout
    # nothing found: the default python3
    (path_bin / "python3.11").unlink()
    run = subprocess.run([shutil.which("bash"), str(repo / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert run.returncode == 0
    assert run.stdout.strip().splitlines()[-3:-1] == [".ci/run: make mutants", "mutants"]


def _fake_version_reporter(path: Path, version: str) -> None:
    """An executable that answers .ci/run's version question like Python ``version`` would."""
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)


def test_a_bare_name_that_does_not_run_is_found_among_pyenv_versions(tmp_path):
    """`make test PYTHON=python3.13` where python3.13 is pyenv's shim for an inactive version."""
    scratch = _scratch(tmp_path / "repo")
    pyenv = tmp_path / "pyenv"
    for patch in ("3.13.0", "3.13.2"):
        bindir = pyenv / "versions" / patch / "bin"
        bindir.mkdir(parents=True)
        shim = _fake_python(bindir, (3, 13, int(patch[-1])))
        assert shim.name == "python3.13"
    env = dict(os.environ, PYENV_ROOT=str(pyenv), PATH="/usr/bin:/bin")  # python3.13 not on PATH
    run = _make(scratch, "-n", "venv", "PYTHON=python3.13", env=env)
    assert run.returncode == 0, run.stderr
    assert f"{pyenv}/versions/3.13.2/bin/python3.13 -m venv .venv-3.13\n" in run.stdout
    missing = _make(scratch, "-n", "venv", "PYTHON=python3.12", env=env)  # in no pyenv version
    assert missing.returncode != 0 and "does not run" in missing.stderr


def test_test_python_leaves_out_only_the_book_tests(tmp_path):
    """`make test-python` is `make test`'s pytest with ``-m "not book"``, nothing else."""
    scratch = _scratch(tmp_path / "repo")
    shutil.copy(ROOT / "scripts" / "cffconvert-requirements.txt", scratch / "scripts")
    venv = tmp_path / "venv"
    full = _make(scratch, "-n", "test", f"VENV={venv}", f"PYTHON={sys.executable}")
    python = _make(scratch, "-n", "test-python", f"VENV={venv}", f"PYTHON={sys.executable}")
    assert full.returncode == 0 and python.returncode == 0, full.stderr + python.stderr
    pytest_line = [line for line in full.stdout.splitlines() if " -m pytest " in line]
    assert len(pytest_line) == 1 and "--durations=" in pytest_line[0]
    assert pytest_line[0] + ' -m "not book"' in python.stdout.splitlines()
