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

Tail probabilities, quantiles, their derivatives with respect to the weights and
the clipping moment all come from :mod:`egmlib.gchi2`, through its public
functions and :class:`egmlib.gchi2.GeneralizedChi2` (one distribution whose weights
are validated and prepared once).  :func:`isf_gradient` is
:func:`egmlib.gchi2.isf_gradient`, re-exported here.  All reported quantiles
are those of :func:`egmlib.gchi2.isf`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from egmlib._validation import check_array, check_positive, check_real, check_scaling, overflow_guard
from egmlib.gchi2 import GeneralizedChi2, isf_gradient
from egmlib.gchi2 import isf as _gchi2_isf
from egmlib.gchi2 import sf as _gchi2_sf
from egmlib.privacy import analytic_sigma
from egmlib.scaling import clip_radius, egm_error, gaussian_data_scaling

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


def _quantile_and_gradient(w: NDArray[np.float64], p: float,
                           guess: float | None = None) -> tuple[float, NDArray[np.float64]]:
    """gchi2's quantile c (p <= 1/2) and dc/dw, Newton started at ``guess``."""
    return GeneralizedChi2(w).isf_gradient(p, guess=guess)


def _row_law(sig: NDArray[np.float64], b: NDArray[np.float64]) -> GeneralizedChi2:
    """The law of ``||x~||^2 = sum_j (b_j sigma_j)^2 Z_j^2`` (positive sigmas only)."""
    pos = sig > 0
    with np.errstate(over="ignore"):
        w = (b[pos] * sig[pos]) ** 2
    if not np.all(np.isfinite(w)):
        raise ValueError("scaling * sigmas overflows; rescale the inputs")
    return GeneralizedChi2(w)


# --------------------------------------------------------------------------
# 1. the gradient of the quantile
# --------------------------------------------------------------------------
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
        c, m = _quantile_and_gradient(w, pp, state["c"])
        state["c"] = c
        log_terms = 2.0 * logs - lw
        log_s = special.logsumexp(log_terms)
        grad = w * m / c - np.exp(log_terms - log_s)
        return math.log(c) + log_s, grad, float(np.abs(grad).max())

    x0 = np.log(lemma_w)
    if logs.size == 1:
        x_opt, evals = x0, 0
    else:
        w0 = lemma_w
        c0, m0 = _quantile_and_gradient(w0, pp)
        pre = np.sqrt(w0 * m0 / c0 + w0)      # tail share + noise share

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
    return float(-special.ndtri(0.5 * tail))       # norm.isf(q) is -ndtri(q)


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
def _clip_error_at_radius(sig: NDArray[np.float64], law: GeneralizedChi2,
                          radius: float) -> tuple[float, float]:
    """Clipping error of one row at radius C and its derivative in C (``law`` from :func:`_row_law`)."""
    if radius <= 0.0:
        return float(np.sum(sig**2)), -math.inf
    return law.clipping_moment(radius, sig[sig > 0] ** 2)


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
    b = check_scaling(sig, scaling)
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True)
    law = _row_law(sig, b)
    radius = math.sqrt(law.isf(pp))                # clip_radius(sigmas, scaling, p)
    return _clip_error_at_radius(sig, law, radius)[0]


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
    b = check_scaling(sig, scaling)
    pp = check_real("p", p, low=0.0, high=1.0, low_open=True)
    nn = _count("n", n)
    s = check_positive("sigma_opt", sigma_opt)
    law = _row_law(sig, b)
    radius = math.sqrt(law.isf(pp))                # clip_radius(sigmas, scaling, p)
    with np.errstate(over="ignore"):
        inv2 = float(np.sum(1.0 / b**2))
    noise = 4.0 * s**2 * (radius * radius) * inv2          # noise_error(sigmas, scaling, p, sigma_opt)
    return noise + nn * _clip_error_at_radius(sig, law, radius)[0]


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
    b = check_scaling(sig, scaling)
    nn = _count("n", n)
    s = check_positive("sigma_opt", sigma_opt)
    pos = sig > 0
    law = _row_law(sig, b)
    inv2 = float(np.sum(1.0 / b[pos] ** 2))
    lo = math.log(1e-3 * math.sqrt(law.isf(0.5)))
    hi = math.log(math.sqrt(law.isf(1e-4 / nn)))
    noise_coef = 4.0 * s * s * inv2

    def slope(log_c: float) -> float:          # d total / d log C
        radius = math.exp(log_c)
        return radius * (2.0 * noise_coef * radius + nn * _clip_error_at_radius(sig, law, radius)[1])

    if slope(lo) >= 0.0:
        log_c = lo
    elif slope(hi) <= 0.0:
        log_c = hi
    else:
        log_c = optimize.brentq(slope, lo, hi, xtol=1e-9)
    radius = math.exp(log_c)
    noise = noise_coef * radius * radius
    clip = nn * _clip_error_at_radius(sig, law, radius)[0]
    prob = float(_gchi2_sf(radius * radius, law.weights))
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
    return noise + nn * _clip_error_at_radius(eff, _row_law(eff, b), radius)[0]
