"""Huang, Liang & Yi (2021): the shifted clipped-mean estimator ("instance-optimal").

Huang, Liang and Yi, "Instance-optimal mean estimation under differential privacy"
(NeurIPS 2021, arXiv:2106.00463), estimate a mean in the central model in three
private steps, all Gaussian mechanisms (budgets in zCDP):

1. a random rotation ``x -> HD x`` (normalised Walsh-Hadamard matrix ``H`` times a
   diagonal of random signs ``D``; applied three times, as in the authors' code), so
   that every coordinate of the rotated rows carries a similar share of their spread;
2. per coordinate of the rotated rows, a private median (``PrivQuant``: a binary search
   of ``T`` rounds on a public interval, each round a noisy count of the values at most
   the midpoint); the vector ``c`` of these medians is the shift;
3. the clipped mean of the shifted rows ``HD x - c``: a private quantile of their norms
   (the rank ``m = n - 2 sqrt(D / (2 rho_2)) - sqrt(T / (2 rho_1))`` of the authors'
   code) is the clipping threshold ``C``; the rows are clipped to the ball of radius
   ``C``, averaged, and ``N(0, (2C / (n sqrt(2 rho_2)))^2 I)`` noise is added; the
   result is shifted back by ``c`` and rotated back.

This module follows the authors' implementation (their supplementary code, function
``random_rotation_mean`` and its helpers): budget shares 1/4 for the shift, then 1/4 and
3/4 of the rest for the threshold and the mean, ``T = 10`` rounds per binary search, the
median at rank ``n/2``, three rotations.  Where it departs, and why:

* dimension: ``H`` needs a power of two; rows are padded with zeros to ``D``, the next
  power of two ``>= d`` (the paper's rotation is defined for any ``d``; the padding is
  the usual way to apply a Hadamard rotation, and it is public);
* the search intervals: the authors search each rotated coordinate on
  ``[-u/sqrt(d), u/sqrt(d)]`` for data in ``[0, u]^d``; here the data come with a public
  centre ``m`` and radius ``R`` (``||mu - m|| <= R``), every rotated coordinate of
  ``mu - m`` lies in ``[-R, R]``, and that is the interval searched; the norms of the
  shifted rows are searched on ``[0, norm_bound]``, by default ``2 (1 + sqrt(D)) R``
  (``||HD(mu - m) - c|| <= (1 + sqrt(D)) R``; the factor 2 leaves room for the spread);
* noise comes from a ``numpy.random.Generator`` (keyword-only), not the global state,
  and rows are processed in blocks.

Privacy: neighbouring data sets differ in one row (replacement).  A round of the
median search releases ``D`` counts, each of sensitivity 1, with noise of variance
``T D / (2 rho_c)``: it is ``rho_c / T``-zCDP, and the ``T`` rounds ``rho_c``-zCDP;
the norm quantile is ``rho_1``-zCDP the same way; the clipped mean has sensitivity
``2C/n`` and noise ``2C / (n sqrt(2 rho_2))``: ``rho_2``-zCDP.  All are Gaussian
mechanisms, so the whole is exactly one Gaussian mechanism of total
``rho = rho_c + rho_1 + rho_2`` (see :func:`egmlib.privacy.gaussian_rho` for the exact
``(epsilon, delta)``).

Memory: the rotated rows (``n x D`` float64) are held once; the rotation and all
passes over the rows work on blocks of about 16 MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import (
    check_count,
    check_array,
    check_bool,
    check_positive,
    check_probability,
    check_real,
    check_rng,
    overflow_guard,
)

__all__ = [
    "HLYResult",
    "HLYErrors",
    "padded_dimension",
    "random_signs",
    "rotate",
    "rotate_back",
    "private_quantiles",
    "clipped_mean",
    "hly_mean",
    "simulate_hly",
]

_BLOCK_ELEMENTS = 1 << 21      # float64 elements per temporary block (16 MB)
_DENSE_MAX = 1024               # rotate by a dense D x D product up to this D
_ROTATIONS = 3                 # the authors' code: random_hadamard(d, t=3)
_ROUNDS = 10                   # the authors' code: T = 10
_CENTER_SHARE = 0.25           # the authors' code: prop = 0.25
_QUANTILE_SHARE = 0.25         # the authors' code: p1 = 0.25 p (of what the shift leaves)


_count = check_count  # egmlib._validation: name, accepted range, value


@overflow_guard
def padded_dimension(d: int) -> int:
    """The smallest power of two ``D >= d`` (the dimension of the rotated rows).

    Parameters
    ----------
    d : int
        The dimension of the data, an integer ``>= 1``.

    Returns
    -------
    int
        ``D = 2^ceil(log2 d)``; rows are zero-padded to ``D`` coordinates before the
        Hadamard rotation.

    Raises
    ------
    ValueError
        If ``d`` is not an integer ``>= 1``.

    Examples
    --------
    >>> [padded_dimension(d) for d in (1, 10, 100, 1000, 1024)]
    [1, 16, 128, 1024, 1024]
    """
    dd = _count("d", d)
    return 1 << (dd - 1).bit_length()


@overflow_guard
def random_signs(D: int, *, rng: np.random.Generator, rotations: int = _ROTATIONS) -> NDArray[np.float64]:
    """The random sign diagonals of ``rotations`` Hadamard rotations, shape ``(rotations, D)``.

    Parameters
    ----------
    D : int
        The padded dimension, a power of two (:func:`padded_dimension`).
    rng : numpy.random.Generator
        Source of the signs (keyword-only).
    rotations : int, optional
        Number of rotations ``>= 1`` (the authors use 3).

    Returns
    -------
    numpy.ndarray, shape (rotations, D)
        Independent uniform signs +-1.

    Examples
    --------
    >>> random_signs(4, rng=np.random.default_rng(0), rotations=2).shape
    (2, 4)
    """
    DD = _count("D", D)
    if DD & (DD - 1):
        raise ValueError(f"D must be a power of two, got {DD}")
    r = _count("rotations", rotations)
    check_rng("rng", rng)
    return np.where(rng.random((r, DD)) < 0.5, -1.0, 1.0)


def _fwht(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Normalised Walsh-Hadamard transform (Sylvester order) of each row of ``a``."""
    r, D = a.shape
    h = 1
    while h < D:
        v = a.reshape(r, D // (2 * h), 2, h)
        x = v[:, :, 0, :].copy()
        v[:, :, 0, :] += v[:, :, 1, :]
        np.subtract(x, v[:, :, 1, :], out=v[:, :, 1, :])
        h *= 2
    a /= math.sqrt(D)
    return a


def _signs(signs: ArrayLike, D: int, other: str = "Y") -> NDArray[np.float64]:
    s = check_array("signs", signs, ndim=2)
    if s.shape[1] != D or not np.all(np.abs(s) == 1.0):
        raise ValueError(
            f"signs must have shape (rotations, {D}) with entries +-1 ({D} the length of the rows of {other}), "
            f"got shape {s.shape}"
        )
    return s


def _rows(name: str, Y: object) -> NDArray[np.float64]:
    """A finite, non-empty 2-dimensional numpy array (not copied when already float64)."""
    if not isinstance(Y, np.ndarray) or Y.ndim != 2:
        raise TypeError(f"{name} must be a 2-dimensional numpy array")
    return check_array(name, Y, ndim=2)


@overflow_guard
def rotate(Y: NDArray[np.float64], signs: ArrayLike) -> NDArray[np.float64]:
    """Rotate the rows of ``Y`` (shape ``(n, D)``) in place: ``y -> H D_1 H D_2 ... H D_t y``.

    The matrix is the authors' ``(H D_1)(H D_2)...(H D_t)`` with ``H`` the normalised
    Sylvester Hadamard matrix (``scipy.linalg.hadamard(D) / sqrt(D)``).

    Parameters
    ----------
    Y : numpy.ndarray, shape (n, D), float64
        Rows to rotate; overwritten with the result.
    signs : array_like, shape (rotations, D)
        The sign diagonals from :func:`random_signs`.

    Returns
    -------
    numpy.ndarray, shape (n, D)
        ``Y`` itself, rotated.

    Examples
    --------
    >>> from scipy.linalg import hadamard
    >>> s = random_signs(8, rng=np.random.default_rng(1))
    >>> Y = np.eye(8)
    >>> M = np.eye(8)
    >>> for k in range(3):
    ...     M = M @ (hadamard(8) / np.sqrt(8)) @ np.diag(s[k])
    >>> print(np.allclose(rotate(Y.copy(), s), (M @ np.eye(8)).T))
    True
    """
    if not isinstance(Y, np.ndarray) or Y.ndim != 2 or Y.dtype != np.float64:
        raise TypeError("Y must be a 2-dimensional float64 numpy array (rotated in place)")
    n, D = Y.shape
    s = _signs(signs, D)
    rows = max(1, _BLOCK_ELEMENTS // D)
    if D <= _DENSE_MAX:
        # small D: one dense product per block (the butterflies of a short
        # transform cost more in numpy overhead than the D^2 flops)
        M = np.eye(D)
        for k in range(s.shape[0] - 1, -1, -1):
            M *= s[k]
            _fwht(M)
        for start in range(0, n, rows):
            Y[start:start + rows] = Y[start:start + rows] @ M
        return Y
    for start in range(0, n, rows):
        block = Y[start:start + rows]
        for k in range(s.shape[0] - 1, -1, -1):
            block *= s[k]
            _fwht(block)
    return Y


@overflow_guard
def rotate_back(v: ArrayLike, signs: ArrayLike) -> NDArray[np.float64]:
    """The inverse rotation of one vector ``v`` (shape ``(D,)``): the transpose of :func:`rotate`.

    Parameters
    ----------
    v : array_like, shape (D,)
        A vector in the rotated coordinates, ``D`` a power of two.
    signs : array_like, shape (rotations, D)
        The sign diagonals used by :func:`rotate`.

    Returns
    -------
    numpy.ndarray, shape (D,)
        ``v`` in the original coordinates (a new array).

    Examples
    --------
    >>> s = random_signs(16, rng=np.random.default_rng(2))
    >>> x = np.arange(16.0)
    >>> print(np.allclose(rotate_back(rotate(x[None].copy(), s)[0], s), x))
    True
    """
    a = check_array("v", v).copy()[None]
    D = a.shape[1]
    if D & (D - 1):
        raise ValueError(f"v must have a power-of-two length (the padded dimension D), got {D}")
    s = _signs(signs, D, "v")
    for k in range(s.shape[0]):
        _fwht(a)
        a *= s[k]
    return a[0]


@overflow_guard
def private_quantiles(
    Y: NDArray[np.float64],
    rank: float,
    low: float,
    high: float,
    rho: float,
    rounds: int,
    *,
    rng: np.random.Generator,
    norms: bool = False,
) -> NDArray[np.float64]:
    """PrivQuant on every column of ``Y``: a private value near the ``rank``-th smallest.

    The authors' ``quantile_binary_search``, vectorised over columns: ``rounds``
    halvings of ``[low, high]``; in each, the number of values ``<= mid`` gets
    ``N(0, rounds * k / (2 rho))`` noise (``k`` the number of columns searched at once)
    and the search moves right when the noisy count is ``<= rank``.  The ``k`` counts of
    one round have sensitivity ``sqrt(k)`` in l2, so the whole search is ``rho``-zCDP.

    Parameters
    ----------
    Y : numpy.ndarray, shape (n, k)
        The values, one search per column.  With ``norms=True``, the search is on the
        l2 norms of the rows (one column, ``k = 1``).
    rank : float
        Target rank (the authors' ``m``).
    low, high : float
        Public search interval, ``low < high``.
    rho : float
        zCDP budget of the whole search (all columns, all rounds), ``> 0``.
    rounds : int
        Number of halvings ``T >= 1``.
    rng : numpy.random.Generator
        Source of the noise (keyword-only).
    norms : bool
        Search on the row norms of ``Y`` instead of its columns.

    Returns
    -------
    numpy.ndarray, shape (k,)
        The midpoints of the final intervals.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Y = rng.standard_normal((20000, 2)) + [1.0, -2.0]
    >>> print(np.round(private_quantiles(Y, 10000, -8, 8, 1.0, 12, rng=rng), 1))
    [ 1. -2.]
    """
    Y = _rows("Y", Y)
    rk = check_real("rank", rank)
    lo = check_real("low", low)
    hi = check_real("high", high)
    if not lo < hi:
        raise ValueError(f"low must be < high, got low={low!r}, high={high!r}")
    r = check_positive("rho", rho)
    T = _count("rounds", rounds)
    check_rng("rng", rng)
    norms = check_bool("norms", norms)
    n, D = Y.shape
    k = 1 if norms else D
    left, right = np.full(k, lo), np.full(k, hi)
    sd = math.sqrt(T * k / (2.0 * r))
    rows = max(1, _BLOCK_ELEMENTS // D)
    values = None
    if norms:
        values = np.empty((n, 1))
        for start in range(0, n, rows):
            b = Y[start:start + rows]
            values[start:start + rows, 0] = np.sqrt(np.einsum("ij,ij->i", b, b))
        source, rows = values, max(1, _BLOCK_ELEMENTS)
    else:
        source = Y
    for _ in range(T):
        mid = (left + right) / 2.0
        count = np.zeros(k)
        for start in range(0, n, rows):
            count += np.count_nonzero(source[start:start + rows] <= mid, axis=0)
        noisy = count + rng.standard_normal(k) * sd
        move = noisy <= rk
        left = np.where(move, mid, left)
        right = np.where(move, right, mid)
    return (left + right) / 2.0


@overflow_guard
def clipped_mean(Y: NDArray[np.float64], threshold: float) -> tuple[NDArray[np.float64], int]:
    """Mean of the rows of ``Y`` each clipped to the ball of radius ``threshold`` (step 3, before noise).

    Replacing one row moves it by at most ``2 threshold / n`` in l2.

    Returns
    -------
    (numpy.ndarray of shape (D,), int)
        The clipped mean and the number of rows with norm above ``threshold``.

    Parameters
    ----------
    Y : numpy.ndarray, shape (n, D)
        Finite rows (already shifted by the private centre).
    threshold : float
        Clipping radius ``>= 0``.

    Returns
    -------
    mean : numpy.ndarray, shape (D,)
        The mean of the clipped rows.
    clipped : int
        How many rows were clipped (not private).

    Examples
    --------
    >>> m, k = clipped_mean(np.array([[3.0, 4.0], [0.0, 1.0]]), 2.0)
    >>> print(m, k)
    [0.6 1.3] 1
    """
    Y = _rows("Y", Y)
    C = check_real("threshold", threshold, low=0.0)
    n, D = Y.shape
    rows = max(1, _BLOCK_ELEMENTS // D)
    total = np.zeros(D)
    clipped = 0
    for start in range(0, n, rows):
        b = Y[start:start + rows]
        norm = np.sqrt(np.einsum("ij,ij->i", b, b))
        over = norm > C
        factor = np.ones(norm.shape)
        factor[over] = C / norm[over]
        clipped += int(np.count_nonzero(over))
        total += factor @ b
    return total / n, clipped


@dataclass(frozen=True)
class HLYResult:
    """Output of :func:`hly_mean`.

    Attributes
    ----------
    mean : numpy.ndarray, shape (d,)
        The private mean.
    shift : numpy.ndarray, shape (D,)
        The private per-coordinate medians of the rotated rows (step 2).
    threshold : float
        The private clipping threshold ``C`` (step 3).
    rank : float
        The rank ``m`` of the norm quantile.
    noise_sd : float
        Standard deviation of the noise of the clipped mean, per rotated coordinate.
    clipped : int
        Number of rows whose norm exceeded ``C`` (not private; for diagnostics).
    signs : numpy.ndarray, shape (rotations, D)
        The random signs of the rotation (data-independent).
    """

    mean: NDArray[np.float64]
    shift: NDArray[np.float64]
    threshold: float
    rank: float
    noise_sd: float
    clipped: int
    signs: NDArray[np.float64]


def _budgets(rho: float, center_share: float, quantile_share: float) -> tuple[float, float, float]:
    rc = center_share * rho
    rest = rho - rc
    return rc, quantile_share * rest, rest - quantile_share * rest


def _core(
    Y: NDArray[np.float64],
    d: int,
    radius: float,
    rho: float,
    rng: np.random.Generator,
    center_share: float,
    quantile_share: float,
    rounds: int,
    norm_bound: float | None,
    noise_margin: float = 2.0,
    count_margin: float = 1.0,
) -> tuple[HLYResult, NDArray[np.float64]]:
    """Steps 1-3 on the padded, centred rows Y (n, D), rotated in place.

    Returns the result (mean in centred coordinates) and the rotated-space sum noise."""
    n, D = Y.shape
    rc, r1, r2 = _budgets(rho, center_share, quantile_share)
    signs = random_signs(D, rng=rng)
    rotate(Y, signs)
    shift = private_quantiles(Y, 0.5 * n, -radius, radius, rc, rounds, rng=rng)
    rows = max(1, _BLOCK_ELEMENTS // D)
    for start in range(0, n, rows):
        Y[start:start + rows] -= shift
    u = 2.0 * (1.0 + math.sqrt(D)) * radius if norm_bound is None else float(norm_bound)
    m = (n - noise_margin * math.sqrt(D / (2.0 * r2))
         - count_margin * math.sqrt(rounds / (2.0 * r1)))
    m = float(int(m))                              # the authors' int(...)
    C = float(private_quantiles(Y, m, 0.0, u, r1, rounds, rng=rng, norms=True)[0])
    mean, clipped = clipped_mean(Y, C)
    sd = 2.0 * C / (n * math.sqrt(2.0 * r2))
    noisy = mean + rng.standard_normal(D) * sd
    back = rotate_back(noisy + shift, signs)[:d]
    return HLYResult(back, shift, C, m, sd, clipped, signs), signs


def _norm_bound(norm_bound: float | None, radius: float, D: int) -> float:
    """The upper end of the norm search: ``norm_bound``, by default ``2 (1 + sqrt(D)) radius``."""
    if norm_bound is not None:
        return check_positive("norm_bound", norm_bound)
    factor = 2.0 * (1.0 + math.sqrt(D))
    top = np.finfo(np.float64).max / factor
    if not radius <= top:
        raise ValueError(
            f"radius must be in (0, {top:.6g}] for the padded dimension D = {D} (the default norm_bound "
            f"2 (1 + sqrt(D)) radius must be finite), got {radius!r}"
        )
    return factor * radius


def _check_params(rho, center_share, quantile_share, rounds, norm_bound, radius):
    r = check_positive("rho", rho)
    cs = check_probability("center_share", center_share)
    qs = check_probability("quantile_share", quantile_share)
    T = _count("rounds", rounds)
    R = check_positive("radius", radius)
    if norm_bound is not None:
        check_positive("norm_bound", norm_bound)
    return r, cs, qs, T, R


@overflow_guard
def hly_mean(
    X: ArrayLike,
    center: ArrayLike,
    radius: float,
    rho: float,
    *,
    rng: np.random.Generator,
    center_share: float = _CENTER_SHARE,
    quantile_share: float = _QUANTILE_SHARE,
    rounds: int = _ROUNDS,
    norm_bound: float | None = None,
    noise_margin: float = 2.0,
    count_margin: float = 1.0,
) -> HLYResult:
    """Huang, Liang & Yi's shifted clipped mean of the rows of ``X``, ``rho``-zCDP.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The rows, finite, ``n >= 2``.
    center : array_like, shape (d,)
        Public centre ``m`` of the prior ball.
    radius : float
        Public radius ``R > 0`` with ``||mu - m|| <= R``: every rotated coordinate of
        the centred mean lies in ``[-R, R]``, the interval of the median search.
    rho : float
        Total zCDP budget, ``> 0``.
    rng : numpy.random.Generator
        Source of the rotation and of the noise (keyword-only).
    center_share, quantile_share : float
        The authors' budget split (defaults 1/4 and 1/4 of the rest).
    rounds : int
        Binary-search rounds ``T`` (default 10, the authors').
    norm_bound : float, optional
        Upper end of the norm search; default ``2 (1 + sqrt(D)) R``.
    noise_margin, count_margin : float, optional
        The rank of the norm quantile is
        ``m = n - noise_margin sqrt(D / (2 rho_2)) - count_margin sqrt(T / (2 rho_1))``
        (both ``>= 0``): ``noise_margin`` counts standard deviations of the norm of
        the mean's noise (times ``n / (2C)``), ``count_margin`` standard deviations of
        one round's count noise.  Defaults 2 and 1 are Huang, Liang & Yi's code; a
        larger ``count_margin`` (the "rank margin") clips fewer rows when the noisy
        counts push the search to low ranks.

    Returns
    -------
    HLYResult

    Notes
    -----
    The "Instance optimal" (IOME) baseline of the PLAN authors
    (``quantile_binary_search/method.py``, ``random_rotation_mean`` and
    ``clipped_mean``, as called in their ``simulations/baseline_comparison.py``) is
    this function with ``center = 0``, ``radius = U / sqrt(d)`` for the universe
    ``(-U, U)`` (their search interval of the rotated coordinates),
    ``norm_bound = U``, ``rounds = 20``, ``quantile_share = 0.01`` (their
    ``p1 = 0.01 p``), ``noise_margin = 4`` and ``count_margin = 2`` (their
    ``m = n - 4 sqrt(d / (2 p2)) - 2 sqrt(T / (2 p1))``); ``d`` is a power of two
    there, so nothing is padded.  Only the random source differs.

    Raises
    ------
    ValueError, TypeError
        On invalid arguments.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((20000, 3)) + [3.0, 1.0, -2.0]
    >>> print(np.round(hly_mean(X, np.zeros(3), 10.0, 0.5, rng=rng).mean, 1))
    [ 3.  1. -2.]
    """
    data = check_array("X", X, ndim=2)
    n, d = data.shape
    if n < 2:
        raise ValueError(f"X must have at least 2 rows, got {n}")
    c = check_array("center", center)
    if c.shape != (d,):
        raise ValueError(f"center must have shape ({d},) to match X, got {c.shape}")
    r, cs, qs, T, R = _check_params(rho, center_share, quantile_share, rounds, norm_bound, radius)
    nm = check_real("noise_margin", noise_margin, low=0.0)
    cm = check_real("count_margin", count_margin, low=0.0)
    check_rng("rng", rng)
    D = padded_dimension(d)
    u = _norm_bound(norm_bound, R, D)
    Y = np.zeros((n, D))
    Y[:, :d] = data
    Y[:, :d] -= c
    res, _ = _core(Y, d, R, r, rng, cs, qs, T, u, nm, cm)
    return HLYResult(res.mean + c, res.shift, res.threshold, res.rank, res.noise_sd, res.clipped, res.signs)


@dataclass(frozen=True)
class HLYErrors:
    """Output of :func:`simulate_hly`, one entry per replicate.

    Attributes
    ----------
    sample : numpy.ndarray
        ``||estimate - sample mean||^2``.
    noise : numpy.ndarray
        ``d * noise_sd^2``: the expectation of the noise part of ``sample`` given the
        threshold (the rest is the clipping error).
    clipped : numpy.ndarray
        Rows clipped per replicate.
    threshold : numpy.ndarray
        The private clipping threshold ``C`` per replicate.
    """

    sample: NDArray[np.float64]
    noise: NDArray[np.float64]
    clipped: NDArray[np.int64]
    threshold: NDArray[np.float64] | None = None


@overflow_guard
def simulate_hly(
    sigmas: ArrayLike,
    mu: ArrayLike,
    center: ArrayLike,
    n: int,
    reps: int,
    radius: float,
    rho: float,
    *,
    rng: np.random.Generator,
    center_share: float = _CENTER_SHARE,
    quantile_share: float = _QUANTILE_SHARE,
    rounds: int = _ROUNDS,
    norm_bound: float | None = None,
    noise_margin: float = 2.0,
    count_margin: float = 1.0,
) -> HLYErrors:
    """:func:`hly_mean` on ``reps`` simulated data sets ``N(mu, diag sigma^2)``.

    One data set at a time, drawn directly into the padded array (``n x D`` float64).

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations ``>= 0`` of the simulated data.
    mu : array_like, shape (d,)
        True mean of the simulated data.
    center : array_like, shape (d,)
        Public centre of the prior ball.
    n : int
        Rows per data set, ``>= 1``.
    reps : int
        Number of data sets, ``>= 1``.
    radius : float
        Radius ``> 0`` of the public ball around ``center`` that holds ``mu``.
    rho : float
        zCDP budget ``> 0`` of one run.
    rng : numpy.random.Generator
        Source of data and noise (keyword-only).
    center_share, quantile_share, rounds, norm_bound, noise_margin, count_margin
        As in :func:`hly_mean` (same defaults).

    Returns
    -------
    HLYErrors
        Per data set: the squared error against the sample mean, the expected squared
        noise given the threshold, the number of clipped rows and the threshold.

    Examples
    --------
    >>> e = simulate_hly(np.ones(4), np.ones(4), np.zeros(4), 2000, 5, 10.0, 0.5,
    ...                  rng=np.random.default_rng(0))
    >>> e.sample.shape
    (5,)
    """
    sig = check_array("sigmas", sigmas, positive=True)
    d = sig.size
    m = check_array("mu", mu)
    if m.shape != (d,):
        raise ValueError(f"mu must have shape ({d},) to match sigmas, got {m.shape}")
    c = check_array("center", center)
    if c.shape != (d,):
        raise ValueError(f"center must have shape ({d},) to match sigmas, got {c.shape}")
    nn = _count("n", n, 2)
    rr = _count("reps", reps)
    r, cs, qs, T, R = _check_params(rho, center_share, quantile_share, rounds, norm_bound, radius)
    nm = check_real("noise_margin", noise_margin, low=0.0)
    cm = check_real("count_margin", count_margin, low=0.0)
    check_rng("rng", rng)
    D = padded_dimension(d)
    u = _norm_bound(norm_bound, R, D)
    sample, noise, clipped = np.empty(rr), np.empty(rr), np.empty(rr, dtype=np.int64)
    thresholds = np.empty(rr)
    shift = m - c
    for k in range(rr):
        Y = np.zeros((nn, D))
        Y[:, :d] = rng.standard_normal((nn, d))
        Y[:, :d] *= sig
        Y[:, :d] += shift
        xbar = Y[:, :d].mean(axis=0)
        res, _ = _core(Y, d, R, r, rng, cs, qs, T, u, nm, cm)
        thresholds[k] = res.threshold
        sample[k] = float(np.sum((res.mean - xbar) ** 2))
        noise[k] = d * res.noise_sd**2
        clipped[k] = res.clipped
        del Y
    return HLYErrors(sample, noise, clipped, thresholds)
