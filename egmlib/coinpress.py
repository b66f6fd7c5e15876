"""CoinPress (Biswas, Dong, Kamath & Ullman 2020): private mean for identity covariance.

The study (Poulsen 2023) asks, in its Discussion, how Algorithm 3 compares with the
state of the art when the centre of the data is not known.  CoinPress is one answer
of the field.  This module holds CoinPress's mathematics, and imports no other estimator:

* :func:`coinpress_schedule` -- its (data-independent) clipping thresholds, noise
  levels and radii, and :func:`tail_bound`, the Laurent-Massart bound it uses.

The estimator itself, :func:`egmlib.pipelines.coinpress_mean`, is built from the
steps of :func:`egmlib.pipelines.coinpress_pipeline` and lives with the other
pipelines in :mod:`egmlib.pipelines` (which builds on this module, never the
reverse); the zCDP accounting is in :mod:`egmlib.privacy`.
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
    overflow_guard,
)

__all__ = [
    "tail_bound",
    "CoinPressSchedule",
    "coinpress_schedule",
]

_BETA = 0.01                   # the tail probability of the authors' code
_SQRT_LOG = 3.0                # the authors' constant "3 in place of sqrt(log(2/beta))"


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
_count = check_count  # egmlib._validation: name, accepted range, value


def _rhos(value: ArrayLike) -> NDArray[np.float64]:
    return check_array("rhos", value, positive=True)


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
def coinpress_schedule(n: int, d: int, radius: float, rhos: ArrayLike, *,
                       tail: float | None = None) -> CoinPressSchedule:
    """The clipping thresholds, noise levels and radii of :func:`egmlib.pipelines.coinpress_mean`.

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
    tail : float, optional
        Radius ``g > 0`` within which the norm of a standard Gaussian row of
        dimension ``d`` lies with probability ``0.99``; by default the authors'
        bound, ``tail_bound(d, 0.01)`` (Laurent and Massart).  The exact quantile,
        ``sqrt(chi2.isf(0.01, d))``, gives :func:`egmlib.pipelines.coinpress_exact_pipeline`.

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
    g = tail_bound(dd, _BETA) if tail is None else check_positive("tail", tail)
    return _schedule(nn, r, rh, g)


def _schedule(nn: int, r: float, rh: NDArray[np.float64], g: float) -> CoinPressSchedule:
    """CoinPress's recursion at tail radius ``g`` (validated arguments): shared by
    :func:`coinpress_schedule` (``g`` Laurent and Massart's bound) and
    :func:`egmlib.pipelines.coinpress_exact_pipeline` (the exact quantile)."""
    thresholds, sds, radii = [], [], []
    for p in rh:
        t = min(math.sqrt(r * r + 2.0 * _SQRT_LOG * r + g * g), r + g)
        s = (2.0 * t / nn) / math.sqrt(2.0 * p)
        r = math.sqrt(1.0 / nn + s * s) * g
        thresholds.append(t)
        sds.append(s)
        radii.append(r)
    return CoinPressSchedule(np.array(thresholds), np.array(sds), np.array(radii))


def __getattr__(name: str):
    """``egmlib.coinpress.coinpress_mean``: moved to :mod:`egmlib.pipelines` (deprecated alias).

    The estimator is built from pipeline steps, so it lives with the pipelines; this
    module keeps CoinPress's mathematics and imports nothing from them.  The alias is
    resolved on first use (so that no import circle exists) and goes in the next release.
    """
    if name == "coinpress_mean":
        import importlib
        import warnings

        warnings.warn("egmlib.coinpress.coinpress_mean moved to egmlib.pipelines.coinpress_mean; "
                      "the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return importlib.import_module("egmlib.pipelines").coinpress_mean
    raise AttributeError(f"module 'egmlib.coinpress' has no attribute {name!r}")
