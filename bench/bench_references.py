"""egmlib against the field's libraries: Google's dp-accounting and OpenDP.

For each task -- calibration (sigma for (epsilon, delta)), the privacy profile
(delta of a Gaussian mechanism at epsilon), the zCDP conversion (epsilon of a
rho-zCDP guarantee) and composition (epsilon of ten Gaussian mechanisms) -- every
library's answer is compared with a 50-digit mpmath reference written here from the
defining formulas, and timed.  Accuracy: the largest relative deviation from the
reference and how many answers lie on the unsafe side (sigma or epsilon below the
truth, delta below it).  Speed: the median time per call, as a ratio to egmlib's for
the same task (machine-independent enough to store; the times themselves are not).

    python bench/bench_references.py            # print the table
    python bench/bench_references.py --write    # and store bench/reference_libraries.csv

The Gaussian mechanism chapter shows the stored table (its regeneration command is
the second line).  A run takes about a minute, most of it OpenDP's binary search.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import mpmath as mp

import egmlib.privacy as P

EPS = [0.01, 0.1, 1.0, 10.0]
DELTAS = [1e-3, 1e-6, 1e-9, 1e-12]
RHOS = [1e-3, 1e-2, 0.1, 1.0]
K = 10                    # mechanisms composed
DPS = 50
OUT = Path(__file__).with_name("reference_libraries.csv")


# ---------------------------------------------------------------------------
# references (mpmath)
# ---------------------------------------------------------------------------
def mp_delta(s, eps):
    with mp.workdps(DPS):
        s, e = mp.mpf(s), mp.mpf(eps)
        u, v = e * s - 1 / (2 * s), e * s + 1 / (2 * s)
        return (mp.erfc(u / mp.sqrt(2)) - mp.exp(e) * mp.erfc(v / mp.sqrt(2))) / 2


def mp_sigma(eps, delta):
    with mp.workdps(DPS):
        f = lambda s: mp.log(mp_delta(s, eps)) - mp.log(delta)  # noqa: E731
        return mp.findroot(f, mp.mpf(P.analytic_sigma(eps, delta)))


def mp_gauss_eps(rho, delta):
    """Exact epsilon of a composition of Gaussian mechanisms with total rho."""
    with mp.workdps(DPS):
        s = 1 / mp.sqrt(2 * mp.mpf(rho))
        f = lambda e: mp.log(mp_delta(s, e)) - mp.log(delta)  # noqa: E731
        return mp.findroot(f, mp.mpf(P.gaussian_zcdp_epsilon(rho, delta=delta)))


def mp_cks(rho, delta):
    with mp.workdps(DPS):
        r, L = mp.mpf(rho), -mp.log(mp.mpf(delta))

        def f(t):
            a = 1 + mp.exp(t)
            return a * r + (L + (a - 1) * mp.log(1 - 1 / a) - mp.log(a)) / (a - 1)

        t = mp.findroot(lambda x: mp.diff(f, x), mp.log(mp.sqrt(L / r)))
        return f(t)


# ---------------------------------------------------------------------------
# the libraries
# ---------------------------------------------------------------------------
def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)

    def curve(scale):
        return dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale)).map(1.0)

    def sigma(eps, delta):
        return dp.binary_search(lambda s: curve(s).epsilon(delta) <= eps, bounds=(0.05, 2e3))

    return curve, sigma


def _dp_accounting():
    import dp_accounting as d
    from dp_accounting.pld import pld_privacy_accountant as pld
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    def pld_eps(sigma, k, delta):
        acc = pld.PLDAccountant()
        acc.compose(d.GaussianDpEvent(sigma), k)
        return acc.get_epsilon(delta)

    def pld_delta(sigma, eps):
        acc = pld.PLDAccountant()
        acc.compose(d.GaussianDpEvent(sigma), 1)
        return acc.get_delta(eps)

    def rdp_eps(rho, delta):
        acc = rdp.RdpAccountant()
        acc.compose(d.ZCDpEvent(rho))
        return acc.get_epsilon(delta)

    return d.get_sigma_gaussian, pld_eps, pld_delta, rdp_eps


def timed(f, *args, repeat=3):
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        value = f(*args)
        best.append(time.perf_counter() - t)
    return value, min(best)


def rows():
    curve, od_sigma = _opendp()
    da_sigma, pld_eps, pld_delta, rdp_eps = _dp_accounting()
    points = [(e, d) for e in EPS for d in DELTAS]
    out = []

    def record(task, unit, direction, entries, truths):
        # entries: {(library, method): [(value, seconds), ...]}
        base = statistics.median(t for _, t in entries[next(iter(entries))])
        for (lib, method), vals in entries.items():
            rel = [float((mp.mpf(v) - t) / t) for (v, _), t in zip(vals, truths)]
            unsafe = sum(1 for r in rel if (r < 0 if direction == "up" else r > 0) and abs(r) > 0)
            out.append(dict(task=task, unit=unit, library=lib, method=method, points=len(vals),
                            max_rel_error=max(abs(r) for r in rel), unsafe=unsafe,
                            time_ratio=statistics.median(t for _, t in vals) / base))

    # 1. calibration: sigma for (epsilon, delta), sensitivity 1 -- safe is sigma >= sigma*
    truth = [mp_sigma(e, d) for e, d in points]
    record("calibration", "sigma", "up", {
        ("egmlib", "analytic_sigma (exact)"): [timed(P.analytic_sigma, e, d) for e, d in points],
        ("dp-accounting", "get_sigma_gaussian (exact, tol 10⁻¹²)"): [timed(da_sigma, e, d) for e, d in points],
        ("OpenDP", "zCDP + CKS conversion, binary search"): [timed(od_sigma, e, d, repeat=1) for e, d in points],
    }, truth)
    # 2. profile: delta of N(0, s^2) at epsilon, s = 1.1 sigma*  -- safe is delta >= delta*
    sig = [1.1 * float(t) for t in truth]
    truth = [mp_delta(s, e) for s, (e, _) in zip(sig, points)]
    record("profile", "delta", "up", {
        ("egmlib", "gaussian_delta (exact)"): [timed(lambda e, s: P.gaussian_delta(e, sigma=s), e, s)
                                              for s, (e, _) in zip(sig, points)],
        ("dp-accounting", "PLD accountant"): [timed(pld_delta, s, e, repeat=1) for s, (e, _) in zip(sig, points)],
        ("OpenDP", "zCDP + CKS conversion"): [timed(lambda s, e: curve(s).delta(e), s, e)
                                             for s, (e, _) in zip(sig, points)],
    }, truth)
    # 3. conversion: epsilon of a rho-zCDP guarantee at delta, any mechanism (CKS's bound
    #    is the reference) -- safe is epsilon >= epsilon*
    conv = [(r, d) for r in RHOS for d in DELTAS]
    truth = [mp_cks(r, d) for r, d in conv]
    record("zCDP conversion", "epsilon", "up", {
        ("egmlib", "zcdp_epsilon_cks"): [timed(P.zcdp_epsilon_cks, r, d) for r, d in conv],
        ("dp-accounting", "RDP accountant, ZCDpEvent"): [timed(rdp_eps, r, d) for r, d in conv],
        ("OpenDP", "make_zCDP_to_approxDP"): [timed(lambda r, d: curve(1 / math.sqrt(2 * r)).epsilon(d), r, d)
                                             for r, d in conv],
    }, truth)
    # 4. composition: epsilon of K Gaussian mechanisms N(0, s^2), rho = K / (2 s^2) in total
    comp = [(1.0 / math.sqrt(2 * r / K), d) for r in RHOS for d in DELTAS]
    truth = [mp_gauss_eps(K / (2 * s * s), d) for s, d in comp]
    record("composition", "epsilon", "up", {
        ("egmlib", "gaussian_zcdp_epsilon (exact)"): [timed(lambda s, d: P.gaussian_zcdp_epsilon(K / (2 * s * s), delta=d), s, d)
                                                     for s, d in comp],
        ("dp-accounting", "PLD accountant"): [timed(pld_eps, s, K, d, repeat=1) for s, d in comp],
        ("OpenDP", "zCDP composition + CKS conversion"): [timed(lambda s, d: curve(s / math.sqrt(K)).epsilon(d), s, d)
                                                         for s, d in comp],
    }, truth)
    return out


def main() -> None:
    warnings.simplefilter("ignore")
    table = rows()
    print(f"{'task':16} {'library':14} {'method':42} {'max rel. error':>14} {'unsafe':>7} {'time / egmlib':>13}")
    for r in table:
        print(f"{r['task']:16} {r['library']:14} {r['method']:42} {r['max_rel_error']:14.2e} "
              f"{r['unsafe']:>4}/{r['points']:<2} {r['time_ratio']:13.1f}")
    if "--write" in sys.argv:
        with OUT.open("w", newline="", encoding="utf-8") as f:
            f.write("# regenerate: python bench/bench_references.py --write  (make bench)\n")
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            for r in table:
                w.writerow({k: (f"{v:.3e}" if isinstance(v, float) else v) for k, v in r.items()})
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
