"""Bernstein's tail bound for a sum of squared Gaussians (Lemma 4.2) and Theorem 4.

For independent ``X_j ~ N(0, sigma_j^2)`` the study proves

    P(sum_j X_j^2 >= t sqrt(8 sum_j sigma_j^4) + sum_j sigma_j^2) < exp(-t^2)

for ``0 <= t <= sqrt(2 sum_j sigma_j^4) / (6 sigma_*^2)`` with
``sigma_* = max_j sigma_j``, and from it, with the scaling of Lemma 4.1 and
``t = sqrt(ln n)``, an upper bound on the expected noise of Algorithm 3.

Zero standard deviations are allowed (those coordinates add nothing); at least
one must be positive.  Every function works with ``sigma / sigma_*`` inside, so
no power of a sigma overflows or underflows.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import check_array, check_positive, check_real, overflow_guard

__all__ = [
    "bernstein_t_max",
    "bernstein_radius2",
    "theorem4_applies",
    "theorem4_error_bound",
]


def _sigmas(value: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """``(sigma_*, sigma / sigma_*)`` after validation."""
    sig = check_array("sigmas", value, nonnegative=True)
    top = float(sig.max())
    if top <= 0:
        raise ValueError("sigmas must have at least one entry > 0, got all zeros")
    return top, sig / top


def _check_n(n: object) -> float:
    return check_real("n", n, low=1.0)


@overflow_guard
def bernstein_t_max(sigmas: ArrayLike) -> float:
    """Largest ``t`` for which Lemma 4.2 holds.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.

    Returns
    -------
    float
        ``sqrt(2 sum_j sigma_j^4) / (6 sigma_*^2)``; it does not depend on the
        scale of ``sigmas`` and lies in ``[sqrt(2)/6, sqrt(2 d)/6]``.

    Raises
    ------
    ValueError
        If a sigma is negative or not finite, or all are zero.

    Notes
    -----
    Bernstein's inequality needs ``t <= sqrt(sum_j E[Y_j^2]) / (2 L)`` with
    ``Y_j = X_j^2 - sigma_j^2``, ``E[Y_j^2] = 2 sigma_j^4`` and the moment
    constant ``L = 3 sigma_*^2`` (proof of Lemma 4.2).

    References
    ----------
    poulsen2023, wainwright2019

    Examples
    --------
    >>> print(round(bernstein_t_max(np.ones(18)), 6))
    1.0
    """
    _, r = _sigmas(sigmas)
    return math.sqrt(2.0 * float(np.sum(r**4))) / 6.0


@overflow_guard
def bernstein_radius2(sigmas: ArrayLike, t: float) -> float:
    """Lemma 4.2: a level ``c`` with ``P(sum_j X_j^2 >= c) < exp(-t^2)``.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    t : float
        Deviation parameter in ``[0, bernstein_t_max(sigmas)]``.

    Returns
    -------
    float
        ``t sqrt(8 sum_j sigma_j^4) + sum_j sigma_j^2``, an upper bound on the
        squared radius exceeded with probability ``exp(-t^2)``.

    Raises
    ------
    ValueError
        If the sigmas are invalid or ``t`` lies outside
        ``[0, bernstein_t_max(sigmas)]`` (the lemma says nothing there).

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> print(round(bernstein_radius2(np.ones(18), 1.0), 4))  # 18 + sqrt(144)
    30.0
    """
    top, r = _sigmas(sigmas)
    t_max = math.sqrt(2.0 * float(np.sum(r**4))) / 6.0
    tt = check_real("t", t, low=0.0, high=t_max)
    return top**2 * (tt * math.sqrt(8.0 * float(np.sum(r**4))) + float(np.sum(r**2)))


@overflow_guard
def theorem4_applies(sigmas: ArrayLike, n: float) -> bool:
    """Whether Theorem 4's condition ``ln n <= sum sigma^2 / (18 sigma_*^2)`` holds.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    n : float
        Number of rows, ``>= 1`` (the clipping probability is ``1 / n``).

    Returns
    -------
    bool
        True when ``t = sqrt(ln n)`` is admissible in Lemma 4.2 for the scaled
        standard deviations ``sqrt(sigma_j / sum(sigma))`` of Lemma 4.1.

    Raises
    ------
    ValueError
        On invalid sigmas or ``n < 1``.

    Notes
    -----
    Since ``sum sigma^2 / sigma_*^2 <= d``, the theorem needs at least
    ``d >= 18 ln n`` coordinates; for ``n = 10^6`` that is ``d >= 249``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> print(theorem4_applies(np.ones(249), 1e6), theorem4_applies(np.ones(248), 1e6))
    True False
    """
    _, r = _sigmas(sigmas)
    nn = _check_n(n)
    return bool(math.log(nn) <= float(np.sum(r**2)) / 18.0)


@overflow_guard
def theorem4_error_bound(sigmas: ArrayLike, n: float, sigma_opt: float) -> float:
    """Theorem 4: upper bound on the expected noise of Algorithm 3.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    n : float
        Number of rows, ``>= 1``; the clipping probability is ``1 / n``.
    sigma_opt : float
        Noise multiplier for sensitivity 1, > 0.

    Returns
    -------
    float
        ``4 sigma_opt^2 sum(sigma) (sqrt(8 ln(n) sum(sigma^2)) + sum(sigma))``.

    Raises
    ------
    ValueError
        On invalid arguments, or when the theorem does not apply
        (:func:`theorem4_applies` is False): the bound is then unproven.

    Notes
    -----
    With Lemma 4.1's scaling the squared clipping radius is at most
    ``sqrt(8 ln(n) sum(sigma^2)) / sum(sigma) + 1`` (Lemma 4.2 with
    ``t = sqrt(ln n)``), and ``sum_j b_j^-2 = (sum sigma)^2``; insert both in
    ``(2 C sigma_opt)^2 sum_j b_j^-2``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> print(round(theorem4_error_bound(np.ones(300), 1e6, 1.0), 1))
    578509.5
    """
    top, r = _sigmas(sigmas)
    nn = _check_n(n)
    s = check_positive("sigma_opt", sigma_opt)
    limit = float(np.sum(r**2)) / 18.0
    if math.log(nn) > limit:
        raise ValueError(
            "n must satisfy ln(n) <= sum(sigmas^2) / (18 max(sigmas)^2) = "
            f"{limit!r} for Theorem 4 to apply, got n={n!r} (ln n = {math.log(nn)!r})"
        )
    s1 = float(np.sum(r))
    s2 = float(np.sum(r**2))
    return 4.0 * s**2 * top**2 * s1 * (math.sqrt(8.0 * math.log(nn) * s2) + s1)
