"""Pipelines: mean estimators written as fixed sequences of private clipped-mean steps.

The chapter "Against the state of the art" compares estimators that find a private
centre and then average around it.  Each is a *pipeline*: a fixed sequence of
clipped-mean steps (:class:`Step`), every step a Gaussian mechanism in its own scaled
coordinates, with all thresholds, noise levels and budgets fixed in advance from
public quantities (``n``, ``d``, the prior radius, the budgets, and sigma), never from
the data.  (The word "plan" is kept for PLAN, :mod:`egmlib.plan`.)  This module
provides:

* builders: CoinPress on whitened data (:func:`coinpress_pipeline`; with exact
  quantiles, an ablation: :func:`coinpress_exact_pipeline`), the study's
  two-stage pipeline (:func:`two_stage_pipeline`) and the hybrid of the two
  (:func:`hybrid_pipeline`), with the authors' budget schedule
  (:func:`standard_schedule`) and the budget a step spends (:func:`step_rho`);
* :func:`run_pipeline` runs a pipeline on data (:func:`coinpress_mean` is CoinPress's
  estimator, :func:`coinpress_pipeline` run on the caller's whitened rows), :func:`simulate_pipeline` on many
  simulated data sets at once (in blocks), and :func:`pipeline_error` gives its
  semi-exact error;
* :func:`private_variances` -- a private estimate of the diagonal of the covariance
  (CoinPress's covariance iteration restricted to the diagonal), for unknown sigma.

CoinPress's schedule and tail bound are in :mod:`egmlib.coinpress` (which imports
nothing from this module); the zCDP accounting of a composition of
Gaussian mechanisms is in :mod:`egmlib.privacy`.  Memory: rows are processed in
blocks of about 16 MB; a simulated data set is held whole only while
``reps * n * d`` stays below about 64 MB of float64 per block of replicates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import (
    check_array,
    check_count,
    check_positive,
    check_real,
    check_rng,
    check_rows,
    overflow_guard,
)
from egmlib.coinpress import coinpress_schedule, tail_bound
from egmlib.gchi2 import isf as _gchi2_isf
from egmlib.gchi2 import sf as _gchi2_sf
from egmlib.optimal import box_half_width, clipping_error, optimal_scaling
from egmlib.scaling import clip_radius, gaussian_data_scaling

__all__ = [
    "Step",
    "step_rho",
    "standard_schedule",
    "coinpress_pipeline",
    "coinpress_exact_pipeline",
    "two_stage_pipeline",
    "hybrid_pipeline",
    "run_pipeline",
    "coinpress_mean",
    "PipelineErrors",
    "simulate_pipeline",
    "pipeline_error",
    "VarianceEstimate",
    "private_variances",
]

_BLOCK_ELEMENTS = 1 << 21      # float64 elements per temporary block (16 MB)
_DATA_ELEMENTS = 1 << 23       # float64 elements of simulated data per replicate block (64 MB)
_BETA = 0.01                   # CoinPress's tail probability (the authors' code)
_SQRT_LOG = 3.0                # the authors' constant "3 in place of sqrt(log(2/beta))"
_SCALINGS = ("lemma", "optimal", "none")


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
_count = check_count  # egmlib._validation: name, accepted range, value


def _rhos(value: ArrayLike) -> NDArray[np.float64]:
    return check_array("rhos", value, positive=True)


def _data(X: ArrayLike) -> NDArray[np.float64]:
    return check_rows("X", X)


def _sig(sigmas: ArrayLike) -> NDArray[np.float64]:
    return check_array("sigmas", sigmas, positive=True)


def _scaling(scaling: object) -> str:
    """The ``scaling`` keyword: one of :data:`_SCALINGS` (checked before any comparison)."""
    if not isinstance(scaling, str):
        raise TypeError(f"scaling must be one of 'lemma', 'optimal' or 'none', got {type(scaling).__name__}")
    if scaling not in _SCALINGS:
        raise ValueError(f"scaling must be one of 'lemma', 'optimal' or 'none', got {scaling!r}")
    return scaling


def _pipeline_vector(name: str, value: ArrayLike, d: int) -> NDArray[np.float64]:
    """A finite float array of shape ``(d,)``, ``d`` the dimension of the pipeline."""
    arr = check_array(name, value)
    if arr.shape != (d,):
        raise ValueError(
            f"{name} must have shape ({d},) to match pipeline (pipeline is for dimension {d}), got {arr.shape}")
    return arr


# --------------------------------------------------------------------------
# 1. pipelines: fixed sequences of clipped-mean steps
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One private clipped-mean step of a pipeline.

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
    >>> pipeline = coinpress_pipeline(np.ones(3), 100, 5.0, [0.1, 0.2])
    >>> print([round(step_rho(s, 100), 12) for s in pipeline])
    [0.1, 0.2]
    """
    if not isinstance(step, Step):
        raise TypeError(f"step must be an egmlib.pipelines.Step, got {type(step).__name__}")
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
def coinpress_pipeline(sigmas: ArrayLike, n: int, radius: float, rhos: ArrayLike) -> tuple[Step, ...]:
    """CoinPress on whitened data ``x / sigma`` as a pipeline (method 3 of the chapter).

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
        :func:`egmlib.coinpress.coinpress_schedule`.

    Raises
    ------
    ValueError
        On any invalid argument.

    Examples
    --------
    >>> pipeline = coinpress_pipeline(np.ones(50), 1000, 10 * 50 ** 0.5, [0.125, 0.375])
    >>> print(round(float(pipeline[-1].threshold), 3))
    10.701
    """
    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    rh = _rhos(rhos)
    sched = coinpress_schedule(nn, sig.size, radius, rh)
    return _ball_steps(1.0 / sig, sched.thresholds, nn, rh)


@overflow_guard
def coinpress_exact_pipeline(sigmas: ArrayLike, n: int, radius: float, rhos: ArrayLike) -> tuple[Step, ...]:
    """CoinPress on whitened data with exact quantiles (an ablation of method 3).

    As :func:`coinpress_pipeline`, with one change in every step: the tail radius is
    the exact ``0.99`` quantile of a whitened row's norm, ``g = sqrt(chi2_d isf(0.01))``,
    in place of Laurent and Massart's bound (:func:`egmlib.coinpress.tail_bound`).  The
    threshold keeps the authors' form ``min(sqrt(r^2 + 6 r + g^2), r + g)`` and the
    next radius is ``g sqrt(1/n + s^2)``.  It isolates what exact quantiles buy
    CoinPress, one of the three ways in which :func:`hybrid_pipeline` differs from it.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Known standard deviations, each ``> 0``.
    n : int
        Number of rows, ``>= 2``.
    radius : float
        Prior radius ``> 0`` of the mean *in whitened coordinates*.
    rhos : array_like
        zCDP budget per iteration.

    Returns
    -------
    tuple of Step
        Ball steps with scaling ``1 / sigma``.

    Raises
    ------
    ValueError
        On any invalid argument.

    Examples
    --------
    >>> pipeline = coinpress_exact_pipeline(np.ones(50), 1000, 10 * 50 ** 0.5, [0.125, 0.375])
    >>> print(round(float(pipeline[-1].threshold), 3))
    9.927
    """
    from scipy.stats import chi2

    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    rh = _rhos(rhos)
    g = math.sqrt(float(chi2.isf(_BETA, sig.size)))
    return _ball_steps(1.0 / sig, coinpress_schedule(nn, sig.size, radius, rh, tail=g).thresholds, nn, rh)


def _ball_steps(a: NDArray[np.float64], thresholds: ArrayLike, n: int, rhos: ArrayLike) -> tuple[Step, ...]:
    """One ball step per (threshold, budget), all with scaling ``a``."""
    return tuple(_ball_step(a, float(t), n, float(p)) for t, p in zip(thresholds, rhos))


def _clip(value: object) -> float | None:
    """The ``clip_probability`` keyword: ``None`` (meaning ``1/n``) or a float in (0, 1)."""
    if value is None:
        return None
    return check_real("clip_probability", value, low=0.0, high=1.0, low_open=True, high_open=True)


def _final_step(sig: NDArray[np.float64], n: int, prev: Step | None, rho: float, scaling: str,
                clip: float | None = None) -> Step:
    """Algorithm 3 around a private centre: the radius that clips a row of the marginal
    law with probability ``clip`` (``1/n`` when ``None``)."""
    var = sig**2 * (1.0 - 1.0 / n)
    if prev is not None:
        var = var + (prev.noise_sd / prev.scaling) ** 2
    eff = np.sqrt(var)
    p = 1.0 / n if clip is None else clip
    if scaling == "none":
        b = np.ones(sig.shape)
    elif scaling == "lemma":
        b = gaussian_data_scaling(eff)
    elif scaling == "optimal":
        b = optimal_scaling(eff, p).scaling
    else:
        raise ValueError(f"scaling must be 'none', 'lemma' or 'optimal', got {scaling!r}")
    radius = float(clip_radius(eff, b, p))
    return _ball_step(b, radius, n, rho)


@overflow_guard
def two_stage_pipeline(
    sigmas: ArrayLike,
    n: int,
    radius: float,
    rho: float,
    *,
    share: float,
    scaling: str = "lemma",
    clip_probability: float | None = None,
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
    clip_probability : None or float in (0, 1)
        Probability that stage 2 clips a row of the marginal law of ``x_i - mu_hat``:
        ``1/n`` (``None``, the study's choice) or the given value.  It must be public
        (chosen without the data).

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
    >>> pipeline = two_stage_pipeline(np.ones(4), 1000, 10.0, 0.5, share=0.25)
    >>> print([s.kind for s in pipeline], round(sum(s.rho for s in pipeline), 12))
    ['box', 'ball'] 0.5
    """
    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    r = check_positive("radius", radius)
    total = check_positive("rho", rho)
    sh = check_real("share", share, low=0.0, high=1.0, low_open=True, high_open=True)
    scaling = _scaling(scaling)
    clip = _clip(clip_probability)
    half = r + box_half_width(sig.size, 1.0 / nn) * sig
    first = _box_step(half, nn, sh * total)
    return (first, _final_step(sig, nn, first, (1.0 - sh) * total, scaling, clip))


@overflow_guard
def hybrid_pipeline(
    sigmas: ArrayLike,
    n: int,
    radius: float,
    rhos: ArrayLike,
    *,
    scaling: str = "lemma",
    clip_probability: float | None = None,
    start: str = "prior",
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
    clip_probability : None or float in (0, 1)
        Probability that the final step clips a row, as in :func:`two_stage_pipeline`.
    start : {"prior", "coinpress"}
        First radius of the centre search: ``"prior"`` (default) is the image
        ``R max(b)`` of the prior ball; ``"coinpress"`` is CoinPress's whitened prior
        radius ``R / min(sigma)`` in units of the row norm's 0.99 quantile,
        ``g (R / min sigma) / sqrt(chi2_d isf(0.01))`` (an ablation: it isolates what
        the smaller image of the prior buys the hybrid).

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
    the radius that clips a row with probability ``1/n`` (as :func:`two_stage_pipeline`).

    Examples
    --------
    >>> pipeline = hybrid_pipeline(np.ones(4), 1000, 10.0, [0.05, 0.05, 0.4])
    >>> print([s.kind for s in pipeline], round(sum(s.rho for s in pipeline), 12))
    ['ball', 'ball', 'ball'] 0.5
    """
    sig = _sig(sigmas)
    nn = _count("n", n, 2)
    r = check_positive("radius", radius)
    rh = _rhos(rhos)
    if rh.size < 2:
        raise ValueError(f"rhos must have at least 2 entries (centre steps and a final step), got {rh.size}")
    scaling = _scaling(scaling)
    clip = _clip(clip_probability)
    if not isinstance(start, str) or start not in ("prior", "coinpress"):
        raise ValueError(f"start must be 'prior' or 'coinpress', got {start!r}")
    b = gaussian_data_scaling(sig)
    w = (b * sig) ** 2
    g = math.sqrt(float(_gchi2_isf(_BETA, w)))
    spread = math.sqrt(float(w.max()))
    if start == "prior":
        rad = r * float(b.max())
    else:
        from scipy.stats import chi2

        rad = g * (r / float(sig.min())) / math.sqrt(float(chi2.isf(_BETA, sig.size)))
    steps: list[Step] = []
    for p in rh[:-1]:
        t = min(math.sqrt(rad * rad + 2.0 * _SQRT_LOG * rad * spread + g * g), rad + g)
        step = _ball_step(b, t, nn, p)
        steps.append(step)
        rad = math.sqrt(float(_gchi2_isf(_BETA, w / nn + step.noise_sd**2)))
    steps.append(_final_step(sig, nn, steps[-1], float(rh[-1]), scaling, clip))
    return tuple(steps)


def _check_pipeline(pipeline: object, d: int | None = None) -> tuple[Step, ...]:
    """``pipeline`` as a tuple of Steps of one dimension (``d`` if given), named ``pipeline``."""
    if not isinstance(pipeline, (tuple, list)) or len(pipeline) == 0 or not all(isinstance(s, Step) for s in pipeline):
        raise TypeError(f"pipeline must be a non-empty sequence of egmlib.pipelines.Step, got {type(pipeline).__name__}")
    if d is None:
        d = pipeline[0].scaling.shape[0]
    for s in pipeline:
        if s.scaling.shape != (d,):
            raise ValueError(f"pipeline is for dimension {s.scaling.shape[0]}, the data have d = {d}")
    return tuple(pipeline)


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
def run_pipeline(X: ArrayLike, center: ArrayLike, pipeline: tuple[Step, ...], *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Run a pipeline on one data set: the private mean.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data, finite, ``n >= 2``.
    center : array_like, shape (d,)
        The public centre of the prior.
    pipeline : sequence of Step
        From :func:`coinpress_pipeline`, :func:`two_stage_pipeline` or :func:`hybrid_pipeline`
        (built for the same ``n``).
    rng : numpy.random.Generator
        Source of the noise (keyword-only).

    Returns
    -------
    numpy.ndarray, shape (d,)

    Raises
    ------
    ValueError, TypeError
        On invalid data, centre, pipeline or rng.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 3)) * [3.0, 1.0, 0.5] + 5.0
    >>> pipeline = hybrid_pipeline([3.0, 1.0, 0.5], 1000, 20.0, [0.1, 0.4])
    >>> print(np.round(run_pipeline(X, np.zeros(3), pipeline, rng=rng), 1))
    [5.  5.1 5. ]
    """
    data = _data(X)
    n, d = data.shape
    c = check_array("center", center)
    if c.shape != (d,):
        raise ValueError(f"center must have shape ({d},) to match X, got {c.shape}")
    steps = _check_pipeline(pipeline, d)
    check_rng("rng", rng)
    X3 = data[None]
    cur = c[None].copy()
    for step in steps:
        cur = _apply(step, X3, cur, rng)
    return cur[0]


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
    plus ``N(0, s^2 I)`` and shrinks the ball (:func:`egmlib.coinpress.coinpress_schedule`).  Its
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
    # the iteration is the pipeline of coinpress_pipeline with sigma = 1
    steps = coinpress_pipeline(np.ones(d), n, radius, rhos)
    return run_pipeline(data, c, steps, rng=rng)


@dataclass(frozen=True)
class PipelineErrors:
    """Output of :func:`simulate_pipeline`, one entry per replicate.

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
def simulate_pipeline(
    pipeline: tuple[Step, ...],
    sigmas: ArrayLike,
    mu: ArrayLike,
    center: ArrayLike,
    n: int,
    reps: int,
    *,
    rng: np.random.Generator,
) -> PipelineErrors:
    """Run a pipeline on ``reps`` simulated data sets ``N(mu, diag sigma^2)``, vectorised.

    Parameters
    ----------
    pipeline : sequence of Step
        The estimator.
    sigmas : array_like, shape (d,)
        True standard deviations ``> 0`` of the simulated rows.
    mu : array_like, shape (d,)
        True mean.
    center : array_like, shape (d,)
        Public centre given to the pipeline.
    n : int
        Rows per data set, ``>= 2``.
    reps : int
        Number of data sets, ``>= 1``.
    rng : numpy.random.Generator
        Source of data and noise (keyword-only).

    Returns
    -------
    PipelineErrors
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
    >>> pipeline = coinpress_pipeline(np.ones(5), 500, 10.0, [0.25, 0.75])
    >>> e = simulate_pipeline(pipeline, np.ones(5), np.full(5, 2.0), np.zeros(5), 500, 50, rng=rng)
    >>> print(e.sample.shape, round(float(e.sample.mean()), 4))
    (50,) 0.0013
    """
    steps = _check_pipeline(pipeline)
    d = steps[0].scaling.shape[0]
    sig = _pipeline_vector("sigmas", _sig(sigmas), d)
    m = _pipeline_vector("mu", mu, d)
    c = _pipeline_vector("center", center, d)
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
    return PipelineErrors(np.concatenate(sample), np.concatenate(population))


@overflow_guard
def pipeline_error(pipeline: tuple[Step, ...], sigmas: ArrayLike, n: int) -> float:
    """Semi-exact ``E||estimate - sample mean||^2`` of a pipeline on ``N(mu, diag sigma^2)`` rows.

    Parameters
    ----------
    pipeline : sequence of Step
        A pipeline whose last step is a ball step.
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
    order ``1/n``).  For a one-step pipeline the centre is the public point and the
    clipping term is left out (it is zero when the prior holds and the threshold
    covers it).  Checked against :func:`simulate_pipeline` in the tests and the chapter.
    The clipping term assumes the centre is independent of the rows and exact to first
    order; at clipping probabilities well above ``1/n`` around a noisy centre the
    clipped rows are biased towards that centre, a term this formula leaves out.

    Examples
    --------
    >>> pipeline = two_stage_pipeline(np.ones(4), 1000, 10.0, 0.5, share=0.25)
    >>> print(round(pipeline_error(pipeline, np.ones(4), 1000), 6))
    0.000398
    """
    steps = _check_pipeline(pipeline)
    sig = _pipeline_vector("sigmas", _sig(sigmas), steps[0].scaling.shape[0])
    nn = _count("n", n, 2)
    last = steps[-1]
    if last.kind != "ball":
        raise ValueError("pipeline must end with a ball step")
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
# 2. sigma unknown: the diagonal of CoinPress's covariance iteration
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
