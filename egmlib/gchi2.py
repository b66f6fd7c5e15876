"""Distribution of a positive quadratic form of a standard normal vector.

``Q = sum_j w_j Z_j**2`` with ``Z_j`` iid N(0, 1) and weights ``w_j >= 0``
(a *generalised chi-square* distribution with nonnegative weights, no
non-centrality and no normal term).  The book needs its upper quantile: the
squared clipping radius of the study is ``isf(1/n, (b * sigma)**2)``.

The public functions:

- ``sf(c, weights)``: P(Q > c);
- ``cdf(c, weights)``: P(Q <= c);
- ``pdf(c, weights)``: the density of Q at c;
- ``isf(p, weights)``: the c with P(Q > c) = p;
- ``isf_gradient(p, weights)``: that c and its gradient dc/dw_j = E[Z_j**2 | Q = c];
- ``GeneralizedChi2(weights)``: one ``Q`` with its weights validated and prepared
  once, for callers that ask many questions of it (the quantile from a starting
  guess, its gradient, and the clipping moment ``sum_j a_j E[(1 - C/sqrt(Q))_+^2 Z_j^2]``).

All are computed to (close to) full double precision *relative* accuracy,
also far in the upper tail, by inverting the moment generating function along
a contour through a saddle point; see the Notes of :func:`sf`.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._validation import as_float_array, check_array, check_real, overflow_guard, warn_caller

__all__ = ["sf", "cdf", "isf", "pdf", "isf_gradient", "GeneralizedChi2"]

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
# reductions without BLAS
# --------------------------------------------------------------------------
# Sums over the weights and the nodes are numpy's pairwise sums, not BLAS dot
# products: a multithreaded BLAS sums in an order that depends on its thread
# count (the last bits of a result would too), and on a loaded machine its
# threads spin-wait; at d = 1e5 that made a quantile 5-10 times slower in CPU time.
def _dot(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """sum_k a_k b_k (pairwise summation)."""
    return float(np.sum(a * b))


_EXTENDED = np.finfo(np.longdouble).eps < 1e-18


def _accurate_sum(t: NDArray[np.float64]) -> float:
    """sum_k t_k rounded once: pairwise in 80-bit extended precision where
    numpy's longdouble has it (error ~``1e-19`` log2(d) sum|t_k|, below half an
    ulp of the result when the terms have one sign), else math.fsum."""
    if _EXTENDED:
        return float(np.sum(t, dtype=np.longdouble))
    return math.fsum(t)                                     # pragma: no cover


def _matvec(m: NDArray, v: NDArray) -> NDArray:
    """m @ v, summed by numpy (pairwise) instead of BLAS."""
    return np.sum(m * v, axis=-1)


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
        v0 = 2.0 * _dot(n, u * u)
    return _Weights(scale / unit, u, n, u > 0.5, 1.0 - u, _dot(n, u),
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
    out = 1.0 - (2.0 * s) * W.w
    if s > 0.0:
        nb = int(np.searchsorted(-W.w, -0.5, side="left"))    # the weights > 1/2 lead
        out[:nb] = W.omw[:nb] + W.w[:nb] * u
    return out


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
        g = sign * (_dot(W.n, q) - c - 1.0 / s)
        slope = sign * (2.0 * _dot(W.n, q * q) + 1.0 / (s * s)) * dsdx
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
    below ``1e-19`` (each weight with its own order, from r_k |d|max; the weights
    taking part in power m are a prefix, since r_k is descending).
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
        out -= 0.5 * (_matvec(re, n[:nd]) + 1j * _matvec(im, n[:nd]))
    if nd == r.size:
        return out
    qs = q[nd:]
    ns = n[nd:]
    # per-weight orders: the terms beyond them add up to at most _TOL_CGF / 16
    lengths = _series_lengths(qs, _TOL_CGF / (8.0 * float(ns.sum())))
    top = lengths.size - 1
    if top >= 2:
        n2 = int(lengths[2])
        if n2 * top <= _SMALL:               # one table (extra tiny terms are harmless)
            sums = np.einsum("j,jm->m", ns[:n2], _power_table(qs[:n2], top))
        else:
            sums = np.empty(top + 1)
            term = ns[:n2] * qs[:n2] ** 2
            sums[2] = term.sum()
            for m in range(3, top + 1):      # the weights taking part shrink with m
                term = term[:lengths[m]] * qs[:lengths[m]]
                sums[m] = term.sum()
        coef = 0.5 * sums[2:] / np.arange(2, top + 1)
        out += _matvec(_vander(delta / dmax, top)[:, 2:], coef)
    return out


def _cgf_groups(r, n, delta):
    """_cgf_nonlinear on node groups of increasing |delta| (fewer direct logs):
    yields (end, values) for consecutive groups delta[start:end] (|delta| is
    increasing along the contour).  One group when there are many weights and
    few of them need direct logarithms anyway (each group costs a pass of
    power sums over the weights)."""
    mod = np.abs(delta)
    dmax = float(mod.max()) if mod.size else 0.0
    if r.size > _PROBE_MIN and (int(np.searchsorted(-r * dmax, -_RHO, side="right")) * mod.size
                                <= r.size):
        # few direct logarithms even on the outermost nodes: one group, one set
        # of power sums over the many weights
        yield mod.size, _cgf_nonlinear(r, n, delta)
        return
    lo = 0
    for frac in (0.25, 0.5, 1.0):
        hi = int(np.searchsorted(mod, frac * dmax, side="right")) if frac < 1.0 else mod.size
        if hi > lo:
            yield hi, _cgf_nonlinear(r, n, delta[lo:hi])
        lo = max(lo, hi)


def _cgf_on_nodes(r, n, delta):
    """_cgf_nonlinear on all nodes, in groups of increasing |delta|."""
    out = np.empty(delta.shape, np.complex128)
    lo = 0
    for hi, values in _cgf_groups(r, n, delta):
        out[lo:hi] = values
        lo = hi
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
    r: NDArray[np.float64]       # 2 w / (1 - 2 w s0) for the distinct kept weights
    d0: NDArray[np.float64]      # 1 - 2 w s0 for the distinct kept weights
    ok: bool              # discretisation check passed


def _strip(al: float, z: float) -> float:
    """|Im t| of the nearest preimage of the real point z under z = al t^2 + i t."""
    if z > 0.0:
        q = 4.0 * al * z
        return 1.0 / (2.0 * al) if q >= 1.0 else 2.0 * z / (1.0 + math.sqrt(1.0 - q))
    return 2.0 * (-z) / (1.0 + math.sqrt(1.0 + 4.0 * al * (-z)))


# Probes sum the weights with r |s - s0| <= _PROBE_RHO by the first _PROBE_ORDER
# terms of the series of log(1 - r (s - s0)), from suffix sums of n r^m (when
# there are more than _PROBE_MIN distinct weights); the log-modulus is then off
# by at most N 0.05^7 / (7 * 0.95) < 1.2e-10 N (N the number of weights), far
# below what a probe decides (thresholds log(_TAIL) = -48 and 2).
_PROBE_RHO = 0.05
_PROBE_ORDER = 6
_PROBE_MIN = 512


def _suffix_moments(W: _Weights, r: NDArray[np.float64], sb: float):
    """(k0, S) with S[m - 1, i] = sum_{j >= k0 + i} n_j r_j^m, m = 1.._PROBE_ORDER,
    for the weights that a probe may sum by series (r_j <= _PROBE_RHO sb / 4,
    since |s - s0| >= 4 / sb at every probe); None for few weights."""
    if r.size <= _PROBE_MIN:
        return None
    k0 = int(np.searchsorted(-r, -_PROBE_RHO * sb / 4.0, side="left"))
    rs = r[:k0 - 1:-1] if k0 else r[::-1]            # ascending
    out = np.empty((_PROBE_ORDER, rs.size))
    term = W.n[:k0 - 1:-1] if k0 else W.n[::-1]
    for m in range(_PROBE_ORDER):
        term = term * rs
        np.cumsum(term, out=out[m])
    return k0, out[:, ::-1]


def _probe(W: _Weights, r, c: float, s0: float, sb: float, al: float,
           mom: NDArray[np.float64] | None = None) -> float:
    """Where |integrand| has dropped below _TAIL on the parabola of shape ``al``
    (probes at t = 4 * 1.25^j), or -1 if it first rises above e^2 times its
    value at the saddle point.  ``mom``: _suffix_moments(W, r, sb), or None to sum
    every weight directly."""
    t = 4.0
    powers = np.arange(1, _PROBE_ORDER + 1)
    while t < 1e4:
        dp = (al * t * t + 1j * t) / sb
        nd = r.size if mom is None else max(
            int(np.searchsorted(-r, -_PROBE_RHO / abs(dp), side="right")), mom[0])
        x = r[:nd] * dp.real
        y = r[:nd] * dp.imag
        logmod = (-0.25 * _dot(W.n[:nd], np.log1p(x * (x - 2.0) + y * y)) - c * dp.real
                  - math.log(abs(1.0 + dp / s0)) + math.log(abs(1.0 - 2j * al * t)))
        if nd < r.size:
            # log|1 - r d| = -Re sum_m (r d)^m / m for the rest
            logmod += 0.5 * float(((dp ** powers / powers) * mom[1][:, nd - mom[0]]).real.sum())
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
    k0 = -0.5 * _accurate_sum(W.n * logs)
    nr = W.n * r
    kp = 0.5 * float(nr.sum())
    nr2 = nr * r
    b2 = 0.5 * float(nr2.sum()) + 1.0 / (s0 * s0)
    b3 = _dot(nr2, r) - 2.0 / (s0 * s0 * s0)
    sb = math.sqrt(b2)
    zb = sb / float(r[0])            # nearest branch point, in units of 1/sb
    zp = -s0 * sb                    # the pole at s = 0
    al = max(min(b3 / (6.0 * b2 * sb), _GAMMA * 0.25 / zb), _ALPHA_MIN)
    mom = _suffix_moments(W, r, sb)
    for _shape in range(_SHAPES):
        ct, al = _discretise(W, r, d0, c, upper, s0, u0, k0, kp, sb, zb, zp, al, mom=mom)
        if ct is not None and ct.ok:
            return ct
        if ct is not None:       # resolved, but the step check failed 4 times
            break
        # The integrand oscillates faster than the step resolves: the parabola
        # passes too close above a dense run of branch points.  Flatten it.
        al *= 0.5
    if ct is None:
        ct, al = _discretise(W, r, d0, c, upper, s0, u0, k0, kp, sb, zb, zp, al, force=True,
                             mom=mom)
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
    half-width ``strip`` and the Gaussian decay sets it), or ``1e-14``."""
    pred = max(2.0 * math.exp(-2.0 * math.pi ** 2 / (2.0 * h) ** 2),
               math.exp(-2.0 * math.pi * 0.9 * strip / (2.0 * h)))
    return fine > 0.0 and abs(fine - coarse) <= max(100.0 * pred, 1e-14) * fine


def _discretise(W: _Weights, r, d0, c: float, upper: bool, s0: float, u0: float, k0: float,
                kp: float, sb: float, zb: float, zp: float, al: float,
                force: bool = False, mom=None) -> tuple[_Contour | None, float]:
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
        tmax = _probe(W, r, c, s0, sb, al, mom)
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
        lg = np.log1p(dl / s0)
        fac = 1.0 - 2j * al * t
        cg = np.empty(nodes, np.complex128)
        lo = 0
        for hi, values in _cgf_groups(r, W.n, dl):
            cg[lo:hi] = values
            lo = hi
            # unresolved already on the inner nodes: skip the costly outer ones
            if not force and hi < nodes and _phase_step(
                    np.exp(cg[:hi] + (kp - c) * dl[:hi] - lg[:hi]) * fac[:hi]) > _MAX_PHASE_STEP:
                return None, al
        wt = np.full(nodes, h / (math.pi * sb))
        wt[0] *= 0.5
        ct = _Contour(upper, c, s0, u0, k0, kp, sb, dl, cg, lg, fac, wt, r, d0, True)
        em = np.exp(cg + (kp - c) * dl - lg) * fac
        if not force and _phase_step(em) > _MAX_PHASE_STEP:
            return None, al
        if _step_agrees(_dot(wt, em.real), 2.0 * _dot(wt[::2], em.real[::2]), h, strip):
            return ct, al
        h *= 0.5
    return ct._replace(ok=False), al


def _log_mass(ct: _Contour, c: float) -> tuple[float, float, bool, float]:
    """log P, density f, a truncation flag and log f at normalised c on contour ct.

    P = P(Q > c) if ct.upper else P(Q <= c); f is the density of Q / scale.
    """
    ed = np.exp(ct.cg + (ct.kp - c) * ct.dl) * ct.fac
    em = ed * np.exp(-ct.lg)
    tm = _dot(ct.wt, em.real)
    td = _dot(ct.wt, ed.real)
    a = _log_scale(ct, c)
    if not tm > 0.0:
        return -math.inf, 0.0, False, -math.inf
    logm = a + math.log(tm / abs(ct.s0))
    dens = math.exp(a) * td if a < 700.0 else math.inf
    logd = a + math.log(td) if td > 0.0 else -math.inf
    tail_ok = abs(em[-1]) <= 1e-18 * tm / ct.wt[-1]
    return logm, dens, bool(tail_ok), logd


def _log_scale(ct: _Contour, c: float) -> float:
    """K(s0) - s0 c in compensated arithmetic (the factor outside the sums)."""
    if ct.upper and ct.u0 < 0.5:
        # s0 c = c/2 - c u0 / 2, with the product split exactly
        p, e = _two_prod(c, ct.u0)
        return math.fsum([ct.k0, -0.5 * c, 0.5 * p, 0.5 * e])
    p, e = _two_prod(ct.s0, c)
    return math.fsum([ct.k0, -p, -e])


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
# integrals with the extra factor 1 / (1 - 2 w_j s): weight derivatives
# --------------------------------------------------------------------------
# Truncate the geometric series of 1 / (1 - q z), |z| <= 1, where its
# remainder q^(M+1) / (1 - q) is below this (relative to the sum of |terms|).
_TOL_RATIONAL = 1e-17


@functools.lru_cache(maxsize=64)
def _series_roots(tol: float) -> NDArray[np.float64]:
    """theta_m with theta^m / (1 - theta) = tol, m = 1..200 (fixed-point
    iteration; its contraction factor theta / (m (1 - theta)) is below 0.02
    for tol <= ``1e-17``)."""
    m = np.arange(1, 201, dtype=np.float64)
    theta = tol ** (1.0 / m)
    for _ in range(40):
        theta = (tol * (1.0 - theta)) ** (1.0 / m)
    theta.setflags(write=False)
    return theta


def _series_lengths(q: NDArray[np.float64], tol: float) -> NDArray[np.intp]:
    """For q descending in [0, 1/2]: L[m] = the number of k with
    q_k^m / (1 - q_k) > tol, m = 0, 1, ..., the largest m with L[m] > 0 (at
    most 200).  Truncating the geometric series of 1 / (1 - q_k z), |z| <= 1,
    after z^(m-1) leaves at most q_k^m / (1 - q_k), so weight k needs the powers
    m with m < M_k + 1 exactly when it is among the first L[m]: a prefix,
    found by bisection (searchsorted) against the root theta_m of
    theta^m / (1 - theta) = tol instead of a logarithm per weight."""
    # q^m / (1 - q) > tol <=> q > theta_m; a hair below, so never too short
    lengths = np.searchsorted(-q, -_series_roots(tol) * (1.0 - 1e-12), side="left")
    top = int(np.count_nonzero(lengths))
    return np.concatenate(([q.size], lengths[:top]))


def _split(ct: _Contour) -> tuple[NDArray[np.float64], int, NDArray[np.complex128]]:
    """q = r max|s - s0| (descending), the number of weights summed directly
    (q > _RHO) and z = (s - s0) / max|s - s0| at the nodes."""
    dmax = float(np.max(np.abs(ct.dl)))
    q = ct.r * dmax
    nd = int(np.searchsorted(-q, -_RHO, side="right"))
    return q, nd, ct.dl / dmax


# Below this many (weight, power) pairs the power sums are one table instead of
# a loop over the powers with shrinking prefixes.
_SMALL = 65536


def _power_table(q: NDArray[np.float64], top: int) -> NDArray[np.float64]:
    """q_j^m for m = 0..top, shape (q.size, top + 1)."""
    out = np.ones((q.size, top + 1))
    if top:
        out[:, 1:] = np.cumprod(np.broadcast_to(q[:, None], (q.size, top)), axis=1)
    return out


def _vander(z: NDArray[np.complex128], top: int) -> NDArray[np.complex128]:
    """z^m at every node, m = 0..top."""
    out = np.ones((z.size, top + 1), np.complex128)
    if top:
        out[:, 1:] = np.cumprod(np.broadcast_to(z[:, None], (z.size, top)), axis=1)
    return out


def _kernel(ct: _Contour, c: float) -> tuple[NDArray[np.complex128], float]:
    """Node values e_k of the density integrand, trapezoid weights included,
    relative to the factor exp(K(s0) - s0 c) whose log is also returned:
    f(c) = e^scale Re sum_k e_k, P = e^scale Re sum_k e_k / s_k (P(Q > c) if
    ct.upper, else -P(Q <= c)), dP(Q > c)/dw_j = e^scale Re sum_k e_k / (1 - 2 w_j s_k)."""
    return np.exp(ct.cg + (ct.kp - c) * ct.dl) * ct.fac * ct.wt, _log_scale(ct, c)


def _inverse_s(ct: _Contour) -> NDArray[np.complex128]:
    """1 / s at the nodes."""
    return np.exp(-ct.lg) / ct.s0


def _usable(ct: _Contour | None, c: float, reach: float, mean: float) -> bool:
    """Whether ct may be reused at normalised c: same side of the mean, within
    ``reach`` natural units of where it was built, and a negligible integrand
    (< ``1e-18`` of its value at s0) at the truncation point."""
    if ct is None or abs(c - ct.c0) > reach * ct.sb or (c >= mean) != ct.upper:
        return False
    last = abs(np.exp(ct.cg[-1] + (ct.kp - c) * ct.dl[-1]) * ct.fac[-1])
    return bool(last <= 1e-18)


def _weight_sums(ct: _Contour, e: NDArray[np.complex128]) -> NDArray[np.float64]:
    """Re sum_k e_k / (1 - 2 w_j s_k) for every distinct kept weight w_j of ct.

    1 / (1 - 2 w_j s) = 1 / (d0_j (1 - r_j (s - s0))): directly where
    r_j max|s - s0| > 1/2, else as the geometric series in z = (s - s0) / max|s - s0|
    (moments Re sum_k e_k z_k^m, then Horner in q_j = r_j max|s - s0|).
    """
    q, nd, z = _split(ct)
    g = np.empty(q.size)
    if nd:
        x = np.multiply.outer(ct.r[:nd], ct.dl.real)
        y = np.multiply.outer(ct.r[:nd], ct.dl.imag)
        om = 1.0 - x
        den = om * om + y * y                 # 1 / (om - i y) = (om + i y) / den
        g[:nd] = _matvec(om / den, e.real) - _matvec(y / den, e.imag)
    if nd < q.size:
        qs = q[nd:]
        lengths = _series_lengths(qs, _TOL_RATIONAL)
        top = lengths.size - 1
        mom = np.einsum("k,km->m", e, _vander(z, top)).real
        if qs.size * top <= _SMALL:
            g[nd:] = np.einsum("jm,m->j", _power_table(qs, top), mom)
        else:
            acc = np.zeros(qs.size)
            for m in range(top, -1, -1):
                n_m = lengths[m]
                acc[:n_m] = acc[:n_m] * qs[:n_m] + mom[m]
            g[nd:] = acc
    return g / ct.d0


def _rational(ct: _Contour, a: NDArray[np.float64]) -> NDArray[np.complex128]:
    """sum_j a_j / (1 - 2 w_j s) at every node (a_j >= 0 per distinct kept weight)."""
    coef = a / ct.d0
    q, nd, z = _split(ct)
    out = np.zeros(ct.dl.shape, np.complex128)
    if nd:
        x = np.multiply.outer(ct.r[:nd], ct.dl.real)
        y = np.multiply.outer(ct.r[:nd], ct.dl.imag)
        om = 1.0 - x
        den = om * om + y * y
        out += np.einsum("j,jk->k", coef[:nd], om / den) + 1j * np.einsum("j,jk->k", coef[:nd], y / den)
    if nd < q.size:
        qs, cs = q[nd:], coef[nd:]
        lengths = _series_lengths(qs, _TOL_RATIONAL)
        if qs.size * lengths.size <= _SMALL:
            sums = np.einsum("j,jm->m", cs, _power_table(qs, lengths.size - 1))
        else:
            sums = np.empty(lengths.size)
            term = cs.copy()
            sums[0] = term.sum()
            for m in range(1, sums.size):
                term = term[:lengths[m]] * qs[:lengths[m]]
                sums[m] = term.sum()
        out += np.einsum("km,m->k", _vander(z, sums.size - 1), sums)
    return out


def _distinct_index(arr: NDArray[np.float64], tau: float) -> tuple[NDArray[np.bool_], NDArray[np.intp]]:
    """Which input weights _prepare(arr, tau) keeps, and the index of each kept
    one among its distinct (descending) weights."""
    key = arr / float(arr.max())
    kept = key > tau
    _, inv = np.unique(key[kept], return_inverse=True)
    return kept, inv.max() - inv


def _gradient_norm(P: "_Pair", cn: float, ct: _Contour | None) -> NDArray[np.float64]:
    """dc/dw_j = E[Z_j^2 | Q = c] for every input weight at normalised c > 0
    (1 for weights dropped as negligible, and for zero weights), from ``ct``
    when it may be reused at cn, else from a new contour."""
    if ct is not None and _usable(ct, cn, 0.3, P.up.mean):
        W_tau, cc = (_TAU_UPPER if ct.upper else _TAU_LOWER), cn
    elif cn >= P.up.mean:
        ct, W_tau, cc = _build(P.up, cn, True), _TAU_UPPER, cn
    elif cn >= 1e-100:
        ct, W_tau, cc = _build(P.low, cn, False), _TAU_LOWER, cn
    else:               # tiny c: rescaled weights, as in _evaluate
        ct, W_tau, cc = _build(_prepare(P.arr, _TAU_LOWER, unit=1.0 / cn), 1.0, False), _TAU_LOWER, 1.0
    e, _ = _kernel(ct, cc)
    g = _weight_sums(ct, e) / float(e.real.sum())
    kept, idx = _distinct_index(P.arr, W_tau)
    grad = np.ones(P.arr.shape)
    grad[kept] = g[idx]
    return grad


# --------------------------------------------------------------------------
# scalar kernels (normalised units)
# --------------------------------------------------------------------------
class _Pair(NamedTuple):
    up: _Weights
    low: _Weights
    arr: NDArray[np.float64]


def _pair(arr: NDArray[np.float64]) -> _Pair:
    up = _prepare(arr, _TAU_UPPER)
    key = arr / float(arr.max())
    if np.any((key > _TAU_LOWER) & (key <= _TAU_UPPER)):
        return _Pair(up, _prepare(arr, _TAU_LOWER), arr)
    return _Pair(up, up, arr)             # the same weights are kept


def _evaluate(P: _Pair, c: float, ct: _Contour | None = None):
    """(contour, log S, log F, f, log f) at normalised c (units of max weight).

    Reuses ``ct`` when c is within 0.3 natural units of where it was built.
    """
    if c <= 0.0:
        return ct, 0.0, -math.inf, 0.0, -math.inf
    Wu = P.up
    if c > 4.0 * (746.0 + 0.35 * Wu.count):
        # P(Q > c) < 1e-324 (Chernoff, s = 1/4)
        return ct, -math.inf, 0.0, 0.0, -math.inf
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
                # P(Q <= c) < 1e-150: reported as 0
                return ct, 0.0, -math.inf, math.exp(_log_small_density(P.low, c)), \
                    _log_small_density(P.low, c)
            Wl = P.low
            if c < 1e-100:
                Wl = _prepare(P.arr, _TAU_LOWER, unit=1.0 / c)
                ct = _build(Wl, 1.0, False)
                lm, dens, ok, logd = _log_mass(ct, 1.0)
                return None, _log1mexp(lm), lm, dens / c, logd - math.log(c)
            ct = _build(Wl, c, False)
            res = _log_mass(ct, c)
    lm, dens, _, logd = res
    if ct.upper:
        return ct, lm, _log1mexp(lm), dens, logd
    return ct, _log1mexp(lm), lm, dens, logd


def _log_small_density(W: _Weights, c: float) -> float:
    """log of the density of Q / scale at 0 <= c < ``1e-300`` (normalised units):
    c^(N/2 - 1) / (2^(N/2) Gamma(N/2) prod_j sqrt(w_j)) to a relative
    ``1e-20`` N, since c / w_j <= ``1e-20`` for every kept weight (w_j > ``1e-280``)."""
    half = 0.5 * W.count
    if c == 0.0:
        if half < 1.0:
            return math.inf
        if half > 1.0:
            return -math.inf
    base = -half * math.log(2.0) - math.lgamma(half) - 0.5 * _dot(W.n, np.log(W.w))
    return (half - 1.0) * math.log(c) + base if half != 1.0 else base


def _log1mexp(x: float) -> float:
    """log(1 - exp(x)) for x <= 0."""
    if x >= 0.0:
        return -math.inf
    if x > -0.6931471805599453:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def _pearson(W: _Weights, prob: float, upper: bool) -> float:
    """Three-moment (shifted gamma) approximation of a quantile."""
    w2 = W.w * W.w
    s2 = _dot(W.n, w2)
    s3 = _dot(W.n, w2 * W.w)
    theta = 2.0 * s3 / s2
    nu = 2.0 * s2 / theta ** 2
    shift = W.mean - nu * theta
    g = special.gammainccinv(nu, prob) if upper else special.gammaincinv(nu, prob)
    return shift + theta * float(g)


# Above this many weights a contour costs enough that the moment guess of a
# quantile is first refined by a Newton step on the saddle-point approximation.
_SPA_MIN = 2000


def _spa_step(W: _Weights, c: float, target: float) -> float:
    """One Newton step from c > E Q towards log P(Q > c) = target on the
    saddle-point approximation log P ~ K(s0) - s0 c - log s0 - log(2 pi b2) / 2
    (s0 the saddle point of _build, b2 = K''(s0) + 1 / s0^2; its slope in c
    is -s0).  Only a starting point: Newton on the contour integral follows."""
    if not c > W.mean:
        return c
    s0, u0 = _saddle(W, c, True)
    d0 = _one_minus_2ws(W, s0, u0)
    r = W.w / d0
    b2 = 2.0 * _dot(W.n, r * r) + 1.0 / (s0 * s0)
    logp = (-0.5 * _dot(W.n, np.log(d0)) - s0 * c - math.log(s0)
            - 0.5 * math.log(2.0 * math.pi * b2))
    cn = c + (logp - target) / s0
    return cn if cn > W.mean and math.isfinite(cn) else c


def _small_c(W: _Weights, q: float) -> float:
    """c with (c/2)^(N/2) / (Gamma(N/2 + 1) prod sqrt(w)) = q, a lower bound
    of the quantile P(Q <= c) = q (the left side bounds the cdf from above)."""
    half = 0.5 * W.count
    lw = _dot(W.n, np.log(W.w))
    return 2.0 * math.exp((math.log(q) + math.lgamma(half + 1.0) + 0.5 * lw) / half)


def _isf_norm(P: _Pair, p: float, guess: float | None = None) -> tuple[float, _Contour | None]:
    """Quantile in normalised units and the contour of its last evaluation
    (None if there was none on P's weights); Newton on log P with bracketing,
    started from ``guess`` (normalised) if given, else a moment approximation."""
    if p >= 1.0:
        return 0.0, None
    upper = p <= 0.5
    if upper:
        target = math.log(p)
        c = _pearson(P.up, p, True)
        if not c > 0.0:
            c = P.up.mean
        if guess is not None and guess > 0.0:
            c = guess
        elif P.up.count > _SPA_MIN:
            c = _spa_step(P.up, c, target)
    else:
        q = 1.0 - p               # exact for p in [1/2, 1]
        target = math.log(q)
        start, guess = guess, _pearson(P.low, q, False)
        c = max(guess if guess > 0 else 0.0, _small_c(P.low, q))
        if start is not None and start > 0.0:
            c = start
    lo, hi = 0.0, math.inf
    ct = None
    for _ in range(200):
        ct, ls, lf, dens, _ = _evaluate(P, c, ct)
        if upper:
            g = ls - target
            if g == 0.0:
                return c, ct
            if g > 0.0:
                lo = c
            else:
                hi = c
            slope = -dens / math.exp(ls) if ls > -745.0 else -math.inf
            cn = c - g / slope if slope < 0.0 else math.nan
        else:
            g = lf - target
            if g == 0.0:
                return c, ct
            if g < 0.0:
                lo = c
            else:
                hi = c
            slope = c * dens / math.exp(lf) if lf > -745.0 else math.inf
            cn = c * math.exp(max(min(-g / slope, 50.0), -50.0)) if slope > 0.0 else math.nan
        if abs(cn - c) <= 2e-15 * c:
            return cn, ct
        if not lo < cn < hi:
            if lo > 0.0 and math.isfinite(hi):
                cn = math.sqrt(lo * hi)
            elif math.isfinite(hi):
                cn = 0.5 * hi
            else:
                cn = 2.0 * c
        if math.isfinite(hi) and hi - lo <= 4e-16 * hi:
            return 0.5 * (lo + hi), ct
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
        _, ls, lf, _, _ = _evaluate(P, cn)
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

    .. math:: P &= \\frac{1}{\\pi}\\int_0^\\infty
              \\mathrm{Re}\\Big[\\frac{e^{K(s)-sc}}{s} \\\\
              &\\qquad \\times (1 - 2 i a y)\\Big]\\,dy .

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
    step both sums carry the same aliasing error (seen for d = ``1e4``: sums that
    agreed to ``2e-8`` and were both 0.2 % off, or to ``2e-5`` and 4 % off).  So the argument of the integrand must also change
    by less than 2 pi / 3 between neighbouring nodes wherever its modulus
    exceeds ``1e-12`` of the peak; the local frequency grows continuously from 0
    at the saddle point, so an unresolved step cannot hide from this test.
    Where it fails the parabola is flattened (curvature halved).  The sum is truncated
    where the integrand is below ``1e-21`` of its peak.  K is evaluated relative to
    K(s0) (log1p, and a Taylor series of log(1 - z) for the many small terms),
    the factor exp(K(s0) - s0 c) in compensated arithmetic.  The relative error
    is then a few units of ``1e-16`` times the condition number c f(c) / P(Q > c)
    (which is ~ c / (2 max w) in the far tail): the rounding of c itself
    already perturbs the answer by that much.

    *Dropping tiny weights.*  Weights with w_j <= tau max(w) are dropped,
    tau = ``1e-50`` when c >= E Q and tau = ``1e-280`` below the mean.  Write (after
    dividing by max w) Q = A + R, where R is the sum of the dropped terms
    w_j Z_j^2, m the sum of the dropped weights, and A the kept part, which
    contains the largest weight: A = Z_1^2 + B with B >= 0 independent of Z_1.  Then for every c and every t in (2 m, 1/2]

    .. math:: 0 &\\le P(Q > c) - P(A > c) \\\\
              &\\le 2.6\\sqrt{t}\\,P(A > c) + e^{-(t - 2m)/(4\\tau)} .

    Proof: P(Q > c) - P(A > c) = P(A <= c < A + R) <= P(c - t < A <= c) + P(R > t).
    Chernoff with lambda = 1/(4 tau) (so 2 lambda w_j <= 1/2 and
    -log(1 - x)/2 <= x there) gives P(R > t) <= exp(-(t - 2 m)/(4 tau)).
    With g(y) = P(y - t < Z_1^2 <= y) and S_1(y) = P(Z_1^2 > y):
    for 0 < y <= 1, g(y) <= P(Z_1^2 <= t) <= sqrt(2 t / pi) and S_1(y) >= S_1(1) > 0.317,
    so g <= 2.52 sqrt(t) S_1; for y > 1, g(y) <= t f_1(y - t) and the Mills
    ratio bound S_1(y) >= 2 phi(sqrt y) sqrt y / (1 + y) give
    g <= sqrt(2) e^{t/2} t S_1 <= 1.3 sqrt(t) S_1.  Averaging over B,
    P(c - t < A <= c) = E g(c - B) <= 2.6 sqrt(t) E S_1(c - B) = 2.6 sqrt(t) P(A > c).
    With t = 2 m + 3200 tau the second term is exp(-800) < ``1e-347``, far below
    the smallest double, and since m <= d tau the relative error is at most
    2.6 sqrt((2 d + 3200) tau), i.e. below ``1e-20`` for tau = ``1e-50`` and any
    d <= ``1e9``.  Dropped weights therefore never change a returned upper tail
    probability (nor, via monotonicity, a quantile) beyond rounding.  Below the
    mean (tau = ``1e-280``) the same bound makes the absolute error < ``1e-135``.

    For 0 < c < ``1e-300`` max(w) the lower tail P(Q <= c) < ``1e-150`` is reported
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
    when c < E Q).  Weights below ``1e-280`` max(w) are dropped, which changes
    the result by less than ``1e-135`` in absolute terms (Notes of :func:`sf`).

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
    gamma) approximation (for p <= 1/2 and more than 2000 weights refined by
    one Newton step on the saddle-point approximation, so that the first
    contour is usually close enough to be the only one), safeguarded by
    bisection, and stopped when the step
    is below ``2e-15`` c.  P and the density come from the same contour integral
    (:func:`sf`); the contour is reused while c stays within 0.3 natural
    units of where it was built, so a quantile usually costs one contour.
    The returned c is accurate to about ``1e-14`` relative (at most ``9.3e-15`` against
    40-digit references on the 240-point Zipf grid of ``bench/``).  The work
    per contour is linear in the number of distinct weights: sums over the
    weights are numpy's pairwise sums (not BLAS, so the result does not depend
    on a BLAS thread count), and most weights enter through power sums of a
    series rather than one logarithm per weight and node;
    ``bench/bench_quantile_scale.py`` prints the slowest quantile on a Zipf
    grid with d up to ``1e5`` and p down to ``1e-12``.  In the book the squared
    clipping radius is ``isf(1 / n, (b * sigma) ** 2)``.

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
        out[i] = _isf_norm(P, float(pi))[0] * P.up.scale
    out = out.reshape(parr.shape)
    return float(out) if parr.ndim == 0 else out


@overflow_guard(check_result=False)
def pdf(c: ArrayLike, weights: ArrayLike) -> float | NDArray[np.float64]:
    """Probability density of Q = sum_j w_j Z_j**2 at c.

    Parameters
    ----------
    c : array_like of float
        Point(s); any real value or +-inf (NaN is rejected).  The density is 0
        for c < 0 and at +-inf.
    weights : array_like of float, 1-D
        The weights w_j >= 0, finite, not all zero.

    Returns
    -------
    float or ndarray
        The density at ``c``, shaped like ``c``.  At c = 0 it is the limit
        from the right: inf for one positive weight, 1 / (2 sqrt(w_1 w_2)) for
        two, 0 for more.  Where P(Q > c) < ``1e-324`` it is reported as 0.

    Raises
    ------
    ValueError
        As :func:`egmlib.gchi2.sf`.

    Notes
    -----
    The density is the inversion integral of :func:`egmlib.gchi2.sf` without the factor
    1 / s,

    .. math:: f(c) = \\frac{1}{2\\pi i}\\int_{s_0-i\\infty}^{s_0+i\\infty} e^{K(s) - s c}\\,ds ,

    taken on the same contour and nodes as the tail probability (it has no
    pole at s = 0, so it is the same integral on either side of 0); it is the
    derivative :func:`egmlib.gchi2.isf` uses for Newton's method.  Its relative accuracy is
    that of :func:`egmlib.gchi2.sf`.  Weights below ``1e-50`` max(w) (c >= E Q) or ``1e-280`` max(w)
    (c < E Q) are dropped, as in :func:`egmlib.gchi2.sf` and :func:`egmlib.gchi2.cdf`.  Below
    c = ``1e-300`` max(w) the leading term of the expansion at 0,
    c^(N/2 - 1) / (2^(N/2) Gamma(N/2) prod_j sqrt(w_j)), is used (relative
    error below ``1e-20`` N, N the number of kept weights).

    Examples
    --------
    >>> from egmlib.gchi2 import pdf
    >>> print(f"{pdf(2.0, [1.0, 1.0, 1.0]):.6f}")        # chi-square(3)
    0.207554
    >>> print(f"{pdf(10.0, [2.0, 2.0]):.6f}")            # exponential, mean 4
    0.020521
    >>> print(pdf([-1.0, 0.0], [1.0, 0.25]))             # 1 / (2 sqrt(w_1 w_2)) at 0
    [0. 1.]
    """
    carr = _as_c(c)
    arr = _validate_weights(weights)
    P = _pair(arr)
    flat = carr.ravel()
    out = np.empty(flat.size)
    log_scale = math.log(P.up.scale)
    for i, ci in enumerate(flat):
        cn = ci / P.up.scale
        if cn < 0.0 or math.isinf(cn):
            out[i] = 0.0
            continue
        logd = _log_small_density(P.low, cn) if cn < 1e-300 else _evaluate(P, cn)[4]
        out[i] = math.exp(logd - log_scale) if logd < math.inf else math.inf
    out = out.reshape(carr.shape)
    return float(out) if carr.ndim == 0 else out


@overflow_guard
def isf_gradient(p: float, weights: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """Upper quantile c = isf(p, weights) and its gradient in the weights.

    Parameters
    ----------
    p : float
        Tail probability in (0, 1).
    weights : array_like of float, 1-D
        The weights w_j >= 0, finite, not all zero.

    Returns
    -------
    c : float
        ``isf(p, weights)``: P(Q > c) = p.
    gradient : numpy.ndarray, shape (d,)
        dc / dw_j = E[Z_j**2 | Q = c].  It satisfies sum_j w_j dc/dw_j = c (c is
        homogeneous of degree 1 in w), and equals 1 where w_j = 0 (and where w_j
        is dropped as negligible, below ``1e-50`` max(w) for p <= 1/2).

    Raises
    ------
    ValueError
        If ``p`` is outside (0, 1) or the weights are invalid (see :func:`egmlib.gchi2.sf`).
    TypeError
        If ``p`` is not a real number.

    Notes
    -----
    Implicit differentiation of P(Q > c(w)) = p gives
    dc/dw_j = (dP/dw_j) / f(c), f the density (:func:`egmlib.gchi2.pdf`).  With
    K(s) = -1/2 sum_j log(1 - 2 w_j s), dK/dw_j = s / (1 - 2 w_j s), so

    .. math:: \\frac{\\partial P}{\\partial w_j}
              &= \\frac{1}{2\\pi i}\\int \\frac{e^{K(s) - s c}}{1 - 2 w_j s}\\,ds , \\\\
              f(c) &= \\frac{1}{2\\pi i}\\int e^{K(s) - s c}\\,ds ,

    on the contour of :func:`egmlib.gchi2.sf` (either side of 0: neither integrand has a
    pole there).  The first integral is the density at c of
    Q + w_j (Z'^2 + Z''^2); since z f_{chi2_1}(z) = f_{chi2_3}(z), the ratio
    is E[Z_j^2 | Q = c].  All d derivatives share the nodes of one contour (the
    last one the quantile's Newton iteration used, when it may be reused):
    1 / (1 - 2 w_j s) is summed directly for the few weights far from
    the contour's scale, and as a geometric series (Horner, truncated at a
    relative ``1e-17``) for the rest, so the gradient costs about one tail
    probability.

    References
    ----------
    imhof1961, trefethen2014

    Examples
    --------
    >>> import numpy as np
    >>> from egmlib.gchi2 import isf_gradient
    >>> c, g = isf_gradient(0.05, [1.0])           # c = w q: dc/dw = q
    >>> print(round(c, 6), np.round(g, 6))
    3.841459 [3.841459]
    >>> c, g = isf_gradient(1e-3, [1.0, 0.5, 0.0])
    >>> print(np.round(g, 4), round(float(g @ [1.0, 0.5, 0.0]) / c, 12))
    [10.4114  2.2946  1.    ] 1.0
    """
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    arr = _validate_weights(weights)
    P = _pair(arr)
    cn, ct = _isf_norm(P, pp)
    return cn * P.up.scale, _gradient_norm(P, cn, ct)


# --------------------------------------------------------------------------
# one distribution, prepared once: the seam other modules use
# --------------------------------------------------------------------------
# Gauss-Legendre nodes for the radial integral of :meth:`GeneralizedChi2.clipping_moment`.
_GL_NODES = 48
_GL_U, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)
_GL_U = 0.5 * (_GL_U + 1.0)
_GL_W = 0.5 * _GL_W


class GeneralizedChi2:
    """``Q = sum_j w_j Z_j**2`` with its weights validated and prepared once.

    The functions of this module validate and prepare their ``weights`` on every
    call.  An optimiser that asks for the quantile, its gradient and a clipping
    moment of the same ``Q`` many times builds this object once instead; its
    methods take scalars only.  It is the interface :mod:`egmlib.optimal` uses.

    Parameters
    ----------
    weights : array_like of float, 1-D
        The weights ``w_j >= 0``, finite, not all zero.

    Attributes
    ----------
    weights : numpy.ndarray, shape (d,)
        The validated weights (a float64 copy).
    scale : float
        The largest weight.

    Raises
    ------
    ValueError
        If the weights are invalid (see :func:`egmlib.gchi2.sf`).

    Examples
    --------
    >>> q = GeneralizedChi2([1.0, 0.5, 0.0])
    >>> print(f"{q.isf(1e-3):.6f}", f"{isf(1e-3, [1.0, 0.5, 0.0]):.6f}")
    11.558661 11.558661
    >>> c, g = q.isf_gradient(1e-3)
    >>> print(np.round(g, 4))
    [10.4114  2.2946  1.    ]
    """

    def __init__(self, weights: ArrayLike) -> None:
        arr = _validate_weights(weights)
        self.weights = arr
        self._P = _pair(arr)
        self.scale = float(self._P.up.scale)

    def __repr__(self) -> str:
        return f"GeneralizedChi2(d={self.weights.size}, scale={self.scale!r})"

    def isf(self, p: float) -> float:
        """The ``c`` with ``P(Q > c) = p``, ``p`` in ``(0, 1]``: the same value as :func:`isf`."""
        pp = check_real("p", p, low=0.0, high=1.0, low_open=True)
        return _isf_norm(self._P, pp)[0] * self.scale

    def isf_gradient(self, p: float, *, guess: float | None = None) -> tuple[float, NDArray[np.float64]]:
        """``isf(p)`` and ``dc/dw_j = E[Z_j**2 | Q = c]``, as :func:`isf_gradient`.

        ``p`` in ``(0, 1/2]``; ``guess`` (keyword-only, ``> 0``, natural units) starts
        the Newton iteration of the quantile, e.g. at the previous quantile of an
        optimiser's nearby weights.  The result does not depend on it beyond rounding.
        """
        pp = check_real("p", p, low=0.0, high=0.5, low_open=True)
        g = None
        if guess is not None:
            g = check_real("guess", guess, low=0.0, low_open=True) / self.scale
        cn, ct = _isf_norm(self._P, pp, g)
        return cn * self.scale, _gradient_norm(self._P, cn, ct)

    def clipping_moment(self, radius: float, a: ArrayLike) -> tuple[float, float]:
        """``V(C) = sum_j a_j E[(1 - C / sqrt(Q))_+**2 Z_j**2]`` and ``dV/dC``.

        Parameters
        ----------
        radius : float
            ``C > 0`` (natural units, like ``sqrt(Q)``).
        a : array_like, shape (d,)
            Coefficients ``a_j >= 0``, one per weight.

        Returns
        -------
        value, slope : float
            ``V(C)`` and its derivative in ``C``; with ``a_j = sigma_j**2`` and
            ``w_j = (b_j sigma_j)**2`` the value is the clipping error of one row
            (:func:`egmlib.optimal.clipping_error`).

        Notes
        -----
        ``z f_{chi2_1}(z) = f_{chi2_3}(z)`` gives
        ``E[g(Q) Z_j**2] = E[g(R_j**2)]`` with ``R_j**2 = Q + w_j chi2_2``.  With
        ``t = C / v``, ``E(1 - C/R)_+**2 = int_0^1 2 (1 - v) P(R > C / v) dv`` and
        ``d/dC E(1 - C/R)_+**2 = -(2 / C) int_0^1 (2 v - 1) P(R > C / v) dv``.
        ``sum_j a_j P(Q + w_j chi2_2 > c)`` is the integral of :func:`sf` with
        the extra factor ``sum_j a_j / (1 - 2 w_j s)`` on the same contour
        (weights dropped as negligible contribute the factor 1).  Below ``v_lo``
        the integrand is below ``1e-14`` of its value at ``v = 1`` (Chernoff);
        48-point Gauss-Legendre in ``log v`` on ``[log v_lo, 0]``; a contour is
        reused within 4 natural units of where it was built.  Accurate to about
        ``1e-12`` relative.

        Examples
        --------
        >>> from scipy.stats import norm
        >>> k = norm.isf(0.025)                 # d = 1: E(|Z| - k)_+^2
        >>> exact = 2 * ((1 + k * k) * norm.sf(k) - k * norm.pdf(k))
        >>> v, _ = GeneralizedChi2([1.0]).clipping_moment(k, [1.0])
        >>> print(round(v, 10) == round(exact, 10))
        True
        """
        r = check_real("radius", radius, low=0.0, low_open=True)
        coef = check_array("a", a, nonnegative=True)
        if coef.shape != self.weights.shape:
            raise ValueError(f"a must have the shape of the weights {self.weights.shape}, got {coef.shape}")
        root = math.sqrt(self.scale)
        value, slope = _clip_integral(self._P, coef, r / root)
        return value, slope / root


def _clip_integral(P: _Pair, a_full: NDArray[np.float64], radius: float) -> tuple[float, float]:
    """:meth:`GeneralizedChi2.clipping_moment` in normalised units (largest weight 1)."""
    shares = {}

    def build(c: float):
        upper = c >= P.up.mean
        if upper not in shares:
            kept, idx = _distinct_index(P.arr, _TAU_UPPER if upper else _TAU_LOWER)
            a = np.zeros((P.up if upper else P.low).w.size)
            np.add.at(a, idx, a_full[kept])
            shares[upper] = (a, float(a_full[~kept].sum()))
        ct = _build(P.up if upper else P.low, c, upper)
        a, rest = shares[upper]
        return ct, (_rational(ct, a) + rest) * _inverse_s(ct)

    ct, hs = build(radius * radius)
    if ct.upper:
        v_lo = 1.0 / math.sqrt(1.0 + 32.0 / (ct.s0 * radius * radius))
    else:   # Chernoff at s = 1/4: P(Q + w chi2_2 > c) <= 2 exp(K(1/4) - c/4) < 1e-14
        k_quarter = -0.5 * float(np.sum(np.log1p(-0.5 * P.arr / P.up.scale)))
        v_lo = radius / math.sqrt(4.0 * (k_quarter + math.log(2.0) + 32.3))
    span = -math.log(v_lo)                          # nodes uniform in log v
    v = np.exp(-span * _GL_U)                       # decreasing v: increasing c
    jac = span * _GL_W * v
    tails = np.empty(_GL_NODES)
    total_a = float(a_full.sum())
    for k in range(_GL_NODES):
        c = radius * radius / (v[k] * v[k])
        if not _usable(ct, c, 4.0, P.up.mean):
            ct, hs = build(c + 3.5 * ct.sb)      # centre the next contour ahead of c
            if not _usable(ct, c, 4.0, P.up.mean):
                ct, hs = build(c)
        e, scale = _kernel(ct, c)
        tails[k] = float((e * hs).real.sum()) * math.exp(scale) + (0.0 if ct.upper else total_a)
    value = float(jac @ (2.0 * (1.0 - v) * tails))
    slope = -2.0 / radius * float(jac @ ((2.0 * v - 1.0) * tails))
    return value, slope
