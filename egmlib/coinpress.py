"""CoinPress (Biswas, Dong, Kamath & Ullman 2020) and the pipelines it is compared with.

The study (Poulsen 2023) asks, in its Discussion, how Algorithm 3 compares with the
state of the art when the centre of the data is not known.  This module provides:

* :func:`coinpress_mean` -- CoinPress's iterative private mean for identity
  covariance, one zCDP budget per iteration, and :func:`coinpress_schedule`, its
  (data-independent) clipping thresholds, noise levels and radii;
* the exact accounting of a composition of Gaussian mechanisms:
  :func:`rho_for`, :func:`zcdp_to_epsilon_delta`, :func:`zcdp_delta` and the usual
  bound :func:`zcdp_epsilon_bound`;
* *plans*: a mean estimator written as a fixed sequence of clipped-mean steps
  (:class:`Step`), each a Gaussian mechanism in its own scaled coordinates, with
  builders for CoinPress on whitened data (:func:`coinpress_plan`), the study's
  two-stage pipeline (:func:`two_stage_plan`) and the hybrid of the two
  (:func:`hybrid_plan`); :func:`run_plan` runs a plan on data,
  :func:`simulate_plan` on many simulated data sets at once (in blocks), and
  :func:`plan_error` gives its semi-exact error;
* :func:`private_variances` -- a private estimate of the diagonal of the covariance
  (CoinPress's covariance iteration restricted to the diagonal), for unknown sigma.

All thresholds of a plan depend only on public quantities (``n``, ``d``, the
prior radius, the budgets, and sigma), never on the data.  Memory: rows are
processed in blocks of about 16 MB; a simulated data set is held whole only while
``reps * n * d`` stays below about 64 MB of float64 per block of replicates.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from egmlib._validation import check_array, check_positive, check_probability, check_real, check_rng, overflow_guard
from egmlib.gchi2 import isf as _gchi2_isf
from egmlib.gchi2 import sf as _gchi2_sf
from egmlib.optimal import clipping_error, optimal_scaling
from egmlib.privacy import analytic_sigma, gaussian_delta
from egmlib.scaling import clip_radius, gaussian_data_scaling

__all__ = [
    "tail_bound",
    "CoinPressSchedule",
    "coinpress_schedule",
    "coinpress_mean",
    "rho_for",
    "zcdp_delta",
    "zcdp_to_epsilon_delta",
    "zcdp_epsilon_bound",
    "Step",
    "step_rho",
    "coinpress_plan",
    "two_stage_plan",
    "hybrid_plan",
    "run_plan",
    "PlanErrors",
    "simulate_plan",
    "plan_error",
    "VarianceEstimate",
    "private_variances",
    "standard_schedule",
]

_BLOCK_ELEMENTS = 1 << 21      # float64 elements per temporary block (16 MB)
_DATA_ELEMENTS = 1 << 23       # float64 elements of simulated data per replicate block (64 MB)
_BETA = 0.01                   # the tail probability of the authors' code
_SQRT_LOG = 3.0                # the authors' constant "3 in place of sqrt(log(2/beta))"
_RHO_MAX = 1e150               # largest total zCDP budget accepted by the accounting functions
_SCALINGS = ("lemma", "optimal", "none")


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _count(name: str, value: object, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _rhos(value: ArrayLike) -> NDArray[np.float64]:
    arr = check_array("rhos", value, positive=True)
    return arr


def _data(X: ArrayLike) -> NDArray[np.float64]:
    arr = check_array("X", X, ndim=2)
    if arr.shape[0] < 2:
        raise ValueError(f"X must have at least 2 rows, got {arr.shape[0]}")
    return arr


def _sig(sigmas: ArrayLike) -> NDArray[np.float64]:
    return check_array("sigmas", sigmas, positive=True)


def _total_rho(rho: object) -> float:
    """A total zCDP budget in ``(0, _RHO_MAX]``, named ``rho``."""
    return check_real("rho", rho, low=0.0, high=_RHO_MAX, low_open=True)


def _scaling(scaling: object) -> str:
    """The ``scaling`` keyword: one of :data:`_SCALINGS` (checked before any comparison)."""
    if not isinstance(scaling, str):
        raise TypeError(f"scaling must be one of 'lemma', 'optimal' or 'none', got {type(scaling).__name__}")
    if scaling not in _SCALINGS:
        raise ValueError(f"scaling must be one of 'lemma', 'optimal' or 'none', got {scaling!r}")
    return scaling


def _plan_vector(name: str, value: ArrayLike, d: int) -> NDArray[np.float64]:
    """A finite float array of shape ``(d,)``, ``d`` the dimension of the plan."""
    arr = check_array(name, value)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},) to match plan (plan is for dimension {d}), got {arr.shape}")
    return arr


# --------------------------------------------------------------------------
# 1. CoinPress for identity covariance
# --------------------------------------------------------------------------
@overflow_guard
def tail_bound(d: int, beta: float) -> float:
    """Laurent-Massart bound on the ``1 - beta`` quantile of ``||Z||``, ``Z ~ N(0, I_d)``.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    beta : float
        Tail probability in ``(0, 1)``.

    Returns
    -------
    float
        ``sqrt(d + 2 sqrt(d log(1/beta)) + 2 log(1/beta))``: ``P(||Z|| > value) <= beta``.

    Raises
    ------
    ValueError
        If ``d < 1`` or ``beta`` is outside ``(0, 1)``.

    Notes
    -----
    Laurent and Massart's chi-square bound ``P(chi2_d >= d + 2 sqrt(d x) + 2x) <= e^-x``
    with ``x = log(1/beta)``; the authors' code calls it ``gaussian_tailbound``.

    References
    ----------
    biswas2020

    Examples
    --------
    >>> print(round(tail_bound(50, 0.01), 4))
    9.4636
    """
    dd = _count("d", d)
    b = check_probability("beta", beta)
    x = math.log(1.0 / b)
    return math.sqrt(dd + 2.0 * math.sqrt(dd * x) + 2.0 * x)


@dataclass(frozen=True)
class CoinPressSchedule:
    """Output of :func:`coinpress_schedule` (one entry per iteration).

    Attributes
    ----------
    thresholds : numpy.ndarray
        Clipping radius around the current centre.
    noise_sds : numpy.ndarray
        Standard deviation of the Gaussian noise added to each coordinate of the mean.
    radii : numpy.ndarray
        Radius of the ball that holds the mean after the iteration (with
        probability about ``1 - beta``); ``radii[-1]`` is not used by the estimator.
    """

    thresholds: NDArray[np.float64]
    noise_sds: NDArray[np.float64]
    radii: NDArray[np.float64]


@overflow_guard
def coinpress_schedule(n: int, d: int, radius: float, rhos: ArrayLike) -> CoinPressSchedule:
    """The clipping thresholds, noise levels and radii of :func:`coinpress_mean`.

    Parameters
    ----------
    n : int
        Number of rows, ``>= 2``.
    d : int
        Dimension, ``>= 1``.
    radius : float
        Prior: the mean lies in a ball of this radius ``> 0`` around the centre.
    rhos : array_like
        zCDP budget of each iteration, each ``> 0``.

    Returns
    -------
    CoinPressSchedule
        Thresholds, noise standard deviations and radii, one per iteration.

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    As in the authors' ``multivariate_mean_step``: with ``g = tail_bound(d, 0.01)``
    the threshold is ``T = min(sqrt(r^2 + 6 r + g^2), r + g)``, the mean of the
    clipped rows has l2-sensitivity ``2T/n`` and gets ``N(0, s^2 I)`` noise with
    ``s = (2T/n) / sqrt(2 rho_i)``, and the next radius is ``g sqrt(1/n + s^2)``.
    Nothing here depends on the data.

    References
    ----------
    biswas2020

    Examples
    --------
    >>> s = coinpress_schedule(1000, 50, 10 * 50 ** 0.5, [0.125, 0.375])
    >>> print(np.round(s.thresholds, 3), np.round(s.radii, 3))
    [74.255 10.701] [2.827 0.38 ]
    """
    nn = _count("n", n, 2)
    dd = _count("d", d)
    r = check_positive("radius", radius)
    rh = _rhos(rhos)
    g = tail_bound(dd, _BETA)
    thresholds, sds, radii = [], [], []
    for p in rh:
        t = min(math.sqrt(r * r + 2.0 * _SQRT_LOG * r + g * g), r + g)
        s = (2.0 * t / nn) / math.sqrt(2.0 * p)
        r = math.sqrt(1.0 / nn + s * s) * g
        thresholds.append(t)
        sds.append(s)
        radii.append(r)
    return CoinPressSchedule(np.array(thresholds), np.array(sds), np.array(radii))


@overflow_guard
def coinpress_mean(
    X: ArrayLike, center: ArrayLike, radius: float, rhos: ArrayLike, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """CoinPress's private mean of rows with identity covariance (the caller whitens).

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data, ``n >= 2`` finite rows, assumed ``N(mu, I_d)``.
    center : array_like, shape (d,)
        Public centre ``c`` of the prior ball.
    radius : float
        Public prior radius ``> 0``: ``||mu - c|| <= radius``.
    rhos : array_like
        zCDP budget of each iteration, each ``> 0``; the output is
        ``sum(rhos)``-zCDP (with respect to replacing one row).
    rng : numpy.random.Generator
        Source of the noise (keyword-only).

    Returns
    -------
    numpy.ndarray, shape (d,)
        The private estimate of ``mu``.

    Raises
    ------
    ValueError
        On non-finite data, shapes that do not match, or invalid budgets.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Notes
    -----
    A reimplementation (not a copy) of ``multivariate_mean_iterative`` in the
    authors' repository (twistedcubic/coin-press, ``algos.py``): each iteration
    clips every row to the ball ``B(c, T)``, releases the mean of the clipped rows
    plus ``N(0, s^2 I)`` and shrinks the ball (:func:`coinpress_schedule`).  Its
    constants are the code's, which are practical choices rather than the
    constants of the paper's analysis (the paper's pseudo-code carries a failure
    probability ``beta`` through its tail bounds):

    * the tail bound is Laurent-Massart's with ``beta = 0.01`` fixed, and the
      threshold is ``min(sqrt(r^2 + 6r + g^2), r + g)``: the code's comment says
      the constant 3 stands in for ``sqrt(log(2/beta))``;
    * the new radius is ``g sqrt(1/n + s^2)``.

    It departs from the code in one respect: the code clips the rows *in place*,
    so that later iterations see rows already clipped by earlier ones (and the
    caller's array is modified); here every iteration clips the original rows, as
    in the pseudo-code, and ``X`` is never modified.  Rows are processed in blocks.

    References
    ----------
    biswas2020

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((2000, 5)) + 3.0
    >>> est = coinpress_mean(X, np.zeros(5), 20.0, [0.1, 0.4], rng=rng)
    >>> print(np.round(est, 2))
    [2.95 2.99 2.96 2.99 3.04]
    """
    data = _data(X)
    n, d = data.shape
    c = check_array("center", center)
    if c.shape != (d,):
        raise ValueError(f"center must have shape ({d},) to match X, got {c.shape}")
    check_rng("rng", rng)
    plan = coinpress_plan(np.ones(d), n, radius, rhos)
    return run_plan(data, c, plan, rng=rng)


# --------------------------------------------------------------------------
# 2. exact accounting: a composition of Gaussian mechanisms is one Gaussian mechanism
# --------------------------------------------------------------------------
@overflow_guard
def rho_for(epsilon: float, delta: float) -> float:
    """The total zCDP budget whose Gaussian mechanism is exactly ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        ``rho = 1 / (2 s^2)`` with ``s = analytic_sigma(epsilon, delta)``: the largest
        ``rho`` such that any composition of Gaussian mechanisms with budgets
        ``rho_i``, ``sum rho_i = rho``, is ``(epsilon, delta)``-DP.

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
    ``(epsilon, delta)`` curve is the exact profile of :func:`egmlib.privacy.gaussian_delta`.

    References
    ----------
    biswas2020, balle2018

    Examples
    --------
    >>> print(round(rho_for(1.0, 1e-6), 6))
    0.028014
    """
    s = analytic_sigma(epsilon, delta)
    return 0.5 / (s * s)


@overflow_guard
def zcdp_delta(rho: float, epsilon: float) -> float:
    """The exact ``delta(epsilon)`` of a composition of Gaussian mechanisms with total ``rho``.

    Parameters
    ----------
    rho : float
        Total zCDP budget in ``(0, 1e150]``.
    epsilon : float
        ``> 0``.

    Returns
    -------
    float
        ``gaussian_delta(1 / sqrt(2 rho), epsilon)``.

    Raises
    ------
    ValueError
        On invalid arguments.

    References
    ----------
    balle2018

    Examples
    --------
    >>> print(f"{zcdp_delta(rho_for(1.0, 1e-6), 1.0):.3e}")
    1.000e-06
    """
    r = _total_rho(rho)
    eps = check_positive("epsilon", epsilon)
    return float(gaussian_delta(1.0 / math.sqrt(2.0 * r), eps))


@overflow_guard
def zcdp_to_epsilon_delta(rho: float, delta: float) -> float:
    """The smallest ``epsilon`` at which total zCDP budget ``rho`` is ``(epsilon, delta)``-DP.

    Valid for compositions of Gaussian mechanisms (which is what every estimator
    here is).  Inverse of :func:`rho_for` in ``rho``.

    Parameters
    ----------
    rho : float
        Total zCDP budget in ``(0, 1e150]``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        The root of ``zcdp_delta(rho, epsilon) = delta`` (Brent's method), or ``0.0``
        when ``zcdp_delta(rho, 0) <= delta`` already.

    Raises
    ------
    ValueError
        On invalid arguments.

    References
    ----------
    balle2018

    Examples
    --------
    >>> print(round(zcdp_to_epsilon_delta(0.5, 1e-6), 4))
    4.8866
    """
    r = _total_rho(rho)
    dl = check_probability("delta", delta)
    sigma = 1.0 / math.sqrt(2.0 * r)

    def excess(eps: float) -> float:
        return math.log(float(gaussian_delta(sigma, eps))) - math.log(dl)

    lo = 1e-12
    if excess(lo) <= 0.0:
        return 0.0
    hi = zcdp_epsilon_bound(r, dl) + 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    return float(optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-13))


@overflow_guard
def zcdp_epsilon_bound(rho: float, delta: float) -> float:
    """The usual conversion ``epsilon = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke).

    Parameters
    ----------
    rho : float
        zCDP budget ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        An upper bound on :func:`zcdp_to_epsilon_delta`.

    Raises
    ------
    ValueError
        On invalid arguments.

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
    return r + 2.0 * math.sqrt(r * math.log(1.0 / dl))


# --------------------------------------------------------------------------
# 3. plans: fixed sequences of clipped-mean steps
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One private clipped-mean step of a plan.

    The rows are mapped to working coordinates ``y = (x - c) * scaling`` around the
    current centre ``c``; each ``y`` is clipped (to the ball of radius ``threshold``
    for ``kind="ball"``, to the box ``|y_j| <= threshold_j`` for ``kind="box"``);
    the mean of the clipped rows gets ``N(0, diag(noise_sd^2))`` noise and is
    mapped back: the new centre is ``c + (mean + noise) / scaling``.

    Attributes
    ----------
    kind : str
        ``"ball"`` or ``"box"``.
    scaling : numpy.ndarray, shape (d,)
        Positive working scaling.
    threshold : numpy.ndarray
        Ball radius (shape ``()``) or box half-widths (shape ``(d,)``).
    noise_sd : numpy.ndarray, shape (d,)
        Noise standard deviations in working coordinates.
    rho : float
        The zCDP budget the step was built for (see :func:`step_rho`).
    """

    kind: str
    scaling: NDArray[np.float64]
    threshold: NDArray[np.float64]
    noise_sd: NDArray[np.float64]
    rho: float


@overflow_guard
def step_rho(step: Step, n: int) -> float:
    """zCDP budget actually spent by a step on ``n`` rows, from its thresholds and noise.

    Parameters
    ----------
    step : Step
        The step.
    n : int
        Number of rows, ``>= 2``.

    Returns
    -------
    float
        ``||Delta / noise_sd||^2 / 2`` maximised over neighbouring data sets: for a
        ball step ``Delta = 2 T / n`` in every direction, so the value is
        ``(2T/n)^2 / (2 min noise_sd^2)``; for a box step
        ``sum_j (2 h_j / n)^2 / noise_sd_j^2 / 2``.

    Raises
    ------
    TypeError
        If ``step`` is not a :class:`Step`.

    Examples
    --------
    >>> plan = coinpress_plan(np.ones(3), 100, 5.0, [0.1, 0.2])
    >>> print([round(step_rho(s, 100), 12) for s in plan])
    [0.1, 0.2]
    """
    if not isinstance(step, Step):
        raise TypeError(f"step must be an egmlib.coinpress.Step, got {type(step).__name__}")
    nn = _count("n", n, 2)
    if step.kind == "ball":
        return float((2.0 * float(step.threshold) / nn) ** 2 / (2.0 * float(np.min(step.noise_sd)) ** 2))
    return float(np.sum((2.0 * step.threshold / nn) ** 2 / step.noise_sd**2) / 2.0)


def _ball_step(scaling: NDArray[np.float64], threshold: float, n: int, rho: float) -> Step:
    sd = (2.0 * threshold / n) / math.sqrt(2.0 * rho)
    return Step("ball", scaling, np.asarray(float(threshold)), np.full(scaling.shape, sd), float(rho))


def _box_step(half: NDArray[np.float64], n: int, rho: float) -> Step:
    # Elliptical Gaussian Mechanism (Pagh and Lebeda) on sensitivities 2 h_j / n.
    widths = 2.0 * half / n
    sd = np.sqrt(widths * float(widths.sum())) / math.sqrt(2.0 * rho)
    return Step("box", np.ones(half.shape), half.copy(), sd, float(rho))


@overflow_guard
def standard_schedule(rho: float, t: int) -> NDArray[np.float64]:
    """The authors' budget schedules: ``t - 1`` equal steps sharing ``rho/4``, then ``3 rho/4``.

    Parameters
    ----------
    rho : float
        Total zCDP budget ``> 0``.
    t : int
        Number of iterations ``>= 1``; ``t = 1`` gives ``[rho]``.

    Returns
    -------
    numpy.ndarray, shape (t,)

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> print(standard_schedule(1.0, 4) * 12)
    [1. 1. 1. 9.]
    """
    r = check_positive("rho", rho)
    tt = _count("t", t)
    if tt == 1:
        return np.array([r])
    return np.concatenate([np.full(tt - 1, r / (4.0 * (tt - 1))), [0.75 * r]])


@overflow_guard
def coinpress_plan(sigmas: ArrayLike, n: int, radius: float, rhos: ArrayLike) -> tuple[Step, ...]:
    """CoinPress on whitened data ``x / sigma`` as a plan (method 3 of the chapter).

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Known standard deviations, each ``> 0`` (``1`` for CoinPress as published).
    n : int
        Number of rows, ``>= 2``.
    radius : float
        Prior radius ``> 0`` of the mean *in whitened coordinates*.
    rhos : array_like
        zCDP budget per iteration.

    Returns
    -------
    tuple of Step
        Ball steps with scaling ``1 / sigma`` and the thresholds of
        :func:`coinpress_schedule`.

    Raises
    ------
    ValueError
        On any invalid argument.

    Examples
    --------
    >>> plan = coinpress_plan(np.ones(50), 1000, 10 * 50 ** 0.5, [0.125, 0.375])
    >>> print(round(float(plan[-1].threshold), 3))
    10.701
    """
    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    rh = _rhos(rhos)
    sched = coinpress_schedule(nn, sig.size, radius, rh)
    a = 1.0 / sig
    return tuple(_ball_step(a, t, nn, p) for t, p in zip(sched.thresholds, rh))


def _final_step(sig: NDArray[np.float64], n: int, prev: Step | None, rho: float, scaling: str) -> Step:
    """Algorithm 3 around a private centre: radius for clip probability 1/n."""
    var = sig**2 * (1.0 - 1.0 / n)
    if prev is not None:
        var = var + (prev.noise_sd / prev.scaling) ** 2
    eff = np.sqrt(var)
    if scaling == "none":
        b = np.ones(sig.shape)
    elif scaling == "lemma":
        b = gaussian_data_scaling(eff)
    elif scaling == "optimal":
        b = optimal_scaling(eff, 1.0 / n).scaling
    else:
        raise ValueError(f"scaling must be 'none', 'lemma' or 'optimal', got {scaling!r}")
    radius = float(clip_radius(eff, b, 1.0 / n))
    return _ball_step(b, radius, n, rho)


@overflow_guard
def two_stage_plan(
    sigmas: ArrayLike, n: int, radius: float, rho: float, *, share: float, scaling: str = "lemma"
) -> tuple[Step, ...]:
    """The study's pipeline with a private centre (methods 1 and 2 of the chapter).

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Known standard deviations, each ``> 0``.
    n : int
        Number of rows, ``>= 2``.
    radius : float
        Prior: ``||mu - m|| <= radius`` (original coordinates), ``> 0``.
    rho : float
        Total zCDP budget ``> 0``.
    share : float
        Share of ``rho`` spent on the centre, in ``(0, 1)`` (keyword-only).
    scaling : {"lemma", "none", "optimal"}
        Stage 2 with Lemma 4.1's scaling (Algorithm 3), without scaling (plain
        clipping, the study's baseline) or with the exactly optimal scaling.

    Returns
    -------
    tuple of Step
        A box step (stage 1) and a ball step (stage 2).

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    As :func:`egmlib.optimal.two_stage_error`, with the prior a ball instead of a
    box and zCDP accounting: stage 1 clips coordinate ``j`` to
    ``m_j +- (R + k sigma_j)``, ``k = box_half_width(d, 1/n)``, and releases the
    mean with the Elliptical Gaussian Mechanism; stage 2 is Algorithm 3 around the
    stage-1 centre, with the radius that clips ``x_i - mu_hat ~ N(0, sigma_eff^2)``
    with probability ``1/n``, ``sigma_eff^2 = sigma^2 (1 - 1/n) + nu^2``, ``nu``
    the stage-1 noise of the mean.

    Examples
    --------
    >>> plan = two_stage_plan(np.ones(4), 1000, 10.0, 0.5, share=0.25)
    >>> print([s.kind for s in plan], round(sum(s.rho for s in plan), 12))
    ['box', 'ball'] 0.5
    """
    from egmlib.optimal import box_half_width

    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    r = check_positive("radius", radius)
    total = check_positive("rho", rho)
    sh = check_real("share", share, low=0.0, high=1.0, low_open=True, high_open=True)
    scaling = _scaling(scaling)
    half = r + box_half_width(sig.size, 1.0 / nn) * sig
    first = _box_step(half, nn, sh * total)
    return (first, _final_step(sig, nn, first, (1.0 - sh) * total, scaling))


@overflow_guard
def hybrid_plan(
    sigmas: ArrayLike, n: int, radius: float, rhos: ArrayLike, *, scaling: str = "lemma"
) -> tuple[Step, ...]:
    """CoinPress's centre-finding in the scaled space, ending with Algorithm 3 (method 4).

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Known standard deviations, each ``> 0``.
    n : int
        Number of rows, ``>= 2``.
    radius : float
        Prior: ``||mu - m|| <= radius`` (original coordinates), ``> 0``.
    rhos : array_like
        zCDP budget per step; all but the last find the centre, the last is
        Algorithm 3.  At least 2 entries.
    scaling : {"lemma", "optimal", "none"}
        Scaling of the final step: Lemma 4.1's, the exactly optimal one
        (:func:`egmlib.optimal.optimal_scaling`) or none.

    Returns
    -------
    tuple of Step

    Raises
    ------
    ValueError
        On any invalid argument.

    Notes
    -----
    The centre-finding steps work in the coordinates ``x * b`` with Lemma 4.1's
    ``b`` for ``sigma``, where the rows have covariance ``diag(w)``,
    ``w = (b sigma)^2``, ``sum w = 1``.  They generalise CoinPress's step to that
    covariance: ``g = sqrt(isf(0.01, w))`` is the exact tail quantile of the row
    norm (:func:`egmlib.gchi2.isf`) instead of Laurent-Massart's bound for ``I``;
    the threshold is ``min(sqrt(r^2 + 6 r max(sqrt w) + g^2), r + g)``; the next
    radius is ``sqrt(isf(0.01, w/n + s^2))``.  The prior ball maps into the ball of
    radius ``R max(b)``.  The last step is Algorithm 3 around the centre found, with
    the radius that clips a row with probability ``1/n`` (as :func:`two_stage_plan`).

    Examples
    --------
    >>> plan = hybrid_plan(np.ones(4), 1000, 10.0, [0.05, 0.05, 0.4])
    >>> print([s.kind for s in plan], round(sum(s.rho for s in plan), 12))
    ['ball', 'ball', 'ball'] 0.5
    """
    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    r = check_positive("radius", radius)
    rh = _rhos(rhos)
    if rh.size < 2:
        raise ValueError(f"rhos must have at least 2 entries (centre steps and a final step), got {rh.size}")
    scaling = _scaling(scaling)
    b = gaussian_data_scaling(sig)
    w = (b * sig) ** 2
    g = math.sqrt(float(_gchi2_isf(_BETA, w)))
    spread = math.sqrt(float(w.max()))
    rad = r * float(b.max())
    steps: list[Step] = []
    for p in rh[:-1]:
        t = min(math.sqrt(rad * rad + 2.0 * _SQRT_LOG * rad * spread + g * g), rad + g)
        step = _ball_step(b, t, nn, p)
        steps.append(step)
        rad = math.sqrt(float(_gchi2_isf(_BETA, w / nn + step.noise_sd**2)))
    steps.append(_final_step(sig, nn, steps[-1], float(rh[-1]), scaling))
    return tuple(steps)


def _check_plan(plan: object, d: int | None = None) -> tuple[Step, ...]:
    """``plan`` as a tuple of Steps of one dimension (``d`` if given), named ``plan``."""
    if not isinstance(plan, (tuple, list)) or len(plan) == 0 or not all(isinstance(s, Step) for s in plan):
        raise TypeError(f"plan must be a non-empty sequence of egmlib.coinpress.Step, got {type(plan).__name__}")
    if d is None:
        d = plan[0].scaling.shape[0]
    for s in plan:
        if s.scaling.shape != (d,):
            raise ValueError(f"plan is for dimension {s.scaling.shape[0]}, the data have d = {d}")
    return tuple(plan)


def _apply(step: Step, X: NDArray[np.float64], c: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
    """One step on data X of shape (r, n, d) with centres c of shape (r, d)."""
    r, n, d = X.shape
    a = step.scaling
    total = np.zeros((r, d))
    rows = max(1, _BLOCK_ELEMENTS // (r * d))
    scaled = bool(np.any(a != 1.0))
    for start in range(0, n, rows):
        y = X[:, start:start + rows, :] - c[:, None, :]
        if scaled:
            y *= a
        if step.kind == "ball":
            norm = np.sqrt(np.einsum("rij,rij->ri", y, y))
            with np.errstate(divide="ignore"):
                factor = np.minimum(1.0, float(step.threshold) / norm)
            total += np.einsum("ri,rij->rj", factor, y)
        else:
            np.clip(y, -step.threshold, step.threshold, out=y)
            total += y.sum(axis=1)
    noisy = total / n + rng.standard_normal((r, d)) * step.noise_sd
    return c + noisy / a


@overflow_guard
def run_plan(X: ArrayLike, center: ArrayLike, plan: tuple[Step, ...], *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Run a plan on one data set: the private mean.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data, finite, ``n >= 2``.
    center : array_like, shape (d,)
        The public centre of the prior.
    plan : sequence of Step
        From :func:`coinpress_plan`, :func:`two_stage_plan` or :func:`hybrid_plan`
        (built for the same ``n``).
    rng : numpy.random.Generator
        Source of the noise (keyword-only).

    Returns
    -------
    numpy.ndarray, shape (d,)

    Raises
    ------
    ValueError, TypeError
        On invalid data, centre, plan or rng.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 3)) * [3.0, 1.0, 0.5] + 5.0
    >>> plan = hybrid_plan([3.0, 1.0, 0.5], 1000, 20.0, [0.1, 0.4])
    >>> print(np.round(run_plan(X, np.zeros(3), plan, rng=rng), 1))
    [5.  5.1 5. ]
    """
    data = _data(X)
    n, d = data.shape
    c = check_array("center", center)
    if c.shape != (d,):
        raise ValueError(f"center must have shape ({d},) to match X, got {c.shape}")
    steps = _check_plan(plan, d)
    check_rng("rng", rng)
    X3 = data[None]
    cur = c[None].copy()
    for step in steps:
        cur = _apply(step, X3, cur, rng)
    return cur[0]


@dataclass(frozen=True)
class PlanErrors:
    """Output of :func:`simulate_plan`, one entry per replicate.

    Attributes
    ----------
    sample : numpy.ndarray
        ``||estimate - sample mean||^2``: the study's measure (error of the sum / n^2).
    population : numpy.ndarray
        ``||estimate - mu||``: the authors' measure (not squared).
    """

    sample: NDArray[np.float64]
    population: NDArray[np.float64]


@overflow_guard
def simulate_plan(
    plan: tuple[Step, ...],
    sigmas: ArrayLike,
    mu: ArrayLike,
    center: ArrayLike,
    n: int,
    reps: int,
    *,
    rng: np.random.Generator,
) -> PlanErrors:
    """Run a plan on ``reps`` simulated data sets ``N(mu, diag sigma^2)``, vectorised.

    Parameters
    ----------
    plan : sequence of Step
        The estimator.
    sigmas : array_like, shape (d,)
        True standard deviations ``> 0`` of the simulated rows.
    mu : array_like, shape (d,)
        True mean.
    center : array_like, shape (d,)
        Public centre given to the plan.
    n : int
        Rows per data set, ``>= 2``.
    reps : int
        Number of data sets, ``>= 1``.
    rng : numpy.random.Generator
        Source of data and noise (keyword-only).

    Returns
    -------
    PlanErrors
        Squared error against the sample mean and error against ``mu``.

    Raises
    ------
    ValueError, TypeError
        On invalid arguments.

    Notes
    -----
    Replicates are simulated in blocks of at most about 64 MB of data (one data
    set at a time when ``n d`` exceeds that); each step is applied to a whole block
    at once.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> plan = coinpress_plan(np.ones(5), 500, 10.0, [0.25, 0.75])
    >>> e = simulate_plan(plan, np.ones(5), np.full(5, 2.0), np.zeros(5), 500, 50, rng=rng)
    >>> print(e.sample.shape, round(float(e.sample.mean()), 4))
    (50,) 0.0013
    """
    steps = _check_plan(plan)
    d = steps[0].scaling.shape[0]
    sig = _plan_vector("sigmas", _sig(sigmas), d)
    m = _plan_vector("mu", mu, d)
    c = _plan_vector("center", center, d)
    nn = _count("n", n, 2)
    rr = _count("reps", reps)
    check_rng("rng", rng)
    block = max(1, min(rr, _DATA_ELEMENTS // (nn * d)))
    sample, population = [], []
    for start in range(0, rr, block):
        k = min(block, rr - start)
        X = rng.standard_normal((k, nn, d))
        X *= sig
        X += m
        cur = np.broadcast_to(c, (k, d)).copy()
        for step in steps:
            cur = _apply(step, X, cur, rng)
        xbar = X.mean(axis=1)
        sample.append(np.sum((cur - xbar) ** 2, axis=1))
        population.append(np.sqrt(np.sum((cur - m) ** 2, axis=1)))
        del X
    return PlanErrors(np.concatenate(sample), np.concatenate(population))


@overflow_guard
def plan_error(plan: tuple[Step, ...], sigmas: ArrayLike, n: int) -> float:
    """Semi-exact ``E||estimate - sample mean||^2`` of a plan on ``N(mu, diag sigma^2)`` rows.

    Parameters
    ----------
    plan : sequence of Step
        A plan whose last step is a ball step.
    sigmas : array_like, shape (d,)
        True standard deviations ``> 0``.
    n : int
        Rows, ``>= 2``.

    Returns
    -------
    float
        ``sum_j (s_j / a_j)^2 + V / n``: the exact variance of the last step's
        noise in original coordinates (``a`` its scaling) plus the clipping error
        ``V = clipping_error(sigma_eff, a, p)`` of one row, with ``sigma_eff`` the
        marginal law of ``x_i - c`` around the previous centre (as in
        :func:`egmlib.optimal.two_stage_error`) and ``p = P(||(x_i - c) a|| > T)``.

    Raises
    ------
    ValueError, TypeError
        On invalid arguments.

    Notes
    -----
    Semi-exact: the noise term is exact; the clipping term treats the centre as
    independent of each row and ignores the clipping in earlier steps (both of
    order ``1/n``).  For a one-step plan the centre is the public point and the
    clipping term is left out (it is zero when the prior holds and the threshold
    covers it).  Checked against :func:`simulate_plan` in the tests and the chapter.

    Examples
    --------
    >>> plan = two_stage_plan(np.ones(4), 1000, 10.0, 0.5, share=0.25)
    >>> print(round(plan_error(plan, np.ones(4), 1000), 6))
    0.000398
    """
    steps = _check_plan(plan)
    sig = _plan_vector("sigmas", _sig(sigmas), steps[0].scaling.shape[0])
    nn = _count("n", n, 2)
    last = steps[-1]
    if last.kind != "ball":
        raise ValueError("plan must end with a ball step")
    a = last.scaling
    noise = float(np.sum((last.noise_sd / a) ** 2))
    if len(steps) == 1:
        return noise
    prev = steps[-2]
    eff = np.sqrt(sig**2 * (1.0 - 1.0 / nn) + (prev.noise_sd / prev.scaling) ** 2)
    t = float(last.threshold)
    p = float(_gchi2_sf(t * t, (a * eff) ** 2))
    if p < 1e-300:
        return noise
    return noise + clipping_error(eff, a, min(p, 1.0)) / nn


# --------------------------------------------------------------------------
# 4. sigma unknown: the diagonal of CoinPress's covariance iteration
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class VarianceEstimate:
    """Output of :func:`private_variances`.

    Attributes
    ----------
    variances : numpy.ndarray, shape (d,)
        Private estimates of ``sigma_j^2`` (``>= 0``, at most the public bound).
    upper : numpy.ndarray, shape (d,)
        ``variances`` plus ``z`` standard deviations of the last step's noise
        (``> 0``, at most the public bound), a conservative value to plug in for
        ``sigma^2``.
    """

    variances: NDArray[np.float64]
    upper: NDArray[np.float64]


@overflow_guard
def private_variances(
    X: ArrayLike, upper: ArrayLike, rhos: ArrayLike, *, rng: np.random.Generator, z: float = 2.0
) -> VarianceEstimate:
    """Private diagonal variances: CoinPress's covariance iteration restricted to the diagonal.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, ``n >= 4`` finite rows ``N(mu, diag sigma^2)`` with unknown ``mu``.
    upper : array_like, shape (d,) or float
        Public upper bound(s) ``> 0`` on ``sigma_j^2``.
    rhos : array_like
        zCDP budget per iteration, each ``> 0``.
    rng : numpy.random.Generator
        Source of the noise (keyword-only).
    z : float, default 2.0
        Multiplier of the noise standard deviation in ``upper`` of the result, ``>= 0``.

    Returns
    -------
    VarianceEstimate

    Raises
    ------
    ValueError, TypeError
        On invalid arguments.

    Notes
    -----
    The mean is removed by pairing rows: ``y_i = (x_{2i} - x_{2i+1}) / sqrt 2 ~
    N(0, diag sigma^2)``, ``m = floor(n/2)`` of them (a changed row changes one
    ``y_i``).  As in the authors' ``cov_est_step``, with a diagonal scaling ``a``
    (initially ``upper^(-1/2)``): clip ``w_i = y_i a`` to the l2 ball of radius
    ``g = tail_bound(d, 0.1)``; release ``Z_j = mean_i w_ij^2 + N(0, g^4 / (rho m^2))``
    (the vector ``(w_ij^2)_j`` has l1 norm at most ``g^2``, so two of them differ by
    at most ``sqrt(2) g^2`` in l2); project onto ``Z >= 0``; update
    ``a_j <- a_j / sqrt(Z_j + eta)``, ``eta = (2 sqrt(d/m) + d/m) / 2``.  The estimate
    is ``Z_j / a_j^2`` with the last step's ``Z`` and the ``a`` it used.  Restricting
    to the diagonal (the code estimates the full matrix with symmetric noise) is the
    change; the paper recommends the pairing for an unknown mean.

    References
    ----------
    biswas2020

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> X = rng.standard_normal((20000, 3)) * [4.0, 1.0, 0.25] + 7.0
    >>> v = private_variances(X, 100.0, [0.5, 0.5, 1.0], rng=rng)
    >>> print(np.round(np.sqrt(v.variances), 2))
    [3.98 1.   0.25]
    """
    data = _data(X)
    n, d = data.shape
    if n < 4:
        raise ValueError(f"X must have at least 4 rows, got {n}")
    up_arr = check_array("upper", upper, ndim=None, positive=True)
    if up_arr.shape not in ((), (d,)):
        raise ValueError(f"upper must be a number or have shape ({d},) to match X, got shape {up_arr.shape}")
    up = np.broadcast_to(up_arr, (d,)).astype(float)
    rh = _rhos(rhos)
    zz = check_real("z", z, low=0.0)
    check_rng("rng", rng)
    m = n // 2
    g = tail_bound(d, 0.1)
    eta = 0.5 * (2.0 * math.sqrt(d / m) + d / m)
    a = 1.0 / np.sqrt(up)
    rows = max(1, _BLOCK_ELEMENTS // d)
    Z = np.zeros(d)
    sd = 0.0
    a_used = a
    for p in rh:
        acc = np.zeros(d)
        for start in range(0, m, rows):
            stop = min(m, start + rows)
            w = (data[2 * start:2 * stop:2] - data[2 * start + 1:2 * stop + 1:2]) * (a / math.sqrt(2.0))
            sq = w * w
            norm2 = sq.sum(axis=1)
            with np.errstate(divide="ignore"):
                factor = np.minimum(1.0, g * g / norm2)
            acc += (sq * factor[:, None]).sum(axis=0)
        sd = g * g / (math.sqrt(float(p)) * m)
        Z = np.maximum(acc / m + rng.standard_normal(d) * sd, 0.0)
        a_used = a
        a = a / np.sqrt(Z + eta)
    var = Z / a_used**2
    return VarianceEstimate(np.minimum(var, up), np.minimum((Z + zz * sd) / a_used**2, up))
