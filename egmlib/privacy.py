"""Calibrating the Gaussian mechanism, and the zCDP accounting of compositions of them.

Three functions of the Gaussian mechanism ``M(X) = g(X) + N(0, sigma^2 I)``
with l2-sensitivity ``Delta``:

* :func:`classic_sigma` -- the sufficient noise level of Dwork and Roth
  (Theorem 1 of the study), valid only for ``0 < epsilon < 1``;
* :func:`gaussian_delta` -- the exact privacy profile of Balle and Wang
  (Theorem 2 of the study): the smallest ``delta`` for which a given ``sigma``
  is ``(epsilon, delta)``-DP;
* :func:`analytic_sigma` -- the smallest ``sigma`` whose profile is at most
  ``delta``, rounded towards safety.

and the accounting of a composition of Gaussian mechanisms with zCDP budgets
``rho_i`` fixed in advance (every pipeline, CoinPress, HLY and PLAN in the book):
:func:`gaussian_rho` (the total ``rho`` that is exactly ``(epsilon, delta)``-DP),
:func:`gaussian_zcdp_delta` and :func:`gaussian_zcdp_epsilon` (the exact profile of the
composition), exact only for compositions of Gaussian mechanisms, as their names say;
for any ``rho``-zCDP mechanism, :func:`rho_for_cks` and :func:`zcdp_epsilon_cks` (the
conversion of Canonne, Kamath and Steinke) and the usual bound :func:`zcdp_epsilon_bound`.
(PLAN's exponential-mechanism steps are not Gaussian: the second group applies to it.)

How the profile is evaluated.  Write ``s = sigma / Delta``, ``u = epsilon s
- 1/(2s)`` and ``v = epsilon s + 1/(2s)``.  Theorem 8 of Balle and Wang reads
``delta = Phi(-u) - e^epsilon Phi(-v)``.  Evaluated as written, the two terms
cancel (for small ``epsilon`` each is many times ``delta``) and ``e^epsilon``
overflows for
large ``epsilon``.  Because ``(v^2 - u^2) / 2 = epsilon`` exactly and ``Phi(-z)
= e^{-z^2/2} erfcx(z / sqrt 2) / 2``, with ``x = u / sqrt 2``, ``y = v / sqrt 2``::

    delta = e^{-u^2/2} [erfcx(x) - erfcx(y)] / 2
    erfcx(x) - erfcx(y) = integral from x to y of g(t) dt,
    g(t) = -erfcx'(t) = 2/sqrt(pi) - 2 t erfcx(t) > 0.

The private function ``_profile``

1. computes ``u`` in double-double arithmetic (Dekker's error-free product),
   so that ``e^{-u^2/2}`` is correct to a few ulps: in plain arithmetic the
   rounding error of ``u`` would be amplified by ``u^2``;
2. subtracts ``erfcx(x) - erfcx(y)`` directly when ``erfcx(y) <= 0.45 erfcx(x)``
   (at most one bit is lost; the test uses a cheap ``math``-only estimate of
   ``erfcx``), as ``erfc(x) - e^{-x^2} erfcx(y)`` when ``x < 0``;
3. when ``x >= 2`` and ``y - x >= 1/10``, writes ``sqrt(pi) erfcx(t) = 1/(t +
   r(t))`` with the Laplace continued fraction ``r`` and subtracts
   ``(y - x) + r(y) - r(x)``, where ``|r(y) - r(x)| < (y - x)/8``: no
   cancellation, two continued fractions;
4. otherwise integrates the positive function ``g`` over ``[x, y]`` with a
   Gauss-Legendre rule (``g`` is analytic near the interval, which is short
   relative to its distance from the region where ``erfcx`` grows, so the
   rule converges geometrically and reaches rounding level); 16 points in
   general, 8, 4 or 2 on intervals short relative to ``max(|mid|, 1)``
   (``_gl_rule``); ``g`` is evaluated directly for ``t < 2`` and beyond
   through the continued fraction, where the direct form would cancel.

Against a 60-digit mpmath evaluation the relative error stayed below
:math:`1.6 \\times 10^{-15}` in every check we ran (thousands of points with
``epsilon`` in :math:`[10^{-4}, 10^3]` and results down to :math:`10^{-300}`);
``tests/test_privacy.py`` requires :math:`2.5 \\times 10^{-15}`.
:func:`analytic_sigma` relies on the bound :math:`10^{-14}`, four times that,
for its safety argument.  The computation is
scalar (plain floats), so that :func:`gaussian_delta` and the acceptance test
inside :func:`analytic_sigma` run exactly the same arithmetic.
"""

from __future__ import annotations

import inspect
import math
import struct
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfc, erfcx, log_ndtr, ndtr

from egmlib._validation import check_array, check_positive, check_probability, check_real, overflow_guard, warn_caller

__all__ = [
    "classic_sigma",
    "gaussian_delta",
    "analytic_sigma",
    "gaussian_rho",
    "gaussian_zcdp_delta",
    "gaussian_zcdp_epsilon",
    "zcdp_epsilon_bound",
    "zcdp_epsilon_cks",
    "rho_for_cks",
]

_RHO_MAX = 1e150               # largest total zCDP budget accepted by the accounting functions

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI = math.sqrt(math.pi)
_VELTKAMP = 134217729.0  # 2**27 + 1: splits a double into two 26-bit halves
# Gauss-Legendre rules with 2, 4, 8 and 16 points, and the largest relative
# half-width q = h / max(|mid|, 1) of the interval for which each is used
# (see _gl_rule).
_GL_RULES = [
    (q_max, [float(z) for z in nodes], [float(w) for w in weights])
    for q_max, (nodes, weights) in zip(
        (2.5e-5, 1.5e-3, 2.5e-2, math.inf), (np.polynomial.legendre.leggauss(n) for n in (2, 4, 8, 16))
    )
]

# Bound on the relative error of _profile (measured maximum 1.6e-15; see the
# module docstring).  analytic_sigma's safety argument rests on it.
_PROFILE_RTOL = 1e-14

# Domain of analytic_sigma.  Below delta = 1e-300 the profile nears the
# underflow threshold and loses relative accuracy; inside the epsilon range
# every ratio s met stays far from overflow in the double-double arithmetic.
_DELTA_MIN = 1e-300
_EPS_MIN, _EPS_MAX = 1e-12, 1e12
# _profile switches to the plain formula outside this range of s, epsilon,
# epsilon*s and 1/(2s) (Dekker's splitting would overflow).
_HUGE = 1e290


# ---------------------------------------------------------------------------
# Error-free arithmetic and the profile (scalar: plain floats throughout)
# ---------------------------------------------------------------------------
def _two_prod(a: float, b: float) -> tuple[float, float]:
    """``(p, e)`` with ``p = fl(a*b)`` and ``a*b = p + e`` exactly (Dekker)."""
    p = a * b
    c = _VELTKAMP * a
    a_hi = c - (c - a)
    a_lo = a - a_hi
    c = _VELTKAMP * b
    b_hi = c - (c - b)
    b_lo = b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


def _u_double(s: float, eps: float) -> tuple[float, float]:
    """``u = eps*s - 1/(2s)`` as an unevaluated sum ``hi + lo`` (about 100 bits)."""
    prod, prod_err = _two_prod(eps, s)
    quot = 0.5 / s
    qs, qs_err = _two_prod(quot, s)
    quot_err = ((0.5 - qs) - qs_err) / s  # 0.5 - qs is exact (Sterbenz)
    hi = prod - quot
    bv = hi - prod
    lo = ((prod - (hi - bv)) + (-quot - bv)) + (prod_err - quot_err)  # two-sum
    u_hi = hi + lo
    return u_hi, lo - (u_hi - hi)


def _cf_r(t: float) -> float:
    """The Laplace continued fraction ``r(t)`` with ``sqrt(pi) erfcx(t) = 1 / (t + r)``, ``t >= 2``.

    ``r = (1/2)/(t + 1/(t + (3/2)/(t + 2/(t + ...))))``, evaluated backwards;
    this depth leaves a truncation error below 1e-17 for every ``t >= 2``.
    """
    r = 0.0
    for k in range(int(min(90.0, 320.0 / (t * t) + 12.0)), 0, -1):
        r = 0.5 * k / (t + r)
    return r


def _g(t: float) -> float:
    """``g(t) = -erfcx'(t) = 2/sqrt(pi) - 2 t erfcx(t) > 0``, to a few ulps."""
    if t < 2.0:
        return _TWO_OVER_SQRT_PI - 2.0 * t * float(erfcx(t))
    # sqrt(pi) t erfcx(t) = t / (t + r), hence g = (2/sqrt(pi)) r / (t + r)
    # without cancellation.
    r = _cf_r(t)
    return _TWO_OVER_SQRT_PI * r / (t + r)


def _profile_plain(s: float, eps: float) -> float:
    """The defining formula in plain floats: only for absurd magnitudes of ``s``, ``eps``."""
    u = eps * s - 0.5 / s
    v = eps * s + 0.5 / s
    delta = float(ndtr(-u)) - math.exp(min(eps + float(log_ndtr(-v)), 0.0))
    return min(max(delta, 0.0), 1.0)


def _erfcx_rough(t: float) -> float:
    """``erfcx(t)`` to about ``1e-13`` relative, from ``math`` only: for branch decisions."""
    if t < -26.0:
        return math.inf
    if t < 25.0:
        return math.exp(t * t) * math.erfc(t)
    return (1.0 - 0.5 / (t * t)) / (math.sqrt(math.pi) * t)


def _gl_rule(half: float, mid: float) -> tuple[list[float], list[float]]:
    """The Gauss-Legendre rule for ``int g`` over ``[mid - half, mid + half]``.

    ``g`` is entire and varies on the scale ``max(|t|, 1)``, so the ``n``-point
    rule's relative error behaves like ``c_n q^(2n)`` with ``q = half /
    max(|mid|, 1)``; the thresholds of ``_GL_RULES`` keep it below ``1e-18``
    with a wide margin (``tests/test_privacy.py`` compares every rule with the
    16-point rule on a dense grid of the calibration domain).
    """
    if 0.5 < mid + half and mid - half < 2.0:
        # g = 2/sqrt(pi) - 2 t erfcx(t) cancels here (by up to 2 t^2 + 1): only
        # the 16-point rule averages the rounding errors of g down to ~1e-15
        return _GL_RULES[-1][1], _GL_RULES[-1][2]
    q = half / max(abs(mid), 1.0)
    for q_max, nodes, weights in _GL_RULES:
        if q <= q_max:
            return nodes, weights
    return _GL_RULES[-1][1], _GL_RULES[-1][2]  # pragma: no cover - q_max of the last rule is inf


def _profile(
    s: float, eps: float, rule: tuple[list[float], list[float]] | None = None
) -> tuple[float, float]:
    """Privacy profile ``delta(s)`` for unit sensitivity, and ``E = e^{-u^2/2}``.

    ``s > 0`` is the noise-to-sensitivity ratio.  ``E`` gives the derivative
    ``d delta / ds = -E / (sqrt(2 pi) s^2)``.  ``rule`` forces a quadrature
    rule ``(nodes, weights)`` (for tests); by default :func:`_gl_rule` picks it.
    """
    if not s > 0.0:  # sigma / sensitivity underflowed
        return 1.0, 0.0
    if s > _HUGE or eps > _HUGE or eps * s > _HUGE or 0.5 / s > _HUGE:
        return _profile_plain(s, eps), 0.0
    u_hi, u_lo = _u_double(s, eps)
    if u_hi > 40.0:  # delta < Phi(-40) < 1e-349 underflows
        return 0.0, 0.0
    if u_hi < -40.0:
        e_u = 0.0
    else:
        sq, sq_err = _two_prod(u_hi, u_hi)
        e_u = math.exp(-0.5 * sq) * math.exp(-(0.5 * sq_err + u_hi * u_lo))
    x = u_hi / _SQRT2
    mid = (eps / _SQRT2) * s  # (x + y) / 2
    width = 1.0 / (_SQRT2 * s)  # y - x
    y = mid + 0.5 * width
    if _erfcx_rough(y) <= 0.45 * _erfcx_rough(x):  # the subtraction loses at most one bit
        fy = float(erfcx(y))
        diff = e_u * (float(erfcx(x)) - fy) if x >= 0.0 else float(erfc(x)) - e_u * fy
    elif x >= 2.0 and width >= 0.1 and rule is None:
        # both ends on the continued fraction: erfcx(x) - erfcx(y) =
        # (width + r(y) - r(x)) / (sqrt(pi) (x + r(x)) (y + r(y))); |r(y) - r(x)|
        # < width / 8 and each r (< 1/4) is good to about an ulp, so the
        # numerator keeps a relative error below about 6e-16 for width >= 1/10
        # (two evaluations of the continued fraction instead of up to sixteen)
        r_x = _cf_r(x)
        r_y = _cf_r(y)
        diff = e_u * ((width + (r_y - r_x)) / (_SQRT_PI * (x + r_x) * (y + r_y)))
    else:  # erfcx(x) - erfcx(y) = int_x^y g, positive integrand
        half = 0.5 * width
        total = 0.0
        nodes, weights = _gl_rule(half, mid) if rule is None else rule
        if mid + half < 2.0 and len(nodes) > 4:
            # every node takes the direct branch of _g: one vectorised erfcx call
            # (the same values as scalar calls; the sum stays sequential)
            ts = [mid + half * node for node in nodes]
            for t, f, weight in zip(ts, erfcx(np.array(ts)).tolist(), weights):
                total += weight * (_TWO_OVER_SQRT_PI - 2.0 * t * f)
        else:
            for node, weight in zip(nodes, weights):
                total += weight * _g(mid + half * node)
        diff = e_u * (half * total)
    return min(max(0.5 * diff, 0.0), 1.0), e_u


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------
@overflow_guard
def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Noise level of the classic Gaussian mechanism (Dwork and Roth, Theorem 3.22).

    Parameters
    ----------
    epsilon : float
        Privacy loss bound, ``0 < epsilon < 1`` (the theorem's hypothesis).
    delta : float
        Failure probability, ``0 < delta < 1``.
    sensitivity : float, default 1.0
        l2-sensitivity ``Delta`` of the released function, ``> 0``.

    Returns
    -------
    float
        ``sigma = Delta sqrt(2 ln(1.25 / delta)) / epsilon``.

    Raises
    ------
    ValueError
        If ``epsilon`` is not in ``(0, 1)`` (the theorem does not hold for
        ``epsilon >= 1``), ``delta`` is not in ``(0, 1)`` or ``sensitivity`` is not
        positive; also for NaN or infinite values.

    Notes
    -----
    Theorem 1 of the study (chapter "The Gaussian mechanism").  The bound is
    sufficient, not tight: :func:`analytic_sigma` is always smaller.

    References
    ----------
    dwork2014, poulsen2023

    Examples
    --------
    >>> print(f"{classic_sigma(0.5, 1e-5):.4f}")
    9.6896
    >>> print(f"{classic_sigma(0.5, 1e-5, sensitivity=2.0):.4f}")
    19.3792
    """
    eps = check_positive("epsilon", epsilon)
    if eps >= 1.0:
        raise ValueError(
            "epsilon must be in (0, 1) for classic_sigma: Dwork and Roth's Theorem 3.22 only holds "
            f"for 0 < epsilon < 1 (use analytic_sigma for larger epsilon), got {epsilon!r}"
        )
    dlt = check_probability("delta", delta)
    sens = check_positive("sensitivity", sensitivity)
    sigma = sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
    # Five roundings (log, product, sqrt, product, quotient), each within half an ulp:
    # four steps up put the result above the exact formula (rounded toward privacy).
    for _ in range(4):
        sigma = math.nextafter(sigma, math.inf)
    return sigma


# Safe rounding of the profile.  _profile has relative error below _PROFILE_RTOL
# wherever its result is a normal double (>= 2.2e-308); in the subnormal range the
# product e_u * diff / 2 adds an absolute error below one unit 2**-1074.
_SUBNORMAL_STEPS = 2


def _round_up_delta(d: float) -> float:
    """An upper bound on the exact profile whose evaluation by :func:`_profile` gave ``d``.

    ``d / (1 - r)`` bounds it when the relative error is below ``r`` (normal range);
    two steps of ``nextafter`` cover the rounding of that division and, below the normal
    range, the absolute error of the last product.  Never 0: an underflowed profile
    (``u > 40``: the exact value is below ``Phi(-40) < 1e-349``) becomes the
    smallest positive double.
    """
    if d >= 1.0:
        return 1.0
    up = d / (1.0 - _PROFILE_RTOL)
    for _ in range(_SUBNORMAL_STEPS):
        up = math.nextafter(up, math.inf)
    return min(up, 1.0)


def _delta_up(s: float, eps: float) -> float:
    """Upper bound on the exact profile ``delta(s)`` for unit sensitivity (see :func:`gaussian_delta`)."""
    if not s > 0.0:
        return 1.0
    if s > _HUGE:
        # delta(s, eps) <= delta(s, 0) = erf(1 / (2 sqrt 2 s)) <= 1 / (sqrt(2 pi) s)
        up = 1.0 / (_SQRT_2PI * s)
        for _ in range(4):
            up = math.nextafter(up, math.inf)
        return min(up, 1.0)
    if eps > _HUGE or eps * s > _HUGE or 0.5 / s > _HUGE:
        return 1.0      # outside the accurate evaluation: the safe limit
    return _round_up_delta(_profile(s, eps)[0])


def _gaussian_delta(sigma: ArrayLike, epsilon: float, sensitivity: float) -> float | NDArray[np.float64]:
    arr = check_array("sigma", sigma, ndim=None, positive=True)
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    if arr.ndim == 0:
        return _delta_up(_ratio_toward_zero(float(arr), sens), eps)
    out = np.fromiter((_delta_up(_ratio_toward_zero(float(x), sens), eps) for x in arr.ravel()),
                      dtype=np.float64, count=arr.size)
    return out.reshape(arr.shape)


def _ratio_toward_zero(sigma: float, sens: float) -> float:
    """sigma / sens rounded down, never up: a larger ratio gives a smaller delta, and
    near delta = 1e-300 the profile magnifies a half-ulp error about 1,400-fold, more
    than the allowance _delta_up adds (found by a referee at sensitivity != 1)."""
    ratio = sigma / sens
    if sens != 1.0 and Fraction(ratio) > Fraction(sigma) / Fraction(sens):
        ratio = math.nextafter(ratio, 0.0)  # the division rounded up: step back below
    return ratio


_MISSING = object()


@overflow_guard
def gaussian_delta(
    *args: object, sigma: ArrayLike = _MISSING, epsilon: float = _MISSING, sensitivity: float = 1.0
) -> float | NDArray[np.float64]:
    r"""Exact privacy profile of the Gaussian mechanism (Balle and Wang, Theorem 8), rounded up.

    Call as ``gaussian_delta(epsilon, sigma=..., sensitivity=...)`` or with all
    arguments by keyword.  ``sigma`` is keyword-only: it and ``epsilon`` are both
    positive numbers, and swapping them gives a wrong ``delta`` without an error.
    The old positional form ``gaussian_delta(sigma, epsilon[, sensitivity])`` still
    works for one release and emits a ``DeprecationWarning``.

    Parameters
    ----------
    epsilon : float
        Privacy loss bound, finite and ``> 0``.
    sigma : float or array_like
        Standard deviation(s) of the noise, each finite and ``> 0`` (keyword-only).
    sensitivity : float, default 1.0
        l2-sensitivity ``Delta``, finite and ``> 0`` (keyword-only).

    Returns
    -------
    float or numpy.ndarray
        An upper bound, tight to about ``1e-14`` relative, on the smallest ``delta``
        for which adding ``N(0, sigma^2)`` noise is ``(epsilon, delta)``-DP: a float
        for scalar ``sigma``, else an array of ``sigma``'s shape.  Values lie in
        ``(0, 1]`` and decrease in ``sigma`` and in ``epsilon``.  Where the exact
        value underflows (below about ``1e-308``) the bound is absolute: the
        smallest positive doubles, never 0.

    Raises
    ------
    ValueError
        If an entry of ``sigma``, ``epsilon`` or ``sensitivity`` is not
        positive, or is NaN or infinite.
    TypeError
        If ``sigma`` or ``epsilon`` is missing, or given twice.

    Notes
    -----
    With :math:`s = \sigma / \Delta`, equation (2) of the study (Theorem 2):

    .. math::

        \delta(s) &= \Phi\Big(\frac{1}{2s} - \varepsilon s\Big) \\
            &\quad - e^{\varepsilon}\,\Phi\Big(-\frac{1}{2s} - \varepsilon s\Big).

    It is evaluated without cancellation or overflow, as the module docstring
    describes: relative error below ``2.5e-15`` against mpmath (tested) where the
    result is a normal double.  *Rounded toward privacy by construction*: the
    evaluation ``d`` is divided by ``1 - r`` with ``r = 1e-14`` (four times the
    tested error bound) and moved up two doubles (the rounding of the division,
    and the absolute error of at most one unit ``2^-1074`` of the last product
    when the result is subnormal).  So the returned value is never below the exact
    profile; ``tests/test_privacy_rounding.py`` checks this against mpmath.
    Outside the accurate evaluation (``sigma / Delta`` or ``epsilon`` beyond
    ``1e290``) the safe limits ``1 / (sqrt(2 pi) s)`` or 1 are returned.
    Arrays are evaluated element by element, so that every element gets exactly
    the arithmetic of a scalar call.

    References
    ----------
    balle2018, poulsen2023

    Examples
    --------
    >>> print(f"{gaussian_delta(1.0, sigma=1.0):.6f}")
    0.126937
    >>> print(np.round(gaussian_delta(1.0, sigma=[0.5, 1.0, 2.0]), 6))
    [0.509862 0.126937 0.00683 ]
    >>> print(f"{gaussian_delta(epsilon=1.0, sigma=8.0):.4e}")
    1.5531e-17
    """
    if args:
        if len(args) >= 2 and sigma is _MISSING and epsilon is _MISSING and len(args) <= 3:
            warn_caller("gaussian_delta(sigma, epsilon) is deprecated: call gaussian_delta(epsilon, "
                        "sigma=sigma) (sigma is keyword-only); the positional form goes in the next release",
                        DeprecationWarning)
            sens = args[2] if len(args) == 3 else sensitivity
            return _gaussian_delta(args[0], args[1], sens)
        if len(args) == 1 and epsilon is _MISSING:
            epsilon = args[0]
        else:
            raise TypeError("gaussian_delta takes epsilon as its only positional argument; "
                            "sigma and sensitivity are keyword-only")
    if sigma is _MISSING or epsilon is _MISSING:
        raise TypeError("gaussian_delta needs epsilon and sigma (keyword-only), e.g. gaussian_delta(1.0, sigma=2.0)")
    return _gaussian_delta(sigma, epsilon, sensitivity)


# the documented signature (the *args above only carry the deprecated positional form)
gaussian_delta.__signature__ = inspect.Signature([
    inspect.Parameter("epsilon", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="float"),
    inspect.Parameter("sigma", inspect.Parameter.KEYWORD_ONLY, annotation="ArrayLike"),
    inspect.Parameter("sensitivity", inspect.Parameter.KEYWORD_ONLY, default=1.0, annotation="float"),
], return_annotation="float | NDArray[np.float64]")


def _profile_fast(s: float, eps: float) -> tuple[float, float] | None:
    """The defining formula with ``math.erfc``: a cheap first guide for Newton's method.

    Returns ``(delta, E)`` like :func:`_profile`, or ``None`` where the plain
    formula is unreliable (``e^eps`` near overflow, ``erfc`` near underflow, or
    more than six digits lost to cancellation).  Its result never reaches the
    caller: :func:`analytic_sigma` finishes with :func:`_profile`.
    """
    if not (s > 1e-150 and s < 1e150) or eps > 700.0:
        return None
    u = eps * s - 0.5 / s
    v = eps * s + 0.5 / s
    if v > 37.0 or u < -37.0:
        return None
    first = 0.5 * math.erfc(u / _SQRT2)
    d = first - math.exp(eps) * (0.5 * math.erfc(v / _SQRT2))
    if not d > 1e-6 * first:
        return None
    return d, math.exp(-0.5 * u * u)


def _newton(eps: float, target: float, s: float, lo: float, hi: float, fast: bool) -> tuple[float, float, float]:
    """Safeguarded Newton iteration in ``(log s, log delta)`` for ``delta(s) = target``.

    With ``fast`` the cheap :func:`_profile_fast` guides the steps (falling back
    to :func:`_profile` where it declines) and the iteration stops once a step
    is below ``1e-7`` in relative size; otherwise :func:`_profile` is used and
    it stops once the step is below ``1e-6`` (the step is still taken: Newton's
    error after it is of the order of its square, far below an ulp) or within a
    few ulps.  Returns ``(s, lo, hi)`` with the bracket ``lo < root < hi``
    kept up to date.
    """
    log_t = math.log(target)
    stop = 1e-7 if fast else 1e-6
    for _ in range(200):
        res = _profile_fast(s, eps) if fast else None
        d, e_u = _profile(s, eps) if res is None else res
        if d > target:
            lo = s
        elif d < target:
            hi = s
        else:
            break
        rel_step = math.nan
        if d > 0.0 and e_u > 0.0:
            # d log(delta) / d log(s) = -E / (sqrt(2 pi) s delta)
            rel_step = math.expm1((math.log(d) - log_t) * (_SQRT_2PI * s * d) / e_u)
        if abs(rel_step) <= stop:  # converged: take this last step (its error is ~ its square)
            s = s + s * rel_step
            break
        s_new = s + s * rel_step
        if not lo < s_new < hi:
            s_new = math.sqrt(lo) * math.sqrt(hi) if lo > 0.0 else hi / math.e
        if s_new == s or hi - lo <= 1e-15 * hi:
            break
        s = s_new
    return s, lo, hi


def _solve_ratio(eps: float, target: float) -> float:
    """Root of ``delta(s) = target`` by Newton's method in ``(log s, log delta)``.

    Starts to the right of the root, from an upper bound, and keeps a bracket
    ``(lo, hi)``; a step leaving it is replaced by bisection in ``log s``.
    The cheap plain formula guides the iteration to about seven digits; steps
    with the accurate :func:`_profile` then finish it, usually one.  Stops
    within a few ulps of the root; the caller polishes.
    """
    # Upper bound: for u >= U >= 0, delta <= Phi(-u) <= e^{-U^2/2}/2 <= target.
    big_u = math.sqrt(2.0 * math.log(0.5 / target)) if target < 0.5 else 0.0
    s = (big_u + math.sqrt(big_u * big_u + 2.0 * eps)) / (2.0 * eps)
    s, lo, hi = _newton(eps, target, s, 0.0, s, fast=True)
    # the cheap formula's rounding may misplace the bracket by ~1e-10: widen it
    s, _, _ = _newton(eps, target, s, lo * (1.0 - 1e-6), max(hi, s) * (1.0 + 1e-6), fast=False)
    return s


class _Acceptance:
    """The rounding-safe acceptance test of analytic_sigma, remembering profile values.

    Neighbouring candidates share evaluations of :func:`_profile` (the test
    of ``sigma`` reads the profile at the double below ``sigma / Delta``,
    which is where the test of the next smaller candidate starts).
    """

    def __init__(self, eps: float, sens: float, target: float) -> None:
        self.eps, self.sens, self.target = eps, sens, target
        self.cache: dict[float, float] = {}

    def _delta(self, s: float) -> float:
        d = self.cache.get(s)
        if d is None:
            d = self.cache[s] = _profile(s, self.eps)[0]
        return d

    def __call__(self, sigma: float) -> bool:
        """Whether ``sigma`` passes the rounding-safe acceptance test."""
        s1 = _ratio_toward_zero(sigma, self.sens)  # exactly as gaussian_delta computes it
        if _round_up_delta(self._delta(s1)) > self.target:
            return False
        return self._delta(math.nextafter(s1, 0.0)) <= self.target * (1.0 - _PROFILE_RTOL)


def _to_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _from_bits(n: int) -> float:
    return struct.unpack("<d", struct.pack("<q", n))[0]


@overflow_guard
def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest noise level of the Gaussian mechanism (Balle and Wang, Theorem 8).

    Parameters
    ----------
    epsilon : float
        Privacy loss bound, ``1e-12 <= epsilon <= 1e12`` (unlike
        :func:`classic_sigma`, no ``epsilon < 1`` restriction; the limits keep
        the computation far from overflow and are far beyond any use).
    delta : float
        Failure probability, ``1e-300 <= delta < 1``.  ``delta >= 1`` is
        rejected: every mechanism is ``(epsilon, 1)``-DP, so no noise level is
        defined by it.  Below ``1e-300`` the profile nears the floating-point
        underflow threshold and cannot be computed to relative accuracy.
    sensitivity : float, default 1.0
        l2-sensitivity ``Delta``, finite and ``> 0``.

    Returns
    -------
    float
        The smallest double ``sigma`` accepted by a rounding-safe test (below);
        relative error against the exact minimum ``sigma*`` below ``2e-14``
        for ``epsilon`` in ``[1e-3, 50]`` and ``delta`` in ``[1e-15, 0.5]``
        (below ``3e-14`` for any ``epsilon`` in the domain and ``delta <=
        0.9``), and never below ``sigma*``.  Closer to ``delta = 1`` the
        excess grows (``1e-13`` at ``0.99``, ``5e-11`` at ``0.99999``): see Notes.

    Raises
    ------
    ValueError
        If ``epsilon`` is outside ``[1e-12, 1e12]``, ``delta`` outside
        ``[1e-300, 1)``, ``sensitivity`` not positive, or any of them NaN or
        infinite.

    Notes
    -----
    ``sigma*`` solves ``delta(sigma*) = delta`` for the exact profile of
    :func:`gaussian_delta` (it decreases in ``sigma``); it is ``Delta`` times
    ``sigma_opt`` of equation (2) of the study.  A safeguarded Newton
    iteration in ``(log sigma, log delta)`` finds it to a few ulps, using the
    exact derivative ``d delta / ds = -phi(u) / s^2``: the plain formula with
    ``math.erfc`` guides it to about seven digits, and one step with the
    accurate evaluation finishes it (Newton's error after that step is of the
    order of the square of the previous one).  The result is then
    moved across neighbouring doubles (galloping, then bisection on the bit
    patterns) to the smallest ``sigma`` with

    * ``gaussian_delta(epsilon, sigma=sigma, sensitivity=Delta) <= delta`` (so
      this holds exactly in floating point, for the rounded-up profile), and
    * ``delta_hat(s0) <= delta (1 - r)``, where ``s0`` is the double just below
      ``fl(sigma / Delta)`` and ``r = 1e-14`` bounds the relative error of the
      profile evaluation ``delta_hat``.

    The second condition makes the result safe in exact arithmetic: ``s0 <=
    sigma/Delta`` and the exact profile ``delta`` is decreasing, so
    ``delta(sigma/Delta) <= delta(s0) <= delta_hat(s0)/(1 - r) <= delta``,
    that is ``sigma >= sigma*``.  The price is a relative excess of about
    ``r / |d log delta / d log s|``: at most about ``1.2e-14`` for ``delta <=
    0.5``, but large when ``delta`` is near 1, where the profile is flat in
    ``log s`` (and where no one calibrates a mechanism).

    References
    ----------
    balle2018, poulsen2023

    Examples
    --------
    >>> sigma = analytic_sigma(0.5, 1e-5)
    >>> print(f"{sigma:.6f}")
    7.031827
    >>> print(gaussian_delta(0.5, sigma=sigma) <= 1e-5, sigma < classic_sigma(0.5, 1e-5))
    True True
    >>> print(f"{analytic_sigma(10.0, 1e-12, sensitivity=3.0):.6f}")
    2.233837
    """
    eps = check_real("epsilon", epsilon, low=_EPS_MIN, high=_EPS_MAX)
    dlt = check_real("delta", delta, low=_DELTA_MIN, high=1.0, high_open=True)
    sens = check_positive("sensitivity", sensitivity)
    target_margin = dlt * (1.0 - _PROFILE_RTOL)
    # The smallest accepted sigma has its lower neighbour just above the root
    # of delta(s) = target_margin: start the search one double above it.
    ratio = _solve_ratio(eps, target_margin)
    sigma = math.nextafter(ratio * sens, math.inf)
    if not math.isfinite(sigma) or sigma >= 1e308:
        raise ValueError(
            f"sensitivity is too large: sigma = sensitivity * {ratio!r} overflows double precision; "
            f"sensitivity must be below {1e308 / ratio:.3e} for epsilon={eps!r}, delta={dlt!r}, got {sens!r}"
        )
    # Bracket the acceptance boundary by galloping over consecutive doubles
    # (positive doubles are ordered like their bit patterns), then bisect.
    _safe = _Acceptance(eps, sens, dlt)
    good = bad = _to_bits(sigma)
    if _safe(sigma):
        step = 1
        while True:
            bad = max(good - step, 0)
            if bad == 0 or not _safe(_from_bits(bad)):
                break
            good, step = bad, 2 * step
    else:
        step = 1
        while True:
            good = bad + step
            if _safe(_from_bits(good)):
                break
            bad, step = good, 2 * step
    while good - bad > 1:
        mid = (good + bad) // 2
        if _safe(_from_bits(mid)):
            good = mid
        else:
            bad = mid
    return _from_bits(good)


def _total_rho(rho: object) -> float:
    """A total zCDP budget in ``(0, _RHO_MAX]``, named ``rho``."""
    return check_real("rho", rho, low=0.0, high=_RHO_MAX, low_open=True)


_U = 2.0**-53                  # unit roundoff of float64
_EPS_FLOOR = 1e-12             # smallest epsilon the zCDP conversions report (a safe floor)


def _ratio_down(r: float) -> float:
    """``s = 1 / sqrt(2 rho)`` rounded down, verified in exact rational arithmetic: ``2 rho s^2 <= 1``.

    ``s`` is the noise-to-sensitivity ratio of the one Gaussian mechanism a composition
    with total ``rho`` equals; the profile decreases in ``s``, so a smaller ``s`` gives a
    larger (safe) ``delta`` and ``epsilon``.  The float formula is within two ulps, so
    the loop takes at most a few steps.
    """
    s = 1.0 / math.sqrt(2.0 * r)
    two_r = 2 * Fraction(r)
    while two_r * Fraction(s) ** 2 > 1:
        s = math.nextafter(s, 0.0)
    return s


# --------------------------------------------------------------------------
# zCDP accounting: a composition of Gaussian mechanisms is one Gaussian mechanism
# --------------------------------------------------------------------------
@overflow_guard
def gaussian_rho(epsilon: float, delta: float) -> float:
    """The total zCDP budget whose Gaussian mechanism is exactly ``(epsilon, delta)``-DP, rounded down.

    Exact only for compositions of Gaussian mechanisms (every estimator in this book);
    for a general ``rho``-zCDP mechanism use :func:`rho_for_cks`.

    Parameters
    ----------
    epsilon : float
        ``1e-12 <= epsilon <= 1e12``.
    delta : float
        ``1e-300 <= delta < 1``.

    Returns
    -------
    float
        ``rho = 1 / (2 s^2)`` with ``s = analytic_sigma(epsilon, delta)``: the largest
        ``rho`` (to about ``3e-14`` relative, never above the exact one) such that any
        composition of Gaussian mechanisms with budgets ``rho_i``, ``sum rho_i = rho``,
        is ``(epsilon, delta)``-DP.

    Raises
    ------
    ValueError
        On invalid ``epsilon`` or ``delta``.

    Notes
    -----
    A Gaussian mechanism with sensitivity ``Delta`` and noise ``sigma`` has privacy
    loss ``N(m, 2m)`` with ``m = Delta^2 / (2 sigma^2) = rho``; the losses of
    independent mechanisms add, so a composition with budgets ``rho_i`` has loss
    ``N(rho, 2 rho)`` with ``rho = sum rho_i``: exactly one Gaussian mechanism with
    ``(Delta / sigma)^2 = 2 rho`` (Gaussian DP with ``mu = sqrt(2 rho)``).  Its
    ``(epsilon, delta)`` curve is the exact profile of :func:`gaussian_delta`.
    *Rounded toward privacy by construction*: ``s`` is never below the exact
    ``sigma*`` (:func:`analytic_sigma`), and ``1 / (2 s^2)`` is moved down until
    ``2 rho s^2 <= 1`` holds in exact rational arithmetic.

    References
    ----------
    biswas2020, balle2018

    Examples
    --------
    >>> print(round(gaussian_rho(1.0, 1e-6), 6))
    0.028014
    """
    s = analytic_sigma(epsilon, delta)
    r = 0.5 / (s * s)
    bound = Fraction(1, 2) / Fraction(s) ** 2
    while Fraction(r) > bound:
        r = math.nextafter(r, 0.0)
    return r


@overflow_guard
def gaussian_zcdp_delta(rho: float, *, epsilon: float) -> float:
    """The exact ``delta(epsilon)`` of a composition of Gaussian mechanisms with total ``rho``, rounded up.

    Exact only for compositions of Gaussian mechanisms.

    Parameters
    ----------
    rho : float
        Total zCDP budget in ``(0, 1e150]``.
    epsilon : float
        ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``gaussian_delta(epsilon, sigma=1 / sqrt(2 rho))``, never below the exact value.

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    The ratio ``1 / sqrt(2 rho)`` is rounded down (verified in exact rational
    arithmetic) and the profile rounded up (:func:`gaussian_delta`): both toward privacy.

    References
    ----------
    balle2018

    Examples
    --------
    >>> print(f"{gaussian_zcdp_delta(gaussian_rho(1.0, 1e-6), epsilon=1.0):.3e}")
    1.000e-06
    """
    r = _total_rho(rho)
    eps = check_positive("epsilon", epsilon)
    return _delta_up(_ratio_down(r), eps)


@overflow_guard
def gaussian_zcdp_epsilon(rho: float, *, delta: float) -> float:
    """The smallest ``epsilon`` at which a composition of Gaussian mechanisms with total ``rho`` is ``(epsilon, delta)``-DP.

    Exact only for compositions of Gaussian mechanisms (every estimator in this
    book); for a general ``rho``-zCDP mechanism use :func:`zcdp_epsilon_cks`.  Inverse
    of :func:`gaussian_rho` in ``rho``.

    Parameters
    ----------
    rho : float
        Total zCDP budget in ``(0, 1e150]``.
    delta : float
        In ``(0, 1)`` (keyword-only).

    Returns
    -------
    float
        The ``epsilon`` with ``gaussian_zcdp_delta(rho, epsilon=epsilon) <= delta``,
        never below the exact root and above it by about ``1e-13`` relative; at least
        ``1e-12`` (when the exact root is smaller, ``1e-12`` is returned: safe).

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    The root of ``log delta_up(eps) = log delta`` by Brent's method in ``log eps``,
    bracketed by ``1e-12`` and the usual bound :func:`zcdp_epsilon_bound` (valid for
    every ``rho``-zCDP mechanism, doubled while the rounded profile still exceeds
    ``delta``), ``delta_up`` the rounded-up profile of :func:`gaussian_zcdp_delta`.
    *Rounded toward privacy by construction*: the result is moved up until
    ``delta_up(eps) <= delta`` holds for the returned double, and ``delta_up`` is an
    upper bound on the exact profile.  Never a math domain error: the rounded
    profile is positive everywhere (where the exact one underflows it is the
    smallest positive double).

    References
    ----------
    balle2018

    Examples
    --------
    >>> print(round(gaussian_zcdp_epsilon(0.5, delta=1e-6), 4))
    4.8866
    >>> print(round(gaussian_zcdp_epsilon(gaussian_rho(0.1, 1e-6), delta=1e-6), 12))
    0.1
    """
    r = _total_rho(rho)
    dl = check_probability("delta", delta)
    s = _ratio_down(r)
    log_dl = math.log(dl)

    def safe(eps: float) -> bool:
        return _delta_up(s, eps) <= dl

    lo = _EPS_FLOOR
    if safe(lo):
        return lo
    hi = r + 2.0 * math.sqrt(r * -math.log(dl))
    for _ in range(64):
        if safe(hi):
            break
        hi *= 2.0
    else:  # pragma: no cover - the usual bound holds for every rho-zCDP mechanism
        raise ValueError(f"no epsilon found for rho={rho!r}, delta={delta!r}")

    def excess(log_eps: float) -> float:
        return math.log(_delta_up(s, math.exp(log_eps))) - log_dl

    from scipy import optimize

    eps = math.exp(optimize.brentq(excess, math.log(lo), math.log(hi), xtol=1e-15, rtol=8 * _U))
    return _step_up_until(safe, eps, hi)


def _step_up_until(ok, x: float, limit: float) -> float:
    """The first of ``x (1 + k 2^-52)``, ``k = 0, 1, 2, 4, ...``, for which ``ok`` holds (``limit`` holds)."""
    k = 0.0
    y = x
    while not ok(y):
        k = 1.0 if k == 0.0 else 2.0 * k
        y = x * (1.0 + k * 2.0**-52)
        if y >= limit:
            return limit
    return y


@overflow_guard
def zcdp_epsilon_bound(rho: float, delta: float) -> float:
    """The usual conversion ``epsilon = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke), rounded up.

    Valid for every ``rho``-zCDP mechanism.

    Parameters
    ----------
    rho : float
        zCDP budget ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        An upper bound on :func:`zcdp_epsilon_cks` and :func:`gaussian_zcdp_epsilon`.

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    *Rounded toward privacy by construction*: the five floating-point operations
    (log, product, square root, scaling, sum of positives) have a relative error
    below ``6 u`` (``u = 2^-53``); the result is moved up eight doubles.

    References
    ----------
    biswas2020

    Examples
    --------
    >>> print(round(zcdp_epsilon_bound(0.5, 1e-6), 4))
    5.7565
    """
    r = check_positive("rho", rho)
    dl = check_probability("delta", delta)
    e = r + 2.0 * math.sqrt(r * -math.log(dl))
    for _ in range(8):
        e = math.nextafter(e, math.inf)
    return e


def _cks_terms(s: float, r: float, L: float) -> tuple[float, float, float, float]:
    """The three terms of CKS's bound at ``alpha = 1 + e`` with ``e = fl(e^s)``, and ``log alpha``.

    ``alpha rho``, ``(L - log alpha) / (alpha - 1)`` and ``log(1 - 1/alpha) = -log1p(1/e)``
    (no cancellation: ``s - log alpha`` would lose ``log alpha`` ulps); all three are
    evaluated for the same ``alpha``, the one whose ``alpha - 1`` is the double ``e``.
    """
    e = math.exp(s)
    log_alpha = math.log1p(e)
    return (1.0 + e) * r, (L - log_alpha) / e, -math.log1p(1.0 / e), log_alpha


def _cks_objective(s: float, r: float, L: float) -> float:
    """CKS's bound at alpha = 1 + e^s: alpha rho + (L + (alpha-1) log(1-1/alpha) - log alpha) / (alpha-1)."""
    t1, t2, t3, _ = _cks_terms(s, r, L)
    return t1 + t2 + t3


def _cks_up(s: float, r: float, L: float) -> float:
    """An upper bound on the CKS objective at ``alpha = 1 + fl(e^s)``.

    Each term of :func:`_cks_terms` is computed with a relative error of at most
    ``4 u`` (``(1 + e) r``: two roundings; ``(L - log alpha) / e``: the subtraction
    errs by at most ``u (L + log alpha)``, plus ``log1p`` and the division;
    ``-log1p(1/e)``: the reciprocal and ``log1p``), and the two additions by ``u``
    each of the running magnitude.  ``16 u`` times the sum of the magnitudes (a
    factor of two to spare) bounds the total error.
    """
    t1, t2, t3, log_alpha = _cks_terms(s, r, L)
    size = abs(t1) + (abs(L) + abs(log_alpha)) / math.exp(s) + abs(t3)
    return math.nextafter(t1 + t2 + t3 + 16.0 * _U * size, math.inf)


@overflow_guard
def zcdp_epsilon_cks(rho: float, delta: float) -> float:
    """The conversion of Canonne, Kamath and Steinke: ``rho``-zCDP is ``(epsilon, delta)``-DP, rounded up.

    Valid for every ``rho``-zCDP mechanism (the general conversion; the exact one for
    compositions of Gaussian mechanisms is :func:`gaussian_zcdp_epsilon`).

    Parameters
    ----------
    rho : float
        zCDP budget in ``(0, 1e150]``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        An upper bound, tight to about ``1e-13`` relative, on ``inf over alpha > 1`` of
        ``alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1)``.

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    Proposition 12 and Corollary 13 of Canonne, Kamath and Steinke (2020): for any
    ``rho``-zCDP mechanism (Renyi DP of order ``alpha`` at ``alpha rho`` for every
    ``alpha``), the bound above holds for every ``alpha > 1``.  It lies between the
    exact profile of a Gaussian mechanism (:func:`gaussian_zcdp_epsilon`) and the usual
    bound :func:`zcdp_epsilon_bound`.  The infimum is found by Brent's bounded search
    over ``s = log(alpha - 1)`` in ``s0 +- 40``, ``s0 = log(log(1/delta) / rho) / 2``
    (the minimiser is near ``alpha = 1 + sqrt(log(1/delta) / rho)``).
    *Rounded toward privacy by construction*: since the bound holds at *every*
    ``alpha``, it suffices to bound the objective at the ``alpha`` found from above:
    its value plus ``16 u`` times the sum of its terms' magnitudes (``u = 2^-53``; each
    term errs by at most ``4 u`` relative, see ``_cks_up``), moved up one double.

    References
    ----------
    canonne2020, bun2016

    Examples
    --------
    >>> print(round(zcdp_epsilon_cks(0.5, 1e-6), 4))
    5.2215
    """
    r = _total_rho(rho)
    dl = check_probability("delta", delta)
    L = -math.log(dl)
    s0 = 0.5 * math.log(L / r)
    from scipy import optimize

    res = optimize.minimize_scalar(_cks_objective, bounds=(s0 - 40.0, s0 + 40.0), args=(r, L),
                                   method="bounded", options={"xatol": 1e-12})
    s_best = float(res.x) if _cks_objective(float(res.x), r, L) <= _cks_objective(s0, r, L) else s0
    return max(_cks_up(s_best, r, L), 0.0)


@overflow_guard
def rho_for_cks(epsilon: float, delta: float) -> float:
    """The largest ``rho`` that :func:`zcdp_epsilon_cks` certifies as ``(epsilon, delta)``-DP, rounded down.

    Valid for every ``rho``-zCDP mechanism.

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        The root of ``zcdp_epsilon_cks(rho, delta) = epsilon`` in ``rho`` (Brent's method
        on ``log rho``, bracketed by the usual bound's ``rho`` and :func:`gaussian_rho`),
        never above the exact root.

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    *Rounded toward privacy by construction*: the root is moved down until the
    rounded-up :func:`zcdp_epsilon_cks` of the returned ``rho`` is at most
    ``epsilon``; that value bounds the exact infimum from above, and the infimum
    increases in ``rho``.

    References
    ----------
    canonne2020

    Examples
    --------
    >>> print(round(rho_for_cks(1.0, 1e-6), 6))
    0.024356
    """
    eps = check_positive("epsilon", epsilon)
    dl = check_probability("delta", delta)
    L = -math.log(dl)
    low = min((eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2, _RHO_MAX)   # the usual bound, solved for rho
    high = min(gaussian_rho(min(max(eps, _EPS_MIN), _EPS_MAX), max(dl, _DELTA_MIN)), _RHO_MAX) \
        if dl < 1.0 else _RHO_MAX

    def safe(r: float) -> bool:
        return zcdp_epsilon_cks(r, dl) <= eps

    def step_down(r: float) -> float:
        k, y = 0.0, r
        while not safe(y):
            k = 1.0 if k == 0.0 else 2.0 * k
            y = r * (1.0 - k * 2.0**-52)
        return y

    if not low < high:
        return step_down(low)

    def excess(log_r: float) -> float:
        return zcdp_epsilon_cks(math.exp(log_r), dl) - eps

    a, b = math.log(low) - 1e-9, math.log(high) + 1e-9
    if excess(a) >= 0.0:
        return step_down(low)
    if excess(b) <= 0.0:
        return step_down(high)
    from scipy import optimize

    return step_down(float(math.exp(optimize.brentq(excess, a, b, xtol=1e-15, rtol=8 * _U))))


# --------------------------------------------------------------------------
# deprecated names (one release): the exact Gaussian conversions now say "gaussian"
# --------------------------------------------------------------------------
def rho_for(epsilon: float, delta: float) -> float:
    """Deprecated alias of :func:`gaussian_rho` (exact only for Gaussian mechanisms)."""
    warn_caller("egmlib.privacy.rho_for is deprecated: use gaussian_rho(epsilon, delta) (exact for "
                "compositions of Gaussian mechanisms) or rho_for_cks (any rho-zCDP mechanism)",
                DeprecationWarning)
    return gaussian_rho(epsilon, delta)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Deprecated alias of :func:`gaussian_zcdp_delta` (exact only for Gaussian mechanisms)."""
    warn_caller("egmlib.privacy.zcdp_delta is deprecated: use gaussian_zcdp_delta(rho, epsilon=epsilon)",
                DeprecationWarning)
    return gaussian_zcdp_delta(rho, epsilon=epsilon)


def zcdp_to_epsilon_delta(rho: float, delta: float) -> float:
    """Deprecated alias of :func:`gaussian_zcdp_epsilon` (exact only for Gaussian mechanisms)."""
    warn_caller("egmlib.privacy.zcdp_to_epsilon_delta is deprecated: use gaussian_zcdp_epsilon(rho, delta=delta) "
                "(exact for compositions of Gaussian mechanisms) or zcdp_epsilon_cks (any rho-zCDP mechanism)",
                DeprecationWarning)
    return gaussian_zcdp_epsilon(rho, delta=delta)
