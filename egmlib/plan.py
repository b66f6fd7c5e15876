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

Privacy: three calibrations (``accounting``), named for the neighbour relation under
which each run is ``rho``-zCDP.  The exponential mechanism with utility sensitivity
``Delta_u`` and weights ``exp(epsilon u / (2 Delta_u))`` is ``epsilon``-DP and, being
``epsilon``-bounded-range, ``epsilon^2/8``-zCDP (Cesar & Rogers 2021); with
``epsilon = sqrt(8 rho_j)`` and a true utility change ``D``, one median costs
``(D / Delta_u)^2 rho_j``, and the ``d`` coordinates and four steps add up by adaptive
composition (Bun & Steinke 2016).  The clipped mean moves by at most ``2C/n`` in l2
under either relation (``n`` public, as in the authors' code), so step 4 is
``rho_M``-zCDP under both.  (``2C/n`` is the replacement sensitivity; with ``n``
public, addition or removal would need only ``C/n``: the authors' quantile steps are
written for addition or removal, their Gaussian step for replacement.)  One row of
``X`` is three of the ``3n`` shifted rows:

* ``"add_remove"`` (the default): neighbours add or remove one row, the relation the
  authors' code is written for (its PrivQuantile, Kaplan, Schnapp & Stemmer's, is called
  with ``swap=None``: sensitivity ``max(q, 1 - q)``, right for one value added or
  removed).  Adding a row adds three values, so the utility moves by
  ``3 max(q, 1 - q)``; each median of steps 1-2 gets ``rho_j / 9`` with the sensitivity
  ``max(q, 1 - q)``, the norm quantile of step 3 (one norm per row) ``rho_C`` with
  ``max(q, 1 - q)``: the whole is ``rho``-zCDP under addition or removal.  (Step 2 is
  counted as the authors count it, three values per row; we have not checked how the
  shuffled pairing couples when the number of rows changes.)  Caveats, not checked
  here: this treats ``n`` as public in step 4 (as the authors' code does) while steps
  1-3 let ``n`` change.  With ``n`` private, step 4's noise scale differs between the
  neighbours, so it is not strictly ``rho_M``-zCDP at large Renyi orders (negligible
  in practice by a referee's computation at ``n = 10^4``, ``d = 512``); and step 3's
  target rank ``(1 - k) n`` moves by about ``1 - 1/(2 sqrt n)`` per added row, more
  than the ``max(q, 1 - q)`` it is calibrated for (by the same computation a few per
  cent of ``rho_C`` at ``n = 10^4``, more at ``n = 10^3``).
* ``"replace"`` (``"zcdp"``, its earlier name, is kept): neighbours replace one row,
  the convention of the rest of the book.  One row moves any rank in steps 1-2 by at
  most 3 (each of the three rows is in one pair), the norm rank of step 3 by 1; each
  median gets ``rho_j`` with ``Delta_u = 3`` (1 without copies), step 3 ``rho_C`` with
  ``Delta_u = 1``: the whole is ``rho``-zCDP under replacement.  It is the authors'
  code with ``swap=True`` and the budget of steps 1-2 divided by 9.
* ``"published"``: the authors' code exactly (to reproduce their data): the budget of
  steps 1-2 divided by 3 where zCDP needs 9 (a utility that moves 3 times as much costs
  9 times), sensitivity ``max(q, 1 - q)``.  Under addition or removal the medians of
  steps 1-2 then spend up to ``(3/2 / (1/2))^2 / 3 = 3`` times their nominal budget, the
  whole run (default shares) ``3 rho/4 + 3 rho/4 = 1.5 rho``; under replacement up to
  ``(3 / (1/2))^2 / 3 = 12`` times, about ``3.76 rho`` for the run.

The two bounds of every run are ``PLANResult.rho_spent`` (replacement) and
``PLANResult.rho_spent_add_remove``: with ``"add_remove"`` the first is about
``4 rho_P + rho_C / max(q, 1-q)^2 + rho_M`` (``1.75 rho`` at the default shares), with
``"replace"`` the second is at most ``rho``.  These bound the run with its intermediate
results; the chapter "PLAN, reproduced" computes the exact Renyi divergence of one
median on adversarial neighbours, which nearly attains the factors 12 and 3.

Where the replacement calibration breaks down: the medians of step 1 get
``1/(2 sqrt 3) = 0.29`` of the per-rank weight ``epsilon / (2 Delta_u)`` of the authors'
code (``1/sqrt 3 = 0.58`` of it with ``"add_remove"``).  In PLAN's own regime (large universes, ``rho_j = rho / (16 d)``) the
centre then lands outside the data in some coordinates and the error explodes:
gaussianB, ``d = 512``, ``r = 2``, ``rho = 1/16`` (``n = 10^4``), 50 runs each: mean
error ``1.7e5`` with ``"replace"`` (about 22,000 times, four orders of magnitude above
the published ``7.9``), ``29.9`` with ``"add_remove"`` (3.8 times: the price of the
correct division by 9), ``7.45`` with ``"published"`` (10 runs); at gaussianC,
``d = 64``, ``rho = 1/8`` the three agree within two standard errors (table
"plan-tab-fix" of the chapter "PLAN, reproduced").

Where the default degrades (``"add_remove"`` at the authors' shares): the division by
9 cuts the per-rank weight of every median of steps 1-2 by ``sqrt 3``, and with
``prep_share = 1/4`` the variance medians of step 2, over their range
``[0, (high - low)^2 / 2]``, land far above the truth in a few coordinates of PLAN's
high-dimensional settings (gaussianC, ``d = 1024``, ``rho = 1/8``: 44 and 61 of the
1024 coordinates above ``10^6`` times the true variance in 2 runs, up to about ``1e13``
times; gaussianB, ``d = 512``: 1 and 6 of 512); ``regularize`` adds the mean of
``Delta`` to every ``Delta_j``, so these flatten the scaling of all coordinates.
That explains the error at gaussianB, ``d = 512`` (run 0: 19.7, and 5.67 with
``regularize=False``); at gaussianC, ``d = 1024`` only half of it: the failed
coordinates' own error is about half of the total (run 0: 46.0 of 63.2 in the
``l2`` norm, 53% of the squared error; one run each).  Mean
error at gaussianC, ``d = 1024``: 65.0 over 50 runs, 4.7 times the published 13.9 (worse than
PLAN-NOSCALE's 50.3); gaussianB, ``d = 512``, ``r = 2``, ``rho = 1/16``: 29.9, 3.8
times the published 7.9.  ``prep_share=0.5`` (with the default ``"add_remove"``; the share
chosen on an independent pilot with data sets of its own, not on the data below: 3 runs
at gaussianC ``d = 1024`` with the shares 1/4, 1/2 and 3/4, 4 runs at gaussianB
``d = 512`` with 1/4 and 1/2, the smallest mean error at both; ``prep_pilot.csv``)
brings it back to within 16% of the authors' calibration on these settings:
gaussianC, ``d = 1024``: 16.2, 1.10 times their calibration on the same data (14.9);
gaussianB, ``d = 512``: 7.87, 1.16 times (6.56); no change at gaussianC, ``d = 256``
(3.77 against 3.74); 20 runs (10 for the authors' calibration) on the same data sets
(chapter "Against the state of the art", table "sota-tab-plan-shares").  The default
shares stay the authors': the share 1/2 was checked on these three settings only.
Under replacement a run with ``"add_remove"`` spends about ``(1 + 3 prep_share) rho``
(``rho_spent``: 2.50 rho at share 1/2, 1.76 rho at 1/4, gaussianB ``d = 512``).
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
#: accepted values of ``accounting`` -> the calibration they name ("zcdp" is the
#: earlier name of "replace", kept valid)
_ACCOUNTING = {"add_remove": "add_remove", "replace": "replace", "zcdp": "replace",
               "published": "published"}


def _calibration(accounting: str, budget: float, q: float, copies: int) -> tuple[float, float]:
    """(zCDP budget, utility sensitivity) given to one exponential mechanism on the
    ``copies`` shifted copies, for a step whose nominal budget is ``budget``."""
    if accounting == "published":       # the authors' code: budget / 3, swap=None
        return budget / copies, max(q, 1.0 - q)
    if accounting == "add_remove":      # their sensitivity, budget / 3^2
        return budget / copies**2, max(q, 1.0 - q)
    return budget, float(copies)        # replacement: one row moves a rank by `copies`


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
        The zCDP bound of the run under replacement neighbours, by adaptive
        composition of the steps' costs (intermediate results included): ``rho``
        with ``accounting="replace"``, more with ``"add_remove"`` and ``"published"``.
    rho_spent_add_remove : float
        The same bound under neighbours that add or remove a row: ``rho`` with
        ``accounting="add_remove"``, at most ``rho`` with ``"replace"``, more with
        ``"published"``.
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
    rho_spent_add_remove: float


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
    accounting: str = "add_remove",
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
    ``beta = 0.1``), except ``accounting``: the default calibrates their relation
    (add/remove neighbours) correctly, where their code divides by 3 instead of 9.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The rows, finite, ``n >= 2``.
    rho : float
        Total zCDP budget ``> 0``, for the neighbour relation named by
        ``accounting``.  The default accounting is add/remove (the authors'
        relation), unlike the rest of egmlib, which uses replacement;
        ``PLANResult.rho_spent`` reports the run's bound under replacement.
        ``"zcdp"`` is kept as an alias of ``"replace"``.
    universe : array_like, shape (2,)
        Public range ``(low, high)`` of every coordinate of the mean (and of the
        searches for the centre), ``low < high``.
    rng : numpy.random.Generator
        Source of all randomness (keyword-only).
    scaled : bool, optional
        ``False`` is the authors' PLAN-NOSCALE (no variance step, no scaling).
    accounting : {"add_remove", "replace", "zcdp", "published"}, optional
        The neighbour relation the run is ``rho``-zCDP for (module docstring).
        ``"add_remove"`` (default): one row added or removed, the authors' relation
        (their calibration with the budget of the copies divided by 9, not 3), with
        ``n`` public in step 4 as in their code (module docstring: the caveats when
        ``n`` is private).
        ``"replace"``: one row replaced, the book's convention (``"zcdp"`` is its
        earlier name, kept); in PLAN's high-dimensional settings its centre
        step often fails (module docstring: gaussianB, ``d = 512``, ``rho = 1/16``).
        ``"published"``: the authors' code as it is (to reproduce their data); it
        is not ``rho``-zCDP under either relation (``rho_spent`` and
        ``rho_spent_add_remove`` report its bounds: ``3.76 rho`` and ``1.5 rho``).
    prep_share, center_share, radius_share : float, optional
        Budget shares in ``(0, 1)``: steps 1-2, the centre within them, step 3
        within the rest.  With the default accounting, ``prep_share=0.5`` avoids
        the failure of the variance step at ``d >= 512`` in PLAN's settings (module
        docstring: where the default degrades).
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

    * ``accounting="add_remove"`` (default) divides the budget of the copies by 9
      where theirs divides by 3; ``"replace"`` gives every exponential mechanism
      the sensitivity of replacement neighbours on the copies (3, or 1 without
      copies, and 1 for the norms) and the full per-coordinate budget; their own
      calibration is ``accounting="published"``.
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
        raise ValueError(f"accounting must be one of {tuple(_ACCOUNTING)}, got {accounting!r}")
    ps = check_probability("prep_share", prep_share)
    cs = check_probability("center_share", center_share)
    qs = check_probability("radius_share", radius_share)
    k = check_int("k_groups", k_groups, low=1)
    chi_square = check_bool("chi_square", chi_square)
    csd = check_positive("clip_sds", clip_sds)
    regularize = check_bool("regularize", regularize)
    a = check_real("shift", shift, low=0.0, high=hi - lo)
    b = check_probability("beta", beta)
    accounting = _ACCOUNTING[accounting]

    copies = 3 if a > 0 else 1
    m3 = copies * n
    rho_prep = ps * r
    per_coord = rho_prep / d
    c_share = cs if scaled else 1.0
    spent = spent_ar = 0.0

    def em(values, q, low, high, budget):
        """One exponential mechanism per column; returns values and the zCDP bound it
        spends under replacement and under addition or removal of a row."""
        rb, sens = _calibration(accounting, budget, q, copies)
        out = exponential_quantiles(values, q, low, high, rb, rng=rng, sensitivity=sens)
        return out, (copies / sens) ** 2 * rb, (copies * max(q, 1.0 - q) / sens) ** 2 * rb

    # step 1: the centre, per coordinate, on the shifted copies
    center = np.empty(d)
    cols = max(1, _BLOCK_ELEMENTS // m3)
    cost = 0.0
    for start in range(0, d, cols):
        block = _copies(data[:, start:start + cols], a, lo, hi)
        center[start:start + cols], cost, cost_ar = em(block, 0.5, lo, hi, per_coord * c_share)
    spent += d * cost
    spent_ar += d * cost_ar

    # step 2: the variances from pairs of the shuffled copies
    variances = np.zeros(d)
    if scaled:
        perm = rng.permutation(m3)
        top = 0.5 * (hi - lo) ** 2
        for start in range(0, d, cols):
            block = _copies(data[:, start:start + cols], a, lo, hi)
            vals = _pair_values(block, perm, k)
            variances[start:start + cols], cost, cost_ar = em(vals, 0.5, 0.0, top, per_coord * (1 - cs))
        spent += d * cost
        spent_ar += d * cost_ar
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
    sens = 1.0 if accounting == "replace" else max(q, 1.0 - q)
    C = float(exponential_quantiles(norms, q, 0.0, upper, rho_c, rng=rng, sensitivity=sens)[0])
    spent += rho_c / sens**2
    spent_ar += (max(q, 1.0 - q) / sens) ** 2 * rho_c

    # step 4: clipped mean, Gaussian noise, back to the data's coordinates
    Y, clipped = _clip_rows(Y, C)
    sd = math.sqrt(2.0 * C**2 / rho_m) / n
    noisy = Y.mean(axis=0) + sd * rng.standard_normal(d)
    spent += rho_m
    spent_ar += rho_m
    mean = noisy / scaling + center
    return PLANResult(mean, center, variances, scaling, C, q, clipped, sd, float(spent),
                      float(spent_ar))
