"""PLAN (Aumüller, Lebeda, Nelson & Pagh, PoPETs 2024): variance-aware private mean.

PLAN combines a private centre, private variances and the Elliptical Gaussian
Mechanism's variance-aware scaling; it estimates the mean of the rows of ``X`` in
four private steps:

1. **Centre.**  Every row is copied twice, shifted by ``+shift`` and ``-shift`` in
   every coordinate (the authors' preprocessing: it spreads tied values), the ``3n``
   rows are clipped to the public universe ``[low, high]``, and in every coordinate
   a private median is drawn by the exponential mechanism over the universe
   (PrivQuantile of Kaplan, Schnapp & Stemmer 2022: utility ``-|rank - 3n/2|``).
2. **Variances.**  The ``3n`` rows are shuffled (a data-independent permutation) and
   paired; per coordinate, the values ``(x - y)^2 / 2`` of the pairs (means of
   ``k_groups`` consecutive pair values) have median ``sigma_j^2`` times the median
   of a ``chi^2_k / k`` law; a private median over ``[0, (high - low)^2 / 2]``,
   divided by ``(1 - 2 / (9 k))^3`` (Wilson-Hilferty's median of ``chi^2_k / k``),
   is the variance estimate ``s_j^2``.  (Pairs of differently shifted copies add
   ``(2/3) shift^2`` to the expected pair value: small variances come out larger.)
3. **Scaling and threshold.**  The rows are centred on the private centre and scaled
   coordinate-wise by ``b_j = Delta_j^(-1/2)``, ``Delta_j = clip_sds * s_j`` plus
   (with ``regularize``) the mean of ``Delta``: the Elliptical Gaussian Mechanism's
   scaling for Gaussian data (error proportional to ``sum_j sigma_j``).  A private
   quantile of the scaled row norms at rank ``(1 - k) n``,
   ``k = (sqrt(n) + sqrt(T/2 ln(T / beta) / rho_C)) / n``, ``T = ln(high - low)``,
   searched over ``[0, sqrt(ln d ln(1/beta) ||s||_1)]``, is the clipping radius ``C``.
4. **Mean.**  The scaled rows are clipped to the ball of radius ``C``, averaged, and
   ``N(0, 2 C^2 / (rho_M n^2))`` noise is added per coordinate; the result is scaled
   back (``/ b``) and shifted back by the centre.

``scaled=False`` is the authors' PLAN-NOSCALE: step 2 is skipped, the whole budget of
the preprocessing goes to the centre, and the variances are taken as zero (floored
at ``1e-30``, as in their code).  See :func:`plan_mean` for what this does in their
code (the estimate is the private centre itself).

Budget (the authors' defaults): ``rho_P = prep_share * rho`` for steps 1-2, of which
``center_share`` for the centre (all of it when ``scaled=False``), split evenly over
the ``d`` coordinates; of the rest ``rho - rho_P``, the share ``radius_share`` is
``rho_C`` (step 3) and the remainder ``rho_M`` (step 4).

Privacy (``accounting="zcdp"``, the default): neighbouring data sets differ in one
row (replacement, the convention of the whole book).  One row of ``X`` is three of
the ``3n`` shifted rows, so it moves the rank of any value in a coordinate by at most
3, in the ``3n`` values of step 1 and in the pair values of step 2 alike (each of the
three rows is in one pair).  The exponential mechanism with utility sensitivity
``Delta_u`` and weights ``exp(epsilon u / (2 Delta_u))`` is ``epsilon``-DP and, being
``epsilon``-bounded-range, ``epsilon^2/8``-zCDP (Cesar & Rogers 2021); each median
uses ``epsilon = sqrt(8 rho_j)`` with ``Delta_u = 3`` (1 without the shifted copies),
so it is ``rho_j``-zCDP, and the ``d`` coordinates compose to ``d rho_j``.  The norm
quantile of step 3 has ``Delta_u = 1`` (given the released centre and variances, one
row is one norm): ``rho_C``-zCDP.  The clipped mean moves by at most ``2C/n`` in l2,
and its Gaussian noise makes it ``rho_M``-zCDP.  By adaptive composition of zCDP
(Bun & Steinke 2016) the whole is ``rho``-zCDP.

``accounting="published"`` calibrates every step exactly as the authors' code does
(for reproducing their data): they divide the budget of steps 1-2 by 3 for the
copies (the utility then changes by 3, which in zCDP costs the square, 9) and give
the exponential mechanism the sensitivity ``max(q, 1 - q)`` of add/remove neighbours
(``1/2`` at the median), while the mean's noise is calibrated to replacement
(``2C``).  Under replacement, steps 1-2 then spend ``(3 / (1/2))^2 / 3 = 12`` times
their nominal budget (4 times without copies) and step 3 ``1 / max(q, 1-q)^2`` times;
``PLANResult.rho_spent`` reports the total actually spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import (
    check_array,
    check_bool,
    check_int,
    check_positive,
    check_probability,
    check_real,
    check_rng,
    overflow_guard,
)

__all__ = ["PLANResult", "exponential_quantiles", "plan_mean"]

_MIN_VALUE = 1e-30      # the authors' util.constants.MIN_VALUE (floors and interval lengths)
_BLOCK_ELEMENTS = 1 << 21   # float64 elements per temporary block (16 MB)
_ACCOUNTING = ("zcdp", "published")


@overflow_guard
def exponential_quantiles(
    Y: ArrayLike,
    q: float,
    low: float,
    high: float,
    rho: float,
    *,
    rng: np.random.Generator,
    sensitivity: float = 1.0,
) -> NDArray[np.float64]:
    """Exponential-mechanism quantile (PrivQuantile) of every column of ``Y``.

    Per column with values clipped to ``[low, high]`` and sorted,
    ``low = z_0 <= z_1 <= ... <= z_m <= z_{m+1} = high``, the interval
    ``[z_i, z_{i+1}]`` (``i = 0..m``) is drawn with probability proportional to its
    length (floored at ``1e-30``) times ``exp(epsilon u_i / (2 sensitivity))``,
    ``u_i = -|i - q m|``, ``epsilon = sqrt(8 rho)``, and a point uniform in it is
    returned (Kaplan, Schnapp & Stemmer 2022; Smith 2011).

    Parameters
    ----------
    Y : array_like, shape (m, k)
        The values, one quantile per column (a 1-d array is one column).
    q : float
        Quantile in ``[0, 1]``.
    low, high : float
        Public range, ``low < high``.
    rho : float
        zCDP budget ``> 0`` of each column's draw (``epsilon = sqrt(8 rho)``).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).
    sensitivity : float, optional
        The change of the utility between neighbours, ``> 0``: 1 when neighbours
        replace one value, ``c`` when one record is ``c`` values.

    Returns
    -------
    numpy.ndarray, shape (k,)
        One private quantile per column.

    Notes
    -----
    The draw is ``epsilon``-DP when ``sensitivity`` bounds the change of ``u`` and,
    being ``epsilon``-bounded-range, ``epsilon^2 / 8 = rho``-zCDP
    (Cesar & Rogers 2021).  The sampling uses the Gumbel-max trick.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Y = rng.standard_normal((4000, 2)) + [1.0, -2.0]
    >>> print(np.round(exponential_quantiles(Y, 0.5, -10, 10, 1.0, rng=rng), 1))
    [ 1. -2.]
    """
    arr = check_array("Y", Y, ndim=None)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"Y must be a 1- or 2-dimensional array, got shape {arr.shape}")
    qq = check_real("q", q, low=0.0, high=1.0)
    lo = check_real("low", low)
    hi = check_real("high", high)
    if not lo < hi:
        raise ValueError(f"low must be < high, got low={low!r}, high={high!r}")
    r = check_positive("rho", rho)
    s = check_positive("sensitivity", sensitivity)
    check_rng("rng", rng)
    return _em_quantiles(arr, qq, lo, hi, r, s, rng)


def _em_quantiles(
    arr: NDArray[np.float64], q: float, lo: float, hi: float, rho: float, sens: float,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """The exponential mechanism on every column of ``arr`` (validated input)."""
    m, k = arr.shape
    coef = math.sqrt(8.0 * rho) / (2.0 * sens)
    utility = -np.abs(np.arange(m + 1, dtype=np.float64) - q * m)[:, None] * coef
    out = np.empty(k)
    cols = max(1, _BLOCK_ELEMENTS // (m + 2))
    for start in range(0, k, cols):
        z = np.sort(np.clip(arr[:, start:start + cols], lo, hi), axis=0)
        w = z.shape[1]
        edges = np.concatenate([np.full((1, w), lo), z, np.full((1, w), hi)])
        lengths = np.maximum(np.diff(edges, axis=0), _MIN_VALUE)
        score = np.log(lengths) + utility + rng.gumbel(size=lengths.shape)
        idx = np.argmax(score, axis=0)
        a = edges[idx, np.arange(w)]
        b = edges[idx + 1, np.arange(w)]
        out[start:start + w] = a + (b - a) * rng.random(w)
    return out


@dataclass(frozen=True)
class PLANResult:
    """Output of :func:`plan_mean`.

    Attributes
    ----------
    mean : numpy.ndarray, shape (d,)
        The private mean.
    center : numpy.ndarray, shape (d,)
        The private centre (coordinate-wise medians of the shifted copies, step 1).
    variances : numpy.ndarray, shape (d,)
        The private variance estimates ``s_j^2`` (step 2, after the chi-square
        correction); zeros when ``scaled=False``.
    scaling : numpy.ndarray, shape (d,)
        The scaling ``b_j`` applied to the centred rows (step 3).
    radius : float
        The private clipping radius ``C`` of the scaled rows (step 3).
    quantile : float
        The quantile ``1 - k`` of the norm search.
    clipped : int
        Rows whose scaled norm exceeded ``C`` (not private; for diagnostics).
    noise_sd : float
        Standard deviation of the noise added to each scaled coordinate of the mean.
    rho_spent : float
        The zCDP budget the run spends under replacement neighbours: ``rho`` with
        ``accounting="zcdp"``, more with ``accounting="published"``.
    """

    mean: NDArray[np.float64]
    center: NDArray[np.float64]
    variances: NDArray[np.float64]
    scaling: NDArray[np.float64]
    radius: float
    quantile: float
    clipped: int
    noise_sd: float
    rho_spent: float


def _universe(universe: object) -> tuple[float, float]:
    if isinstance(universe, (str, bytes)) or universe is None:
        raise TypeError(f"universe must be a pair (low, high) of real numbers, got {universe!r}")
    u = check_array("universe", universe)
    if u.shape != (2,):
        raise ValueError(f"universe must be a pair (low, high), got shape {u.shape}")
    lo, hi = float(u[0]), float(u[1])
    if not lo < hi:
        raise ValueError(f"universe must have low < high, got {universe!r}")
    if not (hi - lo) <= 1e100:
        raise ValueError(f"universe must have high - low <= 1e100, got {universe!r}")
    return lo, hi


def _copies(col: NDArray[np.float64], shift: float, lo: float, hi: float) -> NDArray[np.float64]:
    """The authors' preprocessing of a block of columns: rows +shift, rows, rows -shift, clipped."""
    if shift == 0.0:
        return col
    return np.clip(np.concatenate([col + shift, col, col - shift]), lo, hi)


def _pair_values(rows: NDArray[np.float64], perm: NDArray[np.int64], k: int) -> NDArray[np.float64]:
    """Half squared differences of consecutive pairs of ``rows[perm]``, averaged over groups of ``k``."""
    p = rows[perm]
    half = p.shape[0] // 2
    values = 0.5 * (p[0:2 * half:2] - p[1:2 * half:2]) ** 2
    groups = half // k
    return values[: groups * k].reshape(groups, k, -1).mean(axis=1)


def _clip_rows(Y: NDArray[np.float64], C: float) -> tuple[NDArray[np.float64], int]:
    """Scale every row of Y with norm above C onto the sphere of radius C (in place)."""
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    over = norms > C
    Y[over] *= (C / norms[over])[:, None]
    return Y, int(np.count_nonzero(over))


@overflow_guard
def plan_mean(
    X: ArrayLike,
    rho: float,
    universe: ArrayLike,
    *,
    rng: np.random.Generator,
    scaled: bool = True,
    accounting: str = "zcdp",
    prep_share: float = 0.25,
    center_share: float = 0.25,
    radius_share: float = 0.25,
    k_groups: int = 1,
    chi_square: bool = True,
    clip_sds: float = 2.0,
    regularize: bool = True,
    shift: float = 0.1,
    beta: float = 0.1,
) -> PLANResult:
    """PLAN's private mean of the rows of ``X`` (Aumüller, Lebeda, Nelson & Pagh 2024).

    The four steps, the budget split and the privacy accounting are in the module
    docstring (:mod:`egmlib.plan`).  The defaults are the settings of the authors'
    published Gaussian experiments (``simulations/baseline_comparison.py`` of their
    repository ChristianLebeda/PLAN-experiments, algorithm "PLAN": PrivQuantile by
    the exponential mechanism, a quarter of the budget for centre and variances, a
    quarter of that for the centre, a quarter of the rest for the radius, one pair
    per variance group with the chi-square correction, clipping at 2 estimated
    standard deviations with the regularisation, copies shifted by +-0.1,
    ``beta = 0.1``), except ``accounting``: see below.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The rows, finite, ``n >= 2``.
    rho : float
        Total zCDP budget ``> 0``.
    universe : array_like, shape (2,)
        Public range ``(low, high)`` of every coordinate of the mean (and of the
        searches for the centre), ``low < high``.
    rng : numpy.random.Generator
        Source of all randomness (keyword-only).
    scaled : bool, optional
        ``False`` is the authors' PLAN-NOSCALE (no variance step, no scaling).
    accounting : {"zcdp", "published"}, optional
        ``"zcdp"`` (default): the run is ``rho``-zCDP under replacement neighbours.
        ``"published"``: the calibration of the authors' code (to reproduce their
        data); it spends more, reported in ``rho_spent``.
    prep_share, center_share, radius_share : float, optional
        Budget shares in ``(0, 1)``: steps 1-2, the centre within them, step 3
        within the rest.
    k_groups : int, optional
        Pairs averaged per variance value (``k``), ``>= 1``.
    chi_square : bool, optional
        Divide the median by ``(1 - 2/(9k))^3``.
    clip_sds : float, optional
        ``Delta_j = clip_sds * s_j``, ``> 0``.
    regularize : bool, optional
        Add the mean of ``Delta`` to every ``Delta_j`` (the authors' PLAN does).
    shift : float, optional
        The shift ``>= 0`` of the two extra copies (0: no copies).
    beta : float, optional
        Failure probability in ``(0, 1)`` of the norm bound and of ``k``.

    Returns
    -------
    PLANResult
        The mean and the diagnostics (centre, variances, scaling, radius, quantile,
        clipped rows, noise, budget spent).

    Raises
    ------
    ValueError, TypeError
        On invalid arguments, each naming the parameter.

    Notes
    -----
    Departures from the authors' code (``plan/mean_estimation.py``,
    ``kaplan_et_al/single_quantile_algo.py``, ``simulations/baseline_comparison.py``):

    * ``accounting="zcdp"`` (default) gives every exponential mechanism the
      sensitivity of replacement neighbours on the copies (3, or 1 without copies,
      and 1 for the norms) and the full per-coordinate budget; their calibration
      (divide by 3, sensitivity ``max(q, 1 - q)``) is ``accounting="published"``.
    * Randomness comes from one ``numpy.random.Generator`` (theirs: numpy's global
      state, and an unseeded ``default_rng()`` for the shuffle); the exponential
      mechanism samples by the Gumbel-max trick (theirs: the equivalent "racing"
      form ``argmin log log(1/U) - log w``).
    * Columns are processed in blocks, and the ``3n`` shifted rows are never held
      in full (the same values, less memory).
    * Only the exponential-mechanism PrivQuantile is implemented (their "PLAN"); their
      binary-search variant PLAN-BIN was not used in the paper.
    * Their ``T = ln(high - low)`` in ``k`` is floored at 1 and ``ln d`` in the norm
      bound at ``ln 2``, so that narrow universes and ``d = 1`` stay defined (no
      change for ``high - low >= e`` and ``d >= 2``); a quantile ``1 - k < 0`` (too
      few rows for the budget) is raised to 0, where their code stops on an assert.
    * With ``scaled=False`` their code sets the standard deviations to
      ``1e-30``; the norm search then runs on ``[0, ~1e-15 sqrt(d ln d)]`` in
      scaled units, far below every scaled row norm (``~1e15``), so every row is
      clipped and the estimate equals the private centre up to about ``1e-28``
      relative: their published PLAN-NOSCALE is the private coordinate-wise median
      with a quarter of the budget, and this function reproduces that.  (In their
      script the variance flags of "PLAN" carry over to "PLAN-NOSCALE", which runs
      on the same parameter object after it: PrivQuantile by the exponential
      mechanism and ``regularize=True``; the defaults here do the same.)

    References
    ----------
    aumuller2024plan, kaplan2022quantiles, cesar2021bounding, bun2016

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal([10.0, 10.0, 10.0, 10.0], [4.0, 2.0, 1.0, 0.5], (20000, 4))
    >>> res = plan_mean(X, 1.0, (-100.0, 100.0), rng=rng)
    >>> print(np.round(res.mean, 1), np.round(np.sqrt(res.variances), 1))
    [10. 10. 10. 10.] [4.  2.  1.  0.5]
    """
    data = check_array("X", X, ndim=2)
    n, d = data.shape
    if n < 2:
        raise ValueError(f"X must have at least 2 rows, got {n}")
    r = check_positive("rho", rho)
    lo, hi = _universe(universe)
    check_rng("rng", rng)
    scaled = check_bool("scaled", scaled)
    if not isinstance(accounting, str) or accounting not in _ACCOUNTING:
        raise ValueError(f"accounting must be one of {_ACCOUNTING}, got {accounting!r}")
    ps = check_probability("prep_share", prep_share)
    cs = check_probability("center_share", center_share)
    qs = check_probability("radius_share", radius_share)
    k = check_int("k_groups", k_groups, low=1)
    chi_square = check_bool("chi_square", chi_square)
    csd = check_positive("clip_sds", clip_sds)
    regularize = check_bool("regularize", regularize)
    a = check_real("shift", shift, low=0.0, high=hi - lo)
    b = check_probability("beta", beta)
    published = accounting == "published"

    copies = 3 if a > 0 else 1
    m3 = copies * n
    rho_prep = ps * r
    per_coord = rho_prep / d
    c_share = cs if scaled else 1.0
    spent = 0.0

    def em(values, q, low, high, budget):
        """One exponential mechanism per column; returns values and zCDP spent."""
        if published:
            rb, sens = budget / copies, max(q, 1.0 - q)
        else:
            rb, sens = budget, float(copies)
        out = exponential_quantiles(values, q, low, high, rb, rng=rng, sensitivity=sens)
        return out, (copies / sens) ** 2 * rb

    # step 1: the centre, per coordinate, on the shifted copies
    center = np.empty(d)
    cols = max(1, _BLOCK_ELEMENTS // m3)
    cost = 0.0
    for start in range(0, d, cols):
        block = _copies(data[:, start:start + cols], a, lo, hi)
        center[start:start + cols], cost = em(block, 0.5, lo, hi, per_coord * c_share)
    spent += d * cost

    # step 2: the variances from pairs of the shuffled copies
    variances = np.zeros(d)
    if scaled:
        perm = rng.permutation(m3)
        top = 0.5 * (hi - lo) ** 2
        for start in range(0, d, cols):
            block = _copies(data[:, start:start + cols], a, lo, hi)
            vals = _pair_values(block, perm, k)
            variances[start:start + cols], cost = em(vals, 0.5, 0.0, top, per_coord * (1 - cs))
        spent += d * cost
        if chi_square:
            variances /= (1.0 - 2.0 / (9.0 * k)) ** 3

    # step 3: scaling and the private clipping radius
    std = np.maximum(np.sqrt(variances), _MIN_VALUE)
    delta = csd * std
    if regularize:
        delta = delta + np.sum(delta) / d
    scaling = 1.0 / np.sqrt(delta)
    rest = r - rho_prep
    rho_c = qs * rest
    rho_m = rest - rho_c
    Y = (data - center) * scaling
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    if not np.all(np.isfinite(norms)):
        raise ValueError(
            "X too large in magnitude for plan_mean: the norms of the scaled, centred "
            "rows overflow double precision -- rescale X"
        )
    T = max(math.log(hi - lo), 1.0)
    kk = (math.sqrt(n) + math.sqrt(T / 2.0 * math.log(T / b) / rho_c)) / n
    q = max(1.0 - kk, 0.0)
    upper = math.sqrt(max(math.log(d), math.log(2.0)) * math.log(1.0 / b) * float(np.sum(std)))
    sens = max(q, 1.0 - q) if published else 1.0
    C = float(exponential_quantiles(norms, q, 0.0, upper, rho_c, rng=rng, sensitivity=sens)[0])
    spent += rho_c / sens**2

    # step 4: clipped mean, Gaussian noise, back to the data's coordinates
    Y, clipped = _clip_rows(Y, C)
    sd = math.sqrt(2.0 * C**2 / rho_m) / n
    noisy = Y.mean(axis=0) + sd * rng.standard_normal(d)
    spent += rho_m
    mean = noisy / scaling + center
    return PLANResult(mean, center, variances, scaling, C, q, clipped, sd, float(spent))
