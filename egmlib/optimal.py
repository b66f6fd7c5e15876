"""Beyond the study: exact optimal scaling, box clipping, clipping error, private centre.

The study (Poulsen 2023) minimises the noise of Algorithm 3 for a *fixed* clipping
radius (Lemma 4.1) and ignores the clipping error and the cost of the centre.  This
module computes the exact answers to the questions its Discussion leaves open:

* :func:`isf_gradient` -- the gradient of the quantile ``isf(p, w)`` of
  ``Q = sum_j w_j Z_j^2`` with respect to the weights, ``E[Z_j^2 | Q = c]``;
* :func:`optimal_scaling` -- the scaling ``b`` that minimises the exact noise
  ``(2 C(b) sigma_opt)^2 sum_j b_j^-2`` with ``C(b)`` the exact clipping radius;
* :func:`box_half_width`, :func:`box_egm_error` -- per-coordinate clipping to a
  box followed by the Elliptical Gaussian Mechanism of Pagh and Lebeda;
* :func:`clipping_error`, :func:`total_error`, :func:`optimal_clip_probability`
  -- the clipping error the study leaves out, and the clipping probability that
  minimises noise plus clipping error;
* :func:`two_stage_error` -- the error of the whole pipeline when the centre is
  itself estimated privately with a share ``rho`` of the budget.

Tail probabilities come from the contour integral of :mod:`egmlib.gchi2`; the
derivatives with respect to the weights, which :mod:`egmlib.gchi2` does not
expose, come from the same integral with one extra rational factor (see the
Notes of :func:`isf_gradient`), evaluated here by a small private implementation
of the same method.  All reported quantiles are those of :func:`egmlib.gchi2.isf`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special
from scipy.stats import norm

from egmlib._validation import check_array, check_positive, check_real, warn_caller, overflow_guard
from egmlib.gchi2 import _MAX_PHASE_STEP, _phase_step, _step_agrees, _strip
from egmlib.gchi2 import isf as _gchi2_isf
from egmlib.gchi2 import sf as _gchi2_sf
from egmlib.privacy import analytic_sigma
from egmlib.scaling import (
    _check_scaling,
    clip_radius,
    egm_error,
    gaussian_data_scaling,
    noise_error,
)

__all__ = [
    "OptimalScaling",
    "ClipOptimum",
    "isf_gradient",
    "optimal_scaling",
    "box_half_width",
    "box_egm_error",
    "clipping_error",
    "total_error",
    "optimal_clip_probability",
    "two_stage_error",
]

# --------------------------------------------------------------------------
# contour integrals (private): the method of egmlib.gchi2, with extra factors
# --------------------------------------------------------------------------
# Shape of the parabola and truncation, as in egmlib.gchi2.
_ALPHA_MIN = 0.02
_GAMMA = 0.5
_TAIL = 1e-22
# Flatten the parabola at most this many times when the integrand is unresolved.
_SHAPES = 6
# Weights with r |s - s0| above this are handled by direct logarithms, the others
# by power series in tiers (upper edges of the tiers).
_RHO = 0.5
_TIER_EDGES = (_RHO, 0.1, 1e-2, 1e-4, 1e-8)
_TOL_SERIES = 1e-17
# Gauss-Legendre nodes for the radial integral of the clipping error.
_GL_NODES = 48
_GL_U, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)
_GL_U = 0.5 * (_GL_U + 1.0)
_GL_W = 0.5 * _GL_W


class _Weights(NamedTuple):
    scale: float                 # the largest weight (unit of c)
    w: NDArray[np.float64]       # distinct positive weights / scale, ascending
    n: NDArray[np.float64]       # their multiplicities
    inverse: NDArray[np.intp]    # index into w of every positive input weight
    positive: NDArray[np.bool_]  # which input weights are positive
    mean: float                  # E Q / scale


def _weights(arr: NDArray[np.float64]) -> _Weights:
    positive = arr > 0
    scale = float(arr.max())
    u, inverse, counts = np.unique(arr[positive] / scale, return_inverse=True, return_counts=True)
    n = counts.astype(np.float64)
    return _Weights(scale, u, n, inverse, positive, float(n @ u))


class _Contour(NamedTuple):
    upper: bool                   # s0 > 0 (integrals give P(. > c)) or s0 < 0 (-P(. <= c))
    c0: float                     # threshold (normalised) at which it was built
    s0: float                     # crossing of the real axis, in (-inf, 1/2)
    k0: float                     # K(s0)
    sb: float                     # natural scale of c at s0
    dl: NDArray[np.complex128]    # s - s0 at the nodes
    s: NDArray[np.complex128]     # the nodes
    kd: NDArray[np.complex128]    # K(s) - K(s0)
    fac: NDArray[np.complex128]   # (1 - 2 i a t) h / (pi sb), half weight at t = 0
    d0: NDArray[np.float64]       # 1 - 2 w s0 for every distinct weight
    r: NDArray[np.float64]        # 2 w / d0
    direct: NDArray[np.intp]      # weights evaluated directly
    tiers: tuple                  # (indices, order) of the power-series tiers
    q: NDArray[np.float64]        # r * max |s - s0|
    zp: NDArray[np.complex128]    # (dl / max|dl|)^m, m = 0..order, shape (nodes, order + 1)
    ok: bool                      # discretisation checks passed


def _tiers(q: NDArray[np.float64], n: NDArray[np.float64]) -> tuple[NDArray[np.intp], tuple, int]:
    """Direct indices, series tiers (indices, order) and the largest order."""
    direct = np.flatnonzero(q > _RHO)
    tiers = []
    top = 0
    for j, hi in enumerate(_TIER_EDGES):
        lo = _TIER_EDGES[j + 1] if j + 1 < len(_TIER_EDGES) else -1.0
        idx = np.flatnonzero((q <= hi) & (q > lo))
        if idx.size == 0:
            continue
        qt = float(q[idx].max())
        nt = float(n[idx].sum())
        order = 1
        while qt ** (order + 1) / (1.0 - qt) * max(1.0, nt / (order + 1)) > _TOL_SERIES and order < 200:
            order += 1
        tiers.append((idx, order))
        top = max(top, order)
    return direct, tuple(tiers), top


def _direct_logs(r: NDArray[np.float64], n: NDArray[np.float64],
                 dl: NDArray[np.complex128]) -> NDArray[np.complex128]:
    """-1/2 sum_j n_j log(1 - r_j dl) at every node, in real arithmetic."""
    x = np.multiply.outer(dl.real, r)
    y = np.multiply.outer(dl.imag, r)
    re = 0.5 * np.log1p(x * (x - 2.0) + y * y)
    im = np.arctan2(-y, 1.0 - x)
    return -0.5 * (re @ n + 1j * (im @ n))


def _nodes(W: _Weights, r: NDArray[np.float64], dl: NDArray[np.complex128]):
    """K(s) - K(s0) at the nodes, with the tiers and powers used for it."""
    dmax = float(np.abs(dl).max())
    q = r * dmax
    direct, tiers, top = _tiers(q, W.n)
    kd = _direct_logs(r[direct], W.n[direct], dl) if direct.size else np.zeros(dl.shape, np.complex128)
    z = dl / dmax if dmax > 0 else dl
    zp = np.ones((dl.size, top + 1), np.complex128)
    if top:
        zp[:, 1:] = np.cumprod(np.broadcast_to(z[:, None], (z.size, top)), axis=1)
        coef = np.zeros(top + 1)
        for idx, order in tiers:
            powers = np.cumprod(np.broadcast_to(q[idx, None], (idx.size, order)), axis=1)
            coef[1:order + 1] += W.n[idx] @ powers
        coef[1:] *= 0.5 / np.arange(1, top + 1)
        kd = kd + zp @ coef
    return kd, direct, tiers, q, zp


def _build(W: _Weights, c: float) -> _Contour:
    """Contour through the saddle point of K(s) - s c - log|s|, c > 0 normalised.

    On the side of 0 that gives the smaller tail: s0 in (0, 1/2) if c >= E Q
    (the integral of exp(K(s) - s c) / s is P(Q > c)), else s0 < 0 (it is -P(Q <= c)).
    """
    w, n = W.w, W.n
    upper = c >= W.mean
    if upper:
        def excess(x: float) -> float:     # K'(s) - c - 1/s with u = 1 - 2 s = exp(x)
            u = math.exp(x)
            return float(n @ (w / ((1.0 - w) + w * u))) - c + 2.0 / math.expm1(x)

        x0 = optimize.brentq(excess, -700.0, math.log1p(-1e-15), xtol=1e-14, rtol=1e-14)
        s0 = -0.5 * math.expm1(x0)
        d0 = (1.0 - w) + w * math.exp(x0)
    else:
        def excess(x: float) -> float:     # K'(s) - c - 1/s with s = -exp(x)
            return float(n @ (w / (1.0 + 2.0 * w * math.exp(x)))) - c + math.exp(-x)

        x0 = optimize.brentq(excess, -700.0, 700.0, xtol=1e-14, rtol=1e-14)
        s0 = -math.exp(x0)
        d0 = 1.0 + 2.0 * w * math.exp(x0)
    r = 2.0 * w / d0
    k0 = -0.5 * float(n @ np.log(d0))
    nr2 = n * r * r
    b2 = 0.5 * float(nr2.sum()) + 1.0 / s0**2
    b3 = float(nr2 @ r) - 2.0 / s0**3
    sb = math.sqrt(b2)
    zb = sb / float(r.max())
    al = max(min(b3 / (6.0 * b2 * sb), _GAMMA * 0.25 / zb), _ALPHA_MIN)
    resolved = False
    for _shape in range(_SHAPES):
        ct, resolved = _discretise(W, r, c, upper, s0, k0, d0, sb, zb, al)
        if resolved:
            if ct.ok:
                return ct
            break
        al *= 0.5        # the integrand turns faster than the step resolves: flatten
    if not resolved:     # refine the step on the flattest shape regardless
        ct, _ = _discretise(W, r, c, upper, s0, k0, d0, sb, zb, al, force=True)
    warn_caller(f"egmlib.optimal: the quadrature self-check failed at c = {c!r} (normalised); "
                "the result may be inaccurate")
    return ct._replace(ok=False)


def _discretise(W: _Weights, r: NDArray[np.float64], c: float, upper: bool, s0: float, k0: float,
                d0: NDArray[np.float64], sb: float, zb: float, al: float,
                force: bool = False) -> tuple[_Contour, bool]:
    """Truncation and step on the parabola of shape ``al`` (as egmlib.gchi2):
    the contour (ok=False if the step check failed five times) and whether the
    integrand is resolved (egmlib.gchi2._phase_step; not tested if ``force``)."""
    n = W.n
    strip = min(_strip(al, zb), _strip(al, -s0 * sb))
    h = min(math.pi * math.sqrt(2.0 / math.log(2e18)), 2.0 * math.pi * 0.9 * strip / math.log(1e20))
    tmax = 6.0
    while tmax < 1e5:
        dp = (al * tmax * tmax + 1j * tmax) / sb
        x, y = r * dp.real, r * dp.imag
        logmod = (-0.25 * float(n @ np.log1p(x * (x - 2.0) + y * y)) - c * dp.real
                  - math.log(abs(1.0 + dp / s0)) + math.log(abs(1.0 - 2j * al * tmax)))
        if logmod < math.log(_TAIL):
            break
        tmax *= 1.3
    for _ in range(5):
        nodes = int(math.ceil(tmax / h)) + 1
        nodes += 1 - nodes % 2
        t = h * np.arange(nodes)
        dl = (al * t * t + 1j * t) / sb
        fac = (1.0 - 2j * al * t) * (h / (math.pi * sb))
        fac[0] *= 0.5
        kd, direct, tiers, q, zp = _nodes(W, r, dl)
        ct = _Contour(upper, c, s0, k0, sb, dl, s0 + dl, kd, fac, d0, r, direct, tiers, q, zp, True)
        e = np.exp(kd - dl * c) * fac / ct.s * (1.0 if upper else -1.0)
        if not force and _phase_step(e) > _MAX_PHASE_STEP:
            return ct, False
        if _step_agrees(float(e.real.sum()), 2.0 * float(e.real[::2].sum()), h, strip):
            return ct, True
        h *= 0.5
    return ct._replace(ok=False), True


def _kernel(ct: _Contour, c: float) -> tuple[NDArray[np.complex128], float]:
    """Node values of exp(K(s) - s c) (ds / dt) / (2 pi i), relative to exp(scale)."""
    return np.exp(ct.kd - ct.dl * c) * ct.fac, ct.k0 - ct.s0 * c


def _usable(ct: _Contour | None, c: float, reach: float, mean: float) -> bool:
    """Whether ct may be reused at c (same side of the mean, within ``reach``
    natural units, tail negligible)."""
    if ct is None or abs(c - ct.c0) > reach * ct.sb or (c >= mean) != ct.upper:
        return False
    e = np.exp(ct.kd[-1].real - ct.dl[-1].real * c) * abs(ct.fac[-1])
    return bool(e <= 1e-18 * abs(ct.fac[0]))


def _sf_density(ct: _Contour, c: float) -> tuple[float, float]:
    """P(Q > c) and the density of Q at c (normalised units)."""
    e, scale = _kernel(ct, c)
    m = math.exp(scale)
    tail = float((e / ct.s).real.sum()) * m
    return (tail if ct.upper else 1.0 + tail), float(e.real.sum()) * m


def _rational(ct: _Contour, a: NDArray[np.float64]) -> NDArray[np.complex128]:
    """sum_j a_j / (1 - 2 w_j s) at every node (a_j per distinct weight)."""
    out = np.zeros(ct.dl.shape, np.complex128)
    i = ct.direct
    if i.size:
        x = np.multiply.outer(ct.r[i], ct.dl.real)
        y = np.multiply.outer(ct.r[i], ct.dl.imag)
        om = 1.0 - x
        den = om * om + y * y                     # 1 / (om - i y) = (om + i y) / den
        coef = a[i] / ct.d0[i]
        out += (coef @ (om / den)) + 1j * (coef @ (y / den))
    for idx, order in ct.tiers:   # 1 / (1 - r dl) = sum_m q^m z^m
        powers = np.ones((idx.size, order + 1))
        powers[:, 1:] = np.cumprod(np.broadcast_to(ct.q[idx, None], (idx.size, order)), axis=1)
        out += ct.zp[:, :order + 1] @ ((a[idx] / ct.d0[idx]) @ powers)
    return out


def _weight_derivative(ct: _Contour, c: float) -> NDArray[np.float64]:
    """d P(Q > c) / d w_j for every distinct weight (normalised units).

    The integrand is that of the density times 1 / (1 - 2 w_j s)
    = 1 / (d0_j (1 - r_j (s - s0))).
    """
    e, scale = _kernel(ct, c)
    g = np.empty(ct.r.size)
    i = ct.direct
    if i.size:
        x = np.multiply.outer(ct.r[i], ct.dl.real)
        y = np.multiply.outer(ct.r[i], ct.dl.imag)
        om = 1.0 - x
        den = om * om + y * y
        g[i] = (om / den) @ e.real - (y / den) @ e.imag   # Re sum_k e_k / (1 - r_j dl_k)
    if ct.tiers:
        mom = (ct.zp.T @ e).real                           # Re sum_k e_k z_k^m
        for idx, order in ct.tiers:
            powers = np.ones((idx.size, order + 1))
            powers[:, 1:] = np.cumprod(np.broadcast_to(ct.q[idx, None], (idx.size, order)), axis=1)
            g[idx] = powers @ mom[:order + 1]
    return g / ct.d0 * math.exp(scale)


def _pearson(W: _Weights, p: float) -> float:
    """Three-moment (shifted gamma) approximation of the upper p-quantile."""
    s1 = float(W.n @ W.w)
    s2 = float(W.n @ W.w**2)
    s3 = float(W.n @ W.w**3)
    theta = 2.0 * s3 / s2
    nu = 2.0 * s2 / theta**2
    c = s1 - nu * theta + theta * float(special.gammainccinv(nu, p))
    return c if c > 0.0 else s1


def _isf(W: _Weights, p: float, guess: float | None = None) -> tuple[float, _Contour]:
    """Normalised c with P(Q > c) = p (p <= 1/2): safeguarded Newton on log P."""
    c = _pearson(W, p) if guess is None or not guess > 0.0 else guess
    target = math.log(p)
    lo, hi = 0.0, math.inf
    ct = None
    for _ in range(100):
        if not _usable(ct, c, 0.3, W.mean):
            ct = _build(W, c)
        sf, dens = _sf_density(ct, c)
        if not (sf > 0.0 and dens > 0.0) and ct.c0 != c:
            ct = _build(W, c)
            sf, dens = _sf_density(ct, c)
        g = math.log(sf) - target
        if g > 0.0:
            lo = c
        else:
            hi = c
        cn = c + g * sf / dens
        if abs(cn - c) <= 1e-14 * c:
            return cn, ct
        if not lo < cn < hi:
            cn = math.sqrt(lo * hi) if lo > 0.0 and math.isfinite(hi) else (0.5 * hi if math.isfinite(hi) else 2.0 * c)
        c = cn
    raise RuntimeError("optimal: quantile iteration did not converge")  # pragma: no cover


def _clip_integral(W: _Weights, a: NDArray[np.float64], radius: float) -> tuple[float, float]:
    """V = sum_j a_j E[(1 - C / R_j)_+^2] and dV/dC, R_j^2 = Q + w_j chi2_2 (normalised).

    Accurate to about 1e-12 relative (a contour is reused within 4 natural units
    on either side of where it was built).

    With t = C / v, E(1 - C/R)_+^2 = int_C^inf 2 C (t - C) t^-3 P(R > t) dt
    = int_0^1 2 (1 - v) P(R > C / v) dv, and
    d/dC E(1 - C/R)_+^2 = -2 E[(1 - C/R)_+ / R] = -(2 / C) int_0^1 (2 v - 1) P(R > C / v) dv.
    sum_j a_j P(Q + w_j chi2_2 > c) is the sf integral with the factor
    sum_j a_j / (1 - 2 w_j s).  Below v_lo the integrand is < 1e-14 of its value
    at v = 1 (Chernoff bounds); Gauss-Legendre in log v on [log v_lo, 0].
    """
    ct = _build(W, radius * radius)
    if ct.upper:
        v_lo = 1.0 / math.sqrt(1.0 + 32.0 / (ct.s0 * radius * radius))
    else:   # Chernoff at s = 1/4: P(Q + w chi2_2 > c) <= 2 exp(K(1/4) - c/4) < 1e-14
        k_quarter = -0.5 * float(W.n @ np.log1p(-0.5 * W.w))
        v_lo = radius / math.sqrt(4.0 * (k_quarter + math.log(2.0) + 32.3))
    span = -math.log(v_lo)                          # nodes uniform in log v
    v = np.exp(-span * _GL_U)                       # decreasing v: increasing c
    jac = span * _GL_W * v
    tails = np.empty(_GL_NODES)
    total_a = float(a.sum())
    hs = None
    for k in range(_GL_NODES):
        c = radius * radius / (v[k] * v[k])
        if hs is None or not _usable(ct, c, 4.0, W.mean):
            if hs is not None:           # centre the next contour ahead of c
                ct = _build(W, c + 3.5 * ct.sb)
                if not _usable(ct, c, 4.0, W.mean):
                    ct = _build(W, c)
            hs = _rational(ct, a) / ct.s
        e, scale = _kernel(ct, c)
        tails[k] = float((e * hs).real.sum()) * math.exp(scale) + (0.0 if ct.upper else total_a)
    value = float(jac @ (2.0 * (1.0 - v) * tails))
    slope = -2.0 / radius * float(jac @ ((2.0 * v - 1.0) * tails))
    return value, slope


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _sigmas(value: ArrayLike) -> NDArray[np.float64]:
    arr = check_array("sigmas", value, nonnegative=True)
    if not np.any(arr > 0):
        raise ValueError("sigmas must have at least one entry > 0, got all zeros")
    return arr


def _tail_probability(name: str, value: object) -> float:
    return check_real(name, value, low=0.0, high=0.5, low_open=True)


def _count(name: str, value: object) -> float:
    return check_real(name, value, low=1.0, low_open=True)


# --------------------------------------------------------------------------
# 1. the gradient of the quantile
# --------------------------------------------------------------------------
@overflow_guard
def isf_gradient(p: float, weights: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """Upper quantile of ``Q = sum_j w_j Z_j^2`` and its gradient in the weights.

    Parameters
    ----------
    p : float
        Tail probability in ``(0, 1/2]``.
    weights : array_like, shape (d,)
        Weights ``w_j >= 0``, finite, not all zero.

    Returns
    -------
    c : float
        ``egmlib.gchi2.isf(p, weights)``: ``P(Q > c) = p``.
    gradient : numpy.ndarray, shape (d,)
        ``dc / dw_j = E[Z_j^2 | Q = c]``; it satisfies ``sum_j w_j dc/dw_j = c``
        (``c`` is homogeneous of degree 1 in ``w``) and equals 1 where ``w_j = 0``.

    Raises
    ------
    ValueError
        If ``p`` is outside ``(0, 1/2]`` or the weights are invalid.

    Notes
    -----
    Implicit differentiation of ``P(Q > c(w)) = p`` gives
    ``dc/dw_j = (dP/dw_j) / f(c)`` with ``f`` the density of ``Q``.  With
    ``K(s) = -1/2 sum_j log(1 - 2 w_j s)``,
    ``P(Q > c) = (2 pi i)^-1 int exp(K(s) - s c) / s ds`` on a contour crossing the
    real axis in ``(0, 1 / (2 max w))``, and ``dK/dw_j = s / (1 - 2 w_j s)``, so

    .. math:: \\frac{\\partial P}{\\partial w_j}
              = \\frac{1}{2\\pi i}\\int \\frac{e^{K(s) - s c}}{1 - 2 w_j s}\\,ds ,
              \\qquad f(c) = \\frac{1}{2\\pi i}\\int e^{K(s) - s c}\\,ds .

    The first integral is the density at ``c`` of ``Q + w_j (Z'^2 + Z''^2)``; since
    ``z f_{chi2_1}(z) = f_{chi2_3}(z)``, the ratio is ``E[Z_j^2 | Q = c]``.  All
    ``d`` derivatives share the nodes of one contour (the parabola of
    :func:`egmlib.gchi2.sf`, trapezoidal rule), so the gradient costs about one
    tail probability.

    References
    ----------
    imhof1961, trefethen2014

    Examples
    --------
    >>> c, g = isf_gradient(0.05, [1.0])           # c = w q: dc/dw = q
    >>> print(round(c, 6), np.round(g, 6))
    3.841459 [3.841459]
    >>> c, g = isf_gradient(1e-3, [1.0, 0.5, 0.0])
    >>> print(np.round(g, 4), round(float(g @ [1.0, 0.5, 0.0]) / c, 12))
    [10.4114  2.2946  1.    ] 1.0
    """
    pp = _tail_probability("p", p)
    arr = check_array("weights", weights, nonnegative=True)
    if not np.any(arr > 0):
        raise ValueError("weights must contain at least one value > 0, got all zeros")
    c = float(_gchi2_isf(pp, arr))
    if not math.isfinite(c):
        raise ValueError(
            f"weights too large in magnitude for isf_gradient (max {float(arr.max())!r}): the quantile "
            "overflows double precision; rescale the weights (the quantile is proportional to their scale)"
        )
    W = _weights(arr)
    cn = c / W.scale
    ct = _build(W, cn)
    _, dens = _sf_density(ct, cn)
    dist = _weight_derivative(ct, cn) / dens
    grad = np.ones(arr.shape)
    grad[W.positive] = dist[W.inverse]
    return c, grad


# --------------------------------------------------------------------------
# 2. the exactly optimal scaling
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class OptimalScaling:
    """Output of :func:`optimal_scaling`.

    Attributes
    ----------
    scaling : numpy.ndarray, shape (d,)
        The optimal ``b``, normalised like Lemma 4.1: ``sum_j (b_j sigma_j)^2 = 1``
        (``inf`` where ``sigma_j = 0``).
    radius : float
        ``C = clip_radius(sigmas, scaling, p)``.
    noise_factor : float
        ``C^2 sum_j b_j^-2``; the noise is ``(2 sigma_opt)^2 noise_factor``.
    lemma_noise_factor : float
        The same for Lemma 4.1's scaling, ``isf(p, sigma / sum sigma) (sum sigma)^2``.
    gain : float
        ``lemma_noise_factor / noise_factor`` (>= 1 up to rounding).
    stationarity : float
        ``max_j |w_j E[Z_j^2 | Q = C^2] / C^2 - (sigma_j^2 / w_j) / sum_k sigma_k^2 / w_k|``
        at the optimum, ``w_j = (b_j sigma_j)^2`` (0 at an exact stationary point).
    evaluations : int
        Number of objective evaluations of the optimiser.
    """

    scaling: NDArray[np.float64]
    radius: float
    noise_factor: float
    lemma_noise_factor: float
    gain: float
    stationarity: float
    evaluations: int


@overflow_guard(check_result=False)
def optimal_scaling(sigmas: ArrayLike, p: float) -> OptimalScaling:
    """The scaling that minimises the exact noise of Algorithm 3 at clip probability ``p``.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    p : float
        Clipping probability in ``(0, 1/2]`` (the study uses ``1/n``).

    Returns
    -------
    OptimalScaling
        The scaling, its radius and noise factor, Lemma 4.1's noise factor and the gain.

    Raises
    ------
    ValueError
        On invalid sigmas or ``p`` outside ``(0, 1/2]``.

    Notes
    -----
    The noise ``E(b) = (2 C(b) sigma_opt)^2 sum_j b_j^-2`` with
    ``C(b)^2 = isf(p, (b sigma)^2)`` does not change when ``b`` is multiplied by a
    constant.  With ``w_j = (b_j sigma_j)^2`` normalised to ``sum_j w_j = 1`` it is
    ``4 sigma_opt^2 isf(p, w) sum_j sigma_j^2 / w_j``, minimised over the simplex in
    the variables ``x_j = log w_j`` (softmax), starting from Lemma 4.1
    (``w_j = sigma_j / sum sigma``), by L-BFGS with the exact gradient
    ``d log E / d x_j = w_j m_j / c - (sigma_j^2 / w_j) / S`` where
    ``m_j = E[Z_j^2 | Q = c]`` (:func:`isf_gradient`), ``c = isf(p, w)``,
    ``S = sum_k sigma_k^2 / w_k``; the variables are preconditioned by the square
    root of the diagonal of this expression's Jacobian at the start.  At a
    stationary point the share of coordinate ``j`` in the tail,
    ``w_j m_j / c``, equals its share of the noise, ``(sigma_j^2 / w_j) / S``;
    Lemma 4.1 is the special case ``m_j = const``.  The final noise factors are
    computed with :func:`egmlib.gchi2.isf`.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> from egmlib.zipf import zipf_sigmas
    >>> res = optimal_scaling(zipf_sigmas(10, 1.0), 1e-6)
    >>> print(round(res.gain, 4), res.stationarity < 1e-7)
    1.3215 True
    """
    sig = _sigmas(sigmas)
    pp = _tail_probability("p", p)
    pos = sig > 0
    logs = np.log(sig[pos])
    lemma_w = np.exp(logs - special.logsumexp(logs))
    total = float(np.exp(special.logsumexp(logs)))
    lemma_factor = float(_gchi2_isf(pp, lemma_w)) * total**2
    state = {"c": None, "evals": 0}

    def evaluate(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64], float]:
        lw = x - special.logsumexp(x)
        w = np.exp(lw)
        W = _weights(w)
        guess = None if state["c"] is None else state["c"] / W.scale
        cn, ct = _isf(W, pp, guess)
        state["c"] = cn * W.scale
        _, dens = _sf_density(ct, cn)
        m = np.ones(w.shape)
        m[W.positive] = (_weight_derivative(ct, cn) / dens)[W.inverse]
        log_terms = 2.0 * logs - lw
        log_s = special.logsumexp(log_terms)
        grad = w * m / (cn * W.scale) - np.exp(log_terms - log_s)
        return math.log(cn * W.scale) + log_s, grad, float(np.abs(grad).max())

    x0 = np.log(lemma_w)
    if logs.size == 1:
        x_opt, evals = x0, 0
    else:
        w0 = lemma_w
        W0 = _weights(w0)
        c0, ct0 = _isf(W0, pp)
        _, dens0 = _sf_density(ct0, c0)
        m0 = np.ones(w0.shape)
        m0[W0.positive] = (_weight_derivative(ct0, c0) / dens0)[W0.inverse]
        pre = np.sqrt(w0 * m0 / (c0 * W0.scale) + w0)      # tail share + noise share

        def fun(y: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            state["evals"] += 1
            value, grad, _ = evaluate(y / pre)
            return value, grad / pre

        res = optimize.minimize(fun, x0 * pre, jac=True, method="L-BFGS-B",
                                options={"maxiter": 1000, "ftol": 1e-13, "gtol": 1e-9})
        x_opt, evals = res.x / pre, state["evals"]
    state["c"] = None
    _, _, stat = evaluate(x_opt)
    lw = x_opt - special.logsumexp(x_opt)
    w = np.exp(lw)
    c_exact = float(_gchi2_isf(pp, w))
    factor = c_exact * float(np.exp(special.logsumexp(2.0 * logs - lw)))
    b = np.full(sig.shape, np.inf)
    b[pos] = np.exp(0.5 * lw - logs)
    return OptimalScaling(b, math.sqrt(c_exact), factor, lemma_factor, lemma_factor / factor,
                          stat, evals)


# --------------------------------------------------------------------------
# 3. box clipping + the Elliptical Gaussian Mechanism
# --------------------------------------------------------------------------
@overflow_guard
def box_half_width(d: int, p: float) -> float:
    """Half-width ``k`` (in standard deviations) of a box that clips a row with probability ``p``.

    Parameters
    ----------
    d : int
        Number of (independent, Gaussian) coordinates, ``>= 1``.
    p : float
        Probability in ``(0, 1)`` that a row has at least one coordinate outside
        ``mu_j +- k sigma_j``.

    Returns
    -------
    float
        The ``k`` with ``1 - (1 - 2 Phi(-k))^d = p``.

    Raises
    ------
    ValueError
        If ``d < 1`` or ``p`` is outside ``(0, 1)``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    The coordinates are independent, so a row stays inside with probability
    ``(1 - 2 Phi(-k))^d``; ``2 Phi(-k) = -expm1(log1p(-p) / d)`` is solved without
    cancellation.  The union bound ``2 d Phi(-k) = p`` gives a slightly larger ``k``.

    Examples
    --------
    >>> print(round(box_half_width(1, 0.05), 4))
    1.96
    >>> print(round(box_half_width(100, 1e-3), 4))
    4.4171
    """
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)):
        raise TypeError(f"d must be an integer, got {d!r}")
    if int(d) < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    tail = -math.expm1(math.log1p(-pp) / int(d))
    return float(norm.isf(0.5 * tail))


@overflow_guard
def box_egm_error(sigmas: ArrayLike, p: float, sigma_opt: float) -> float:
    """Expected squared noise of box clipping at ``mu +- k sigma`` followed by Algorithm 2.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    p : float
        Row clipping probability in ``(0, 1)``; ``k = box_half_width(d', p)`` with
        ``d'`` the number of positive sigmas (constant coordinates never clip).
    sigma_opt : float
        Noise multiplier for sensitivity 1, ``> 0``.

    Returns
    -------
    float
        ``sigma_opt^2 (2 k sum_j sigma_j)^2``.

    Raises
    ------
    ValueError
        On invalid sigmas, ``p`` outside ``(0, 1)`` or ``sigma_opt <= 0``.

    Notes
    -----
    After clipping, coordinate ``j`` lies in an interval of width ``2 k sigma_j``;
    replacing one row moves the sum by at most that much in coordinate ``j``, so
    ``Delta_j = 2 k sigma_j`` and the Elliptical Gaussian Mechanism has error
    ``sigma_opt^2 ||Delta||_1^2`` (:func:`egmlib.scaling.egm_error`).  Its noise
    in coordinate ``j`` has standard deviation proportional to ``sqrt(sigma_j)``,
    as with Lemma 4.1; the two differ only by the factor ``k^2 / C^2``.

    References
    ----------
    pagh2023

    Examples
    --------
    >>> print(round(box_egm_error([1.0], 0.05, 1.0), 4))   # (2 * 1.96)^2
    15.3658
    """
    sig = _sigmas(sigmas)
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    s = check_positive("sigma_opt", sigma_opt)
    k = box_half_width(int(np.count_nonzero(sig)), pp)
    return egm_error(2.0 * k * sig, s)


# --------------------------------------------------------------------------
# 4. the clipping error and the bias-variance trade-off
# --------------------------------------------------------------------------
def _clip_error_at_radius(sig: NDArray[np.float64], b: NDArray[np.float64],
                          radius: float) -> tuple[float, float]:
    """Clipping error of one row at radius C and its derivative in C."""
    pos = sig > 0
    w = (b[pos] * sig[pos]) ** 2
    if radius <= 0.0:
        return float(np.sum(sig**2)), -math.inf
    W = _weights(w)
    a = np.zeros(W.w.size)
    np.add.at(a, W.inverse, sig[pos] ** 2)
    root = math.sqrt(W.scale)
    value, slope = _clip_integral(W, a, radius / root)
    return value, slope / root


@overflow_guard
def clipping_error(sigmas: ArrayLike, scaling: ArrayLike, p: float) -> float:
    """Clipping error of one row of Algorithm 3: ``E||b^-1 (clip_C(x~) - x~)||^2``.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    scaling : array_like, shape (d,)
        Scaling ``b`` in ``(0, inf]`` (``inf`` only where ``sigma_j = 0``).
    p : float
        Clipping probability in ``(0, 1]``; ``C = clip_radius(sigmas, scaling, p)``.

    Returns
    -------
    float
        ``E||(1/b) (clip_C(x~) - x~)||^2`` for ``x~ = (x - mu) b``,
        ``x ~ N(mu, diag(sigma^2))``: the error one row's clipping adds in the
        original space.  ``p = 1`` (``C = 0``) gives ``sum_j sigma_j^2``.

    Raises
    ------
    ValueError
        On invalid sigmas or scaling, or ``p`` outside ``(0, 1]``.

    Notes
    -----
    ``(1/b_j)(clip(x~) - x~)_j = -(1 - C/R)_+ sigma_j Z_j`` with ``R = ||x~||``,
    ``R^2 = Q = sum_j w_j Z_j^2``, ``w_j = (b_j sigma_j)^2``.  Hence the error is
    ``sum_j sigma_j^2 E[(1 - C/sqrt(Q))_+^2 Z_j^2]`` and, because
    ``z f_{chi2_1}(z) = f_{chi2_3}(z)``,
    ``E[g(Q) Z_j^2] = E[g(Q + w_j chi2_2)]``.  Each expectation is
    ``int_C^inf 2 C (t - C) t^-3 P(Q + w_j chi2_2 > t^2) dt``; the weighted sum of
    the tail probabilities is one contour integral (the factor
    ``sum_j sigma_j^2 / (1 - 2 w_j s)`` multiplies the integrand of
    :func:`egmlib.gchi2.sf`), and the radial integral is taken by 48-point
    Gauss-Legendre quadrature after mapping the exponential tail to ``(0, 1)``.
    With the exact centre ``mu`` the clipping error of a row has mean zero (the
    law of ``x~`` is symmetric), so for ``n`` independent rows the error of the
    clipped sum is ``n`` times this value.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> from scipy.stats import norm
    >>> k = norm.isf(0.025)                     # d = 1: sigma^2 E(|Z| - k)_+^2
    >>> exact = 2 * ((1 + k * k) * norm.sf(k) - k * norm.pdf(k))
    >>> print(round(clipping_error([1.0], [1.0], 0.05), 8), round(exact, 8))
    0.01297248 0.01297248
    """
    sig = _sigmas(sigmas)
    b = _check_scaling(sig, scaling)
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True)
    radius = float(clip_radius(sig, b, pp))
    return _clip_error_at_radius(sig, b, radius)[0]


@overflow_guard
def total_error(sigmas: ArrayLike, scaling: ArrayLike, p: float, n: float, sigma_opt: float) -> float:
    """Noise plus clipping error of Algorithm 3 with ``n`` rows and the exact centre.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    scaling : array_like, shape (d,)
        Scaling ``b`` in ``(0, inf]``.
    p : float
        Clipping probability in ``(0, 1]``.
    n : float
        Number of rows, ``> 1``.
    sigma_opt : float
        Noise multiplier for sensitivity 1, ``> 0``.

    Returns
    -------
    float
        ``E||M(X) - sum_i x_i||^2 = noise_error(...) + n clipping_error(...)``.

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    With ``mu_hat = mu`` the output minus the true sum is
    ``b^-1 (sum_i D_i + eta)``, ``D_i = clip(x~_i) - x~_i``: independent, mean-zero
    terms, so the squared errors add (:func:`clipping_error`,
    :func:`egmlib.scaling.noise_error`).

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> sig = np.array([3.0, 1.0])
    >>> print(round(total_error(sig, np.ones(2), 1e-2, 100, 1.0), 4))
    487.9231
    """
    sig = _sigmas(sigmas)
    b = _check_scaling(sig, scaling)
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True)
    nn = _count("n", n)
    s = check_positive("sigma_opt", sigma_opt)
    return float(noise_error(sig, b, pp, s)) + nn * _clip_error_at_radius(sig, b, float(clip_radius(sig, b, pp)))[0]


@dataclass(frozen=True)
class ClipOptimum:
    """Output of :func:`optimal_clip_probability`.

    Attributes
    ----------
    probability : float
        The clipping probability ``p_C`` that minimises the total error.
    radius : float
        The corresponding radius ``C`` in the scaled space.
    noise_error : float
        ``(2 C sigma_opt)^2 sum_j b_j^-2``.
    clipping_error : float
        ``n`` times :func:`clipping_error`.
    total_error : float
        Their sum.
    """

    probability: float
    radius: float
    noise_error: float
    clipping_error: float
    total_error: float


@overflow_guard
def optimal_clip_probability(sigmas: ArrayLike, scaling: ArrayLike, n: float, sigma_opt: float) -> ClipOptimum:
    """Clipping probability that minimises noise plus clipping error of Algorithm 3.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    scaling : array_like, shape (d,)
        Scaling ``b`` in ``(0, inf]``.
    n : float
        Number of rows, ``> 1``.
    sigma_opt : float
        Noise multiplier for sensitivity 1, ``> 0``.

    Returns
    -------
    ClipOptimum
        The optimal ``p_C``, its radius and the two parts of the error.

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    The total error ``T(C) = 4 sigma_opt^2 C^2 sum_j b_j^-2 + n V(C)``, with
    ``V(C)`` the clipping error of one row (:func:`clipping_error`), is convex-like:
    ``dV/dC = -2 sum_j sigma_j^2 E[(1 - C/R_j)_+ / R_j]`` rises from a negative
    value at ``C = 0`` to 0, while the noise term's derivative grows linearly.  The
    root of ``dT/d log C`` is found by Brent's method between ``10^-3`` times the
    radius for ``p = 1/2`` and the radius for ``p = 10^-4 / n`` (``V`` and ``dV/dC``
    come from one quadrature); ``p_C = P(||x~|| > C)`` from :func:`egmlib.gchi2.sf`.
    ``C -> 0`` (``p -> 1``) releases ``n mu_hat``, whose error is
    ``n sum_j sigma_j^2``; when that is smaller than the noise the optimum has
    ``p_C`` close to 1.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> opt = optimal_clip_probability([3.0, 1.0], [1.0, 1.0], 100, 1.0)
    >>> print(f"{opt.probability:.4f} {opt.total_error:.3f}")
    0.2182 194.341
    >>> print(round(total_error([3.0, 1.0], [1.0, 1.0], 1 / 100, 100, 1.0), 3))   # p = 1/n
    487.923
    """
    sig = _sigmas(sigmas)
    b = _check_scaling(sig, scaling)
    nn = _count("n", n)
    s = check_positive("sigma_opt", sigma_opt)
    pos = sig > 0
    w = (b[pos] * sig[pos]) ** 2
    inv2 = float(np.sum(1.0 / b[pos] ** 2))
    lo = math.log(1e-3 * float(clip_radius(sig, b, 0.5)))
    hi = math.log(float(clip_radius(sig, b, 1e-4 / nn)))
    noise_coef = 4.0 * s * s * inv2

    def slope(log_c: float) -> float:          # d total / d log C
        radius = math.exp(log_c)
        return radius * (2.0 * noise_coef * radius + nn * _clip_error_at_radius(sig, b, radius)[1])

    if slope(lo) >= 0.0:
        log_c = lo
    elif slope(hi) <= 0.0:
        log_c = hi
    else:
        log_c = optimize.brentq(slope, lo, hi, xtol=1e-9)
    radius = math.exp(log_c)
    noise = noise_coef * radius * radius
    clip = nn * _clip_error_at_radius(sig, b, radius)[0]
    prob = float(_gchi2_sf(radius * radius, w))
    return ClipOptimum(prob, radius, noise, clip, noise + clip)


# --------------------------------------------------------------------------
# 5. a private centre
# --------------------------------------------------------------------------
@overflow_guard
def two_stage_error(
    sigmas: ArrayLike,
    n: float,
    rho: float,
    *,
    epsilon: float,
    delta: float,
    public_range: float,
    scaled: bool = True,
) -> float:
    """Error of Algorithm 3 when its centre is first estimated privately.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    n : float
        Number of rows, ``> 1``; the clipping probability of stage 2 is ``1/n``.
    rho : float
        Share of the budget spent on the centre, in ``(0, 1)``.
    epsilon, delta : float
        Total privacy budget (keyword-only), as accepted by
        :func:`egmlib.privacy.analytic_sigma` after the split.
    public_range : float
        ``R >= 0``: the public knowledge is ``|mu_j - m_j| <= R sigma_j`` for a
        public point ``m`` (keyword-only).
    scaled : bool, default True
        Stage 2 with Lemma 4.1's scaling (``True``) or without scaling.

    Returns
    -------
    float
        ``E||M(X) - sum_i x_i||^2``: the noise of stage 2 plus ``n`` times the
        clipping error of one row (the correlation between rows through the
        shared centre is neglected; it is of the same order as the clipping error).

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    *Stage 1* (budget ``(rho eps, rho delta)``): clip every coordinate to
    ``m_j +- K sigma_j`` with ``K = R + k``, ``k = box_half_width(d, 1/n)`` (a row
    is clipped with probability at most ``1/n`` wherever ``mu`` lies in the
    range), release the sum with the Elliptical Gaussian Mechanism
    (``Delta_j = 2 K sigma_j``, noise standard deviation
    ``nu_j = sigma_1 sqrt(Delta_j ||Delta||_1)``, ``sigma_1`` for
    ``(rho eps, rho delta)``) and divide by ``n``: ``mu_hat = x_bar + nu / n``
    (ignoring the stage-1 clipping).
    *Stage 2* (budget ``((1 - rho) eps, (1 - rho) delta)``): Algorithm 3 with
    centre ``mu_hat``.  Marginally ``x_i - mu_hat ~ N(0, sigma_eff^2)`` exactly,
    ``sigma_eff_j^2 = sigma_j^2 (1 - 1/n) + nu_j^2 / n^2``, a public quantity; so
    the scaling is ``gaussian_data_scaling(sigma_eff)`` (or ``1``) and the radius
    ``clip_radius(sigma_eff, b, 1/n)`` clips a row with probability ``1/n``.  Its
    output ``n mu_hat + b^-1 (sum_i clip(x~_i) + eta)`` equals the true sum plus
    ``b^-1 (sum_i D_i + eta)``: the centre enters only through the clipping.
    By basic composition (also for a second mechanism that uses the first one's
    output) the pipeline is ``(eps, delta)``-DP.

    References
    ----------
    poulsen2023, pagh2023, dwork2014

    Examples
    --------
    >>> from egmlib.zipf import zipf_sigmas
    >>> sig = zipf_sigmas(10, 1.0)
    >>> e = two_stage_error(sig, 1e6, 0.1, epsilon=1.0, delta=1e-6, public_range=10.0)
    >>> print(round(e, 3))
    786.321
    """
    sig = _sigmas(sigmas)
    nn = _count("n", n)
    r = check_real("rho", rho, low=0.0, high=1.0, low_open=True, high_open=True)
    eps = check_positive("epsilon", epsilon)
    rng_ = check_real("public_range", public_range, low=0.0)
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"scaled must be a bool, got {scaled!r}")
    check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    sigma1 = analytic_sigma(r * eps, r * delta)
    sigma2 = analytic_sigma((1.0 - r) * eps, (1.0 - r) * delta)
    half = rng_ + box_half_width(int(np.count_nonzero(sig)), 1.0 / nn)
    widths = 2.0 * half * sig
    nu2 = sigma1**2 * widths * float(widths.sum())
    eff = np.sqrt(sig**2 * (1.0 - 1.0 / nn) + nu2 / nn**2)
    if not np.all(np.isfinite(eff)):
        raise ValueError(
            "public_range and sigmas are too large: the first-stage noise overflows double precision; "
            f"rescale them (public_range={rng_!r})"
        )
    b = gaussian_data_scaling(eff) if scaled else np.ones(eff.shape)
    radius = float(clip_radius(eff, b, 1.0 / nn))
    noise = (2.0 * radius * sigma2) ** 2 * float(np.sum(1.0 / b**2))
    return noise + nn * _clip_error_at_radius(eff, b, radius)[0]
