"""PLAN's published Gaussian experiments, rerun with egmlib (data/plan_reproduction/).

Aumüller, Lebeda, Nelson & Pagh (PoPETs 2024) published 50 runs per setting of
PLAN, PLAN-NOSCALE and "Instance optimal" (Huang, Liang & Yi's estimator as they
ran it) in their repository ChristianLebeda/PLAN-experiments
(``experiments_results/gaussian{A,B,C}/dataframe.csv``).  This script

* ``published --source DIR``: summarises their three files (one row per
  experiment, algorithm and setting: runs, mean error, sd, s.e.) into
  ``data/plan_reproduction/published.csv``;
* ``gaussianA|gaussianB|gaussianC [--r R] [--rho ...] [--d ...] [--alpha ...]``:
  reruns the chosen settings with ``egmlib.plan.plan_mean`` (accounting
  "published") and ``egmlib.hly.hly_mean`` (the authors' IOME settings), R runs
  each, and writes the errors ``||estimate - true mean||_2`` of every run into
  ``data/plan_reproduction/<experiment>.csv`` (the rows of the same settings and
  runs are replaced, all others kept: with ``--r 1`` run 0 is regenerated, and it
  is the same as the stored run 0);
* ``all``: the subset stored in the repository (see ``SUBSET``).

Every setting has its own seeds (from the experiment, d, rho, alpha and the run
index), so one setting regenerates alone with the same numbers, e.g.

    python scripts/plan_reproduction.py gaussianB --r 1 --rho 0.25 --alpha 1

Run time of ``all`` (10 runs per setting, one thread): about 580 s of CPU time
(10 core-minutes); per setting from 0.6 s (A, d = 16) to 109 s (C, d = 1024), see
data/plan_reproduction/README.md.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from egmlib.hly import hly_mean
from egmlib.plan import plan_mean

OUT = Path(__file__).resolve().parents[1] / "data" / "plan_reproduction"
EXPERIMENTS = ("gaussianA", "gaussianB", "gaussianC")
ALGORITHMS = ("PLAN", "PLAN-NOSCALE", "Instance optimal")
DS = (16, 32, 64, 128, 256, 512, 1024, 2048)
FIELDS = ["experiment", "algorithm", "n", "d", "rho", "alpha", "run", "error"]

#: The stored subset: (experiment, ds, rhos, alphas, runs).  Chosen to cover all
#: three files and all three algorithms within about 30 core-minutes.
SUBSET = [
    ("gaussianA", (16, 64, 256, 1024), (0.125, 1.0), (0.0,), 10),
    ("gaussianC", (16, 64, 256), (0.125, 1.0), (2.0,), 10),
    ("gaussianB", (512,), (0.0625, 1.0), (0.0, 2.0), 10),
    ("gaussianB", (512,), (0.25,), (1.0,), 10),
    ("gaussianA", (2048,), (0.125, 1.0), (0.0,), 10),
    ("gaussianC", (1024,), (0.125,), (2.0,), 10),     # session 10: arena A's d = 1024
]


def setting(experiment: str, d: int, alpha: float) -> tuple[int, float, np.ndarray, float]:
    """(n, true mean, standard deviations, universe half-width) of one setting."""
    if experiment == "gaussianA":
        return 4000, 0.0, np.ones(d), 25.0 * math.sqrt(d)
    var = (d / np.arange(1, d + 1)) ** alpha        # Zipf variances (d / j)^alpha
    return 10000, 10.0, np.sqrt(var), 50.0 * d * float(var.max()) ** 0.25


def estimate(alg: str, X: np.ndarray, rho: float, U: float, rng: np.random.Generator) -> np.ndarray:
    """One run of one algorithm with the authors' settings."""
    d = X.shape[1]
    if alg == "Instance optimal":
        return hly_mean(X, np.zeros(d), U / math.sqrt(d), rho, rng=rng, rounds=20,
                        quantile_share=0.01, norm_bound=U, noise_margin=4.0,
                        count_margin=2.0).mean
    return plan_mean(X, rho, (-U, U), rng=rng, scaled=alg == "PLAN", accounting="published").mean


def run_setting(experiment: str, d: int, rho: float, alpha: float, runs: int,
                algorithms=ALGORITHMS) -> list[dict]:
    n, mu, sig, U = setting(experiment, d, alpha)
    key = [EXPERIMENTS.index(experiment), d, round(rho * 10000), round(alpha * 10)]
    rows = []
    for i in range(runs):
        X = np.random.default_rng(key + [i, 0]).standard_normal((n, d))
        X *= sig
        X += mu
        for alg in algorithms:
            rng = np.random.default_rng(key + [i, 1 + ALGORITHMS.index(alg)])
            err = float(np.linalg.norm(estimate(alg, X, rho, U, rng) - mu))
            rows.append(dict(experiment=experiment, algorithm=alg, n=n, d=d, rho=rho,
                             alpha=alpha, run=i, error=f"{err:.10g}"))
    return rows


def store(experiment: str, rows: list[dict]) -> None:
    path = OUT / f"{experiment}.csv"
    def ident(r):
        return (r["algorithm"], int(r["d"]), float(r["rho"]), float(r["alpha"]), int(r["run"]))

    done = {ident(r) for r in rows}
    old = []
    if path.exists():
        with path.open() as f:
            old = [r for r in csv.DictReader(f) if ident(r) not in done]
    allrows = old + rows
    allrows.sort(key=lambda r: (ALGORITHMS.index(r["algorithm"]), int(r["d"]), float(r["rho"]),
                                float(r["alpha"]), int(r["run"])))
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(allrows)


def summarise_published(source: Path) -> None:
    """Their three dataframe.csv files -> published.csv (per setting: runs, mean, sd, se)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for experiment in EXPERIMENTS:
        with (source / f"{experiment}.csv").open() as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            alg = "PLAN" if r["Algorithm"] == "PLAN-E-ULTIMATE++" else r["Algorithm"]
            if alg not in ALGORITHMS:
                continue
            groups[(experiment, alg, int(r["n"]), int(r["d"]), float(r["rho"]),
                    float(r["r"]))].append(float(r["error"]))
    with (OUT / "published.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["experiment", "algorithm", "n", "d", "rho", "alpha", "runs",
                    "mean_error", "sd", "se"])
        for k in sorted(groups, key=lambda k: (EXPERIMENTS.index(k[0]), ALGORITHMS.index(k[1]),
                                                k[3], k[4], k[5])):
            v = np.array(groups[k])
            sd = float(v.std(ddof=1))
            w.writerow([*k, v.size, f"{v.mean():.10g}", f"{sd:.10g}",
                        f"{sd / math.sqrt(v.size):.10g}"])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=[*EXPERIMENTS, "all", "published"])
    p.add_argument("--source", type=Path, help="folder with gaussianA.csv ... (published)")
    p.add_argument("--r", type=int, default=20, help="runs per setting")
    p.add_argument("--rho", type=float, nargs="*")
    p.add_argument("--d", type=int, nargs="*")
    p.add_argument("--alpha", type=float, nargs="*")
    p.add_argument("--algorithms", nargs="*", choices=ALGORITHMS, default=list(ALGORITHMS))
    a = p.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    if a.what == "published":
        if a.source is None:
            p.error("published needs --source")
        summarise_published(a.source)
        return
    if a.what == "all":
        jobs = SUBSET
    else:
        i = EXPERIMENTS.index(a.what)
        defaults = {0: ((16, 1024), (0.125, 1.0), (0.0,)),
                    1: ((512,), (0.0625, 1.0), (0.0, 2.0)),
                    2: ((16, 1024), (0.125, 1.0), (2.0,))}[i]
        jobs = [(a.what, tuple(a.d or defaults[0]), tuple(a.rho or defaults[1]),
                 tuple(a.alpha if a.alpha is not None else defaults[2]), a.r)]
    start = time.process_time()
    for experiment, ds, rhos, alphas, runs in jobs:
        for d in ds:
            for rho in rhos:
                for alpha in alphas:
                    t = time.process_time()
                    store(experiment, run_setting(experiment, d, rho, alpha, runs, a.algorithms))
                    print(f"{experiment} d={d} rho={rho} alpha={alpha}: "
                          f"{time.process_time() - t:.1f} s CPU", file=sys.stderr, flush=True)
    print(f"CPU time: {time.process_time() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
