"""egmlib as a library, tested from both ends (`make library-check`).

1. Builds the sdist and, from it, the wheel (``python -m build``, pinned below).
2. For each of two modes, in a fresh virtual environment of this Python:

   * ``lowest``: numpy, scipy and sympy at the lowest versions that
     pyproject.toml allows (the ``>=`` bound of each range), installed first;
   * ``newest``: the newest versions pip finds within the ranges;

   with pytest and hypothesis at the versions of requirements/book.lock (so
   that only the library's own packages differ from the book).  The wheel is
   then installed *with* its dependencies (``egmlib[symbolic]``): the check
   fails if that installs, removes or changes anything but egmlib -- pip
   leaves compatible numpy and scipy as it found them.  Then egmlib's unit
   tests (tests/test_<module>.py of the library modules, test_bad_input.py,
   test_library.py) and its doctests run against the installed wheel, from a
   scratch folder, so that the source tree cannot stand in for it.

The lowest versions have wheels for the oldest supported Python only (3.11):
on another Python, the ``lowest`` mode is skipped with a line saying so
(.ci/run calls this with the oldest Python it finds).

Usage: python scripts/library_check.py [--keep] [--mode lowest|newest]...
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "book.lock"
BUILD_PIN = "build==1.6.1"
#: the test tools, at the lock's versions
TEST_TOOLS = ("pytest", "hypothesis")
#: tests of the library that need neither the book nor its packages
EXTRA_TESTS = ("test_bad_input.py", "test_library.py", "test_privacy_rounding.py", "test_structure.py")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def library_requirements() -> list[str]:
    """[project] dependencies and the ``symbolic`` extra, as written."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["symbolic"])


def lowest(requirements: list[str]) -> list[str]:
    """``name==floor`` for every ``name>=floor,...`` requirement."""
    out = []
    for spec in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(,.*)?", spec.strip())
        if not match:
            raise SystemExit(f"library_check: {spec!r} has no lower bound (name>=X.Y,<Z)")
        out.append(f"{match[1]}=={match[2]}")
    return out


def lock_pins(names: tuple[str, ...]) -> list[str]:
    """``name==version`` of ``names`` in requirements/book.lock."""
    found = {}
    for line in LOCK.read_text().splitlines():
        match = re.match(r"([A-Za-z0-9_.-]+)==([^ ;\\]+)", line)
        if match and _norm(match[1]) in names:
            found[_norm(match[1])] = f"{match[1]}=={match[2]}"
    missing = set(names) - set(found)
    if missing:
        raise SystemExit(f"library_check: {sorted(missing)} not in {LOCK}")
    return [found[name] for name in names]


def library_tests() -> list[Path]:
    """tests/test_<module>.py of every egmlib module, and the library-only extras."""
    names = [f"test_{path.stem.lstrip('_')}.py" for path in sorted((ROOT / "egmlib").glob("*.py"))
             if path.stem != "__init__"]
    paths = [ROOT / "tests" / name for name in [*names, *EXTRA_TESTS]]
    return [path for path in paths if path.exists()]


def run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    print("  $", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def installed(python: Path) -> dict[str, str]:
    out = subprocess.run([python, "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                         text=True).stdout
    return {_norm(d["name"]): d["version"] for d in json.loads(out)}


def build(work: Path) -> tuple[Path, Path]:
    env_dir = work / "build-env"
    run([sys.executable, "-m", "venv", env_dir])
    run([env_dir / "bin" / "python", "-m", "pip", "install", "--quiet", BUILD_PIN])
    dist = work / "dist"
    # sdist first, then the wheel built from the unpacked sdist: a file the
    # sdist forgets fails here
    run([env_dir / "bin" / "python", "-m", "build", "--outdir", dist, ROOT], stdout=subprocess.DEVNULL)
    (wheel,) = dist.glob("egmlib-*.whl")
    (sdist,) = dist.glob("egmlib-*.tar.gz")
    return wheel, sdist


def check_mode(mode: str, work: Path, wheel: Path) -> None:
    env_dir = work / f"env-{mode}"
    python = env_dir / "bin" / "python"
    run([sys.executable, "-m", "venv", env_dir])
    reqs = library_requirements()
    deps = lowest(reqs) if mode == "lowest" else reqs
    run([python, "-m", "pip", "install", "--quiet", "--only-binary=:all:", *deps, *lock_pins(TEST_TOOLS)])
    before = installed(python)
    # the wheel with its dependencies, into an environment that has them
    run([python, "-m", "pip", "install", "--quiet", f"egmlib[symbolic] @ {wheel.as_uri()}"])
    after = installed(python)
    changed = {name: (before.get(name), after.get(name)) for name in before.keys() | after.keys()
               if before.get(name) != after.get(name)}
    if set(changed) != {"egmlib"}:
        raise SystemExit(f"library_check: installing the wheel changed more than egmlib: {changed}")
    versions = {name: after[name] for name in ("numpy", "scipy", "sympy", "mpmath")}
    print(f"  {mode}: {versions}; installing the wheel changed nothing else", flush=True)
    scratch = work / f"run-{mode}"
    scratch.mkdir()
    where = subprocess.run([python, "-c", "import egmlib; print(egmlib.__file__)"], cwd=scratch, check=True,
                           capture_output=True, text=True).stdout.strip()
    if not Path(where).is_relative_to(env_dir):
        raise SystemExit(f"library_check: egmlib was imported from {where}, not from the wheel")
    run([env_dir / "bin" / "pytest", "-c", ROOT / "pyproject.toml", "--rootdir", ROOT, "-p", "no:cacheprovider",
         "-q", "--no-header", *library_tests(), "--pyargs", "egmlib"], cwd=scratch,
        env={**os.environ, "EGMLIB_LIBRARY_CHECK": mode})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--mode", action="append", choices=["lowest", "newest"])
    args = parser.parse_args(argv)
    modes = args.mode or ["lowest", "newest"]
    oldest = re.search(r">=3\.(\d+)", tomllib.loads((ROOT / "pyproject.toml").read_text())
                       ["project"]["requires-python"])
    if "lowest" in modes and sys.version_info[1] != int(oldest[1]):
        print(f"library_check: the lowest versions are for Python 3.{oldest[1]}, this is "
              f"{sys.version_info[0]}.{sys.version_info[1]}: lowest skipped")
        modes.remove("lowest")
    work = Path(tempfile.mkdtemp(prefix="egmlib-library-check-"))
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    times = {}
    try:
        start = time.monotonic()
        print("library_check: build (sdist, then the wheel from it)", flush=True)
        wheel, sdist = build(work)
        times["build"] = time.monotonic() - start
        print(f"  {sdist.name}, {wheel.name}", flush=True)
        for mode in modes:
            start = time.monotonic()
            print(f"library_check: {mode} versions", flush=True)
            check_mode(mode, work, wheel)
            times[mode] = time.monotonic() - start
    except subprocess.CalledProcessError as error:
        print(f"library_check: failed: {error}")
        return 1
    finally:
        if args.keep:
            print(f"library_check: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("library_check: passed (" + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
