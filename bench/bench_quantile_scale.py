"""Speed of egmlib.gchi2.isf at scale: the slowest quantile on a Zipf grid.

Grid: both weight families of the book, ``w = sigma / sum(sigma)`` ("lin", the
squared radius of Lemma 4.1's scaling) and ``w = sigma**2`` ("sq"), with
``sigma = egmlib.zipf.zipf_sigmas(d, alpha)``; d in {1e2, 1e3, 1e4, 1e5};
alpha in {0.1, 0.25, 0.35, 0.5, 0.75, 1, 1.5, 2}; p in {1e-2, 1e-3, 1e-4, 1e-6,
1e-9, 1e-12}.  Times are process CPU times (robust on a shared machine), the
best of ``REPEAT`` calls per point.  Prints the slowest cases, the slowest per
d, and the slowest time as a fraction of the 50 ms target.

Run:  .venv/bin/python bench/bench_quantile_scale.py [--quick]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from egmlib import gchi2  # noqa: E402
from egmlib.zipf import zipf_sigmas  # noqa: E402

DIMS = (100, 1_000, 10_000, 100_000)
ALPHAS = (0.1, 0.25, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0)
PROBS = (1e-2, 1e-3, 1e-4, 1e-6, 1e-9, 1e-12)
TARGET = 0.050
REPEAT = 2


def weights(family: str, d: int, alpha: float) -> np.ndarray:
    sigma = zipf_sigmas(d, alpha)
    return sigma / sigma.sum() if family == "lin" else sigma * sigma


def cpu_time(p: float, w: np.ndarray) -> tuple[float, float]:
    best = np.inf
    for _ in range(REPEAT):
        t0 = time.process_time()
        c = gchi2.isf(p, w)
        best = min(best, time.process_time() - t0)
    return best, float(c)


def main() -> None:
    dims = DIMS[:3] if "--quick" in sys.argv else DIMS
    rows = []
    for d in dims:
        for family in ("lin", "sq"):
            for alpha in ALPHAS:
                w = weights(family, d, alpha)
                for p in PROBS:
                    secs, c = cpu_time(p, w)
                    rows.append((secs, family, d, alpha, p, c))
    rows.sort(reverse=True)
    print(f"== gchi2.isf at scale: {len(rows)} quantiles (2 families x d in {dims} x "
          f"{len(ALPHAS)} alphas x {len(PROBS)} p), CPU time, best of {REPEAT}")
    print("slowest cases:")
    for secs, family, d, alpha, p, c in rows[:8]:
        print(f"  {secs * 1e3:8.1f} ms  {family:3s} d = {d:6d}  alpha = {alpha:4.2f}  "
              f"p = {p:.0e}  c = {c:.6g}")
    for d in dims:
        sel = [r for r in rows if r[2] == d]
        med = float(np.median([r[0] for r in sel]))
        print(f"d = {d:6d}: slowest {sel[0][0] * 1e3:7.1f} ms, median {med * 1e3:6.1f} ms")
    print(f"slowest / target (50 ms): {rows[0][0] / TARGET:.2f}")


if __name__ == "__main__":
    main()
