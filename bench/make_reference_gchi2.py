"""High-precision reference quantiles of Q = sum_j w_j Z_j^2 (mpmath, 40 digits).

Writes ``bench/reference_gchi2.csv`` with one row per grid point:

    family, alpha, d, p, isf, dps, sf_residual, quad_err

* family ``sq``:  w = sigma**2;  family ``lin``: w = sigma / sum(sigma), where
  sigma_i = i**-alpha / sum_j j**-alpha (the Zipf standard deviations of the
  study).  The weights are computed in double precision exactly as the
  benchmark computes them, then converted exactly to mpmath numbers, so the
  reference is the quantile of *those* double weights.
* ``isf`` is c with P(Q > c) = p, printed with 30 significant digits.
* ``sf_residual`` = |P(Q > isf) - p| / p at the final iterate and
  ``quad_err`` the relative error estimate of the quadrature; both are far
  below 1e-25 on every row.

Why the numbers can be trusted
------------------------------
P(Q > c) is computed from the exact inversion formula of the Laplace transform,

    P(Q > c) = (1 / 2 pi i) * integral over Re s = s0 of M(s) exp(-s c) / s ds,
    M(s) = prod_j (1 - 2 w_j s)^(-1/2),   0 < s0 < 1 / (2 max w),

which holds for every such s0.  The path used here is *not* the parabola of
``egmlib.gchi2``: it is a "hairpin" that follows the vertical line from s0 up to
s0 + iY and then runs horizontally to +infinity along Im s = Y (and the mirror
image below the axis).  The region between this hairpin and the vertical line
contains no singularity (they all lie on the real axis) and exp(-s c) decays
there, so Cauchy's theorem makes both integrals equal.  The two pieces are
integrated with mpmath's adaptive tanh-sinh quadrature (the ray is raised
until the modulus of the integrand on it stays below e^3 times its value at s0,
so there is no cancellation) at 40 significant
digits, which reports its own error estimate (``quad_err``); the root of
P(Q > c) = p is found by the secant method to a relative residual below 1e-30.
This shares no quadrature rule, no path and no step-size logic with the
double-precision code, and the inversion formula itself is checked against
closed forms (chi-square, two weights, one weight) in ``tests/test_gchi2.py``.

The sum over weights is evaluated exactly term by term for d <= 30.  For
larger d the weights with |2 w_j (s - s0) / (1 - 2 w_j s0)| < 1/2 on a node are
summed with the Taylor series of log(1 - z) to order 170 (truncation below
2^-170 < 1e-51 per unit weight) to keep the run to minutes; the others are
evaluated term by term.  Weights below 1e-90 times the largest are dropped;
by the bound proved in ``egmlib.gchi2`` this changes P(Q > c) by a relative
amount below 1e-40.

The start value of the secant iteration comes from ``egmlib.gchi2.isf``; it
only affects how fast the iteration converges, not where it converges to.

Run (d = 10 and 100 take minutes; d = 1000 about a minute per row; the CSV is
written as rows arrive and rows already present are skipped, so the run can be
resumed; mpmath uses gmpy2 as its backend when that is importable)::

    .venv/bin/python bench/make_reference_gchi2.py
    GCHI2_REF_DIMS=10,100 .venv/bin/python bench/make_reference_gchi2.py
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time
from multiprocessing import Pool

import mpmath as mp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

DPS = 40
QUAD = os.environ.get("GCHI2_REF_QUAD", "tanh-sinh")
FAMILIES = ("sq", "lin")
ALPHAS = (0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0)
DIMS = (10, 100, 1000)
PROBS = (1e-2, 1e-3, 1e-6, 1e-9, 1e-12)
OUT = os.path.join(HERE, "reference_gchi2.csv")
_RHO = mp.mpf(1) / 2
_ORDER = 170
_DIRECT_ONLY_MAX_D = 30

try:  # optional: MPFR/MPC through gmpy2 makes the sum over weights ~10x faster
    import gmpy2 as _gmpy2
except ImportError:  # pragma: no cover - plain mpmath is used instead
    _gmpy2 = None


def _to_g(x):
    """mpmath mpf -> gmpy2 mpfr (exact)."""
    sign, man, exp, _bc = x._mpf_
    if not man:
        return _gmpy2.mpfr(0)
    v = _gmpy2.mul_2exp(_gmpy2.mpfr(int(man)), int(exp))
    return -v if sign else v


def _from_g(x):
    """gmpy2 mpfr -> mpmath mpf (exact)."""
    if x == 0:
        return mp.mpf(0)
    man, exp = x.as_mantissa_exp()
    return mp.mpf(mp.libmp.from_man_exp(int(man), int(exp)))


def zipf_weights(family: str, alpha: float, d: int) -> np.ndarray:
    """The benchmark's weight vectors (double precision)."""
    i = np.arange(1, d + 1, dtype=np.float64)
    sigma = i ** (-alpha)
    sigma = sigma / sigma.sum()
    if family == "sq":
        return sigma * sigma
    return sigma / sigma.sum()


class _Integrand:
    """exp(K(s) - K(s0)) at points s = s0 + delta, cached by node."""

    def __init__(self, w, s0):
        self.s0 = s0
        one = mp.mpf(1)
        self.r = [2 * wi / (one - 2 * wi * s0) for wi in w]     # descending
        self.k0 = -sum(mp.log(one - 2 * wi * s0) for wi in w) / 2
        self.series = len(w) > _DIRECT_ONLY_MAX_D
        if self.series:
            # suffix power sums S[j][m] = sum_{k >= j} r_k^m, m = 1.._ORDER
            k = len(self.r)
            self.suffix = [None] * (k + 1)
            acc = [mp.mpf(0)] * (_ORDER + 1)
            self.suffix[k] = list(acc)
            inv = [None] + [1 / mp.mpf(m) for m in range(1, _ORDER + 1)]
            for j in range(k - 1, -1, -1):
                rj = self.r[j]
                pw = mp.mpf(1)
                for m in range(1, _ORDER + 1):
                    pw *= rj
                    acc[m] += pw * inv[m]
                self.suffix[j] = list(acc)   # coefficients sum_{k>=j} r_k^m / m
        self.cache = {}
        self.fast = _gmpy2 is not None
        if self.fast:
            _gmpy2.get_context().precision = mp.mp.prec + 24
            self.gr = [_to_g(x) for x in self.r]
            if self.series:
                self.gsuffix = [[_to_g(x) for x in row] for row in self.suffix]

    def _fast(self, delta, j):
        g = _gmpy2
        d = g.mpc(_to_g(delta.real), _to_g(delta.imag))
        total = g.mpc(0)
        one = g.mpfr(1)
        for k in range(j):
            total += g.log(one - self.gr[k] * d)
        if j < len(self.gr):
            coef = self.gsuffix[j]
            ser = g.mpc(0)
            for m in range(_ORDER, 0, -1):
                ser = (ser + coef[m]) * d
            total -= ser
        return mp.mpc(_from_g(total.real), _from_g(total.imag))

    def log_mgf_ratio(self, delta):
        """K(s0 + delta) - K(s0) = -1/2 sum log(1 - r_k delta)."""
        key = (delta.real, delta.imag)
        if key in self.cache:
            return self.cache[key]
        one = mp.mpf(1)
        adelta = abs(delta)
        if self.series:
            j = 0
            while j < len(self.r) and self.r[j] * adelta >= _RHO:
                j += 1
        else:
            j = len(self.r)
        if self.fast:
            val = -self._fast(delta, j) / 2
            self.cache[key] = val
            return val
        total = mp.mpc(0)
        for k in range(j):
            total += mp.log(one - self.r[k] * delta)
        if j < len(self.r):
            coef = self.suffix[j]
            ser = mp.mpc(0)
            for m in range(_ORDER, 0, -1):     # Horner
                ser = (ser + coef[m]) * delta
            total -= ser
        val = -total / 2
        self.cache[key] = val
        return val


def _saddle(w, c):
    """Double-precision root of K'(s) - 1/s = c in (0, 1/2 / max w)."""
    from scipy.optimize import brentq

    wd = np.array([float(x) for x in w])
    hi = 0.5 / wd.max()

    def f(s):
        return float(np.sum(wd / (1.0 - 2.0 * wd * s))) - c - 1.0 / s

    return brentq(f, hi * 1e-12, hi * (1.0 - 1e-15), xtol=1e-300, rtol=1e-12)


def _sf(integ, c, Y, scale, xcut):
    """P(Q > c) along the hairpin; returns (value, relative error estimate).

    The horizontal ray is cut at Re(s - s0) = xcut, beyond which the modulus of
    the integrand is below exp(-c xcut + bound) < 1e-60 P (see ``_xcut``).
    """
    s0 = integ.s0

    def g(delta):
        s = s0 + delta
        return mp.exp(integ.log_mgf_ratio(delta) - delta * c) / s

    def vertical(y):
        return g(mp.mpc(0, y)) * mp.mpc(0, 1)

    def ray(x):
        return g(mp.mpc(x, Y))

    v1, e1 = mp.quad(vertical, [0, Y / 4, Y / 2, Y], error=True, method=QUAD)
    pts = [x for x in (0, scale, 10 * scale) if x < xcut] + [xcut]
    v2, e2 = mp.quad(ray, pts, error=True, method=QUAD)
    tot = (v1 + v2).imag / mp.pi
    pref = mp.exp(integ.k0 - s0 * c)
    err = (abs(e1) + abs(e2)) / mp.pi / abs(tot)
    return pref * tot, err


def _ray_height(w, s0, c, Y):
    """Raise the horizontal ray until |integrand| on it stays below e^3 times its
    value at s0 (a dense cluster of branch points can make |M(s)| huge just
    above the real axis, which would cost digits by cancellation).  On the
    vertical line |M(s0 + iy)| <= M(s0), so only the ray needs this check."""
    wd = np.array([float(x) for x in w])
    s0, c, Y = float(s0), float(c), float(Y)
    k0 = -0.5 * float(np.sum(np.log1p(-2.0 * wd * s0)))
    xs = np.concatenate([np.linspace(0.0, 20.0 / c, 400), np.geomspace(20.0 / c, 1e4, 400)])
    for _ in range(60):
        worst = -math.inf
        for x in xs:
            re, im = s0 + x, Y
            lm = (-0.25 * float(np.sum(np.log((1 - 2 * wd * re) ** 2 + (2 * wd * im) ** 2)))
                  - k0 - x * c - 0.5 * math.log((re * re + im * im) / (s0 * s0)))
            worst = max(worst, lm)
        if worst <= 3.0:
            return Y
        Y *= 2.0
    raise RuntimeError("could not place the ray")


def _xcut(integ, c, Y, p):
    """Where to cut the ray s = s0 + x + iY.

    There |1 - r_k (x + iY)| >= r_k Y, so |exp(K(s) - K(s0))| <= exp(b) with
    b = sum_k max(0, -log(r_k Y) / 2), and |1/s| <= 1/Y; the neglected tail
    is below exp(b - c x) / (Y c), which is < 1e-60 p exp(K(s0) - s0 c)... we take
    x with exp(b - c x) / (Y c) = 1e-60 * p * exp(-(K(s0) - s0 c)).
    """
    b = sum(max(mp.mpf(0), -mp.log(rk * Y) / 2) for rk in integ.r)
    a = integ.k0 - integ.s0 * c
    target = mp.log(mp.mpf("1e-60") * p) - a + mp.log(Y * c)
    return max((b - target) / c, 20 / c)


def reference_isf(family, alpha, d, p):
    mp.mp.dps = DPS
    from egmlib.gchi2 import isf as isf_double

    wd = zipf_weights(family, alpha, d)
    wmax = wd.max()
    keep = np.sort(wd[wd > 1e-90 * wmax])[::-1]
    scale = mp.mpf(float(wmax))
    w = [mp.mpf(float(x)) / scale for x in keep]
    pm = mp.mpf(p)
    c = mp.mpf(float(isf_double(p, wd))) / scale
    for _attempt in range(3):
        s0 = mp.mpf(_saddle(w, float(c)))
        integ = _Integrand(w, s0)
        b2 = sum(ri * ri for ri in integ.r) / 2 + 1 / s0 ** 2
        Y = mp.mpf(_ray_height(w, s0, c, 12 / mp.sqrt(b2)))
        xscale = 1 / c
        xcut = _xcut(integ, c, Y, pm)
        c_start = c
        c0, c1 = c, c * (1 + mp.mpf("1e-12"))
        f0 = mp.log(_sf(integ, c0, Y, xscale, xcut)[0] / pm)
        err = mp.mpf(0)
        for _ in range(40):
            val, err = _sf(integ, c1, Y, xscale, xcut)
            f1 = mp.log(val / pm)
            if f1 == f0:
                break
            c2 = c1 - f1 * (c1 - c0) / (f1 - f0)
            c0, f0, c1 = c1, f1, c2
            if abs(c1 - c0) < mp.mpf(10) ** (-(DPS - 6)) * abs(c1):
                break
        c = c1
        if abs(c - c_start) < mp.mpf("1e-6") * c:
            break
    val, err = _sf(integ, c, Y, xscale, xcut)
    resid = abs(val - pm) / pm
    return dict(family=family, alpha=alpha, d=d, p=p,
                isf=mp.nstr(c * scale, 30), dps=DPS,
                sf_residual=mp.nstr(resid, 3), quad_err=mp.nstr(err, 3))


def _job(args):
    t0 = time.time()
    row = reference_isf(*args)
    row["seconds"] = round(time.time() - t0, 1)
    print(row, flush=True)
    return row


def main() -> None:
    """Compute the grid (cheapest first) and write the CSV as rows arrive."""
    jobs = [(f, a, d, p) for d in sorted(DIMS) for a in sorted(ALPHAS, reverse=True)
            for f in FAMILIES for p in PROBS]
    only = os.environ.get("GCHI2_REF_DIMS")
    if only:
        keep = {int(x) for x in only.split(",")}
        jobs = [j for j in jobs if j[2] in keep]
    nproc = int(os.environ.get("GCHI2_REF_PROCS", "2"))
    fields = ["family", "alpha", "d", "p", "isf", "dps", "sf_residual", "quad_err"]
    done = {}
    if os.path.exists(OUT):
        with open(OUT, newline="") as fh:
            for r in csv.DictReader(fh):
                done[(r["family"], float(r["alpha"]), int(r["d"]), float(r["p"]))] = r
    todo = [j for j in jobs if j not in done]

    def write():
        rows = sorted(done.values(), key=lambda r: (r["family"], float(r["alpha"]),
                                                    int(r["d"]), -float(r["p"])))
        tmp = OUT + ".tmp"
        with open(tmp, "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=fields)
            wr.writeheader()
            for r in rows:
                wr.writerow({k: r[k] for k in fields})
        os.replace(tmp, OUT)

    with Pool(nproc) as pool:
        for row in pool.imap_unordered(_job, todo, chunksize=1):
            done[(row["family"], row["alpha"], row["d"], row["p"])] = row
            write()
    print(f"wrote {OUT} ({len(done)} rows)")


if __name__ == "__main__":
    main()
