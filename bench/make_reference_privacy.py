"""Reference noise levels of the analytic Gaussian mechanism, to 50 digits.

Computes, with mpmath and independently of egmlib, the smallest ``sigma`` with
``Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma) <= delta``
(Balle and Wang 2018, Theorem 8; unit sensitivity) on the grid

* ``epsilon``: 25 points, log-spaced over ``[1e-3, 50]``,
* ``delta``: 0.5, 1e-1, 1e-3, 1e-6, 1e-9, 1e-12, 1e-15,

and writes ``bench/reference_privacy.csv`` with columns ``epsilon``, ``delta``
(the ``repr`` of the double used, which reads back exactly) and ``sigma`` (50
significant digits).  Run from the repository root::

    .venv/bin/python bench/make_reference_privacy.py

The profile is evaluated by its defining formula at 90 digits of working
precision: its two terms cancel by at most ~10 digits on this grid, so more
than 70 correct digits remain.  The root is bracketed by bisection in
``log sigma`` and polished by Newton's method with the exact derivative
``d delta / d sigma = -phi(u) / sigma^2``; the last Newton correction is
checked to be below ``1e-55`` relative.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

OUT = Path(__file__).with_name("reference_privacy.csv")
EPSILONS = [float(e) for e in np.logspace(-3.0, math.log10(50.0), 25)]
DELTAS = [0.5, 1e-1, 1e-3, 1e-6, 1e-9, 1e-12, 1e-15]
DIGITS = 50


def profile(s: mp.mpf, eps: mp.mpf) -> mp.mpf:
    """Balle-Wang privacy profile at noise ratio ``s`` (mpmath, defining formula)."""
    u = eps * s - 1 / (2 * s)
    v = eps * s + 1 / (2 * s)
    return (mp.erfc(u / mp.sqrt(2)) - mp.exp(eps) * mp.erfc(v / mp.sqrt(2))) / 2


def reference_sigma(eps_f: float, delta_f: float) -> mp.mpf:
    """Smallest ``s`` with ``profile(s) <= delta`` (to ~80 digits)."""
    eps, delta = mp.mpf(eps_f), mp.mpf(delta_f)
    hi = mp.mpf(1)
    while profile(hi, eps) > delta:
        hi *= 2
    lo = hi / 2
    while profile(lo, eps) <= delta:
        lo /= 2
    for _ in range(60):  # bisection in log s to ~1e-18 relative
        mid = mp.sqrt(lo * hi)
        if profile(mid, eps) > delta:
            lo = mid
        else:
            hi = mid
    s = mp.sqrt(lo * hi)
    for _ in range(30):
        u = eps * s - 1 / (2 * s)
        slope = -mp.npdf(u) / s**2
        correction = (profile(s, eps) - delta) / slope
        s -= correction
        if abs(correction) < mp.mpf(10) ** (-75) * s:
            break
    if not abs(correction) < mp.mpf(10) ** (-55) * s:
        raise RuntimeError(f"Newton did not converge for eps={eps_f!r}, delta={delta_f!r}")
    return s


def main() -> int:
    mp.mp.dps = 90
    rows = []
    for delta in DELTAS:
        for eps in EPSILONS:
            s = reference_sigma(eps, delta)
            rows.append((repr(eps), repr(delta), mp.nstr(s, DIGITS, strip_zeros=False)))
    with OUT.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["epsilon", "delta", "sigma"])
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
