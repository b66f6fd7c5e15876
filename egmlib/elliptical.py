"""Pure differential privacy of elliptical noise (Reimherr and Awan, Theorem 3).

An elliptical mechanism releases ``T(D) + sigma X`` where ``X`` has a density
proportional to ``f(x^T Sigma^-1 x)`` for a non-increasing *density generator*
``f`` on ``[0, inf)``.  Theorem 3 of Reimherr and Awan (2019) reduces the
privacy loss of such a mechanism to a one-dimensional problem:

    epsilon = sup_{c >= a} [log f((c - a)^2) - log f(c^2)],   a = Delta / sigma,

where ``Delta = sup ||Sigma^{-1/2} (T(D) - T(D'))||_2`` is the sensitivity in
the Mahalanobis (Cameron-Martin) norm.  (The paper prints ``sigma^-2 Delta``
inside ``f``; the shift is ``sigma^-1 Delta``, see the book chapter.)

This module provides

* :func:`log_generator` -- ``log f`` of the Gaussian, multivariate t,
  K-norm (l2) and multivariate Laplace families, as the paper writes them;
* :func:`epsilon_elliptical` -- the supremum above for any ``log f``, by a
  log-spaced search with local refinement plus an asymptotic treatment of the
  limit ``c -> inf`` (:func:`tail_log_ratio`); :func:`sigma_elliptical`
  inverts it;
* closed forms :func:`epsilon_multivariate_t`, :func:`epsilon_knorm`,
  :func:`epsilon_gaussian`, :func:`epsilon_multivariate_laplace` and the noise
  scales :func:`sigma_multivariate_t`, :func:`sigma_knorm`;
* :func:`max_log_density_ratio` -- a direct numerical maximisation of the
  log density ratio over ``R^d``, to check the one-dimensional reduction;
* noise errors :func:`expected_sq_norm_t`, :func:`expected_sq_norm_knorm`,
  :func:`expected_sq_norm_elliptical`, the best t for a target epsilon
  :func:`optimal_t_nu`, and samplers :func:`sample_multivariate_t`,
  :func:`sample_knorm`;
* :func:`mahalanobis_norm` -- ``||Sigma^{-1/2} v||_2`` for rows ``v``.

Generators are passed as ``log f`` (a vectorised callable mapping an array of
``y = r^2 >= 0`` to ``log f(y)`` in ``[-inf, inf]``): logarithms avoid the
underflow of ``f`` in the far tail, which is exactly where Theorem 3 looks.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy.linalg import cho_factor, cho_solve
from scipy.special import gammaln, kve

from egmlib._validation import check_array, check_int, check_positive, check_real, check_rng, overflow_guard

__all__ = [
    "LogGenerator",
    "RatioMaximum",
    "log_generator",
    "tail_log_ratio",
    "epsilon_elliptical",
    "sigma_elliptical",
    "epsilon_multivariate_t",
    "epsilon_knorm",
    "epsilon_gaussian",
    "epsilon_multivariate_laplace",
    "sigma_multivariate_t",
    "sigma_knorm",
    "mahalanobis_norm",
    "max_log_density_ratio",
    "expected_sq_norm_t",
    "expected_sq_norm_knorm",
    "expected_sq_norm_elliptical",
    "optimal_t_nu",
    "sample_multivariate_t",
    "sample_knorm",
]

#: A log density generator: maps an array of ``y >= 0`` to ``log f(y)``.
LogGenerator = Callable[[NDArray[np.float64]], NDArray[np.float64]]

_FAMILIES = ("gaussian", "t", "knorm", "laplace")

#: The search grid of :func:`epsilon_elliptical`: ``c - a = L * 10**k`` for
#: ``k`` in ``[-12, 12]``, ``_PER_DECADE`` points per decade, ``L = max(a, 1)``.
_DECADES = 12
_PER_DECADE = 100

#: Rounding error of ``h`` (estimated from the size of ``log f``) relative to
#: ``1 + |h|``: below ``_TIGHT`` a grid point is accurate; above ``_LOOSE`` it
#: ends the usable grid (see ``_grid_maximum``).
_TIGHT = 1e-10
_LOOSE = 1e-6

#: The tail slope ``g'(r)``, ``g(r) = -log f(r^2)``, is read at ``r = 10^k`` for
#: these ``k`` (``r^2`` stays below the overflow threshold), by central
#: differences with relative step ``_SLOPE_STEP``.
_TAIL_DECADES = np.arange(146.0, 151.0)
_SLOPE_STEP = 1e-3

#: Relative size of the increments between decades below which a sequence
#: counts as converged, and the largest decade-to-decade ratio of increments
#: accepted as geometric decay.
_CONVERGED = 1e-7
_GEOMETRIC = 0.5

#: Range of ``u = log r`` in :func:`expected_sq_norm_elliptical` (``e^{2u}`` must not overflow).
_U_MAX = 350.0


# ---------------------------------------------------------------------------
# Input checks (private)
# ---------------------------------------------------------------------------
def _check_dimension(d: object) -> int:
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)):
        raise TypeError(f"d must be an integer, got {d!r}")
    if int(d) < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    return int(d)


def _check_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, (numbers.Integral, np.integer)):
        raise TypeError(f"size must be an integer, got {size!r}")
    if int(size) < 0:
        raise ValueError(f"size must be an integer >= 0, got {size!r}")
    return int(size)


def _check_shift(sensitivity: object, sigma: object) -> float:
    """``a = sensitivity / sigma`` after checking both."""
    sens = check_real("sensitivity", sensitivity, low=0.0)
    sig = check_positive("sigma", sigma)
    a = sens / sig
    if not math.isfinite(a):
        raise ValueError(f"sensitivity / sigma must be finite, got {sens!r} / {sig!r}")
    return a


def _check_log_f(log_f: object) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    if not callable(log_f):
        raise TypeError(f"log_f must be callable (y -> log f(y)), got {type(log_f).__name__}")

    def evaluate(y: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(all="ignore"):
            out = np.asarray(log_f(y), dtype=np.float64)
        if out.shape != y.shape:
            raise ValueError(
                f"log_f must be vectorised: for an array of shape {y.shape} it returned shape {out.shape}"
            )
        if np.any(np.isnan(out)):
            bad = float(y[np.isnan(out)].flat[0])
            raise ValueError(f"log_f must return values in [-inf, inf], got NaN at y = {bad!r}")
        return out

    return evaluate


# ---------------------------------------------------------------------------
# The four families of Section 4.1
# ---------------------------------------------------------------------------
def _log_kve(v: float, z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(K_v(z) e^z)`` for ``v >= 0``, ``z > 0``, without overflow or NaN.

    Beyond ``z = 1e8`` (scipy's ``kve`` returns NaN from about ``1e10``) the
    large-argument expansion (DLMF 10.40.2) is used, whose first omitted term
    is below ``1e-20`` there; below ``z = 1e-20``, and wherever ``K_v``
    overflows (large ``v``), the leading small-argument term ``Gamma(v)/2
    (2/z)^v`` of DLMF 10.30.2, for ``v > 0``.
    """
    shape = np.shape(z)
    z = np.atleast_1d(z)
    big = z >= 1e8
    tiny = (z < 1e-20) & (v > 0.0)
    mid = ~big & ~tiny
    out = np.empty_like(z)
    with np.errstate(divide="ignore"):
        out[mid] = np.log(kve(v, z[mid]))
    tiny |= np.isposinf(out) & mid  # K_v overflows: z is far below sqrt(v), the term is exact to rounding
    out[tiny] = gammaln(v) - math.log(2.0) + v * np.log(2.0 / z[tiny]) + z[tiny]
    zb = z[big]
    mu = 4.0 * v * v
    series = 1.0 + (mu - 1.0) / (8.0 * zb) + (mu - 1.0) * (mu - 9.0) / (2.0 * (8.0 * zb) ** 2)
    out[big] = 0.5 * np.log(np.pi / (2.0 * zb)) + np.log(series)
    return out.reshape(shape)


@dataclass(frozen=True)
class _Generator:
    """``log f`` of one of the paper's families (callable, with a readable repr)."""

    family: str
    d: int
    nu: float | None

    def __call__(self, y: ArrayLike) -> NDArray[np.float64]:
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.family == "gaussian":
                return -0.5 * y
            if self.family == "knorm":
                return -np.sqrt(y)
            if self.family == "t":
                return -0.5 * (self.nu + self.d) * np.log1p(y / self.nu)
            # multivariate Laplace: (y/2)^(v/2) K_v(sqrt(2y)), v = (2-d)/2
            z = np.sqrt(2.0 * y)
            if self.d == 1:  # K_{1/2}(z) = sqrt(pi/(2z)) e^-z: f(y) = sqrt(pi)/2 e^{-sqrt(2y)}
                return math.log(math.sqrt(math.pi) / 2.0) - z
            v = (2.0 - self.d) / 2.0
            out = 0.5 * v * np.log(y / 2.0) + _log_kve(abs(v), z) - z
            return np.where(y == 0.0, np.inf, out)

    def __repr__(self) -> str:
        extra = f", nu={self.nu!r}" if self.family == "t" else ""
        return f"log_generator({self.family!r}, d={self.d}{extra})"


def log_generator(family: str, d: int = 1, *, nu: float | None = None) -> LogGenerator:
    """Log density generator ``log f`` of a standard elliptical family.

    Parameters
    ----------
    family : {"gaussian", "t", "knorm", "laplace"}
        The family, written as in Section 4.1 of Reimherr and Awan (2019).
    d : int, default 1
        Dimension, ``>= 1`` (the t and Laplace generators depend on it).
    nu : float, optional
        Degrees of freedom of the t family, finite and ``> 0``; required for
        ``"t"`` and not accepted otherwise.

    Returns
    -------
    callable
        Vectorised ``y -> log f(y)`` for ``y = (x - mu)^T Sigma^-1 (x - mu) >=
        0``, without normalising constant:

        ============  ====================================================  =========
        family        ``f(y)``                                              Example
        ============  ====================================================  =========
        gaussian      ``exp(-y / 2)``                                       5
        t             ``(1 + y / nu)^(-(nu + d) / 2)``                      6
        knorm         ``exp(-sqrt(y))`` (the l2 / K-norm mechanism)         4
        laplace       ``(y/2)^(v/2) K_v(sqrt(2 y))``, ``v = (2-d)/2``       3
        ============  ====================================================  =========

        ``K_v`` is the modified Bessel function of the second kind.  The
        Laplace generator is ``+inf`` at ``y = 0`` for ``d >= 2`` (the pole of
        Example 3); for ``d = 1`` it equals ``sqrt(pi)/2 exp(-sqrt(2 y))``.

    Raises
    ------
    ValueError
        If ``family`` is unknown, ``d < 1``, or ``nu`` is missing, not
        positive, or given for a family other than ``"t"``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    The multivariate Laplace density is ``2 (2 pi)^(-d/2) |Sigma|^(-1/2)
    f(y)`` and the t density is ``Gamma((nu+d)/2) / (Gamma(nu/2) (nu
    pi)^(d/2) |Sigma|^(1/2)) f(y)``; the tests check both normalisations.
    ``log K_v`` is computed as ``log kve(|v|, z) - z`` so that the far tail
    does not underflow.

    References
    ----------
    reimherr2019, fang1990

    Examples
    --------
    >>> log_t = log_generator("t", d=3, nu=4.0)
    >>> print(log_t)
    log_generator('t', d=3, nu=4.0)
    >>> print(np.round(log_t(np.array([1.0, 100.0])), 4))
    [ -0.781  -11.4033]
    >>> print(np.round(log_generator("laplace", d=2)(np.array([0.0, 1e6])), 4))
    [      inf -1417.615]
    """
    if not isinstance(family, str) or family not in _FAMILIES:
        raise ValueError(f"family must be one of {_FAMILIES}, got {family!r}")
    dim = _check_dimension(d)
    if family == "t":
        if nu is None:
            raise ValueError("nu must be given (finite and > 0) for the t family, got None")
        nu_value: float | None = check_positive("nu", nu)
    else:
        if nu is not None:
            raise ValueError(f"nu is only accepted for family 't', got nu={nu!r} for {family!r}")
        nu_value = None
    return _Generator(family, dim, nu_value)


# ---------------------------------------------------------------------------
# The one-dimensional problem of Theorem 3
# ---------------------------------------------------------------------------
def _log_ratio(
    evaluate: Callable[[NDArray[np.float64]], NDArray[np.float64]], a: float, w: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``h(a + w) = log f(w^2) - log f((a + w)^2)``, its rounding-noise estimate, and both logs.

    Where both densities vanish the ratio is irrelevant and ``h = -inf``;
    where only the denominator vanishes ``h = +inf``.
    """
    num = evaluate(w * w)
    den = evaluate((a + w) * (a + w))
    with np.errstate(invalid="ignore"):
        h = num - den
    h = np.where(np.isneginf(num), -np.inf, h)
    with np.errstate(invalid="ignore"):
        noise = 4.0 * np.finfo(np.float64).eps * (np.abs(num) + np.abs(den))
    noise = np.where(np.isfinite(noise), noise, 0.0)
    return h, noise, num, den


def _check_nonincreasing(y: NDArray[np.float64], values: NDArray[np.float64]) -> None:
    """``log f`` evaluated at increasing ``y`` must not increase (beyond rounding)."""
    finite = np.isfinite(values[:-1]) & np.isfinite(values[1:])
    with np.errstate(invalid="ignore"):
        rise = np.diff(values)
    tol = 1e-9 * (1.0 + np.abs(values[1:]))
    bad = finite & (rise > tol)
    bad |= np.isneginf(values[:-1]) & ~np.isneginf(values[1:])
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "log_f must be non-increasing on [0, inf) (Theorem 3 needs a decreasing generator), "
            f"got log f({y[i]:.6g}) = {values[i]:.6g} < log f({y[i + 1]:.6g}) = {values[i + 1]:.6g}"
        )


def _grid(a: float) -> NDArray[np.float64]:
    scale = max(a, 1.0)
    return scale * np.logspace(-_DECADES, _DECADES, 2 * _DECADES * _PER_DECADE + 1)


def _grid_maximum(h: NDArray[np.float64], noise: NDArray[np.float64]) -> tuple[int, int, bool]:
    """Index of the grid maximum of ``h`` that can be trusted, and the usable length.

    Points whose rounding error exceeds ``_LOOSE (1 + |h|)`` end the usable
    grid.  Among the usable points, the maximum over the accurate ones
    (error below ``_TIGHT (1 + |h|)``) is taken unless a less accurate point
    is larger by more than both errors -- so that rounding noise in a flat
    ratio is not mistaken for a larger epsilon, while a maximum that lies
    where ``log f`` is large is still found.  Returns the index, the usable
    length and whether the maximum sits at the end of a cut grid (``h`` may
    rise further where it cannot be evaluated).
    """
    size = np.where(np.isfinite(h), np.abs(h), 0.0)
    usable = (noise <= _LOOSE * (1.0 + size)) | ~np.isfinite(h)
    bad = np.flatnonzero(~usable)
    n = int(bad[0]) if bad.size else h.size
    h, noise = h[:n], noise[:n]
    accurate = noise <= _TIGHT * (1.0 + size[:n])
    i_all = int(np.argmax(h))
    i = int(np.argmax(np.where(accurate, h, -np.inf))) if np.any(accurate) else i_all
    if h[i_all] > h[i] + 2.0 * (noise[i_all] + noise[i]):
        i = i_all
    return i, n, bool(n < size.size and i >= n - _PER_DECADE // 10)


def _limit(values: NDArray[np.float64]) -> float:
    """Limit of a sequence sampled at consecutive decades (the last five).

    Increments below ``_CONVERGED`` of the values mean convergence.
    Increments of one sign that shrink at least geometrically (ratio <= 1/2)
    are summed as a geometric series, with the least favourable observed
    ratio.  Positive increments that do not shrink that fast are reported as
    divergence (``inf``): a sequence that converges more slowly is treated as
    divergent, which can only make epsilon too large, never too small.  Any
    other decreasing sequence never exceeds its last value, which is returned.
    """
    if not np.all(np.isfinite(values)):
        return math.inf
    steps = np.diff(values)
    last = float(values[-1])
    scale = float(np.max(np.abs(values)))
    if np.all(np.abs(steps) <= _CONVERGED * scale):
        return last
    rising = bool(steps[-1] > 0.0)
    if np.all(steps > 0.0) or np.all(steps < 0.0):
        ratios = steps[1:] / steps[:-1]
        if np.all(ratios <= _GEOMETRIC):
            r = float(ratios.max() if rising else ratios.min())
            estimate = last + float(steps[-1]) * r / (1.0 - r)
            return max(estimate, last) if rising else min(estimate, last)
    return math.inf if rising else last


def _tail_slope(evaluate: Callable[[NDArray[np.float64]], NDArray[np.float64]]) -> float:
    """``lim_{r -> inf} g'(r)`` for ``g(r) = -log f(r^2)`` (``inf`` if it diverges).

    ``g'`` is taken by the five-point central difference with relative step
    ``_SLOPE_STEP`` at ``r = 10^k``, ``k`` in ``_TAIL_DECADES``; a relative
    step keeps the rounding error of the difference near ``eps |g| /
    (_SLOPE_STEP r g'(r))``, i.e. about ``1e-10`` for the book's families.
    A generator that vanishes (``log f = -inf``) that far out has a tail
    lighter than any of them, so its slope counts as divergent.
    """
    c = 10.0**_TAIL_DECADES
    step = _SLOPE_STEP * c
    r = c[:, None] + np.array([-2.0, -1.0, 1.0, 2.0])[None, :] * step[:, None]
    vals = evaluate((r * r).ravel()).reshape(r.shape)
    if np.any(np.isneginf(vals)):
        return math.inf
    if np.any(np.isposinf(vals)):
        raise ValueError("log_f must be non-increasing on [0, inf), got +inf in the far tail")
    g = -vals
    slope = (g[:, 0] - 8.0 * g[:, 1] + 8.0 * g[:, 2] - g[:, 3]) / (12.0 * step)
    return max(_limit(slope), 0.0)


@overflow_guard(check_result=False)
def tail_log_ratio(log_f: LogGenerator, *, sensitivity: float, sigma: float = 1.0) -> float:
    """The limit ``lim_{c -> inf} log f((c - a)^2) - log f(c^2)``, ``a = sensitivity / sigma``.

    This is the logarithm of condition (2) of Theorem 3: the mechanism can
    only be pure DP if it is finite.

    Parameters
    ----------
    log_f : callable
        Vectorised, non-increasing ``y -> log f(y)`` on ``y >= 0``.
    sensitivity : float
        Mahalanobis sensitivity ``Delta >= 0`` (keyword-only).
    sigma : float, default 1.0
        Noise scale, ``> 0`` (keyword-only).

    Returns
    -------
    float
        The limit, or ``inf`` if the ratio grows without bound.

    Raises
    ------
    ValueError
        On invalid ``sensitivity``/``sigma``, or if ``log_f`` returns NaN, has
        the wrong shape or increases.
    TypeError
        If ``log_f`` is not callable.

    Notes
    -----
    With ``g(r) = -log f(r^2)`` (non-decreasing) the ratio is ``h(c) = g(c) -
    g(c - a)``, the integral of ``g'`` over ``[c - a, c]``, so its limit is
    ``a lim_{r -> inf} g'(r)``: finite exactly when the slope of ``g`` has a
    finite limit, and independent of where ``h`` is evaluated.  The slope is
    computed by five-point central differences with a relative step of
    ``1e-3`` at ``r = 10^146, ..., 10^150`` -- far beyond the scale of any
    generator of interest, and without the cancellation that a difference
    ``log f((c - a)^2) - log f(c^2)`` suffers at large ``c`` (which would hide
    the divergence of the Gaussian for small ``a``).  The increments between
    decades decide: negligible -- converged; of one sign and shrinking at
    least by half per decade -- summed as a geometric series; positive
    otherwise -- divergence.  A slope that converges from below more slowly
    than that (for example like ``1 - 1/log r``) is therefore reported as
    ``inf``, and one that decreases slowly is reported by its last value: the
    answer can be too pessimistic, never too optimistic.

    References
    ----------
    reimherr2019

    Examples
    --------
    Example 3: the multivariate Laplace tail ratio tends to ``exp(sqrt(2) a)``.

    >>> lim = tail_log_ratio(log_generator("laplace", d=3), sensitivity=1.0)
    >>> print(f"{lim:.6f} {math.sqrt(2):.6f}")
    1.414214 1.414214
    >>> tail_log_ratio(log_generator("gaussian"), sensitivity=0.1)
    inf
    """
    a = _check_shift(sensitivity, sigma)
    evaluate = _check_log_f(log_f)
    if a == 0.0:
        return 0.0
    slope = _tail_slope(evaluate)
    return math.inf if slope == math.inf else a * slope


@overflow_guard(check_result=False)
def epsilon_elliptical(
    log_f: LogGenerator,
    *,
    sensitivity: float,
    sigma: float = 1.0,
    tail_limit: float | None = None,
) -> float:
    """Pure-DP epsilon of elliptical noise with generator ``f`` (Theorem 3, corrected scaling).

    Parameters
    ----------
    log_f : callable
        Vectorised ``y -> log f(y)`` for arrays of ``y >= 0``, non-increasing,
        with values in ``[-inf, inf]`` (``+inf`` at ``0`` for a pole, ``-inf``
        where ``f`` vanishes).  Scalar functions can be wrapped with
        ``numpy.vectorize``.
    sensitivity : float
        Mahalanobis sensitivity ``Delta = sup ||Sigma^{-1/2}(T(D) - T(D'))||_2
        >= 0`` (keyword-only).
    sigma : float, default 1.0
        Scale of the noise ``sigma X``, ``> 0`` (keyword-only).
    tail_limit : float, optional
        The limit of ``log f((c - a)^2) - log f(c^2)`` as ``c -> inf`` if it
        is known analytically (``>= 0``, may be ``inf``); by default it is
        computed by :func:`tail_log_ratio`.

    Returns
    -------
    float
        ``epsilon = sup_{c >= a} log f((c - a)^2) - log f(c^2)`` with ``a =
        sensitivity / sigma``: ``inf`` if ``f`` has a pole at 0, vanishes
        somewhere, or its tail ratio diverges; ``0.0`` if ``a = 0``.

    Raises
    ------
    ValueError
        If ``sensitivity < 0``, ``sigma <= 0``, ``tail_limit`` is negative or
        NaN, or ``log_f`` returns NaN, has the wrong shape or increases.
    TypeError
        If ``log_f`` is not callable.

    Notes
    -----
    The noise ``sigma X`` with ``X ~ f(x^T Sigma^-1 x)`` has dispersion
    ``sigma^2 Sigma``, in whose Mahalanobis norm neighbouring outputs differ
    by at most ``a = Delta / sigma``.  The proof of Theorem 3 (rotating the
    evaluation point towards the shift, then reflecting) shows that the
    largest log density ratio over ``R^d`` is the one-dimensional supremum
    above.  It is computed by

    1. ``+inf`` if ``log f(0) = inf`` (a pole);
    2. ``h(c)`` on ``c = a + L 10^k``, ``k`` in ``[-12, 12]`` with 100 points
       per decade (``L = max(a, 1)``).  The subtraction ``log f((c - a)^2) -
       log f(c^2)`` loses about ``eps |log f|`` to rounding; points where
       that exceeds ``1e-6 (1 + |h|)`` end the grid, and a maximum found
       among points accurate to ``1e-10 (1 + |h|)`` is preferred unless a
       less accurate point beats it by more than the rounding error.  The
       best point is refined by bounded Brent maximisation between its
       neighbours;
    3. the limit at infinity (``tail_limit``, or :func:`tail_log_ratio`:
       ``a`` times the limit of the slope of ``-log f(r^2)``), which matters
       when the supremum is approached but not attained.

    The result is the larger of 2 and 3, accurate to about ``1e-9 (1 +
    epsilon)`` in absolute terms for the book's families (to the rounding
    error of ``log f`` at the maximiser in general).  The grid assumes that
    ``h`` has no feature narrower than about 2% of ``c - a`` and no bump
    beyond the grid that exceeds both the grid maximum and the limit; the
    book's families are unimodal in ``c`` or monotone.  If ``h`` is still
    rising where rounding ends the grid and already exceeds the limit at
    infinity, the answer is ``inf``: errors are on the safe side.

    References
    ----------
    reimherr2019

    Examples
    --------
    Example 6, the t family, against its closed form:

    >>> log_t = log_generator("t", d=5, nu=3.0)
    >>> eps = epsilon_elliptical(log_t, sensitivity=1.0, sigma=2.0)
    >>> print(f"{eps:.10f} {epsilon_multivariate_t(3.0, 5, sensitivity=1.0, sigma=2.0):.10f}")
    1.1507282898 1.1507282898

    Example 4 (K-norm) gives ``epsilon = Delta / sigma``; Examples 3 and 5
    give no pure DP:

    >>> print(round(epsilon_elliptical(log_generator("knorm"), sensitivity=1.0, sigma=2.0), 10))
    0.5
    >>> epsilon_elliptical(log_generator("laplace", d=2), sensitivity=1.0)
    inf
    >>> epsilon_elliptical(log_generator("gaussian"), sensitivity=1.0, sigma=100.0)
    inf
    """
    a = _check_shift(sensitivity, sigma)
    evaluate = _check_log_f(log_f)
    if tail_limit is not None:
        if isinstance(tail_limit, (float, np.floating)) and tail_limit == math.inf:
            tail_value = math.inf
        else:
            tail_value = check_real("tail_limit", tail_limit, low=0.0)
    if a == 0.0:
        return 0.0
    at_zero = float(evaluate(np.zeros(1))[0])
    if at_zero == math.inf:
        return math.inf
    if at_zero == -math.inf:
        raise ValueError("log_f(0) must be > -inf (f(0) = 0 makes f identically 0), got -inf")

    w = _grid(a)
    h, noise, num, den = _log_ratio(evaluate, a, w)
    _check_nonincreasing(w * w, num)
    _check_nonincreasing((a + w) * (a + w), den)
    if np.any(np.isposinf(h)):
        return math.inf
    i, n, cut_while_rising = _grid_maximum(h, noise)
    if tail_limit is None:
        slope = _tail_slope(evaluate)
        tail_value = math.inf if slope == math.inf else a * slope
    if cut_while_rising and tail_value < h[i] - 2.0 * noise[i]:
        # h still rises where rounding swamps it, beyond the limit at infinity:
        # a maximum lies where it cannot be computed, so it cannot be certified
        return math.inf
    w, h = w[:n], h[:n]
    # c = a itself (w = 0) is a candidate too
    best = float(at_zero - evaluate(np.array([a * a]))[0])
    if h[i] > best:
        best = float(h[i])
        lo, hi = w[max(i - 1, 0)], w[min(i + 1, n - 1)]
        if hi > lo:
            res = optimize.minimize_scalar(
                lambda t: -float(_log_ratio(evaluate, a, np.array([t]))[0][0]),
                bounds=(lo, hi),
                method="bounded",
                options={"xatol": 1e-12 * hi},
            )
            best = max(best, -float(res.fun))
        if tail_value < best <= tail_value + 2.0 * noise[i]:
            best = tail_value  # the grid excess over the limit is rounding noise
    return max(best, tail_value)


@overflow_guard
def sigma_elliptical(log_f: LogGenerator, *, epsilon: float, sensitivity: float = 1.0) -> float:
    """Smallest noise scale ``sigma`` for which :func:`epsilon_elliptical` is ``<= epsilon``.

    Parameters
    ----------
    log_f : callable
        Vectorised non-increasing ``y -> log f(y)`` (see :func:`epsilon_elliptical`).
    epsilon : float
        Target privacy loss, finite and ``> 0`` (keyword-only).
    sensitivity : float, default 1.0
        Mahalanobis sensitivity ``Delta``, finite and ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``sigma = Delta / a*`` where ``a*`` solves ``epsilon(a*) = epsilon``
        (relative accuracy about ``1e-10``).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not positive, or the family
        cannot reach ``epsilon`` at any scale (``epsilon = inf`` for every
        ``sigma``, e.g. Gaussian or multivariate Laplace noise in ``d >= 2``).

    Notes
    -----
    The epsilon of Theorem 3 increases with ``a = Delta / sigma``: for ``a' >
    a`` and any ``c``, ``h_{a'}(c + a' - a) >= h_a(c)`` because ``g(r) = -log
    f(r^2)`` is non-decreasing.  The root is bracketed by doubling and found
    with Brent's method in ``log a``.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> s = sigma_elliptical(log_generator("t", d=4, nu=8.0), epsilon=1.0)
    >>> print(f"{s:.8f} {sigma_multivariate_t(1.0, 8.0, 4):.8f}")
    2.11886710 2.11886710
    """
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    evaluate = _check_log_f(log_f)

    def excess(log_a: float) -> float:
        try:
            value = epsilon_elliptical(evaluate, sensitivity=math.exp(log_a))
        except (ValueError, OverflowError) as exc:
            raise ValueError(
                f"epsilon = {eps!r} is too large for this log_f: the noise scale needed is so small that "
                "the privacy loss overflows double precision on the way; use a smaller epsilon"
            ) from exc
        if value == 0.0:
            return -math.inf
        return math.log(value / eps) if value < math.inf else math.inf

    lo = 0.0
    if excess(lo) == math.inf and excess(-700.0) == math.inf:
        raise ValueError(
            f"log_f gives epsilon = inf at every noise scale, so epsilon = {eps!r} cannot be reached"
        )
    while excess(lo) > 0.0:
        lo -= 2.0
    hi = lo + 2.0
    while excess(hi) <= 0.0:
        lo, hi = hi, hi + 2.0
    log_a = optimize.brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13)
    return sens / math.exp(log_a)


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------
@overflow_guard
def epsilon_multivariate_t(nu: float, d: int, *, sensitivity: float, sigma: float = 1.0) -> float:
    """Pure-DP epsilon of multivariate t noise (Example 6 in closed form).

    Parameters
    ----------
    nu : float
        Degrees of freedom, finite and ``> 0``.
    d : int
        Dimension, ``>= 1``.
    sensitivity : float
        Mahalanobis sensitivity ``Delta >= 0`` (keyword-only).
    sigma : float, default 1.0
        Noise scale, ``> 0``: the noise is ``sigma X`` with ``X ~ t_nu^d(0,
        Sigma)`` (keyword-only).

    Returns
    -------
    float
        ``epsilon = (nu + d) asinh(a / (2 sqrt(nu)))`` with ``a = Delta / sigma``.

    Raises
    ------
    ValueError
        If ``nu <= 0``, ``d < 1``, ``sensitivity < 0`` or ``sigma <= 0``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    With ``f(y) = (1 + y/nu)^(-(nu+d)/2)`` the ratio of Theorem 3 is
    ``[(nu + c^2) / (nu + (c - a)^2)]^((nu+d)/2)``.  Its maximiser on ``c >=
    a`` is ``c* = (a + sqrt(a^2 + 4 nu)) / 2`` (Example 6), which satisfies
    ``c*(c* - a) = nu``; hence ``nu + c*^2 = c* s`` and ``nu + (c* - a)^2 = (c*
    - a) s`` with ``s = sqrt(a^2 + 4 nu)``, and the maximum ratio is
    ``(c* / (c* - a))^((nu+d)/2) = ((s + a)/(s - a))^((nu+d)/2)``.  Writing
    ``x = a / (2 sqrt nu)`` this is ``(x + sqrt(1 + x^2))^(nu+d)``, whose
    logarithm is the formula.  Valid for every ``nu > 0`` (the paper asks
    ``nu > 1``, which is not needed).

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> print(f"{epsilon_multivariate_t(3.0, 5, sensitivity=1.0, sigma=2.0):.6f}")
    1.150728
    >>> print(f"{epsilon_multivariate_t(1.0, 1, sensitivity=1.0):.6f}")  # Cauchy noise
    0.962424
    """
    nu_value = check_positive("nu", nu)
    dim = _check_dimension(d)
    a = _check_shift(sensitivity, sigma)
    return (nu_value + dim) * math.asinh(a / (2.0 * math.sqrt(nu_value)))


@overflow_guard
def epsilon_knorm(*, sensitivity: float, sigma: float = 1.0) -> float:
    """Pure-DP epsilon of l2 K-norm noise, density ``propto exp(-||Sigma^{-1/2} x|| / sigma)`` (Example 4).

    Parameters
    ----------
    sensitivity : float
        Mahalanobis sensitivity ``Delta >= 0`` (keyword-only).
    sigma : float, default 1.0
        Noise scale ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``epsilon = Delta / sigma``, in every dimension.

    Raises
    ------
    ValueError
        If ``sensitivity < 0`` or ``sigma <= 0``.

    Notes
    -----
    With ``f(y) = exp(-sqrt(y))`` the ratio of Theorem 3 is ``exp(c - (c -
    a)) = exp(a)`` for every ``c >= a``: the triangle inequality is tight
    along the whole ray.

    References
    ----------
    reimherr2019, hardt2010, awan2021knorm

    Examples
    --------
    >>> epsilon_knorm(sensitivity=1.0, sigma=4.0)
    0.25
    """
    return _check_shift(sensitivity, sigma)


@overflow_guard(check_result=False)
def epsilon_gaussian(*, sensitivity: float, sigma: float = 1.0) -> float:
    """Pure-DP epsilon of Gaussian noise ``N(0, sigma^2 Sigma)`` (Example 5): infinite.

    Parameters
    ----------
    sensitivity : float
        Mahalanobis sensitivity ``Delta >= 0`` (keyword-only).
    sigma : float, default 1.0
        Noise scale ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``inf`` if ``Delta > 0`` (only ``(epsilon, delta)``-DP is possible),
        ``0.0`` if ``Delta = 0``.

    Raises
    ------
    ValueError
        If ``sensitivity < 0`` or ``sigma <= 0``.

    Notes
    -----
    With ``f(y) = exp(-y/2)`` the log ratio is ``a c - a^2 / 2``, unbounded in ``c``.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> epsilon_gaussian(sensitivity=1.0, sigma=1e6)
    inf
    """
    return math.inf if _check_shift(sensitivity, sigma) > 0.0 else 0.0


@overflow_guard(check_result=False)
def epsilon_multivariate_laplace(d: int, *, sensitivity: float, sigma: float = 1.0) -> float:
    """Pure-DP epsilon of multivariate Laplace noise ``sigma Laplace(0, Sigma)`` (Example 3).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    sensitivity : float
        Mahalanobis sensitivity ``Delta >= 0`` (keyword-only).
    sigma : float, default 1.0
        Noise scale ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``sqrt(2) Delta / sigma`` for ``d = 1``; ``inf`` for ``d >= 2`` and
        ``Delta > 0`` (the generator has a pole at 0); ``0.0`` if ``Delta = 0``.

    Raises
    ------
    ValueError
        If ``d < 1``, ``sensitivity < 0`` or ``sigma <= 0``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    ``Laplace(0, Sigma)`` has covariance ``Sigma``; for ``d = 1`` its density
    is ``exp(-sqrt(2) |x| / s) / (sqrt(2) s)`` with ``s^2 = Sigma``, the
    Laplace mechanism with scale ``s / sqrt 2``.  For ``d >= 2``, ``f(y)``
    behaves like ``-log(y)/2`` (``d = 2``) or ``y^((2-d)/2)`` (``d >= 3``) as
    ``y -> 0``, so the density ratio is unbounded near the centre of either
    neighbour, although the tail ratio tends to ``exp(sqrt(2) a)``.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> print(round(epsilon_multivariate_laplace(1, sensitivity=1.0), 6))
    1.414214
    >>> epsilon_multivariate_laplace(2, sensitivity=1.0, sigma=10.0)
    inf
    """
    dim = _check_dimension(d)
    a = _check_shift(sensitivity, sigma)
    if a == 0.0:
        return 0.0
    return math.sqrt(2.0) * a if dim == 1 else math.inf


@overflow_guard
def sigma_multivariate_t(epsilon: float, nu: float, d: int, *, sensitivity: float = 1.0) -> float:
    """Noise scale of multivariate t noise that gives exactly ``epsilon``-DP.

    Parameters
    ----------
    epsilon : float
        Target privacy loss, finite and ``> 0``.
    nu : float
        Degrees of freedom, finite and ``> 0``.
    d : int
        Dimension, ``>= 1``.
    sensitivity : float, default 1.0
        Mahalanobis sensitivity ``Delta``, finite and ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``sigma = Delta / (2 sqrt(nu) sinh(epsilon / (nu + d)))``, the inverse
        of :func:`epsilon_multivariate_t`.

    Raises
    ------
    ValueError
        If ``epsilon``, ``nu`` or ``sensitivity`` is not positive, or ``d < 1``.
    TypeError
        If ``d`` is not an integer.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> s = sigma_multivariate_t(1.0, 5.0, 3)
    >>> print(f"{s:.6f} {epsilon_multivariate_t(5.0, 3, sensitivity=1.0, sigma=s):.12f}")
    1.784204 1.000000000000
    """
    eps = check_positive("epsilon", epsilon)
    nu_value = check_positive("nu", nu)
    dim = _check_dimension(d)
    sens = check_positive("sensitivity", sensitivity)
    return sens / (2.0 * math.sqrt(nu_value) * math.sinh(eps / (nu_value + dim)))


@overflow_guard
def sigma_knorm(epsilon: float, *, sensitivity: float = 1.0) -> float:
    """Noise scale of l2 K-norm noise that gives exactly ``epsilon``-DP: ``Delta / epsilon``.

    Parameters
    ----------
    epsilon : float
        Target privacy loss, finite and ``> 0``.
    sensitivity : float, default 1.0
        Mahalanobis sensitivity ``Delta``, finite and ``> 0`` (keyword-only).

    Returns
    -------
    float
        ``sigma = Delta / epsilon``.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not positive.

    References
    ----------
    hardt2010, reimherr2019

    Examples
    --------
    >>> sigma_knorm(0.5, sensitivity=2.0)
    4.0
    """
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    return sens / eps


# ---------------------------------------------------------------------------
# The Mahalanobis norm and the direct check of the reduction
# ---------------------------------------------------------------------------
def _check_cov(cov: ArrayLike, d: int | None = None) -> NDArray[np.float64]:
    mat = check_array("cov", cov, ndim=2)
    if mat.shape[0] != mat.shape[1] or (d is not None and mat.shape[0] != d):
        want = "square" if d is None else f"of shape ({d}, {d})"
        raise ValueError(f"cov must be {want}, got shape {mat.shape}")
    if not np.allclose(mat, mat.T, rtol=1e-12, atol=0.0):
        raise ValueError("cov must be symmetric")
    return mat


def _cholesky(mat: NDArray[np.float64]) -> tuple[NDArray[np.float64], bool]:
    try:
        return cho_factor(mat, lower=True)
    except np.linalg.LinAlgError as exc:
        raise ValueError("cov must be positive definite") from exc


@overflow_guard
def mahalanobis_norm(vectors: ArrayLike, cov: ArrayLike) -> float | NDArray[np.float64]:
    """Mahalanobis (Cameron-Martin) norm ``||Sigma^{-1/2} v||_2 = sqrt(v^T Sigma^-1 v)``.

    Parameters
    ----------
    vectors : array_like, shape (d,) or (m, d)
        One vector or ``m`` row vectors, finite.
    cov : array_like, shape (d, d)
        Symmetric positive definite dispersion matrix ``Sigma``.

    Returns
    -------
    float or numpy.ndarray, shape (m,)
        The norm of each vector.

    Raises
    ------
    ValueError
        If the shapes do not match, a value is not finite, or ``cov`` is not
        symmetric positive definite.

    Notes
    -----
    Theorem 3 measures the sensitivity in this norm: ``Delta = sup_{D ~ D'}
    ||Sigma^{-1/2}(T_D - T_D')||_2``.  (The paper writes the norm as
    ``g^T Sigma^-1 g``, without the square root.)  Computed with a Cholesky
    solve, never an explicit inverse.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> print(mahalanobis_norm([3.0, 4.0], np.diag([1.0, 4.0])))
    3.605551275463989
    """
    mat = _check_cov(cov)
    vec = check_array("vectors", vectors, ndim=None)
    if vec.ndim not in (1, 2) or vec.shape[-1] != mat.shape[0]:
        raise ValueError(f"vectors must have shape ({mat.shape[0]},) or (m, {mat.shape[0]}), got {vec.shape}")
    factor = _cholesky(mat)
    rows = np.atleast_2d(vec)
    solved = cho_solve(factor, rows.T)
    out = np.sqrt(np.maximum(np.einsum("ij,ji->i", rows, solved), 0.0))
    return float(out[0]) if vec.ndim == 1 else out


@dataclass(frozen=True)
class RatioMaximum:
    """Result of :func:`max_log_density_ratio`.

    Attributes
    ----------
    log_ratio : float
        The largest ``log p_1(x) - log p_2(x)`` found.
    argmax : numpy.ndarray, shape (d,)
        Where it was found.
    best_random : float
        The largest value among the random points alone (before optimisation).
    """

    log_ratio: float
    argmax: NDArray[np.float64]
    best_random: float


@overflow_guard
def max_log_density_ratio(
    log_f: LogGenerator,
    mean1: ArrayLike,
    mean2: ArrayLike,
    cov: ArrayLike,
    *,
    sigma: float = 1.0,
    rng: np.random.Generator,
    n_random: int = 4000,
    n_starts: int = 8,
    radius: float = 50.0,
) -> RatioMaximum:
    """Maximise the log density ratio of two elliptical distributions directly over ``R^d``.

    Parameters
    ----------
    log_f : callable
        Vectorised non-increasing ``y -> log f(y)``.
    mean1, mean2 : array_like, shape (d,)
        The two centres ``T(D)`` and ``T(D')``.
    cov : array_like, shape (d, d)
        Dispersion ``Sigma`` (symmetric positive definite); the densities are
        ``p_i(x) propto f((x - mean_i)^T Sigma^-1 (x - mean_i) / sigma^2)``.
    sigma : float, default 1.0
        Noise scale, ``> 0`` (keyword-only).
    rng : numpy.random.Generator
        Source of the random search points (keyword-only).
    n_random : int, default 4000
        Number of random points, ``>= 1``.
    n_starts : int, default 8
        Number of local optimisations (L-BFGS-B), started from the best
        random points and from fresh random points, ``>= 1``.
    radius : float, default 50.0
        Search box ``||z||_inf <= radius`` in the coordinates ``x = mean2 +
        sigma L z`` (``L L^T = Sigma``), ``> 0``.

    Returns
    -------
    RatioMaximum
        The best value, where it was found, and the best random value.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite values, a non positive definite
        ``cov``, or non-positive ``sigma``, ``n_random``, ``n_starts`` or
        ``radius``.
    TypeError
        If ``rng`` is not a Generator or ``log_f`` is not callable.

    Notes
    -----
    This is the brute-force side of the check of Theorem 3: the objective is
    the log ratio of the two full ``d``-dimensional densities at ``x``, with
    both quadratic forms computed from ``Sigma``; the affine change of
    variables ``x = mean2 + sigma L z`` only preconditions the search.  Random
    points use uniformly random directions and log-uniform radii in
    ``[1e-3, radius]``.  No rotation or symmetry of the problem is used, so
    agreement with :func:`epsilon_elliptical` checks the reduction.  The
    result is a lower bound on the supremum (up to the optimiser's tolerance).
    The optimiser gets the exact gradient of the quadratic forms times ``d
    log f / dy`` from a central difference of ``log f``.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> res = max_log_density_ratio(log_generator("t", d=2, nu=3.0), [1.0, 0.0], [0.0, 0.0],
    ...                             np.eye(2), rng=rng)
    >>> print(f"{res.log_ratio:.6f} {epsilon_multivariate_t(3.0, 2, sensitivity=1.0):.6f}")
    1.424045 1.424045
    """
    evaluate = _check_log_f(log_f)
    m2 = check_array("mean2", mean2)
    d = m2.size
    m1 = check_array("mean1", mean1)
    if m1.shape != m2.shape:
        raise ValueError(f"mean1 and mean2 must have the same shape, got {m1.shape} and {m2.shape}")
    mat = _check_cov(cov, d)
    sig = check_positive("sigma", sigma)
    generator = check_rng("rng", rng)
    n_rand = check_int("n_random", n_random, low=1)
    n_opt = check_int("n_starts", n_starts, low=1)
    if n_rand < 1 or n_opt < 1:
        raise ValueError(f"n_random and n_starts must be >= 1, got {n_rand} and {n_opt}")
    box = check_positive("radius", radius)
    factor = _cholesky(mat)
    chol = np.tril(factor[0])

    def log_ratio(z: NDArray[np.float64]) -> NDArray[np.float64]:
        x = m2 + sig * np.atleast_2d(z) @ chol.T
        q1 = np.einsum("ij,ji->i", x - m1, cho_solve(factor, (x - m1).T)) / sig**2
        q2 = np.einsum("ij,ji->i", x - m2, cho_solve(factor, (x - m2).T)) / sig**2
        top, bottom = evaluate(np.maximum(q1, 0.0)), evaluate(np.maximum(q2, 0.0))
        with np.errstate(invalid="ignore"):
            out = top - bottom
        return np.where(np.isneginf(top), -np.inf, out)

    def slope(q: float) -> float:
        """``d log f / dy`` at ``q`` by a central difference (one-sided at 0)."""
        step = 1e-6 * max(q, 1e-6)
        lo = max(q - step, 0.0)
        vals = evaluate(np.array([lo, q + step]))
        with np.errstate(all="ignore"):
            return float((vals[1] - vals[0]) / (q + step - lo))

    def negative_with_gradient(z: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        x = m2 + sig * chol @ z
        r1, r2 = cho_solve(factor, x - m1), cho_solve(factor, x - m2)
        q1, q2 = max(float((x - m1) @ r1) / sig**2, 0.0), max(float((x - m2) @ r2) / sig**2, 0.0)
        value = float(np.subtract(*evaluate(np.array([q1, q2]))))
        if not np.isfinite(value):
            return (-value if not np.isnan(value) else np.inf), np.zeros_like(z)
        # d q_i / d z = 2 L^T Sigma^-1 (x - mean_i) / sigma
        with np.errstate(all="ignore"):
            grad = (2.0 / sig) * chol.T @ (slope(q1) * r1 - slope(q2) * r2)
        if not np.all(np.isfinite(grad)):  # at a pole of f: stop here
            grad = np.zeros_like(z)
        return -value, -grad

    directions = generator.standard_normal((n_rand, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = np.exp(generator.uniform(math.log(1e-3), math.log(box), size=n_rand))
    points = np.clip(directions * radii[:, None], -box, box)
    values = log_ratio(points)
    best_random = float(values.max())
    order = np.argsort(values)[::-1]
    n_best = (n_opt + 1) // 2
    starts = list(points[order[:n_best]])
    fresh = generator.standard_normal((n_opt - n_best, d))
    starts += list(np.clip(fresh * generator.uniform(0.5, 5.0, size=(n_opt - n_best, 1)), -box, box))

    best_value, best_z = best_random, points[order[0]]
    for start in starts:
        res = optimize.minimize(
            negative_with_gradient,
            start,
            jac=True,
            method="L-BFGS-B",
            bounds=[(-box, box)] * d,
            options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 1000},
        )
        value = float(log_ratio(res.x)[0])
        if np.isfinite(value) and value > best_value:
            best_value, best_z = value, np.asarray(res.x)
    argmax = m2 + sig * chol @ best_z
    return RatioMaximum(log_ratio=best_value, argmax=argmax, best_random=best_random)


# ---------------------------------------------------------------------------
# Error of the noise, the best t, and samplers
# ---------------------------------------------------------------------------
@overflow_guard(check_result=False)
def expected_sq_norm_t(nu: float, d: int, scale: float = 1.0) -> float:
    """``E||scale X||^2`` for ``X ~ t_nu^d(0, I)``: ``d nu / (nu - 2) scale^2``.

    Parameters
    ----------
    nu : float
        Degrees of freedom, finite and ``> 0``.
    d : int
        Dimension, ``>= 1``.
    scale : float, default 1.0
        Noise scale ``sigma > 0``.

    Returns
    -------
    float
        ``d nu scale^2 / (nu - 2)`` for ``nu > 2``; ``inf`` for ``nu <= 2``.

    Raises
    ------
    ValueError
        If ``nu <= 0``, ``scale <= 0`` or ``d < 1``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    ``X = Z / sqrt(W / nu)`` with ``Z ~ N(0, I_d)`` and ``W ~ chi^2_nu``
    independent, and ``E[nu / W] = nu / (nu - 2)``.

    References
    ----------
    fang1990

    Examples
    --------
    >>> expected_sq_norm_t(6.0, 10, 2.0)
    60.0
    """
    nu_value = check_positive("nu", nu)
    dim = _check_dimension(d)
    s = check_positive("scale", scale)
    if nu_value <= 2.0:
        return math.inf  # the second moment diverges
    out = dim * nu_value / (nu_value - 2.0) * s * s
    if not math.isfinite(out):  # dim * nu overflows for huge nu: same value, other order
        out = dim * (s * s) / (1.0 - 2.0 / nu_value)
    if not math.isfinite(out):
        raise ValueError(
            f"scale too large in magnitude for expected_sq_norm_t (scale={s!r}, nu={nu_value!r}, d={dim}): "
            "the second moment d scale^2 nu / (nu - 2) overflows double precision; rescale"
        )
    return out


@overflow_guard
def expected_sq_norm_knorm(d: int, scale: float = 1.0) -> float:
    """``E||X||^2`` for the l2 K-norm density ``propto exp(-||x|| / scale)`` on ``R^d``.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    scale : float, default 1.0
        Noise scale ``> 0``.

    Returns
    -------
    float
        ``d (d + 1) scale^2``.

    Raises
    ------
    ValueError
        If ``d < 1`` or ``scale <= 0``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    In polar coordinates the radius has density ``propto r^(d-1)
    exp(-r/scale)``, the ``Gamma(d, scale)`` law, whose second moment is
    ``d (d + 1) scale^2``.

    References
    ----------
    hardt2010, awan2021knorm

    Examples
    --------
    >>> expected_sq_norm_knorm(10, 0.5)
    27.5
    """
    dim = _check_dimension(d)
    s = check_positive("scale", scale)
    return dim * (dim + 1.0) * s * s


@overflow_guard(check_result=False)
def expected_sq_norm_elliptical(log_f: LogGenerator, d: int, scale: float = 1.0) -> float:
    """``E||scale X||^2`` for ``X`` with density ``propto f(||x||^2)`` on ``R^d``, by quadrature.

    Parameters
    ----------
    log_f : callable
        Vectorised ``y -> log f(y)``, finite for ``y > 0``.
    d : int
        Dimension, ``>= 1``.
    scale : float, default 1.0
        Noise scale ``> 0``.

    Returns
    -------
    float
        ``scale^2 int r^(d+1) f(r^2) dr / int r^(d-1) f(r^2) dr``, or ``inf``
        if the upper integral diverges.

    Raises
    ------
    ValueError
        If ``d < 1``, ``scale <= 0``, ``log_f`` returns NaN, or the density
        is not integrable (the lower integral diverges).
    TypeError
        If ``d`` is not an integer or ``log_f`` is not callable.

    Notes
    -----
    With ``r = e^u`` both integrals become ``int exp(k u + log f(e^{2u})) du``
    over the real line, whose integrands are smooth and decay at both ends;
    the trapezoidal rule with step ``1/64`` on the range where the integrand
    exceeds ``e^-50`` of its peak is then accurate to near machine precision
    (Trefethen and Weideman).  A tail that is still above that level at
    ``u = 350`` (``r = e^350``, near the overflow of ``r^2``) counts as
    divergent: for t noise this reports ``inf`` for ``nu`` below about 2.15,
    although the moment is finite for every ``nu > 2``.

    References
    ----------
    trefethen2014

    Examples
    --------
    >>> print(round(expected_sq_norm_elliptical(log_generator("knorm"), 10, 0.5), 8))
    27.5
    >>> print(round(expected_sq_norm_elliptical(log_generator("t", d=3, nu=5.0), 3), 8))
    5.0
    """
    evaluate = _check_log_f(log_f)
    dim = _check_dimension(d)
    s = check_positive("scale", scale)

    def log_moment(k: float) -> float:
        coarse = np.arange(-_U_MAX, _U_MAX + 0.25, 0.25)
        vals = k * coarse + evaluate(np.exp(2.0 * coarse))
        vals = np.where(np.isnan(vals), -np.inf, vals)
        peak = float(vals.max())
        if peak == math.inf:
            return math.inf
        keep = np.flatnonzero(vals >= peak - 50.0)
        lo, hi = coarse[keep[0]] - 1.0, coarse[keep[-1]] + 1.0
        if hi >= _U_MAX:
            return math.inf
        if lo <= -_U_MAX:
            raise ValueError(f"the density f(||x||^2) is not integrable near 0 in d = {dim}")
        u = np.arange(lo, hi, 1.0 / 64.0)
        fine = k * u + evaluate(np.exp(2.0 * u))
        return peak + math.log(float(np.sum(np.exp(fine - peak))) / 64.0)

    upper, lower = log_moment(dim + 2.0), log_moment(float(dim))
    if lower == math.inf:
        raise ValueError(f"the density f(||x||^2) is not integrable in d = {dim}")
    if upper == math.inf:
        return math.inf  # the second moment diverges
    out = s * s * math.exp(upper - lower)  # math.exp raises OverflowError, named by the guard
    if not math.isfinite(out):
        raise ValueError(
            f"scale too large in magnitude for expected_sq_norm_elliptical (scale={s!r}): the second "
            "moment overflows double precision; rescale"
        )
    return out


def _t_error_factor(nu: float, d: int, epsilon: float) -> float:
    """``E||noise||^2 / Delta^2`` of t noise calibrated to ``epsilon``."""
    return d / (4.0 * (nu - 2.0) * math.sinh(epsilon / (nu + d)) ** 2)


@overflow_guard
def optimal_t_nu(epsilon: float, d: int) -> float:
    """Degrees of freedom of the t noise with the least squared error at ``epsilon``-DP.

    Parameters
    ----------
    epsilon : float
        Target privacy loss, finite and ``> 0``.
    d : int
        Dimension, ``>= 1``.

    Returns
    -------
    float
        The ``nu > 2`` minimising ``E||noise||^2 = d Delta^2 / (4 (nu - 2)
        sinh^2(epsilon / (nu + d)))``, the error of t noise scaled by
        :func:`sigma_multivariate_t` (independent of ``Delta``).

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or ``d < 1``.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    For small ``epsilon / (nu + d)``, ``sinh x ~ x`` and the error is ``d (nu
    + d)^2 / (4 (nu - 2) epsilon^2)``, minimised at ``nu = d + 4`` with value
    ``d (d + 2) / epsilon^2`` -- compare ``d (d + 1) / epsilon^2`` for the
    K-norm mechanism.  The exact minimiser is found by bounded Brent
    minimisation of the log error in ``log(nu - 2)``.

    References
    ----------
    reimherr2019

    Examples
    --------
    >>> print(round(optimal_t_nu(1.0, 10), 4))
    13.9861
    """
    eps = check_positive("epsilon", epsilon)
    dim = _check_dimension(d)

    def log_error(t: float) -> float:
        return math.log(_t_error_factor(2.0 + math.exp(t), dim, eps))

    guess = math.log(dim + 2.0)
    res = optimize.minimize_scalar(
        log_error, bounds=(guess - 12.0, guess + 12.0), method="bounded", options={"xatol": 1e-10}
    )
    return 2.0 + math.exp(res.x)


@overflow_guard
def sample_multivariate_t(
    nu: float, d: int, size: int, *, scale: float = 1.0, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Draw ``scale X`` with ``X ~ t_nu^d(0, I)`` (density ``propto (1 + ||x||^2/nu)^(-(nu+d)/2)``).

    Parameters
    ----------
    nu : float
        Degrees of freedom, finite and ``> 0``.
    d : int
        Dimension, ``>= 1``.
    size : int
        Number of draws, ``>= 0``.
    scale : float, default 1.0
        Noise scale ``> 0`` (keyword-only).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    numpy.ndarray, shape (size, d)

    Raises
    ------
    ValueError
        If ``nu <= 0``, ``d < 1``, ``size < 0`` or ``scale <= 0``.
    TypeError
        If ``rng`` is not a Generator or ``d``/``size`` is not an integer.

    Notes
    -----
    ``X = Z / sqrt(W / nu)``: a Gaussian scale mixture (Theorem 1 of the
    paper with ``V^2 = nu / W``, ``W ~ chi^2_nu``).  For a dispersion
    ``Sigma`` multiply the rows by a square root of ``Sigma``.

    References
    ----------
    reimherr2019, fang1990

    Examples
    --------
    >>> x = sample_multivariate_t(5.0, 3, 4, rng=np.random.default_rng(0))
    >>> x.shape
    (4, 3)
    """
    nu_value = check_positive("nu", nu)
    dim = _check_dimension(d)
    n = _check_size(size)
    s = check_positive("scale", scale)
    generator = check_rng("rng", rng)
    z = generator.standard_normal((n, dim))
    w = generator.chisquare(nu_value, size=(n, 1))
    return s * z / np.sqrt(w / nu_value)


@overflow_guard
def sample_knorm(d: int, size: int, *, scale: float = 1.0, rng: np.random.Generator) -> NDArray[np.float64]:
    """Draw from the l2 K-norm density ``propto exp(-||x|| / scale)`` on ``R^d``.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    size : int
        Number of draws, ``>= 0``.
    scale : float, default 1.0
        Noise scale ``> 0`` (keyword-only).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    numpy.ndarray, shape (size, d)

    Raises
    ------
    ValueError
        If ``d < 1``, ``size < 0`` or ``scale <= 0``.
    TypeError
        If ``rng`` is not a Generator or ``d``/``size`` is not an integer.

    Notes
    -----
    The radius is ``Gamma(d, scale)`` and the direction uniform on the sphere
    (a normalised Gaussian vector), independent of each other.

    References
    ----------
    hardt2010, awan2021knorm

    Examples
    --------
    >>> x = sample_knorm(3, 4, scale=2.0, rng=np.random.default_rng(0))
    >>> x.shape
    (4, 3)
    """
    dim = _check_dimension(d)
    n = _check_size(size)
    s = check_positive("scale", scale)
    generator = check_rng("rng", rng)
    direction = generator.standard_normal((n, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    radius = generator.gamma(dim, s, size=(n, 1))
    return radius * direction / norms
