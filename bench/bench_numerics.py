"""Accuracy and speed of the numerical building blocks of egmlib against other tools.

``bench_gchi2()``: upper quantiles of Q = sum_j w_j Z_j^2 on the Zipf grid of
``bench/reference_gchi2.csv`` (40-digit mpmath references made by
``bench/make_reference_gchi2.py``), for

* egmlib.gchi2.isf (contour integral through the saddle point),
* gx2.inv (Python port of Das's generalized chi-square toolbox, 'auto' method),
* scipy baseline: Imhof's integral with scipy.integrate.quad + brentq,
* momentchi2 hbe / sw / wf (moment matching) + brentq,
* chi2comb (Davies) + brentq, when importable.

It prints, per method, the number of grid points where the method failed (an
exception or a non-finite answer, e.g. momentchi2 rejects zero weights, which
the alpha = 100 weight vectors contain after underflow), the max and median
relative error of the quantile over the other points, the median CPU time per
quantile and that time as a multiple of egmlib's on the same points, and then
the CPU time egmlib needs for the whole Figure-2 grid of the study
(2 weight families x 100 alphas x d in {10, 100, 1000} x n in {1e2, 1e3, 1e6}).
Times are process CPU times (robust on a shared machine).

Run:  .venv/bin/python bench/bench_numerics.py
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time
import warnings

import numpy as np
from scipy import integrate, optimize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from egmlib import gchi2  # noqa: E402

REF_CSV = os.path.join(HERE, "reference_gchi2.csv")
SUBSET_NOTE = "subset (seconds per quantile): sq, d=10, alpha 0.5 & 2, p 1e-2 & 1e-6"


def zipf_weights(family: str, alpha: float, d: int) -> np.ndarray:
    """sigma_i = i^-alpha / sum_j j^-alpha; w = sigma^2 ('sq') or sigma / sum(sigma) ('lin')."""
    i = np.arange(1, d + 1, dtype=np.float64)
    sigma = i ** (-alpha)
    sigma = sigma / sigma.sum()
    return sigma * sigma if family == "sq" else sigma / sigma.sum()


# --------------------------------------------------------------------------
# competitors: each maps (p, w) -> upper quantile
# --------------------------------------------------------------------------
def _bracket_quantile(tail, p, w):
    """Root of tail(c) = p by brentq, bracketed from the mean upwards."""
    lo = 0.0
    hi = float(np.sum(w)) + 1e-12
    while tail(hi) > p:
        lo, hi = hi, 2.0 * hi
        if hi > 1e8 * float(np.sum(w)):
            return math.nan
    return optimize.brentq(lambda c: tail(c) - p, lo, hi, xtol=1e-300, rtol=1e-15,
                           maxiter=500)


def imhof_sf(c, w):
    """Imhof (1961): P(Q > c) = 1/2 + (1/pi) int_0^inf sin(theta(u)) / (u rho(u)) du."""
    w = np.asarray(w, dtype=np.float64)

    def f(u):
        if u == 0.0:
            return 0.5 * (float(np.sum(w)) - c)
        theta = 0.5 * float(np.sum(np.arctan(w * u))) - 0.5 * c * u
        rho = float(np.prod((1.0 + w * w * u * u) ** 0.25))
        return math.sin(theta) / (u * rho)

    val, _ = integrate.quad(f, 0.0, np.inf, limit=200)
    return 0.5 + val / math.pi


def imhof_isf(p, w):
    return _bracket_quantile(lambda c: imhof_sf(c, w), p, w)


def gx2_isf(p, w):
    import gx2

    k = np.ones(w.size)
    lam = np.zeros(w.size)
    return float(gx2.inv(p, w, k, lam, 0, 0, side="upper"))


def momentchi2_isf(method):
    import momentchi2

    fn = getattr(momentchi2, method)

    def isf(p, w):
        return _bracket_quantile(lambda c: 1.0 - float(fn(w, c)), p, w)

    return isf


def chi2comb_isf(p, w):
    import chi2comb

    comps = [chi2comb.ChiSquared(float(x), 0.0, 1) for x in w]
    return _bracket_quantile(lambda c: 1.0 - chi2comb.chi2comb_cdf(c, comps, 0.0)[0], p, w)


# --------------------------------------------------------------------------
def _load_reference():
    with open(REF_CSV, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["alpha"] = float(r["alpha"])
        r["d"] = int(r["d"])
        r["p"] = float(r["p"])
        r["ref"] = float(r["isf"])
    return rows


def _run(method, rows):
    errs, times = [], []
    for r in rows:
        w = zipf_weights(r["family"], r["alpha"], r["d"])
        t0 = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c = method(r["p"], w)
        except Exception:  # a competitor failing counts as an infinite error
            c = math.nan
        times.append(time.process_time() - t0)
        e = abs(c - r["ref"]) / r["ref"]
        errs.append(e if math.isfinite(e) else math.inf)
    return np.array(errs), np.array(times)


def _subset(rows, dims=(10,), alphas=(0.5, 2.0), probs=(1e-2, 1e-6), family="sq"):
    return [r for r in rows if r["d"] in dims and r["alpha"] in alphas
            and r["p"] in probs and r["family"] == family]


def figure2_time() -> tuple[float, int]:
    """CPU seconds for isf(1/n, w) over the study's Figure-2 grid."""
    n_calls = 0
    t0 = time.process_time()
    for family in ("sq", "lin"):
        for alpha in np.logspace(-2, 2, 100):
            for d in (10, 100, 1000):
                w = zipf_weights(family, alpha, d)
                for n in (1e2, 1e3, 1e6):
                    gchi2.isf(1.0 / n, w)
                    n_calls += 1
    return time.process_time() - t0, n_calls


def bench_gchi2() -> None:
    if not os.path.exists(REF_CSV):
        print(f"missing {REF_CSV}: run bench/make_reference_gchi2.py first")
        return
    rows = _load_reference()
    dims = sorted({r["d"] for r in rows})
    print(f"== gchi2: upper quantiles vs 40-digit references ({len(rows)} grid points, "
          f"d in {dims}, p in 1e-2..1e-12)")
    small = _subset(rows)
    methods = [("egmlib.gchi2.isf", gchi2.isf, rows, "full grid")]
    try:
        import gx2  # noqa: F401
        methods.append(("gx2.inv (auto)", gx2_isf, small, SUBSET_NOTE))
    except ImportError:
        pass
    methods.append(("scipy Imhof quad+brentq", imhof_isf, small, SUBSET_NOTE))
    try:
        import momentchi2  # noqa: F401
        for m in ("hbe", "sw", "wf"):
            methods.append((f"momentchi2.{m}+brentq", momentchi2_isf(m), rows, "full grid"))
    except ImportError:
        pass
    try:
        import chi2comb  # noqa: F401
        methods.append(("chi2comb (Davies)+brentq", chi2comb_isf, rows, "full grid"))
    except ImportError:
        print("   (chi2comb not importable: skipped)")
    results = []
    for name, fn, rr, note in methods:
        e, t = _run(fn, rr)
        results.append((name, e, t, note, rr))
    e_eg, t_eg_all = results[0][1], results[0][2]
    t_of = {id(r): t for r, t in zip(rows, t_eg_all)}
    head = f"{'method':28s} {'points':>6s} {'failed':>6s} {'max rel err':>12s} " \
           f"{'median rel err':>15s} {'median CPU/quantile':>20s} {'x egmlib':>9s}  note"
    print(head)
    print("-" * len(head))
    for name, e, t, note, rr in results:
        med_t = float(np.median(t))
        t_eg = float(np.median([t_of[id(r)] for r in rr]))   # egmlib on the same points
        ok = np.isfinite(e)
        emax = float(np.max(e[ok])) if ok.any() else math.nan
        emed = float(np.median(e[ok])) if ok.any() else math.nan
        print(f"{name:28s} {len(rr):6d} {int((~ok).sum()):6d} {emax:12.2e} {emed:15.2e} "
              f"{med_t * 1e3:17.2f} ms {med_t / t_eg:9.1f}  {note}")
    d1000 = [t for r, t in zip(rows, t_eg_all) if r["d"] == 1000]
    if d1000:
        print(f"egmlib isf at d = 1000: median {np.median(d1000) * 1e3:.2f} ms CPU "
              f"(max {np.max(d1000) * 1e3:.2f} ms) over {len(d1000)} grid points")
    for dd in dims:
        sel = [e for r, e in zip(rows, e_eg) if r["d"] == dd]
        print(f"egmlib max rel err at d = {dd}: {max(sel):.2e}")
    secs, ncalls = figure2_time()
    print(f"Figure-2 grid: {ncalls} quantiles with egmlib in {secs:.2f} s CPU "
          f"({secs / ncalls * 1e3:.2f} ms each)")


def main() -> None:
    bench_gchi2()
    print()
    # analytic Gaussian calibration against diffprivlib, same process
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_privacy import bench_privacy

    bench_privacy()


if __name__ == "__main__":
    main()
