"""Distribution of a positive quadratic form of a standard normal vector.

``Q = sum_j w_j Z_j**2`` with ``Z_j`` iid N(0, 1) and weights ``w_j >= 0``
(a *generalised chi-square* distribution with nonnegative weights, no
non-centrality and no normal term).  The book needs its upper quantile: the
squared clipping radius of the study is ``isf(1/n, (b * sigma)**2)``.

Public functions
----------------
sf(c, weights)   P(Q > c)
cdf(c, weights)  P(Q <= c)
isf(p, weights)  the c with P(Q > c) = p

All three are computed to (close to) full double precision *relative* accuracy,
also far in the upper tail, by inverting the moment generating function along
a contour through a saddle point; see the Notes of :func:`sf`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._validation import as_float_array, check_array, overflow_guard, warn_caller

__all__ = ["sf", "cdf", "isf"]

# Weights below these fractions of the largest weight are dropped (upper tail /
# lower tail).  See ``_drop_bound`` below and the Notes of :func:`sf`.
_TAU_UPPER = 1e-50
_TAU_LOWER = 1e-280
# Split between direct logarithms and the Taylor series in the cgf evaluator.
_RHO = 0.5
_TOL_CGF = 1e-19
# Truncate the contour where the integrand is below this fraction of its peak.
_TAIL = 1e-21
# Curvature of the parabola (in natural units): at most _GAMMA / 4 over the
# distance to the nearest branch point, at least _ALPHA_MIN (see _build).
_GAMMA = 0.5
_ALPHA_MIN = 0.02
# Resolution of the integrand: at most this change of its argument between
# neighbouring nodes wherever its modulus exceeds _SIGNIFICANT of its peak;
# otherwise the parabola is flattened (halved curvature), at most _SHAPES times.
_MAX_PHASE_STEP = 2.0 * math.pi / 3.0
_SIGNIFICANT = 1e-12
_SHAPES = 6


# --------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------
class _Weights(NamedTuple):
    scale: float          # the largest weight (unit of c)
    w: NDArray[np.float64]  # distinct kept weights / scale, descending (w[0] = 1)
    n: NDArray[np.float64]  # their multiplicities
    big: NDArray[np.bool_]  # w > 1/2 (1 - 2 w s is formed from u = 1 - 2 s)
    omw: NDArray[np.float64]  # 1 - w (exact for w >= 1/2)
    mean: float           # E Q / scale
    v0: float             # Var Q / scale**2 = K''(0)
    count: float          # number of kept weights (with multiplicity)


def _prepare(arr: NDArray[np.float64], tau: float, unit: float = 1.0) -> _Weights:
    """Normalise by the largest weight, drop weights <= tau * max, group ties.

    ``unit`` rescales the normalised weights (used for tiny c in the lower tail).
    """
    scale = float(arr.max())
    w = arr / scale
    w = w[w > tau]
    u, n = np.unique(w, return_counts=True)
    u = u[::-1] * unit
    n = n[::-1].astype(np.float64)
    with np.errstate(over="ignore"):
        v0 = 2.0 * float(n @ (u * u))
    return _Weights(scale / unit, u, n, u > 0.5, 1.0 - u, float(n @ u),
                    v0, float(n.sum()))


def _validate_weights(weights: ArrayLike) -> NDArray[np.float64]:
    arr = check_array("weights", weights, ndim=1, nonnegative=True)
    if not np.any(arr > 0):
        raise ValueError("weights must contain at least one value > 0, got all zeros")
    return arr


def _drop_bound(weights: ArrayLike, tau: float) -> float:
    """Bound on the relative change of P(Q > c) when small weights are dropped.

    Returns the number ``B`` of the Notes of
    :func:`sf`, such that dropping every weight ``w_j <= tau * max(w)`` changes
    ``P(Q > c)`` by at most ``B * P(Q_kept > c) + exp(-800)`` for every ``c``.
    """
    arr = _validate_weights(weights)
    w = arr / arr.max()
    m = float(w[w <= tau].sum())
    t = 2.0 * m + 3200.0 * tau
    if t > 0.5:
        return math.inf
    return 2.6 * math.sqrt(t)


# --------------------------------------------------------------------------
# saddle point
# --------------------------------------------------------------------------
def _one_minus_2ws(W: _Weights, s: float, u: float) -> NDArray[np.float64]:
    """1 - 2 w s for all weights, accurate also when s is close to 1/2."""
    if s <= 0.0:
        return 1.0 - 2.0 * s * W.w
    return np.where(W.big, W.omw + W.w * u, 1.0 - 2.0 * s * W.w)


def _upper_point(x: float) -> tuple[float, float]:
    """s = expit(x)/2 and u = 1 - 2 s, both without cancellation."""
    if x >= 0.0:
        e = math.exp(-x)
        return 0.5 / (1.0 + e), e / (1.0 + e)
    e = math.exp(x)
    return 0.5 * e / (1.0 + e), 1.0 / (1.0 + e)


def _saddle(W: _Weights, c: float, upper: bool) -> tuple[float, float]:
    """Root of K'(s) - 1/s = c, in (0, 1/2) if ``upper`` else in (-inf, 0).

    Safeguarded Newton in x = logit(2 s) (upper) or x = log(-s) (lower).
    Returns (s0, u0) with u0 = 1 - 2 s0 to working accuracy; only a rough root
    is needed (the inversion formula is exact for any s0 on the right side).
    """
    v = W.v0
    dm = c - W.mean
    root = math.sqrt(dm * dm + 4.0 * v)
    if upper:
        # positive root of v s^2 - dm s - 1 = 0, capped by the one-weight guess
        s = 2.0 / (root - dm) if dm < 0 else (dm + root) / (2.0 * v)
        s = min(s, 0.5 * (1.0 - min(W.n[0] / (c + 2.0), 0.999)))
        s = min(max(s, 1e-300), 0.5 - 1e-17)
        x = math.log(2.0 * s) - math.log1p(-2.0 * s)
        sign = 1.0
    else:
        if math.isfinite(root):
            s = (dm - root) / (2.0 * v) if dm > 0 else -2.0 / (root + dm)
        else:
            s = 0.0
        s = -max(-s, min((0.5 * W.count + 1.0) / c, 1e300))
        x = math.log(-s)
        sign = -1.0
    lo, hi = -math.inf, math.inf
    for _ in range(200):
        if upper:
            s, u = _upper_point(x)
            dsdx = s * u
        else:
            s = -math.exp(x)
            u = 1.0 - 2.0 * s
            dsdx = s
        q = W.w / _one_minus_2ws(W, s, u)
        g = sign * (float(W.n @ q) - c - 1.0 / s)
        slope = sign * (2.0 * float(W.n @ (q * q)) + 1.0 / (s * s)) * dsdx
        if g > 0.0:
            hi = min(hi, x)
        else:
            lo = max(lo, x)
        xn = x - max(min(g / slope, 4.0), -4.0)
        if not lo < xn < hi and math.isfinite(lo) and math.isfinite(hi):
            xn = 0.5 * (lo + hi)
        done = abs(xn - x) <= 1e-7 * max(1.0, abs(x))
        x = xn
        if done:
            break
    if upper:
        s, u = _upper_point(x)
        if u >= 0.5:
            s = 0.5 * (1.0 - u)   # exact, so that u == 1 - 2 s
        return s, u
    s = -math.exp(x)
    return s, 1.0 - 2.0 * s


# --------------------------------------------------------------------------
# the cumulant generating function along the contour
# --------------------------------------------------------------------------
def _cgf_nonlinear(r: NDArray[np.float64], n: NDArray[np.float64],
                   delta: NDArray[np.complex128]) -> NDArray[np.complex128]:
    """-1/2 sum_k n_k [log(1 - r_k d) + r_k d] at the complex points ``delta``.

    Terms with r_k |d| >= 1/2 are evaluated directly (real arithmetic for the
    modulus and the argument); the rest through the Taylor series
    1/2 sum_{m>=2} (sum_k n_k r_k^m) d^m / m, truncated where the remainder is
    below 1e-19 (weights grouped in tiers of r_k |d|max, each with its own order).
    """
    out = np.zeros(delta.shape, np.complex128)
    if delta.size == 0:
        return out
    dmax = float(np.max(np.abs(delta)))
    if dmax == 0.0:
        return out
    q = r * dmax
    nd = int(np.searchsorted(-q, -_RHO, side="right"))
    if nd:
        rd = r[:nd]
        x = np.multiply.outer(delta.real, rd)
        y = np.multiply.outer(delta.imag, rd)
        re = 0.5 * np.log1p(x * (x - 2.0) + y * y) + x
        im = np.arctan2(-y, 1.0 - x) + y
        out -= 0.5 * (re @ n[:nd] + 1j * (im @ n[:nd]))
    if nd == r.size:
        return out
    qs = q[nd:]
    ns = n[nd:]
    coef = np.zeros(1)
    edges = (_RHO, 0.1, 1e-2, 1e-4, 1e-8, 1e-100)
    start = 0
    for j in range(1, len(edges)):
        stop = int(np.searchsorted(-qs, -edges[j], side="left"))
        if stop > start:
            qt = qs[start:stop]
            nt = ns[start:stop]
            qmax = float(qt[0])
            ntot = float(nt.sum())
            order = 2
            while (ntot * qmax ** (order + 1) / (2.0 * (order + 1) * (1.0 - qmax))
                   > _TOL_CGF / 8.0 and order < 200):
                order += 1
            powers = np.cumprod(np.broadcast_to(qt[:, None], (qt.size, order)), axis=1)
            sums = nt @ powers
            if coef.size < order + 1:
                coef = np.concatenate([coef, np.zeros(order + 1 - coef.size)])
            coef[2:order + 1] += sums[1:]
        start = stop
    order = coef.size - 1
    if order >= 2:
        coef = 0.5 * coef[2:] / np.arange(2, order + 1)
        z = delta / dmax
        vander = np.cumprod(np.broadcast_to(z[:, None], (z.size, order)), axis=1)
        out += vander[:, 1:] @ coef
    return out


def _cgf_on_nodes(r, n, delta):
    """_cgf_nonlinear on node groups of increasing |delta| (fewer direct logs)."""
    mod = np.abs(delta)
    dmax = float(mod.max()) if mod.size else 0.0
    out = np.empty(delta.shape, np.complex128)
    lo = 0
    for frac in (0.25, 0.5, 1.0):
        hi = int(np.searchsorted(mod, frac * dmax, side="right")) if frac < 1.0 else mod.size
        if hi > lo:
            out[lo:hi] = _cgf_nonlinear(r, n, delta[lo:hi])
        lo = max(lo, hi)
    return out


# --------------------------------------------------------------------------
# contour
# --------------------------------------------------------------------------
class _Contour(NamedTuple):
    upper: bool           # s0 > 0 (gives P(Q > c)) or s0 < 0 (gives P(Q <= c))
    c0: float             # c at which it was built (normalised units)
    s0: float
    u0: float             # 1 - 2 s0
    k0: float             # K(s0)
    kp: float             # K'(s0)
    sb: float             # sqrt(psi''(0)), natural scale of c
    dl: NDArray[np.complex128]   # s - s0 at the nodes
    cg: NDArray[np.complex128]   # K(s) - K(s0) - K'(s0) (s - s0) at the nodes
    lg: NDArray[np.complex128]   # log(s / s0) at the nodes
    fac: NDArray[np.complex128]  # 1 - 2 i a y (from ds/dy)
    wt: NDArray[np.float64]      # trapezoid weights in y, divided by pi
    ok: bool              # discretisation check passed


def _strip(al: float, z: float) -> float:
    """|Im t| of the nearest preimage of the real point z under z = al t^2 + i t."""
    if z > 0.0:
        q = 4.0 * al * z
        return 1.0 / (2.0 * al) if q >= 1.0 else 2.0 * z / (1.0 + math.sqrt(1.0 - q))
    return 2.0 * (-z) / (1.0 + math.sqrt(1.0 + 4.0 * al * (-z)))


def _probe(W: _Weights, r, c: float, s0: float, sb: float, al: float) -> float:
    """Where |integrand| has dropped below _TAIL on the parabola of shape ``al``
    (probes at t = 4 * 1.25^j), or -1 if it first rises above e^2 times its
    value at the saddle point."""
    t = 4.0
    while t < 1e4:
        dp = (al * t * t + 1j * t) / sb
        x = r * dp.real
        y = r * dp.imag
        logmod = (-0.25 * float(W.n @ np.log1p(x * (x - 2.0) + y * y)) - c * dp.real
                  - math.log(abs(1.0 + dp / s0)) + math.log(abs(1.0 - 2j * al * t)))
        if logmod > 2.0:
            return -1.0
        if logmod < math.log(_TAIL):
            return t
        t *= 1.25
    return t


def _build(W: _Weights, c: float, upper: bool) -> _Contour:
    """Saddle point, parabola, step and truncation for P at normalised c."""
    s0, u0 = _saddle(W, c, upper)
    d0 = _one_minus_2ws(W, s0, u0)
    r = 2.0 * W.w / d0
    if upper:
        logs = np.where(W.big, np.log(d0), np.log1p(-2.0 * s0 * W.w))
    else:
        logs = np.log1p(-2.0 * s0 * W.w)
    k0 = -0.5 * math.fsum(W.n * logs)
    nr = W.n * r
    kp = 0.5 * float(nr.sum())
    nr2 = nr * r
    b2 = 0.5 * float(nr2.sum()) + 1.0 / (s0 * s0)
    b3 = float(nr2 @ r) - 2.0 / (s0 * s0 * s0)
    sb = math.sqrt(b2)
    zb = sb / float(r[0])            # nearest branch point, in units of 1/sb
    zp = -s0 * sb                    # the pole at s = 0
    al = max(min(b3 / (6.0 * b2 * sb), _GAMMA * 0.25 / zb), _ALPHA_MIN)
    for _shape in range(_SHAPES):
        ct, al = _discretise(W, r, c, upper, s0, u0, k0, kp, sb, zb, zp, al)
        if ct is not None and ct.ok:
            return ct
        if ct is not None:       # resolved, but the step check failed 4 times
            break
        # The integrand oscillates faster than the step resolves: the parabola
        # passes too close above a dense run of branch points.  Flatten it.
        al *= 0.5
    if ct is None:
        ct, al = _discretise(W, r, c, upper, s0, u0, k0, kp, sb, zb, zp, al, force=True)
    warn_caller(f"egmlib.gchi2: the quadrature self-check failed at c = {c!r} (normalised); "
                "the result may be inaccurate")
    return ct._replace(ok=False)


def _phase_step(em: NDArray[np.complex128]) -> float:
    """Largest change of the argument of the integrand between neighbouring
    nodes, over the nodes where its modulus exceeds _SIGNIFICANT of its peak.

    The local frequency of the integrand grows continuously from 0 at the
    saddle point, so if the step were too coarse somewhere, the per-step phase
    change would pass through values near pi on the way: a step checked only
    against twice the step can be fooled when the phase advances by a whole
    turn per step (both sums then carry the same aliasing error); this can't.
    """
    if not np.isfinite(em).all():
        return math.inf
    mod = np.abs(em)
    big = mod > _SIGNIFICANT * mod.max()
    keep = big[:-1] & big[1:]
    if not keep.any():
        return 0.0
    return float(np.max(np.abs(np.angle(em[1:][keep] * np.conj(em[:-1][keep])))))


def _step_agrees(fine: float, coarse: float, h: float, strip: float) -> bool:
    """The trapezoid sum with step h agrees with the one with step 2h to within
    100 times the error predicted for step 2h (the nearer of the strip
    half-width ``strip`` and the Gaussian decay sets it), or 1e-14."""
    pred = max(2.0 * math.exp(-2.0 * math.pi ** 2 / (2.0 * h) ** 2),
               math.exp(-2.0 * math.pi * 0.9 * strip / (2.0 * h)))
    return fine > 0.0 and abs(fine - coarse) <= max(100.0 * pred, 1e-14) * fine


def _discretise(W: _Weights, r, c: float, upper: bool, s0: float, u0: float, k0: float,
                kp: float, sb: float, zb: float, zp: float, al: float,
                force: bool = False) -> tuple[_Contour | None, float]:
    """Truncation and step on the parabola of shape ``al``.

    Returns the contour and the shape used (``al`` is flattened further if the
    parabola climbs over a ridge).  The contour is None if the integrand is not
    resolved (see _phase_step) and not ``force``, and has ok=False if the step
    check failed after four halvings.
    """
    # Truncation point from the modulus of the integrand at probe points.  If
    # the parabola climbs over a ridge of |exp(K(s) - s c)| (dense clusters of
    # branch points), flatten it (smaller a) until the modulus decays.
    for _flatten in range(8):
        tmax = _probe(W, r, c, s0, sb, al)
        if tmax > 0.0:
            break
        al *= 0.25
    else:
        tmax = 1e4
    strip = min(_strip(al, zb), _strip(al, zp))
    h = min(math.pi * math.sqrt(2.0 / math.log(2e18)),
            2.0 * math.pi * 0.9 * strip / math.log(1e20))
    if tmax / h > 2e5:                                     # pragma: no cover
        h = tmax / 2e5
    for _refine in range(4):
        nodes = int(math.ceil(tmax / h)) + 1
        if nodes % 2 == 0:
            nodes += 1
        t = h * np.arange(nodes)
        dl = (al * t * t + 1j * t) / sb
        cg = _cgf_on_nodes(r, W.n, dl)
        lg = np.log1p(dl / s0)
        fac = 1.0 - 2j * al * t
        wt = np.full(nodes, h / (math.pi * sb))
        wt[0] *= 0.5
        ct = _Contour(upper, c, s0, u0, k0, kp, sb, dl, cg, lg, fac, wt, True)
        em = np.exp(cg + (kp - c) * dl - lg) * fac
        if not force and _phase_step(em) > _MAX_PHASE_STEP:
            return None, al
        if _step_agrees(float(wt @ em.real), 2.0 * float(wt[::2] @ em.real[::2]), h, strip):
            return ct, al
        h *= 0.5
    return ct._replace(ok=False), al


def _log_mass(ct: _Contour, c: float) -> tuple[float, float, bool]:
    """log P, density f and a truncation flag at normalised c on contour ct.

    P = P(Q > c) if ct.upper else P(Q <= c); f is the density of Q / scale.
    """
    ed = np.exp(ct.cg + (ct.kp - c) * ct.dl) * ct.fac
    em = ed * np.exp(-ct.lg)
    tm = float(ct.wt @ em.real)
    td = float(ct.wt @ ed.real)
    if ct.upper and ct.u0 < 0.5:
        # s0 c = c/2 - c u0 / 2, with the product split exactly
        p, e = _two_prod(c, ct.u0)
        a = math.fsum([ct.k0, -0.5 * c, 0.5 * p, 0.5 * e])
    else:
        p, e = _two_prod(ct.s0, c)
        a = math.fsum([ct.k0, -p, -e])
    if not tm > 0.0:
        return -math.inf, 0.0, False
    logm = a + math.log(tm / abs(ct.s0))
    dens = math.exp(a) * td if a < 700.0 else math.inf
    tail_ok = abs(em[-1]) <= 1e-18 * tm / ct.wt[-1]
    return logm, dens, bool(tail_ok)


def _two_prod(a: float, b: float) -> tuple[float, float]:
    """a * b = p + e exactly (Dekker)."""
    p = a * b
    t = 134217729.0 * a
    ah = t - (t - a)
    al = a - ah
    t = 134217729.0 * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


# --------------------------------------------------------------------------
# scalar kernels (normalised units)
# --------------------------------------------------------------------------
class _Pair(NamedTuple):
    up: _Weights
    low: _Weights
    arr: NDArray[np.float64]


def _pair(arr: NDArray[np.float64]) -> _Pair:
    return _Pair(_prepare(arr, _TAU_UPPER), _prepare(arr, _TAU_LOWER), arr)


def _evaluate(P: _Pair, c: float, ct: _Contour | None = None):
    """(contour, log S, log F, f) at normalised c (units of max weight).

    Reuses ``ct`` when c is within 0.3 natural units of where it was built.
    """
    if c <= 0.0:
        return ct, 0.0, -math.inf, 0.0
    Wu = P.up
    if c > 4.0 * (746.0 + 0.35 * Wu.count):
        return ct, -math.inf, 0.0, 0.0       # P(Q > c) < 1e-324 (Chernoff, s = 1/4)
    res = None
    if ct is not None and abs(c - ct.c0) <= 0.3 * ct.sb:
        res = _log_mass(ct, c)
        if not res[2]:
            res = None
    if res is None:
        upper = c >= Wu.mean
        if upper:
            ct = _build(Wu, c, True)
            res = _log_mass(ct, c)
        else:
            if c < 1e-300:
                return ct, 0.0, -math.inf, 0.0   # P(Q <= c) < 1e-150: reported as 0
            Wl = P.low
            if c < 1e-100:
                Wl = _prepare(P.arr, _TAU_LOWER, unit=1.0 / c)
                ct = _build(Wl, 1.0, False)
                lm, dens, ok = _log_mass(ct, 1.0)
                return None, _log1mexp(lm), lm, dens / c
            ct = _build(Wl, c, False)
            res = _log_mass(ct, c)
    lm, dens, _ = res
    if ct.upper:
        return ct, lm, _log1mexp(lm), dens
    return ct, _log1mexp(lm), lm, dens


def _log1mexp(x: float) -> float:
    """log(1 - exp(x)) for x <= 0."""
    if x >= 0.0:
        return -math.inf
    if x > -0.6931471805599453:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def _pearson(W: _Weights, prob: float, upper: bool) -> float:
    """Three-moment (shifted gamma) approximation of a quantile."""
    s2 = float(W.n @ (W.w * W.w))
    s3 = float(W.n @ (W.w ** 3))
    theta = 2.0 * s3 / s2
    nu = 2.0 * s2 / theta ** 2
    shift = W.mean - nu * theta
    g = special.gammainccinv(nu, prob) if upper else special.gammaincinv(nu, prob)
    return shift + theta * float(g)


def _small_c(W: _Weights, q: float) -> float:
    """c with (c/2)^(N/2) / (Gamma(N/2 + 1) prod sqrt(w)) = q, a lower bound
    of the quantile P(Q <= c) = q (the left side bounds the cdf from above)."""
    half = 0.5 * W.count
    lw = float(W.n @ np.log(W.w))
    return 2.0 * math.exp((math.log(q) + math.lgamma(half + 1.0) + 0.5 * lw) / half)


def _isf_norm(P: _Pair, p: float) -> float:
    """Quantile in normalised units; Newton on log P with bracketing."""
    if p >= 1.0:
        return 0.0
    upper = p <= 0.5
    if upper:
        target = math.log(p)
        c = _pearson(P.up, p, True)
        if not c > 0.0:
            c = P.up.mean
    else:
        q = 1.0 - p               # exact for p in [1/2, 1]
        target = math.log(q)
        guess = _pearson(P.low, q, False)
        c = max(guess if guess > 0 else 0.0, _small_c(P.low, q))
    lo, hi = 0.0, math.inf
    ct = None
    for _ in range(200):
        ct, ls, lf, dens = _evaluate(P, c, ct)
        if upper:
            g = ls - target
            if g == 0.0:
                return c
            if g > 0.0:
                lo = c
            else:
                hi = c
            slope = -dens / math.exp(ls) if ls > -745.0 else -math.inf
            cn = c - g / slope if slope < 0.0 else math.nan
        else:
            g = lf - target
            if g == 0.0:
                return c
            if g < 0.0:
                lo = c
            else:
                hi = c
            slope = c * dens / math.exp(lf) if lf > -745.0 else math.inf
            cn = c * math.exp(max(min(-g / slope, 50.0), -50.0)) if slope > 0.0 else math.nan
        if abs(cn - c) <= 2e-15 * c:
            return cn
        if not lo < cn < hi:
            if lo > 0.0 and math.isfinite(hi):
                cn = math.sqrt(lo * hi)
            elif math.isfinite(hi):
                cn = 0.5 * hi
            else:
                cn = 2.0 * c
        if math.isfinite(hi) and hi - lo <= 4e-16 * hi:
            return 0.5 * (lo + hi)
        c = cn
    raise RuntimeError("isf: no convergence")  # pragma: no cover


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def _as_c(c: ArrayLike) -> NDArray[np.float64]:
    arr = as_float_array("c", c)
    if np.any(np.isnan(arr)):
        raise ValueError(f"c must not contain NaN (any real value or +-inf is accepted), got {c!r}")
    return arr


def _tails(c: ArrayLike, weights: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    carr = _as_c(c)
    arr = _validate_weights(weights)
    P = _pair(arr)
    flat = carr.ravel()
    s_out = np.empty(flat.size)
    f_out = np.empty(flat.size)
    for i, ci in enumerate(flat):
        cn = ci / P.up.scale
        if math.isinf(cn):
            s_out[i], f_out[i] = (0.0, 1.0) if cn > 0 else (1.0, 0.0)
            continue
        _, ls, lf, _ = _evaluate(P, cn)
        s_out[i] = math.exp(ls)
        f_out[i] = math.exp(lf)
    return s_out.reshape(carr.shape), f_out.reshape(carr.shape), carr.ndim == 0


@overflow_guard
def sf(c: ArrayLike, weights: ArrayLike) -> float | NDArray[np.float64]:
    """Survival function P(Q > c) of Q = sum_j w_j Z_j**2, Z_j iid N(0, 1).

    Parameters
    ----------
    c : array_like of float
        Threshold(s); any real value or +-inf (NaN is rejected).  For c <= 0
        the result is exactly 1 (Q > 0 almost surely).
    weights : array_like of float, 1-D
        The weights w_j >= 0, finite, not all zero.

    Returns
    -------
    float or ndarray
        P(Q > c), a float for scalar ``c``, else an array of ``c``'s shape.
        Values below the smallest double underflow to 0.0.

    Raises
    ------
    ValueError
        If ``weights`` is empty, not 1-D, contains a negative, NaN or infinite
        value or is all zero, or if ``c`` contains NaN.

    Notes
    -----
    *Inversion formula.*  With K(s) = -1/2 sum_j log(1 - 2 w_j s) the cumulant
    generating function (analytic for Re s < 1/(2 max w)), for every real
    s0 in (0, 1/(2 max w))

    .. math:: P(Q > c) = \\frac{1}{2\\pi i}\\int_{s_0-i\\infty}^{s_0+i\\infty}
              \\frac{e^{K(s) - s c}}{s}\\,ds ,

    and for s0 < 0 the same integral equals -P(Q <= c) (the pole at s = 0 has
    residue 1).  The vertical line is deformed into the parabola
    s(y) = s0 + a y^2 + i y, a > 0: it meets the real axis only at s0, so no
    singularity (all lie on the real axis) lies between the two paths, and
    exp(-s c) decays like exp(-a c y^2) along it.  By conjugate symmetry

    .. math:: P = \\frac{1}{\\pi}\\int_0^\\infty
              \\mathrm{Re}\\Big[\\frac{e^{K(s)-sc}}{s}\\,(1 - 2 i a y)\\Big]\\,dy .

    s0 is the saddle point of K(s) - s c - log|s| on the side of 0 that gives
    the *smaller* tail (s0 > 0 if c >= E Q, else s0 < 0 and P(Q > c) = 1 - P(Q <= c)),
    so the integrand is a positive bump at y = 0 and no precision is lost to
    cancellation.  The curvature a follows the path of steepest descent, kept
    away from the nearest branch point, and is reduced further if probes show
    the modulus of the integrand rising along the parabola (dense clusters of
    branch points create such ridges just above the real axis); the integral is taken by the
    trapezoidal rule, which converges geometrically for such analytic,
    rapidly decaying integrands (reference 3 below), with the step chosen
    from the distance to the nearest singularity (error model exp(-2 pi d / h))
    and checked against the rule with twice the step.  That check alone can be
    fooled: when the parabola passes just above a dense run of branch points
    the integrand turns fast, and if its phase advances by a whole turn per
    step both sums carry the same aliasing error (seen for d = 1e4: sums that
    agreed to 2e-8 and were both 0.2 % off, or to 2e-5 and 4 % off).  So the argument of the integrand must also change
    by less than 2 pi / 3 between neighbouring nodes wherever its modulus
    exceeds 1e-12 of the peak; the local frequency grows continuously from 0
    at the saddle point, so an unresolved step cannot hide from this test.
    Where it fails the parabola is flattened (curvature halved).  The sum is truncated
    where the integrand is below 1e-21 of its peak.  K is evaluated relative to
    K(s0) (log1p, and a Taylor series of log(1 - z) for the many small terms),
    the factor exp(K(s0) - s0 c) in compensated arithmetic.  The relative error
    is then a few units of 1e-16 times the condition number c f(c) / P(Q > c)
    (which is ~ c / (2 max w) in the far tail): the rounding of c itself
    already perturbs the answer by that much.

    *Dropping tiny weights.*  Weights with w_j <= tau max(w) are dropped,
    tau = 1e-50 when c >= E Q and tau = 1e-280 below the mean.  Write (after
    dividing by max w) Q = A + R, where R is the sum of the dropped terms
    w_j Z_j^2, m the sum of the dropped weights, and A the kept part, which
    contains the largest weight: A = Z_1^2 + B with B >= 0 independent of Z_1.  Then for every c and every t in (2 m, 1/2]

    .. math:: 0 \\le P(Q > c) - P(A > c) \\le 2.6\\sqrt{t}\\,P(A > c)
              + e^{-(t - 2m)/(4\\tau)} .

    Proof: P(Q > c) - P(A > c) = P(A <= c < A + R) <= P(c - t < A <= c) + P(R > t).
    Chernoff with lambda = 1/(4 tau) (so 2 lambda w_j <= 1/2 and
    -log(1 - x)/2 <= x there) gives P(R > t) <= exp(-(t - 2 m)/(4 tau)).
    With g(y) = P(y - t < Z_1^2 <= y) and S_1(y) = P(Z_1^2 > y):
    for 0 < y <= 1, g(y) <= P(Z_1^2 <= t) <= sqrt(2 t / pi) and S_1(y) >= S_1(1) > 0.317,
    so g <= 2.52 sqrt(t) S_1; for y > 1, g(y) <= t f_1(y - t) and the Mills
    ratio bound S_1(y) >= 2 phi(sqrt y) sqrt y / (1 + y) give
    g <= sqrt(2) e^{t/2} t S_1 <= 1.3 sqrt(t) S_1.  Averaging over B,
    P(c - t < A <= c) = E g(c - B) <= 2.6 sqrt(t) E S_1(c - B) = 2.6 sqrt(t) P(A > c).
    With t = 2 m + 3200 tau the second term is exp(-800) < 1e-347, far below
    the smallest double, and since m <= d tau the relative error is at most
    2.6 sqrt((2 d + 3200) tau), i.e. below 1e-20 for tau = 1e-50 and any
    d <= 1e9.  Dropped weights therefore never change a returned upper tail
    probability (nor, via monotonicity, a quantile) beyond rounding.  Below the
    mean (tau = 1e-280) the same bound makes the absolute error < 1e-135.

    For 0 < c < 1e-300 max(w) the lower tail P(Q <= c) < 1e-150 is reported
    as 0 (so :func:`sf` returns 1 and :func:`cdf` returns 0 there).

    References
    ----------
    .. [1] poulsen2023: T. S. Poulsen, Differentially private vector sums in the
       case of normally distributed data (2023), Section 4.
    .. [2] imhof1961: J. P. Imhof, Computing the distribution of quadratic forms
       in normal variables, Biometrika 48 (1961).
    .. [3] trefethen2014: L. N. Trefethen and J. A. C. Weideman, The
       exponentially convergent trapezoidal rule, SIAM Review 56 (2014).

    Examples
    --------
    >>> from egmlib.gchi2 import sf
    >>> print(f"{sf(3.84145882069412, [1.0]):.6f}")      # chi-square(1), 95 %
    0.050000
    >>> print(f"{sf(10.0, [2.0, 2.0]):.6f}")             # exponential, mean 4
    0.082085
    >>> print(sf([-1.0, 0.0], [1.0, 0.5]))
    [1. 1.]
    """
    s, _, scalar = _tails(c, weights)
    return float(s) if scalar else s


@overflow_guard
def cdf(c: ArrayLike, weights: ArrayLike) -> float | NDArray[np.float64]:
    """Cumulative distribution function P(Q <= c) of Q = sum_j w_j Z_j**2.

    Parameters
    ----------
    c : array_like of float
        Threshold(s); any real value or +-inf (NaN is rejected).  For c <= 0
        the result is 0.
    weights : array_like of float, 1-D
        The weights w_j >= 0, finite, not all zero.

    Returns
    -------
    float or ndarray
        P(Q <= c), shaped like ``c``.  Below the mean it is computed directly
        (relative accuracy also deep in the lower tail); above the mean it is
        1 - P(Q > c).

    Raises
    ------
    ValueError
        As :func:`sf`.

    Notes
    -----
    Same method as :func:`sf` (the contour crosses the real axis at s0 < 0
    when c < E Q).  Weights below 1e-280 max(w) are dropped, which changes
    the result by less than 1e-135 in absolute terms (Notes of :func:`sf`).

    Examples
    --------
    >>> from egmlib.gchi2 import cdf
    >>> print(f"{cdf(1.0, [1.0]):.6f}")                  # P(|Z| <= 1)
    0.682689
    >>> print(f"{cdf(1e-6, [1.0, 1.0]):.6e}")            # 1 - exp(-c/2)
    5.000000e-07
    """
    _, f, scalar = _tails(c, weights)
    return float(f) if scalar else f


@overflow_guard
def isf(p: ArrayLike, weights: ArrayLike) -> float | NDArray[np.float64]:
    """Upper-tail quantile: the c with P(Q > c) = p, Q = sum_j w_j Z_j**2.

    Parameters
    ----------
    p : array_like of float
        Tail probability (probabilities) in (0, 1]; ``isf(1, w) = 0``.
    weights : array_like of float, 1-D
        The weights w_j >= 0, finite, not all zero.

    Returns
    -------
    float or ndarray
        The quantile(s), shaped like ``p``.

    Raises
    ------
    ValueError
        If ``p`` is outside (0, 1] or NaN, or the weights are invalid (see :func:`sf`).

    Notes
    -----
    Newton's method on log P(Q > c) - log p (on log P(Q <= c) - log(1 - p) in
    the variable log c when p > 1/2), started from a three-moment (shifted
    gamma) approximation, safeguarded by bisection, and stopped when the step
    is below 2e-15 c.  P and the density come from the same contour integral
    (:func:`sf`); the contour is reused while c stays within 0.3 natural
    units of where it was built, so a quantile usually costs one contour.
    The returned c is accurate to about 1e-14 relative (at most 9.3e-15 against
    40-digit references on the 240-point Zipf grid of ``bench/``).  In the book
    the squared clipping radius is ``isf(1 / n, (b * sigma) ** 2)``.

    Examples
    --------
    >>> from egmlib.gchi2 import isf
    >>> print(f"{isf(0.05, [1.0]):.6f}")                 # chi-square(1)
    3.841459
    >>> print(f"{isf(0.05, [0.5, 0.5]):.6f}")            # exponential, mean 1
    2.995732
    >>> print(f"{isf(1e-12, [1.0, 0.1, 0.01]):.6f}")
    50.959653
    """
    parr = as_float_array("p", p)
    bad = ~((parr > 0.0) & (parr <= 1.0))
    if np.any(bad):
        raise ValueError(f"p must be in (0, 1], got {parr[bad].ravel()[0]!r}")
    arr = _validate_weights(weights)
    P = _pair(arr)
    flat = parr.ravel()
    out = np.empty(flat.size)
    for i, pi in enumerate(flat):
        out[i] = _isf_norm(P, float(pi)) * P.up.scale
    out = out.reshape(parr.shape)
    return float(out) if parr.ndim == 0 else out
