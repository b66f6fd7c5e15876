"""Scaling vectors, clipping radii and expected noise errors.

Two settings are covered:

* bounded coordinates (Algorithm 2, the Elliptical Gaussian Mechanism of
  Pagh and Lebeda): coordinate ``j`` of every row lies in an interval of width
  ``Delta_j``; the optimal scaling is ``b_j = sqrt(Delta_j / sum(Delta))``;
* Gaussian data (Algorithm 3 and Lemma 4.1 of the study): coordinate ``j`` is
  ``N(mu_j, sigma_j^2)``; rows are scaled by ``b``, clipped to a ball of
  radius ``C`` and noise ``N(0, (2 C sigma_opt)^2)`` is added in the scaled
  space.  The optimal scaling is ``b_j = 1 / sqrt(sigma_j * sum(sigma))``.

Degenerate coordinates
----------------------
A coordinate with ``Delta_j = 0`` takes the same value in every row, so it
needs no noise: :func:`egm_scaling` gives it ``b_j = 0`` and the mechanism adds
zero noise there.  A coordinate with ``sigma_j = 0`` is constant (equal to
``mu_j``) under the data model, so it contributes nothing to the norm of a
scaled row and needs no noise: :func:`gaussian_data_scaling` gives it the limit
``b_j = inf`` (so ``1 / b_j = 0``), and every function here treats the product
``b_j * sigma_j`` of such a coordinate as ``0``.  All-zero sensitivities or
all-zero standard deviations admit no scaling at all and raise ``ValueError``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import as_float_array, check_array, check_positive, check_scaling, overflow_guard
from egmlib.gchi2 import isf

__all__ = [
    "egm_scaling",
    "egm_error",
    "gaussian_data_scaling",
    "clip_radius",
    "noise_error",
]


def _nonnegative_with_positive(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """A 1-d finite array with entries >= 0 and at least one entry > 0."""
    arr = check_array(name, value, nonnegative=True)
    if not np.any(arr > 0):
        raise ValueError(f"{name} must have at least one entry > 0, got all zeros")
    return arr


def _scaled_variances(sigmas: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """The variances ``(b_j sigma_j)^2`` of a scaled row, with ``inf * 0 := 0``."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.where(sigmas > 0, (b * sigmas) ** 2, 0.0)
    if not np.all(np.isfinite(w)):
        raise ValueError("scaling * sigmas overflows; rescale the inputs")
    return w


def _check_p(p: ArrayLike) -> NDArray[np.float64]:
    arr = as_float_array("p", p)
    if not np.all((arr > 0) & (arr <= 1)):
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    return arr


def _radius2(weights: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """The c with P(sum_j w_j Z_j^2 > c) = p, 0 at p = 1, computed on normalised weights."""
    w = weights[weights > 0]
    out = np.zeros(p.shape)
    if w.size == 0:  # Q is identically 0
        return out
    top = float(w.max())
    inner = p < 1
    if np.any(inner):
        out[inner] = top * np.asarray(isf(p[inner], w / top), dtype=np.float64)
    return out


def _as_output(arr: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(arr) if arr.ndim == 0 else arr


@overflow_guard
def egm_scaling(sensitivities: ArrayLike) -> NDArray[np.float64]:
    """Optimal scaling vector of the Elliptical Gaussian Mechanism (Algorithm 2).

    Parameters
    ----------
    sensitivities : array_like, shape (d,)
        Per-coordinate sensitivities ``Delta_j >= 0`` (widths of the public
        box); at least one must be positive.

    Returns
    -------
    numpy.ndarray, shape (d,)
        ``b_j = sqrt(Delta_j / sum_i Delta_i)``; ``||b|| = 1``.  A coordinate
        with ``Delta_j = 0`` gets ``b_j = 0`` (it needs no noise).

    Raises
    ------
    ValueError
        If a sensitivity is negative or not finite, or all are zero.

    Notes
    -----
    Minimising the noise ``sigma_opt^2 sum_j (Delta_j / b_j)^2`` subject to
    ``||b|| = 1`` gives ``b_j`` proportional to ``sqrt(Delta_j)``; the
    minimum is :func:`egm_error` (Theorem 3 of the study, Lemmas 3.2-3.3 of
    Pagh and Lebeda).

    References
    ----------
    pagh2023, poulsen2023

    Examples
    --------
    >>> b = egm_scaling([1.0, 4.0, 4.0])
    >>> print(np.round(b, 4), round(float(np.sum(b**2)), 12))
    [0.3333 0.6667 0.6667] 1.0
    """
    delta = _nonnegative_with_positive("sensitivities", sensitivities)
    r = delta / delta.max()  # in [0, 1]: the sum cannot overflow
    return np.sqrt(r / r.sum())


@overflow_guard
def egm_error(sensitivities: ArrayLike, sigma_opt: float) -> float:
    """Expected squared noise norm of Algorithm 2 with the optimal scaling.

    Parameters
    ----------
    sensitivities : array_like, shape (d,)
        Per-coordinate sensitivities ``Delta_j >= 0``, at least one positive.
    sigma_opt : float
        Noise multiplier for sensitivity 1, > 0 (e.g. ``analytic_sigma``).

    Returns
    -------
    float
        ``sigma_opt^2 * ||Delta||_1^2`` (equation (6) of the study).

    Raises
    ------
    ValueError
        On a negative or non-finite sensitivity, all-zero sensitivities, or
        ``sigma_opt <= 0``.

    Notes
    -----
    With ``b`` from :func:`egm_scaling`, coordinate ``j`` receives noise of
    variance ``(sigma_opt Delta_j / b_j)^2 = sigma_opt^2 Delta_j ||Delta||_1``;
    summing over ``j`` gives the formula.

    References
    ----------
    pagh2023, poulsen2023

    Examples
    --------
    >>> print(round(egm_error([1.0, 4.0, 4.0], 2.0), 6))
    324.0
    """
    delta = _nonnegative_with_positive("sensitivities", sensitivities)
    s = check_positive("sigma_opt", sigma_opt)
    return s**2 * float(delta.sum()) ** 2


@overflow_guard(check_result=False)
def gaussian_data_scaling(sigmas: ArrayLike) -> NDArray[np.float64]:
    """Optimal scaling for Gaussian data (Lemma 4.1 of the study).

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``sigma_j >= 0`` of the coordinates, at least one
        positive.

    Returns
    -------
    numpy.ndarray, shape (d,)
        ``b_j = 1 / sqrt(sigma_j * sum_i sigma_i)``, so that the scaled row
        ``(x - mu) * b`` has ``E||(x - mu) * b||^2 = sum_j (b_j sigma_j)^2 = 1``.
        A constant coordinate (``sigma_j = 0``) gets ``b_j = inf``.

    Raises
    ------
    ValueError
        If a sigma is negative or not finite, all are zero, or ``b`` is not
        representable (rescale the sigmas).

    Notes
    -----
    Minimises the noise error ``(2 C sigma_opt)^2 sum_j b_j^-2`` (equation (9))
    under the constraint ``sum_j (b_j sigma_j)^2 = 1`` (equation (10)), for a
    fixed radius ``C``.  Then ``(b_j sigma_j)^2 = sigma_j / sum(sigma)`` and
    ``sum_j b_j^-2 = (sum(sigma))^2``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> sigmas = np.array([4.0, 1.0, 0.0])
    >>> b = gaussian_data_scaling(sigmas)
    >>> print(np.round(b, 4))
    [0.2236 0.4472    inf]
    >>> print(round(float(np.sum((b[:2] * sigmas[:2]) ** 2)), 12))
    1.0
    """
    sig = _nonnegative_with_positive("sigmas", sigmas)
    total = float(sig.sum())
    with np.errstate(divide="ignore", over="ignore"):
        b = 1.0 / (np.sqrt(sig) * math.sqrt(total))
    if np.any(np.isinf(b) & (sig > 0)):
        raise ValueError("sigmas are too small for a representable scaling; rescale them")
    return b


@overflow_guard
def clip_radius(sigmas: ArrayLike, scaling: ArrayLike, p: ArrayLike) -> float | NDArray[np.float64]:
    """Radius ``C`` with ``P(||(x - mu) * b|| > C) = p`` for ``x ~ N(mu, diag sigma^2)``.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    scaling : array_like, shape (d,)
        Scaling ``b`` with entries in ``(0, inf]``; ``inf`` is allowed only
        where ``sigma_j = 0`` (such a coordinate adds 0 to the norm).
    p : float or array_like
        Clipping probability in ``(0, 1]``; ``p = 1`` gives ``C = 0``.

    Returns
    -------
    float or numpy.ndarray
        ``C = sqrt(isf(p, (b * sigma)^2))``, of the shape of ``p``.

    Raises
    ------
    ValueError
        On invalid sigmas, a scaling outside ``(0, inf]`` or of the wrong
        shape, or ``p`` outside ``(0, 1]``.

    Notes
    -----
    ``||(x - mu) * b||^2 = sum_j (b_j sigma_j)^2 Z_j^2`` is a generalised
    chi-square variable; its upper quantile comes from
    :func:`egmlib.gchi2.isf`.  Only public inputs enter, never data.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> sigmas = np.array([3.0, 1.0])
    >>> print(round(clip_radius(sigmas, gaussian_data_scaling(sigmas), 0.05), 4))
    1.7922
    >>> print(round(clip_radius([1.0], [1.0], 0.05), 4))  # the normal 97.5% point
    1.96
    """
    sig = _nonnegative_with_positive("sigmas", sigmas)
    b = check_scaling(sig, scaling)
    pp = _check_p(p)
    return _as_output(np.sqrt(_radius2(_scaled_variances(sig, b), pp)))


@overflow_guard
def noise_error(
    sigmas: ArrayLike, scaling: ArrayLike, p: ArrayLike, sigma_opt: float
) -> float | NDArray[np.float64]:
    """Expected squared norm of the noise of Algorithm 3.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0``, at least one positive.
    scaling : array_like, shape (d,)
        Scaling ``b`` with entries in ``(0, inf]`` (``inf`` only where
        ``sigma_j = 0``; then ``b_j^-2 = 0``).
    p : float or array_like
        Clipping probability in ``(0, 1]``.
    sigma_opt : float
        Noise multiplier for sensitivity 1, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``(2 C sigma_opt)^2 * sum_j b_j^-2`` with ``C = clip_radius(sigmas,
        scaling, p)`` (equations (9) and (24) of the study).

    Raises
    ------
    ValueError
        On any invalid argument (see :func:`clip_radius`), ``sigma_opt <= 0``.

    Notes
    -----
    Noise ``N(0, (2 C sigma_opt)^2)`` is added to each coordinate of the
    scaled sum; unscaling multiplies coordinate ``j`` by ``1 / b_j``.  With no
    scaling (``b = 1``) this is ``d (2 C sigma_opt)^2``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> sigmas = np.array([3.0, 1.0])
    >>> e_t = noise_error(sigmas, gaussian_data_scaling(sigmas), 0.05, 1.0)
    >>> e_n = noise_error(sigmas, np.ones(2), 0.05, 1.0)
    >>> print(round(e_t, 3), round(e_n, 3), round(e_n / e_t, 4))
    205.563 285.211 1.3875
    """
    sig = _nonnegative_with_positive("sigmas", sigmas)
    b = check_scaling(sig, scaling)
    pp = _check_p(p)
    s = check_positive("sigma_opt", sigma_opt)
    c2 = _radius2(_scaled_variances(sig, b), pp)
    with np.errstate(over="ignore"):
        inv2 = float(np.sum(1.0 / b**2))
    return _as_output(4.0 * s**2 * c2 * inv2)

