"""How long ``import egmlib`` takes: median of several fresh interpreters (a print, not a test).

    python bench/bench_import.py [OLD_TREE]

Runs ``python -X importtime -c "import egmlib"`` alternately in this tree and, if
given, in another checkout (e.g. a worktree of an older commit), and prints the
median cumulative time of the ``egmlib`` line for each, so that load on a shared
machine hits both alike.  Also checks that neither ``scipy.stats`` nor SymPy is imported.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
RUNS = 9


def once(tree: Path, statement: str = "import egmlib") -> float:
    """Cumulative import time of the top-level egmlib modules the statement loads (seconds)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], cwd=tree, env=env,
                         capture_output=True, text=True, check=True).stderr
    total = 0.0
    for line in err.splitlines():
        parts = line.split("|")
        # top-level entries only (no leading spaces before the name): egmlib and egmlib.X
        if len(parts) == 3 and parts[2].startswith(" egmlib"):
            total += int(parts[1]) / 1e6
    return total


def main() -> None:
    trees = [HERE] + [Path(a).resolve() for a in sys.argv[1:]]
    times: dict[Path, list[float]] = {t: [] for t in trees}
    for _ in range(RUNS):
        for t in trees:
            times[t].append(once(t))
    for t in trees:
        print(f"import egmlib ({t}): median {statistics.median(times[t]) * 1e3:.1f} ms over {RUNS} runs")
    # what a user of the calibration pays: the privacy module and what it needs
    calib = {t: statistics.median(once(t, "from egmlib.privacy import analytic_sigma") for _ in range(3))
             for t in trees}
    for t in trees:
        print(f"from egmlib.privacy import analytic_sigma ({t}): median {calib[t] * 1e3:.1f} ms over 3 runs")
    if len(trees) > 1:
        print(f"ratio this tree / {trees[1]}: {statistics.median(times[HERE]) / statistics.median(times[trees[1]]):.3f}")
    code = "import egmlib, sys; print('scipy.stats' in sys.modules, 'sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=dict(os.environ, PYTHONPATH=str(HERE)),
                         capture_output=True, text=True, check=True).stdout.split()
    print(f"scipy.stats imported: {out[0]}, sympy imported: {out[1]}")


if __name__ == "__main__":
    main()
