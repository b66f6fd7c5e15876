"""Zipf-distributed standard deviations and the improvement ratio of Section 5.

The study's experiments give coordinate ``i`` the standard deviation
``sigma_i = i^-alpha / sum_j j^-alpha`` and compare the expected noise of
Algorithm 3 with the Lemma 4.1 scaling (``E_t``) against clipping in the
unscaled space (``E_n``), both with clipping probability ``1 / n``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from egmlib._validation import as_float_array, check_real, overflow_guard
from egmlib.gchi2 import isf

__all__ = ["zipf_sigmas", "improvement_ratio"]


def _check_d(d: object) -> int:
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)):
        raise TypeError(f"d must be an integer, got {d!r}")
    if int(d) < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    return int(d)


def _log_zipf(d: int, alpha: float) -> NDArray[np.float64]:
    """``log sigma_i`` for ``i = 1..d``, computed without forming ``i^-alpha``."""
    logs = -alpha * np.log(np.arange(1, d + 1, dtype=np.float64))
    return logs - logsumexp(logs)


@overflow_guard
def zipf_sigmas(d: int, alpha: float) -> NDArray[np.float64]:
    """Zipf standard deviations ``sigma_i = i^-alpha / sum_{j<=d} j^-alpha``.

    Parameters
    ----------
    d : int
        Number of coordinates, ``>= 1``.
    alpha : float
        Skewness exponent, finite and ``>= 0`` (``0`` gives ``1/d`` everywhere).

    Returns
    -------
    numpy.ndarray, shape (d,)
        Decreasing standard deviations summing to 1.  Values below the smallest
        positive float (about ``5e-324``) are 0; every other value is accurate
        to a few ulps, because the computation is done in logarithms.

    Raises
    ------
    ValueError
        If ``d < 1`` or ``alpha`` is negative or not finite.
    TypeError
        If ``d`` is not an integer.

    Notes
    -----
    ``log sigma_i = -alpha log i - logsumexp_j(-alpha log j)``.  A zero
    ``sigma_i`` is a constant coordinate; :mod:`egmlib.scaling` handles it.

    References
    ----------
    poulsen2023, powers1998

    Examples
    --------
    >>> print(np.round(zipf_sigmas(4, 1.0), 4))
    [0.48 0.24 0.16 0.12]
    >>> s = zipf_sigmas(3, 1000.0)
    >>> print(s[0], s[1] > 0, s[2])
    1.0 True 0.0
    """
    dd = _check_d(d)
    a = check_real("alpha", alpha, low=0.0)
    return np.exp(_log_zipf(dd, a))


@overflow_guard
def improvement_ratio(d: int, alpha: float, n: ArrayLike) -> float | NDArray[np.float64]:
    """Ratio ``E_n / E_t`` of the expected noise without and with Lemma 4.1's scaling.

    Parameters
    ----------
    d : int
        Number of coordinates, ``>= 1``.
    alpha : float
        Zipf exponent, ``>= 0`` (see :func:`zipf_sigmas`).
    n : float or array_like
        Number of rows, ``> 1``; the clipping probability is ``1 / n``.

    Returns
    -------
    float or numpy.ndarray
        ``E_n / E_t``, of the shape of ``n``.  It is 1 at ``alpha = 0`` (equal
        sigmas: the scaling changes nothing) and tends to ``d`` as ``alpha``
        grows (one coordinate carries all the variance); in every case tested
        it lies between these limits, but that is observed, not proven.

    Raises
    ------
    ValueError
        If ``d < 1``, ``alpha < 0`` or some ``n <= 1``.

    Notes
    -----
    ``E_t = (2 C_t sigma_opt)^2 (sum sigma)^2`` with ``C_t^2`` the upper
    ``1/n`` quantile of ``sum_j (sigma_j / sum sigma) Z_j^2``, and
    ``E_n = d (2 C_n sigma_opt)^2`` with ``C_n^2`` the upper ``1/n`` quantile
    of ``sum_j sigma_j^2 Z_j^2`` (no scaling, ``b = 1``, in equation (9)).
    The study's Section 5 prints ``E_n`` without the factor ``d``; its code
    and the limits it states need the factor.  ``sigma_opt`` and the scale of
    the sigmas cancel; the weights are divided by ``sigma_1`` so that nothing
    overflows, and ``b`` is never formed.

    References
    ----------
    poulsen2023, poulsen2023code

    Examples
    --------
    >>> print(np.round(improvement_ratio(100, 1.0, [1e2, 1e6]), 3))
    [12.438 16.614]
    """
    dd = _check_d(d)
    a = check_real("alpha", alpha, low=0.0)
    try:
        nn = as_float_array("n", n)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"n must be a real number or array, got {n!r}") from exc
    if not np.all(np.isfinite(nn) & (nn > 1)):
        raise ValueError(f"n must be finite and > 1, got {n!r}")
    p = 1.0 / nn
    logs = _log_zipf(dd, a)
    u = np.exp(logs - logs[0])  # sigma_i / sigma_1, in (0, 1]; tiny ones become 0
    share1 = math.exp(float(logs[0]))  # sigma_1 / sum(sigma)
    u = u[u > 0]
    u2 = u**2
    u2 = u2[u2 > 0]
    # E_n / E_t = d * isf(p, (sigma/S)^2) / isf(p, sigma/S), S = sum(sigma)
    num = np.asarray(isf(p, u2), dtype=np.float64)
    den = np.asarray(isf(p, u), dtype=np.float64)
    out = dd * share1 * num / den
    return float(out) if out.ndim == 0 else out
