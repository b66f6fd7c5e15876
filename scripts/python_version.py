"""Is this Python one the book supports?  Used by the Makefile and .ci/run.

    python scripts/python_version.py NAME     # prints "3.13", or one line starting "error:"
    python scripts/python_version.py --range  # prints the supported minor versions, "3.11 3.13"

The supported versions are those of ``requires-python`` in pyproject.toml (the
one place they are written), which must have the form ``>=3.A,<3.B``.  This file
runs on any Python 3 (no tomllib, no f-strings), so that an old interpreter gets
the one-line explanation instead of a traceback.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def supported_range(pyproject=os.path.join(ROOT, "pyproject.toml")):
    """(oldest, newest) supported minor versions of Python 3, from requires-python."""
    with open(pyproject) as handle:
        text = handle.read()
    found = re.search(r'^requires-python\s*=\s*">=3\.(\d+),\s*<3\.(\d+)"\s*$', text, re.M)
    if not found:
        raise ValueError('pyproject.toml: requires-python must read ">=3.A,<3.B"')
    return int(found.group(1)), int(found.group(2)) - 1


def verdict(name, version, bounds):
    """"3.X" when ``version`` (a (major, minor, micro) tuple) is supported, else the error line."""
    oldest, newest = bounds
    major, minor = version[0], version[1]
    if major == 3 and oldest <= minor <= newest:
        return "3.%d" % minor
    if (major, minor) < (3, oldest):
        problem = "older than 3.%d" % oldest
    else:
        problem = "newer than 3.%d, the newest Python the pinned packages are tested on" % newest
    return ("error: %s is Python %s, %s; the book needs Python 3.%d to 3.%d: install one and "
            "pass it, e.g. make test PYTHON=python3.%d"
            % (name, ".".join(str(v) for v in version[:3]), problem, oldest, newest, newest))


def main(argv):
    bounds = supported_range()
    if argv[1:] == ["--range"]:
        print("3.%d 3.%d" % bounds)
        return 0
    if len(argv) != 2:
        print("usage: python_version.py NAME | --range")
        return 2
    line = verdict(argv[1], tuple(sys.version_info[:3]), bounds)
    print(line)
    return 1 if line.startswith("error:") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
