"""Algorithms 1, 2 and 3 of the study on real data arrays.

* :func:`gaussian_mechanism` -- Algorithm 1 with the analytic calibration of
  Balle and Wang;
* :func:`elliptical_gaussian_mechanism` -- Algorithm 2 (Pagh and Lebeda): rows
  in a public box, per-coordinate noise ``sigma_opt Delta_j / b_j``;
* :func:`clipped_sum` -- the clipped sum at the heart of Algorithm 3;
* :func:`gaussian_data_mechanism` -- Algorithm 3 for Gaussian data.

Neighbouring data sets differ by replacing one row; the number of rows ``n`` is
public.  Data are read in blocks of rows, so the extra memory is a small
multiple of one block (never a copy of ``X``); ``float32`` and ``float64`` data
are accepted and every sum is accumulated in ``float64``.

Errors raised on the data (a row outside the box, NaN or inf) are part of the
contract that the data meet the stated preconditions: check your data first;
an exception is itself an output that depends on the data.

**The noise is not a secure sampler.**  The mechanisms draw float64 Gaussians from
the caller's ``numpy.random.Generator`` (a seeded PCG64 in the book).  That is
right for a study: the book's outputs must reproduce to the digit, and every
claim is checked against the same seeded draws.  It is not right for releasing
statistics about real people: PCG64 is not a cryptographic generator (its
state, hence all later noise, can be recovered from outputs), and floating-point
samplers of continuous noise leak through the low-order bits of the released
values -- Mironov's attack on the Laplace mechanism (Mironov 2012) and its
analogues for Gaussian samplers (Jin et al. 2022; Holohan and Braghin 2021).
It matters whenever an adversary sees the exact floating-point outputs.  For a
deployment, use a library with secure samplers, e.g. OpenDP's Gaussian
measurement (``opendp.measurements.make_gaussian``), and egmlib only for the
calibration (:func:`egmlib.privacy.analytic_sigma`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import (
    ragged_error,
    as_float_array,
    overflow_guard,
    check_array,
    check_int,
    check_probability,
    check_real,
    check_rng,
)
from egmlib.privacy import analytic_sigma
from egmlib.scaling import clip_radius, egm_scaling, gaussian_data_scaling

__all__ = [
    "EllipticalResult",
    "GaussianDataResult",
    "GaussianDataSetup",
    "gaussian_mechanism",
    "elliptical_gaussian_mechanism",
    "clipped_sum",
    "gaussian_data_mechanism",
    "gaussian_data_setup",
]

#: Number of float64 elements in one work block (rows per block = this // d).
_BLOCK_ELEMENTS = 1 << 17

#: Smallest positive clipping radius accepted (squares of smaller radii lose precision).
_MIN_RADIUS = 1e-50

#: Range of finite scaling entries for which the fast path squares ``b``.
_TAME_SCALING = (1e-50, 1e50)


def _block_rows(d: int) -> int:
    return max(1, _BLOCK_ELEMENTS // d)


def _frozen(arr: NDArray[np.float64]) -> NDArray[np.float64]:
    arr.flags.writeable = False
    return arr


# ----------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class EllipticalResult:
    """Output of :func:`elliptical_gaussian_mechanism`.

    Attributes
    ----------
    estimate : numpy.ndarray, shape (d,)
        The private estimate of the row sum.
    noise_std : numpy.ndarray, shape (d,)
        Standard deviation of the noise added to each coordinate,
        ``sigma_opt * Delta_j / b_j``.
    scaling : numpy.ndarray, shape (d,)
        The scaling vector ``b`` (:func:`egmlib.scaling.egm_scaling`).
    sigma_opt : float
        Noise multiplier for sensitivity 1 (analytic calibration).
    """

    estimate: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    scaling: NDArray[np.float64]
    sigma_opt: float


@dataclass(frozen=True)
class GaussianDataResult:
    """Output of :func:`gaussian_data_mechanism`.

    Attributes
    ----------
    estimate : numpy.ndarray, shape (d,)
        The private estimate of the row sum.
    radius : float
        Clipping radius ``C`` in the scaled space (public: depends on the
        sigmas, ``n`` and the clipping probability only).
    noise_std : numpy.ndarray, shape (d,)
        Standard deviation of the noise in each original coordinate,
        ``2 C sigma_opt / b_j`` (0 for a constant coordinate).
    n_clipped : int
        Number of rows that were clipped.  This count is computed from the
        data and is **not** private; do not release it.
    scaling : numpy.ndarray, shape (d,)
        The scaling vector ``b`` of Lemma 4.1.
    sigma_opt : float
        Noise multiplier for sensitivity 1 (analytic calibration).
    clip_probability : float
        The clipping probability used to choose ``radius``.
    """

    estimate: NDArray[np.float64]
    radius: float
    noise_std: NDArray[np.float64]
    n_clipped: int
    scaling: NDArray[np.float64]
    sigma_opt: float
    clip_probability: float


#: Marks setups made by :func:`gaussian_data_setup` (a hand-built setup is refused).
_SETUP_TOKEN = object()


@dataclass(frozen=True)
class GaussianDataSetup:
    """The public, data-independent part of :func:`gaussian_data_mechanism`.

    Made by :func:`gaussian_data_setup`; pass it as ``setup=`` to run the
    mechanism on many data sets with the same sigmas, size and privacy
    parameters without recomputing the clipping radius (a generalized
    chi-square quantile) and ``sigma_opt`` every time.

    Attributes
    ----------
    sigmas : numpy.ndarray, shape (d,)
        The public standard deviations (read-only copy).
    n : int
        Number of rows the setup was made for.
    epsilon, delta : float
        Privacy parameters.
    clip_probability : float
        Clipping probability ``p`` (``1 / n`` unless given).
    scaling : numpy.ndarray, shape (d,)
        The scaling vector ``b`` of Lemma 4.1.
    radius : float
        Clipping radius ``C`` in the scaled space.
    sigma_opt : float
        Noise multiplier for sensitivity 1 (analytic calibration).
    noise_std : numpy.ndarray, shape (d,)
        Standard deviation of the noise in each original coordinate,
        ``2 C sigma_opt / b_j``.
    """

    sigmas: NDArray[np.float64]
    n: int
    epsilon: float
    delta: float
    clip_probability: float
    scaling: NDArray[np.float64]
    radius: float
    sigma_opt: float
    noise_std: NDArray[np.float64]
    _token: object = field(default=None, repr=False, compare=False)


# ----------------------------------------------------------------------------------
# validation of data arrays


def _as_data(value: ArrayLike) -> NDArray:
    """``X`` as a 2-d real array with at least one row, without copying an ndarray."""
    try:
        arr = np.asarray(value)
    except ValueError as exc:  # numpy's "inhomogeneous shape": rows of different lengths
        raise ragged_error("X", value) from exc
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"X must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-dimensional array (n rows, d columns), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {arr.shape}")
    return arr


def _vector(name: str, value: ArrayLike, d: int, **kwargs: bool) -> NDArray[np.float64]:
    arr = check_array(name, value, **kwargs)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},) to match X, got {arr.shape}")
    return arr


def _bad_row(name: str, start: int, rows: NDArray[np.intp]) -> ValueError:
    return ValueError(f"{name} row {start + int(rows[0])} contains NaN or inf; rows must be finite")


# ----------------------------------------------------------------------------------
# Algorithm 1


@overflow_guard
def gaussian_mechanism(
    value: ArrayLike,
    sensitivity: float,
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
) -> float | NDArray[np.float64]:
    """Release ``value`` with Gaussian noise calibrated analytically (Algorithm 1).

    Parameters
    ----------
    value : float or array_like
        The exact statistic ``g(X)``, finite.
    sensitivity : float
        Its l2-sensitivity ``Delta(g) >= 0``; ``0`` means the value does not
        depend on the data and is returned unchanged.
    epsilon, delta : float
        Privacy parameters (keyword-only), as accepted by
        :func:`egmlib.privacy.analytic_sigma`.
    rng : numpy.random.Generator
        Source of the noise (keyword-only).

    Returns
    -------
    float or numpy.ndarray
        ``value + eta`` with ``eta ~ N(0, sigma^2 I)``,
        ``sigma = analytic_sigma(epsilon, delta, sensitivity)``; a float for a
        scalar ``value``, else an array of its shape.

    Raises
    ------
    ValueError
        If ``value`` is not finite, ``sensitivity < 0``, or the privacy
        parameters are out of range.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Warnings
    --------
    Not a secure sampler: float64 noise from the caller's generator, reproducible
    but exposed to floating-point attacks; for deployment use a secure sampler
    (e.g. OpenDP's), see the module docstring.

    Notes
    -----
    ``(epsilon, delta)``-DP for every ``sigma >= Delta sigma_opt`` (Theorem 2
    of the study; Balle and Wang, Theorem 8).

    References
    ----------
    balle2018, dwork2014

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> out = gaussian_mechanism([10.0, 20.0], 1.0, epsilon=1.0, delta=1e-5, rng=rng)
    >>> print(out.shape, bool(np.all(np.abs(out - [10.0, 20.0]) < 20)))
    (2,) True
    """
    val = check_array("value", value, ndim=None, nonempty=False)
    sens = check_real("sensitivity", sensitivity, low=0.0)
    check_rng("rng", rng)
    if sens == 0:
        # no noise is needed, but the privacy parameters are still checked
        analytic_sigma(epsilon, delta, 1.0)
        out = val.copy()
    else:
        sigma = analytic_sigma(epsilon, delta, sens)
        out = val + sigma * rng.standard_normal(val.shape)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------------
# Algorithm 2


@overflow_guard
def elliptical_gaussian_mechanism(
    X: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
) -> EllipticalResult:
    """Private row sum of data in a public box (Algorithm 2, the Elliptical Gaussian Mechanism).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data; every row must lie in the box ``[lower, upper]``.
    lower, upper : array_like, shape (d,)
        Public bounds, finite, ``lower <= upper``.
    epsilon, delta : float
        Privacy parameters (keyword-only).
    rng : numpy.random.Generator
        Source of the noise (keyword-only).

    Returns
    -------
    EllipticalResult
        ``estimate = sum_i x_i + eta`` with ``eta_j ~ N(0, (sigma_opt Delta_j /
        b_j)^2)`` independent, ``Delta = upper - lower``, ``b`` from
        :func:`egmlib.scaling.egm_scaling`; also the noise standard deviations,
        ``b`` and ``sigma_opt``.

    Raises
    ------
    ValueError
        If a row lies outside the box or is not finite, the bounds are
        invalid, or the privacy parameters are out of range.
    TypeError
        If ``X`` is not real or ``rng`` is not a Generator.

    Warnings
    --------
    Not a secure sampler: float64 noise from the caller's generator, reproducible
    but exposed to floating-point attacks; for deployment use a secure sampler
    (e.g. OpenDP's), see the module docstring.

    Notes
    -----
    The noise std ``sigma_opt Delta_j / b_j = sigma_opt sqrt(Delta_j
    ||Delta||_1)`` is computed without dividing by ``b``; a coordinate with
    ``Delta_j = 0`` is the same in every row and gets no noise (``b_j = 0``).
    The expected squared error is ``sigma_opt^2 ||Delta||_1^2``
    (:func:`egmlib.scaling.egm_error`).

    References
    ----------
    pagh2023, poulsen2023

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0.0, [1.0, 10.0], size=(1000, 2))
    >>> res = elliptical_gaussian_mechanism(X, [0, 0], [1, 10], epsilon=1.0, delta=1e-6, rng=rng)
    >>> print(np.round(res.noise_std / res.sigma_opt, 4))
    [ 3.3166 10.4881]
    """
    data = _as_data(X)
    n, d = data.shape
    lo = _vector("lower", lower, d)
    hi = _vector("upper", upper, d)
    if np.any(hi < lo):
        j = int(np.flatnonzero(hi < lo)[0])
        raise ValueError(f"upper must be >= lower in every coordinate, got upper[{j}] < lower[{j}]")
    with np.errstate(over="ignore"):
        width = hi - lo
    if not np.all(np.isfinite(width)):
        raise ValueError("upper - lower must be finite (the box is too wide)")
    sigma_opt = float(analytic_sigma(epsilon, delta, 1.0))
    check_rng("rng", rng)

    total = np.zeros(d)
    step = _block_rows(d)
    for start in range(0, n, step):
        block = data[start : start + step]
        inside = np.all((block >= lo) & (block <= hi), axis=1)
        if not np.all(inside):
            i = start + int(np.flatnonzero(~inside)[0])
            raise ValueError(
                f"X row {i} lies outside the box [lower, upper] (or is not finite); "
                "every row must satisfy lower <= x <= upper"
            )
        total += block.sum(axis=0, dtype=np.float64)

    wsum = float(width.sum())
    noise_std = sigma_opt * np.sqrt(width * wsum)
    scaling = egm_scaling(width) if wsum > 0 else np.zeros(d)
    estimate = total + noise_std * rng.standard_normal(d)
    return EllipticalResult(
        estimate=_frozen(estimate),
        noise_std=_frozen(noise_std),
        scaling=_frozen(scaling),
        sigma_opt=sigma_opt,
    )


# ----------------------------------------------------------------------------------
# Clipping


def _scaled_directions(
    x: NDArray, c: NDArray[np.float64], b: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unit vectors along ``(x_i - c) * b`` and ``log2 ||(x_i - c) * b||``, without overflow.

    Used only for rows (of the 2-d ``x``) whose squared scaled norm is not
    representable; every such row differs from ``c``.
    """
    h = 0.5 * np.asarray(x, dtype=np.float64) - 0.5 * c  # cannot overflow
    with np.errstate(divide="ignore"):
        e = np.log2(np.abs(h)) + np.log2(b)  # -inf where h == 0
    top = e.max(axis=1, keepdims=True)
    v = np.sign(h) * np.exp2(e - top)  # largest entry of each row is +-1
    length = np.linalg.norm(v, axis=1, keepdims=True)
    return v / length, (top + np.log2(length) + 1.0)[:, 0]


class _Work:
    """Per-call constants and reusable buffers of the blocked clipping loop."""

    def __init__(self, c: NDArray[np.float64], b: NDArray[np.float64], radius: float, rows: int) -> None:
        self.c = c
        self.b = b
        self.radius = radius
        self.r2 = radius * radius
        self.log2_radius = math.log2(radius) if radius > 0 else -math.inf
        # fast path: square b (finite entries in a tame range); else scale rows first
        self.scaled = not (float(b.min()) >= _TAME_SCALING[0] and float(b.max()) <= _TAME_SCALING[1])
        self.b2 = None if self.scaled else b * b
        self.buf = np.empty((rows, c.size))
        self.sq = np.empty(rows)
        self.ones = np.ones(rows)


def _clip_block(
    block: NDArray, w: _Work, start: int, *, rows_out: bool = False
) -> tuple[NDArray[np.float64], int]:
    """Clip the rows of one block; return (sum of the clipped rows, number clipped).

    Rows are returned in the units of the accumulator: ``(x - c) * b`` in the
    scaled path, ``x - c`` in the fast path.  With ``rows_out`` the block is
    always finished row by row and the first return value is the buffer of
    clipped rows (a view, overwritten by the next call) instead of its sum.
    """
    m = block.shape[0]
    y = w.buf[:m]
    s = w.sq[:m]
    np.subtract(block, w.c, out=y)
    if w.radius == 0.0:
        if not np.all(np.isfinite(y)):
            bad = ~np.all(np.isfinite(block), axis=1)
            if np.any(bad):
                raise _bad_row("X", start, np.flatnonzero(bad))
        clipped = int(np.count_nonzero(np.any(y != 0, axis=1)))
        y[...] = 0.0
        return (y if rows_out else np.zeros(w.c.size)), clipped
    if w.scaled:
        np.multiply(y, w.b, out=y)
        part = w.ones[:m] @ y
        np.einsum("ij,ij->i", y, y, out=s)
    else:
        part = w.ones[:m] @ y
        np.multiply(y, y, out=y)
        np.dot(y, w.b2, out=s)
    bad = ~np.isfinite(s)  # NaN or inf in X, or an overflowing norm
    over = s > w.r2
    if not (rows_out or np.any(over) or np.any(bad)):
        return part, 0
    bad_rows = np.flatnonzero(bad)
    if bad_rows.size:
        nonfinite = ~np.all(np.isfinite(block[bad_rows]), axis=1)
        if np.any(nonfinite):
            raise _bad_row("X", start, bad_rows[nonfinite])
    # finish this block exactly: rebuild the rows, then scale the clipped ones
    np.subtract(block, w.c, out=y)
    if w.scaled:
        np.multiply(y, w.b, out=y)
    idx = np.flatnonzero(over & ~bad)
    y[idx] *= (w.radius / np.sqrt(s[idx]))[:, None]
    clipped = int(idx.size)
    if bad_rows.size:
        unit, log2_norm = _scaled_directions(block[bad_rows], w.c, w.b)
        cut = log2_norm > w.log2_radius
        y[bad_rows[cut]] = w.radius * unit[cut] if w.scaled else w.radius * unit[cut] / w.b
        clipped += int(np.count_nonzero(cut))
        kept = bad_rows[~cut]
        if kept.size and not np.all(np.isfinite(y[kept])):
            raise ValueError(
                f"X row {start + int(kept[0])} is too large to be summed without "
                "clipping; use a smaller radius or rescale the data"
            )
    return (y if rows_out else w.ones[:m] @ y), clipped


def _clip_sum(
    data: NDArray,
    c: NDArray[np.float64],
    b: NDArray[np.float64],
    radius: float,
) -> tuple[NDArray[np.float64], int]:
    """``n c + (1/b) sum_i clip((x_i - c) b)`` and the number of clipped rows.

    Columns with ``b_j = inf`` are constant coordinates: they are not read
    into the norm and their sum is ``n c_j``.

    Fast path (every finite ``b_j`` in ``[1e-50, 1e50]``): per block,
    ``y = x - c``, ``sum y`` and ``||y * b||^2 = (y * y) @ b^2`` by BLAS;
    otherwise ``y = (x - c) * b`` is formed first so that no square of an
    extreme ``b_j`` is taken.  A block holding a clipped, overflowing or
    non-finite row is recomputed from ``X``: the fast sums are never corrected
    by subtraction, which could cancel catastrophically for a row far outside
    the ball.
    """
    n, d = data.shape
    keep = np.isfinite(b)
    all_kept = bool(np.all(keep))
    total = n * c
    if not np.any(keep):
        return total, 0
    step = _block_rows(int(np.count_nonzero(keep)))
    w = _Work(c[keep], b[keep], radius, min(step, n))
    acc = np.zeros(w.c.size)
    clipped = 0
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, n, step):
            block = data[start : start + step]
            if not all_kept:
                rest = block[:, ~keep]
                if not np.all(np.isfinite(rest)):
                    raise _bad_row("X", start, np.flatnonzero(~np.all(np.isfinite(rest), axis=1)))
                block = block[:, keep]
            part, k = _clip_block(block, w, start)
            acc += part
            clipped += k
    if not np.all(np.isfinite(acc)):
        raise ValueError("the clipped sum overflows; use a smaller radius or rescale the data")
    total[keep] += acc / w.b if w.scaled else acc
    return total, clipped


def _clip_rows(
    data: NDArray, c: NDArray[np.float64], b: NDArray[np.float64], radius: float
) -> tuple[NDArray[np.float64], int]:
    """The clipped scaled rows ``clip((x_i - c) * b)`` of a small array (for tests).

    Runs the same block code as :func:`clipped_sum` (one block, finished row by
    row); every ``b_j`` must be finite.
    """
    w = _Work(c, b, radius, data.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        y, k = _clip_block(data, w, 0, rows_out=True)
        out = y.copy() if w.scaled else y * b
    return out, k


def _check_radius(radius: object) -> float:
    if isinstance(radius, (float, int, np.floating, np.integer)) and not isinstance(radius, bool):
        r = float(radius)
        if r == math.inf:
            return r
    r = check_real("radius", radius, low=0.0)
    if 0 < r < _MIN_RADIUS:
        raise ValueError(f"radius must be 0 or in [{_MIN_RADIUS!r}, inf], got {radius!r}")
    return r


def _check_scaling_vector(value: ArrayLike, d: int) -> NDArray[np.float64]:
    b = as_float_array("scaling", value)
    if b.shape != (d,):
        raise ValueError(f"scaling must have shape ({d},) to match X, got {b.shape}")
    bad = np.isnan(b) | ~(b > 0)
    if np.any(bad):
        raise ValueError(f"scaling must be in (0, inf] everywhere, got {float(b[bad][0])!r}")
    return b


@overflow_guard
def clipped_sum(
    X: ArrayLike,
    center: ArrayLike,
    radius: float,
    scaling: ArrayLike,
) -> tuple[NDArray[np.float64], int]:
    """Sum of the rows after clipping them to an ellipsoid around ``center``.

    Each row is mapped to the scaled space ``y = (x - center) * b``, clipped
    to the ball of radius ``C`` (``y * min(1, C / ||y||)``), mapped back by
    ``1 / b`` and shifted back by ``center``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, finite; ``float32`` or ``float64`` (accumulated in ``float64``).
    center : array_like, shape (d,)
        Centre of the clipping ellipsoid (public), finite.
    radius : float
        Clipping radius ``C`` in the scaled space: ``0``, or in
        ``[1e-50, inf]`` (``inf`` means no clipping).
    scaling : array_like, shape (d,)
        Scaling ``b`` with entries in ``(0, inf]``.  A coordinate with
        ``b_j = inf`` is a known constant (``sigma_j = 0`` in Lemma 4.1): it
        does not enter the norm and its sum is ``n * center_j``.

    Returns
    -------
    total : numpy.ndarray, shape (d,)
        ``n * center + (1 / b) * sum_i clip((x_i - center) * b)``.
    n_clipped : int
        Number of rows with ``||(x_i - center) * b|| > C``.

    Raises
    ------
    ValueError
        On non-finite data or centre, a radius or scaling out of range, or
        shapes that do not match.

    Notes
    -----
    Replacing one row changes the scaled sum ``sum_i clip(y_i)`` by at most
    ``2 C``, whatever the rows: this is the sensitivity used by Algorithm 3.
    With no clipping the result is the plain row sum (up to rounding).  The
    study's Algorithm 3 adds ``mu_hat`` inside the scaled space and then
    multiplies by ``1 / b``, which returns ``(1/b) * (sum clip(y) + n mu_hat)``
    instead; this function adds the centre after unscaling.

    Rows are processed in blocks; rows whose scaled norm overflows are clipped
    exactly through a logarithmic computation.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0], [100.0, 2.0]])
    >>> total, k = clipped_sum(X, [2.0, 3.0], np.inf, [1.0, 1.0])
    >>> print(total, k)
    [104.   8.] 0
    >>> total, k = clipped_sum(X, [2.0, 3.0], 5.0, [1.0, 2.0])
    >>> print(np.round(total, 4), k)
    [10.999  8.949] 1
    """
    data = _as_data(X)
    n, d = data.shape
    c = _vector("center", center, d)
    r = _check_radius(radius)
    b = _check_scaling_vector(scaling, d)
    total, k = _clip_sum(data, c, b, r)
    return total, k


# ----------------------------------------------------------------------------------
# Algorithm 3


@overflow_guard(check_result=False)
def gaussian_data_setup(
    sigmas: ArrayLike,
    *,
    n: int,
    epsilon: float,
    delta: float,
    clip_probability: float | None = None,
) -> GaussianDataSetup:
    """Precompute the data-independent part of :func:`gaussian_data_mechanism`.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Public standard deviations ``>= 0``, at least one positive.
    n : int
        Number of rows of the data sets the setup will be used on, ``>= 1``.
    epsilon, delta : float
        Privacy parameters (as for :func:`egmlib.privacy.analytic_sigma`).
    clip_probability : float, optional
        Probability ``p`` in ``(0, 1]`` that a row drawn from the model is
        clipped; default ``1 / n``.

    Returns
    -------
    GaussianDataSetup
        ``b``, ``C``, ``sigma_opt``, ``p`` and the noise standard deviations,
        exactly as :func:`gaussian_data_mechanism` computes them.

    Raises
    ------
    ValueError
        On invalid parameters (the message names the parameter).
    TypeError
        If a parameter has the wrong type.

    Examples
    --------
    >>> setup = gaussian_data_setup([4.0, 1.0], n=10_000, epsilon=1.0, delta=1e-6)
    >>> print(round(setup.radius, 4), setup.clip_probability)
    3.5131 0.0001
    >>> rng = np.random.default_rng(3)
    >>> X = rng.normal(0.0, [4.0, 1.0], size=(10_000, 2))
    >>> res = gaussian_data_mechanism(X, [4.0, 1.0], [0.0, 0.0], epsilon=1.0, delta=1e-6, rng=rng, setup=setup)
    >>> print(res.radius == setup.radius)
    True
    """
    rows = check_int("n", n, low=1)
    sig = check_array("sigmas", sigmas, nonnegative=True)
    if clip_probability is None:
        p = 1.0 / rows
    else:
        p = check_probability("clip_probability", clip_probability, include_one=True)
    sigma_opt = float(analytic_sigma(epsilon, delta, 1.0))
    eps = float(epsilon)
    dlt = float(delta)
    b = gaussian_data_scaling(sig)
    radius = float(clip_radius(sig, b, p))
    # 2 C sigma_opt / b_j = 2 C sigma_opt sqrt(sigma_j sum(sigma)), 0 where sigma_j = 0
    noise_std = 2.0 * radius * sigma_opt * np.sqrt(sig) * math.sqrt(float(sig.sum()))
    if not np.all(np.isfinite(noise_std)):
        raise ValueError(
            "sigmas are too large: the noise standard deviation overflows; rescale the data and sigmas "
            "(sigma_j * sum(sigmas) must stay below about 1e300)"
        )
    return GaussianDataSetup(
        sigmas=_frozen(sig.copy()),
        n=rows,
        epsilon=eps,
        delta=dlt,
        clip_probability=p,
        scaling=_frozen(b),
        radius=radius,
        sigma_opt=sigma_opt,
        noise_std=_frozen(noise_std),
        _token=_SETUP_TOKEN,
    )


def _check_setup(
    setup: object, sigmas: ArrayLike, n: int, d: int, epsilon: float, delta: float, clip_probability: float | None
) -> GaussianDataSetup:
    """``setup`` if it was made by :func:`gaussian_data_setup` for exactly this call."""
    if not isinstance(setup, GaussianDataSetup):
        raise TypeError(f"setup must be a GaussianDataSetup made by gaussian_data_setup, got {type(setup).__name__}")
    if setup._token is not _SETUP_TOKEN:
        raise ValueError("setup must be made by gaussian_data_setup, not constructed by hand")
    sig = _vector("sigmas", sigmas, d, nonnegative=True)
    if setup.sigmas.shape != sig.shape or not np.array_equal(setup.sigmas, sig):
        raise ValueError("setup does not match the call: it was made for different sigmas")
    eps = check_real("epsilon", epsilon)
    dlt = check_real("delta", delta)
    if eps != setup.epsilon or dlt != setup.delta:
        raise ValueError(
            f"setup does not match the call: it was made for epsilon={setup.epsilon!r}, delta={setup.delta!r}, "
            f"got epsilon={eps!r}, delta={dlt!r}"
        )
    if clip_probability is None:
        if n != setup.n or setup.clip_probability != 1.0 / n:
            raise ValueError(
                f"setup does not match the call: it was made for n={setup.n} rows with clip_probability="
                f"{setup.clip_probability!r}, X has {n} rows and clip_probability defaults to 1/n"
            )
    elif check_probability("clip_probability", clip_probability, include_one=True) != setup.clip_probability:
        raise ValueError(
            f"setup does not match the call: it was made for clip_probability={setup.clip_probability!r}, "
            f"got {clip_probability!r}"
        )
    return setup


@overflow_guard(check_result=False)
def gaussian_data_mechanism(
    X: ArrayLike,
    sigmas: ArrayLike,
    center: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    clip_probability: float | None = None,
    rng: np.random.Generator,
    setup: GaussianDataSetup | None = None,
) -> GaussianDataResult:
    """Private row sum of Gaussian data (Algorithm 3 with the scaling of Lemma 4.1).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, finite; rows are modelled as ``N(mu, diag sigma^2)`` but privacy
        holds for any finite rows.
    sigmas : array_like, shape (d,)
        Public standard deviations ``>= 0``, at least one positive.  A zero
        sigma marks a constant coordinate: it is released as
        ``n * center_j`` without noise and not read from ``X``.
    center : array_like, shape (d,)
        Public estimate ``mu_hat`` of the mean (e.g. obtained privately).
    epsilon, delta : float
        Privacy parameters (keyword-only).
    clip_probability : float, optional
        Probability ``p`` in ``(0, 1]`` that a row drawn from the model is
        clipped; default ``1 / n``.
    rng : numpy.random.Generator
        Source of the noise (keyword-only).
    setup : GaussianDataSetup, optional
        The result of :func:`gaussian_data_setup` for these ``sigmas``,
        ``epsilon``, ``delta`` and clipping probability (keyword-only): the
        radius and ``sigma_opt`` are then taken from it instead of being
        recomputed.  The result is the same as without a setup.

    Returns
    -------
    GaussianDataResult
        The estimate, the radius ``C``, the noise standard deviations
        ``2 C sigma_opt / b_j``, the number of clipped rows (not private),
        ``b``, ``sigma_opt`` and ``p``.

    Raises
    ------
    ValueError
        On invalid parameters or non-finite data; if ``setup`` was made for
        other sigmas, ``epsilon``, ``delta``, or another clipping probability
        (``1 / n`` when not given), or not by :func:`gaussian_data_setup`.
    TypeError
        If ``X`` is not real, ``rng`` is not a Generator or ``setup`` is not a
        :class:`GaussianDataSetup`.

    Warnings
    --------
    Not a secure sampler: float64 noise from the caller's generator, reproducible
    but exposed to floating-point attacks; for deployment use a secure sampler
    (e.g. OpenDP's), see the module docstring.

    Notes
    -----
    ``b_j = 1 / sqrt(sigma_j sum(sigma))`` (Lemma 4.1); ``C`` is the radius
    with ``P(||(x - mu) * b|| > C) = p`` under the model
    (:func:`egmlib.scaling.clip_radius`), computed from public inputs only.
    The clipped scaled sum has sensitivity ``2 C``, so noise
    ``N(0, (2 C sigma_opt)^2 I)`` in the scaled space gives
    ``(epsilon, delta)``-DP; unscaling multiplies coordinate ``j`` by
    ``1 / b_j``.  Expected squared noise: ``(2 C sigma_opt)^2 (sum sigma)^2``.

    References
    ----------
    poulsen2023, balle2018

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> sigmas = np.array([4.0, 1.0])
    >>> X = rng.normal(0.0, sigmas, size=(10_000, 2))
    >>> res = gaussian_data_mechanism(X, sigmas, [0.0, 0.0], epsilon=1.0, delta=1e-6, rng=rng)
    >>> print(round(res.radius, 4), res.clip_probability)
    3.5131 0.0001
    """
    data = _as_data(X)
    n, d = data.shape
    if setup is None:
        sig = _vector("sigmas", sigmas, d, nonnegative=True)
        setup = gaussian_data_setup(sig, n=n, epsilon=epsilon, delta=delta, clip_probability=clip_probability)
    else:
        setup = _check_setup(setup, sigmas, n, d, epsilon, delta, clip_probability)
    c = _vector("center", center, d)
    check_rng("rng", rng)

    total, k = _clip_sum(data, c, setup.scaling, setup.radius)
    estimate = total + setup.noise_std * rng.standard_normal(d)
    return GaussianDataResult(
        estimate=_frozen(estimate),
        radius=setup.radius,
        noise_std=setup.noise_std,
        n_clipped=k,
        scaling=setup.scaling,
        sigma_opt=setup.sigma_opt,
        clip_probability=setup.clip_probability,
    )
