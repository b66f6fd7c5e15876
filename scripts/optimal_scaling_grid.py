"""The exactly optimal scaling on the book's grid, stored for two chapters.

The chapters "Optimal scaling" and "Alternative mechanisms" both use
``egmlib.optimal.optimal_scaling(zipf_sigmas(d, alpha), 1 / n)`` for d in
(10, 100, 1000), n in (10^3, 10^6) and the 13 Zipf exponents
``np.logspace(-2, 2, 13)``: 78 optimisations, about 8 CPU-s, which each chapter
used to redo.  This script computes them once into
``data/optimal_scaling/grid.csv``; each chapter reads the file and recomputes a
sample of the rows live, asserting that they agree, so a changed library fails
the chapter (and the file is then regenerated with this one command):

    .venv/bin/python scripts/optimal_scaling_grid.py

Columns: ``d``, ``n``, ``alpha`` (Python's repr, exact), the scalar fields of
``egmlib.optimal.OptimalScaling`` and ``scaling`` (the d values of b, space
separated, each exact).  Deterministic (no random numbers).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "optimal_scaling" / "grid.csv"
DIMS, SIZES = (10, 100, 1000), (1e3, 1e6)
ALPHAS = np.logspace(-2, 2, 13)
SCALARS = ("radius", "noise_factor", "lemma_noise_factor", "gain", "stationarity", "evaluations")


def main(out: Path = OUT) -> None:
    from egmlib.optimal import optimal_scaling
    from egmlib.zipf import zipf_sigmas

    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["d", "n", "alpha", *SCALARS, "scaling"])
        for d in DIMS:
            for n in SIZES:
                for a in ALPHAS:
                    run = optimal_scaling(zipf_sigmas(d, a), 1 / n)
                    writer.writerow([d, repr(float(n)), repr(float(a)),
                                     *(repr(getattr(run, f)) if f != "evaluations" else str(run.evaluations)
                                       for f in SCALARS),
                                     " ".join(repr(float(b)) for b in run.scaling)])
    print(f"wrote {out.relative_to(ROOT)}: {len(DIMS) * len(SIZES) * len(ALPHAS)} runs")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
