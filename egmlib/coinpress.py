"""CoinPress (Biswas, Dong, Kamath & Ullman 2020): private mean for identity covariance.

The study (Poulsen 2023) asks, in its Discussion, how Algorithm 3 compares with the
state of the art when the centre of the data is not known.  CoinPress is one answer
of the field.  This module holds CoinPress alone:

* :func:`coinpress_mean` -- CoinPress's iterative private mean for identity
  covariance, one zCDP budget per iteration;
* :func:`coinpress_schedule` -- its (data-independent) clipping thresholds, noise
  levels and radii, and :func:`tail_bound`, the Laurent-Massart bound it uses.

The pipelines the chapter compares CoinPress with (and CoinPress itself written as a
pipeline on whitened data) are in :mod:`egmlib.pipelines`; the zCDP accounting is in
:mod:`egmlib.privacy`.  Memory: rows are processed in blocks of about 16 MB.
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
    check_probability,
    check_rng,
    check_rows,
    overflow_guard,
)

__all__ = [
    "tail_bound",
    "CoinPressSchedule",
    "coinpress_schedule",
    "coinpress_mean",
]

_BETA = 0.01                   # the tail probability of the authors' code
_SQRT_LOG = 3.0                # the authors' constant "3 in place of sqrt(log(2/beta))"


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
_count = check_count  # egmlib._validation: name, accepted range, value


def _rhos(value: ArrayLike) -> NDArray[np.float64]:
    return check_array("rhos", value, positive=True)


def _data(X: ArrayLike) -> NDArray[np.float64]:
    return check_rows("X", X)


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
    # the iteration is the pipeline of egmlib.pipelines with sigma = 1 (imported here:
    # that module builds on coinpress_schedule)
    from egmlib.pipelines import coinpress_pipeline, run_pipeline

    steps = coinpress_pipeline(np.ones(d), n, radius, rhos)
    return run_pipeline(data, c, steps, rng=rng)
