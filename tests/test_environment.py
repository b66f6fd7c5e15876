"""The book's environment: requirements/book.in, the lock, environment.yml, .venv.

* requirements/book.lock pins every package of requirements/book.in exactly as
  book.in does, with hashes, one version per package for each supported Python;
* environment.yml (conda / Binder) lists book.in's packages at the same versions;
* the Colab extra and egmlib's ranges (pyproject.toml) agree with the lock;
* the environment these tests run in is the lock, no more and no less, for the
  running Python (`make` installs it; an old .venv says `rm -rf .venv; make venv`).
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "book.lock"
BOOK_IN = ROOT / "requirements" / "book.in"
CONDA_ONLY = {"python", "pip", "chi2comb"}
#: installed but not locked: pip itself, and egmlib (installed from the tree)
NOT_LOCKED = {"pip", "egmlib"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock() -> list[tuple[str, str, str | None, int]]:
    """``(name, version, marker or None, number of hashes)`` for every entry of the lock."""
    entries, current = [], None
    for line in LOCK.read_text().splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^ ;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", line)
        if match:
            current = [_norm(match[1]), match[2], match[3], 0]
            entries.append(current)
        elif line.strip().startswith("--hash=sha256:") and current is not None:
            current[3] += 1
        elif line and not line.startswith((" ", "#")):
            raise AssertionError(f"unexpected line in the lock: {line!r}")
    return [tuple(e) for e in entries]


def _env(python: str) -> dict[str, str]:
    """Marker environment of CPython ``python`` (e.g. "3.12") on this platform."""
    from packaging.markers import default_environment

    env = default_environment()
    env.update(python_version=python, python_full_version=f"{python}.5", implementation_name="cpython",
               platform_python_implementation="CPython")
    return env


def _locked_for(env: dict[str, str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for name, version, marker, _ in _lock():
        if marker is None or Marker(marker).evaluate(env):
            assert name not in pins, f"{name} is locked twice for {env['python_version']}"
            pins[name] = version
    return pins


def _book_in() -> dict[str, str]:
    pins = {}
    for line in BOOK_IN.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"book.in: {line} is not pinned exactly"
            pins[_norm(name)] = version
    return pins


def _environment_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for spec in dep["pip"]:
                if spec.startswith("-e"):
                    continue
                name, sep, version = spec.partition("==")
                assert sep, f"pip entry {spec} is not pinned exactly"
                pins[_norm(name)] = version
        else:
            name, _, version = dep.partition("=")
            if _norm(name) not in CONDA_ONLY:
                assert version, f"conda entry {dep} is not pinned"
                pins[_norm(name)] = version
    return pins


SUPPORTED = ["3.11", "3.12", "3.13"]


def test_supported_pythons_are_requires_python():
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert spec == f">={SUPPORTED[0]},<3.{int(SUPPORTED[-1][2:]) + 1}"


def test_lock_is_made_by_make_lock_with_hashes():
    assert "make lock" in LOCK.read_text().splitlines()[1]
    entries = _lock()
    assert len(entries) > 100
    assert all(hashes > 0 for *_, hashes in entries)


@pytest.mark.parametrize("python", SUPPORTED)
def test_lock_holds_book_in_exactly_for_every_python(python):
    locked = _locked_for(_env(python))
    for name, version in _book_in().items():
        assert locked.get(name) == version, f"{name}: book.in {version}, lock {locked.get(name)} ({python})"


def test_environment_yml_is_book_in_and_the_lock():
    assert _environment_pins() == _book_in()
    locked = _locked_for(_env(SUPPORTED[0]))  # Binder's Python: environment.yml says 3.11
    assert all(locked[name] == version for name, version in _environment_pins().items())


def test_environment_has_conda_only_extras():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    names = {d.partition("=")[0] for d in env["dependencies"] if isinstance(d, str)}
    assert {"python", "chi2comb"} <= names
    assert "conda-forge" in env["channels"]


def test_colab_extra_and_egmlib_ranges_agree_with_the_lock():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for python in SUPPORTED:
        locked = _locked_for(_env(python))
        for spec in project["optional-dependencies"]["colab"]:
            name, _, version = spec.partition("==")
            assert locked[_norm(name)] == version, spec
        # the book's numpy, scipy and sympy are within egmlib's own ranges
        for spec in project["dependencies"] + project["optional-dependencies"]["symbolic"]:
            req = Requirement(spec)
            assert Version(locked[_norm(req.name)]) in req.specifier, (spec, python)


def test_installed_environment_is_the_lock():
    python = "%d.%d" % sys.version_info[:2]
    locked = _locked_for(_env(python) | {"python_full_version": ".".join(map(str, sys.version_info[:3]))})
    installed = {_norm(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    wrong = {name: (locked[name], installed.get(name)) for name in locked if installed.get(name) != locked[name]}
    assert not wrong, f"installed != lock (lock, installed): {wrong}; `rm -rf {sys.prefix}` and `make venv`"
    extra = set(installed) - set(locked) - NOT_LOCKED
    assert not extra, f"installed but not in the lock: {sorted(extra)}; `rm -rf {sys.prefix}` and `make venv`"


STARTUP = ROOT / "tests" / "startup"
IRIS = ["http://example.org/a?b#c", "urn:isbn:0451450523", "http://[bad", "a b", "http://ex.org/é", "//no-scheme"]


def test_make_test_defers_the_iri_grammar_and_checks_the_same():
    """tests/startup/sitecustomize.py (on PYTHONPATH in `make test`, the Makefile):
    importing jsonschema no longer builds rfc3987_syntax's grammar (Lark not
    imported), and jsonschema's "iri" and "iri-reference" checks, which then load
    the real module, give the real module's verdicts."""
    import os
    import subprocess

    assert f"PYTHONPATH={STARTUP.relative_to(ROOT)}" in (ROOT / "Makefile").read_text().replace(
        "$(abspath tests/startup)", "tests/startup")
    script = f"""
import sys, jsonschema
assert "lark" not in sys.modules and sys.modules["rfc3987_syntax"].__egm_deferred__
checker = jsonschema.FormatChecker()
seen = [[checker.conforms(iri, form) for form in ("iri", "iri-reference")] for iri in {IRIS!r}]
real = sys.modules["rfc3987_syntax"]
assert "lark" in sys.modules and not getattr(real, "__egm_deferred__", False)
assert seen == [[real.is_valid_syntax(rule, iri) for rule in ("iri", "iri_reference")] for iri in {IRIS!r}]
print(seen)
"""
    env = dict(os.environ, PYTHONPATH=str(STARTUP))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # a good IRI passes and a bad one fails, so the check is not vacuous
    assert proc.stdout.strip() == str([[True, True], [True, True], [False, False], [False, False],
                                       [True, True], [False, True]]), proc.stdout
