"""The Lagrangian derivation of Lemma 4.1 as SymPy objects.

The study minimises the noise error of Algorithm 3 for a *fixed* clipping radius
``C``.  Writing ``sigma_eps_delta := 2 C sigma_opt`` (a positive constant), the
problem in the scaling ``b = (b_1, ..., b_d) > 0`` is::

    minimise    sigma_eps_delta^2 * sum_j b_j^-2          (equation (9))
    subject to  sum_j (sigma_j b_j)^2 = 1                 (equation (10))

with Lagrangian ``L(b, lambda) = sigma_eps_delta^2 sum_j b_j^-2 +
lambda (sum_j (sigma_j b_j)^2 - 1)``.  Its only stationary point with ``b > 0``
is ``b_j = 1 / sqrt(sigma_j S)``, ``lambda = sigma_eps_delta^2 S^2`` with
``S = sum_i sigma_i``.

The bordered Hessian (Appendix A of the study) is the ``(d+1) x (d+1)`` matrix
``[[0, g^T], [g, diag(h)]]`` with ``g_j = 2 sigma_j^2 b_j`` and
``h_j = 6 sigma_eps_delta^2 / b_j^4 + 2 lambda sigma_j^2``.  Its leading
principal minor of order ``m + 1`` is ``-sum_{i<=m} g_i^2 prod_{j<=m, j!=i} h_j``
(:func:`bordered_diagonal_determinant`); at the stationary point it equals::

    M_{m+1} = -2^(3m-1) sigma_eps_delta^(2m-2) S^(2m-3) S_m prod_{j<=m} sigma_j^2  < 0

with ``S_m = sigma_1 + ... + sigma_m`` (:func:`minor_closed_form`).

All symbols are positive SymPy symbols and are the same objects in every call
(SymPy caches symbols by name and assumptions), so results of different
functions can be combined and substituted into each other.  The chapter
"Deriving the optimal scaling" uses this module and explains every formula.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib._validation import check_array, check_bool, check_positive, check_real, overflow_guard

try:  # SymPy is egmlib's one optional dependency, for this module only
    import sympy as sp
except ImportError as _error:
    raise ImportError('egmlib.symbolic needs SymPy, which is optional: pip install "sympy>=1.13" '
                      '(egmlib is not on the package index, so "egmlib[symbolic]" cannot be installed by name)',
                      name="sympy") from _error

__all__ = [
    "GaussianDataSymbols",
    "symbols",
    "objective",
    "constraint",
    "lagrangian",
    "stationary_point",
    "bordered_hessian",
    "leading_principal_minors",
    "bordered_diagonal_determinant",
    "minor_closed_form",
    "bordered_hessian_numeric",
    "log_abs_minors",
]


class _SigmaEpsDelta(sp.Symbol):
    """A positive symbol that prints as ``sigma_eps_delta`` and typesets as
    ``\\sigma_{\\varepsilon,\\delta}`` (SymPy's ``_latex`` printing hook)."""

    def _latex(self, printer: object) -> str:
        return r"\sigma_{\varepsilon,\delta}"


_SED = _SigmaEpsDelta("sigma_eps_delta", positive=True)
_LAM = sp.Symbol("lambda", positive=True)


class GaussianDataSymbols(NamedTuple):
    """The symbols of the problem in dimension ``d`` (a named tuple, so it unpacks)."""

    #: ``sigma_1, ..., sigma_d``: the standard deviations of the coordinates.
    sigma: tuple[sp.Symbol, ...]
    #: ``b_1, ..., b_d``: the scaling.
    b: tuple[sp.Symbol, ...]
    #: ``lambda``: the Lagrange multiplier.
    lam: sp.Symbol
    #: ``sigma_eps_delta = 2 C sigma_opt``, treated as a constant.
    sigma_eps_delta: sp.Symbol


def _check_d(d: object) -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Integral):
        raise TypeError(f"d must be an integer >= 1, got {d!r}")
    if d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    return int(d)


def symbols(d: int) -> GaussianDataSymbols:
    """The positive symbols ``sigma_j``, ``b_j`` (j = 1..d), ``lambda`` and ``sigma_eps_delta``.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    GaussianDataSymbols
        A named tuple ``(sigma, b, lam, sigma_eps_delta)``; all symbols are
        declared ``positive=True``.

    Raises
    ------
    TypeError
        If ``d`` is not an integer.
    ValueError
        If ``d < 1``.

    Examples
    --------
    >>> s = symbols(3)
    >>> s.sigma, s.b, s.lam, s.sigma_eps_delta
    ((sigma_1, sigma_2, sigma_3), (b_1, b_2, b_3), lambda, sigma_eps_delta)
    >>> print(sp.latex(s.sigma_eps_delta**2))
    \\sigma_{\\varepsilon,\\delta}^{2}
    """
    d = _check_d(d)
    sigma = tuple(sp.Symbol(f"sigma_{j}", positive=True) for j in range(1, d + 1))
    b = tuple(sp.Symbol(f"b_{j}", positive=True) for j in range(1, d + 1))
    return GaussianDataSymbols(sigma, b, _LAM, _SED)


def objective(d: int) -> sp.Expr:
    """The noise error ``sigma_eps_delta^2 * sum_j b_j^-2`` (equation (9) of the study).

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    ``E||eta||^2 = (2 C sigma_opt)^2 sum_j b_j^-2`` with ``C`` held fixed.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> objective(2)
    sigma_eps_delta**2*(b_2**(-2) + b_1**(-2))
    """
    s = symbols(d)
    return s.sigma_eps_delta**2 * sp.Add(*(bj**-2 for bj in s.b))


def constraint(d: int) -> sp.Expr:
    """The left side ``g(b) = sum_j (sigma_j b_j)^2 - 1`` of the constraint ``g(b) = 0`` (equation (10)).

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    ``E||(x - mu) * b||^2 = sum_j (b_j sigma_j)^2`` for ``x ~ N(mu, diag sigma^2)``,
    so ``g(b) = 0`` says a scaled row has expected squared norm 1.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> constraint(2)
    b_1**2*sigma_1**2 + b_2**2*sigma_2**2 - 1
    """
    s = symbols(d)
    return sp.Add(*((sj * bj) ** 2 for sj, bj in zip(s.sigma, s.b))) - 1


def lagrangian(d: int) -> sp.Expr:
    """The Lagrangian ``L(b, lambda) = objective + lambda * constraint`` of Lemma 4.1.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    sympy.Expr
        ``sigma_eps_delta^2 sum_j b_j^-2 + lambda (sum_j (sigma_j b_j)^2 - 1)``.

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    The sign convention is the study's (``+ lambda``); with it the multiplier
    at the minimum is positive.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> L = lagrangian(2)
    >>> s = symbols(2)
    >>> sp.diff(L, s.b[0])
    2*b_1*lambda*sigma_1**2 - 2*sigma_eps_delta**2/b_1**3
    """
    return objective(d) + symbols(d).lam * constraint(d)


def stationary_point(d: int) -> dict[sp.Symbol, sp.Expr]:
    """The stationary point of the Lagrangian with ``b > 0`` (Lemma 4.1).

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.

    Returns
    -------
    dict
        ``{b_j: 1/sqrt(sigma_j * S), lambda: sigma_eps_delta^2 * S^2}`` with
        ``S = sigma_1 + ... + sigma_d``; usable with ``expr.subs(...)``.

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    The closed form is derived (solved, not assumed) in the chapter "Deriving
    the optimal scaling"; the tests check that it zeroes every partial
    derivative of :func:`lagrangian`.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> point = stationary_point(2)
    >>> s = symbols(2)
    >>> point[s.b[0]]
    1/(sqrt(sigma_1)*sqrt(sigma_1 + sigma_2))
    >>> point[s.lam]
    sigma_eps_delta**2*(sigma_1 + sigma_2)**2
    >>> sp.simplify(constraint(2).subs(point))
    0
    """
    s = symbols(d)
    total = sp.Add(*s.sigma)
    point: dict[sp.Symbol, sp.Expr] = {bj: 1 / (sp.sqrt(sj) * sp.sqrt(total)) for sj, bj in zip(s.sigma, s.b)}
    point[s.lam] = s.sigma_eps_delta**2 * total**2
    return point


def bordered_hessian(d: int, *, at_stationary_point: bool = False) -> sp.ImmutableMatrix:
    """The bordered Hessian of :func:`lagrangian`, variables ordered ``(lambda, b_1, ..., b_d)``.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.
    at_stationary_point : bool, optional
        If true, substitute :func:`stationary_point` into every entry.

    Returns
    -------
    sympy.ImmutableMatrix, shape (d+1, d+1)
        The matrix of second derivatives of ``L`` with respect to
        ``(lambda, b_1, ..., b_d)``: entry ``(0, 0)`` is ``d^2L/dlambda^2 = 0``,
        the border ``(0, j)`` is ``d^2L/(dlambda db_j) = 2 sigma_j^2 b_j`` and
        the lower-right block is ``diag(6 sigma_eps_delta^2 / b_j^4 + 2 lambda sigma_j^2)``.

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    Computed by differentiating the Lagrangian, not typed in.  The border is
    the gradient of the constraint, so this is the bordered matrix of the
    second-order test for one equality constraint.

    References
    ----------
    poulsen2023, magnus2019

    Examples
    --------
    >>> bordered_hessian(2)
    Matrix([
    [              0,                                   2*b_1*sigma_1**2,                                   2*b_2*sigma_2**2],
    [2*b_1*sigma_1**2, 2*lambda*sigma_1**2 + 6*sigma_eps_delta**2/b_1**4,                                                  0],
    [2*b_2*sigma_2**2,                                                  0, 2*lambda*sigma_2**2 + 6*sigma_eps_delta**2/b_2**4]])
    >>> bordered_hessian(2, at_stationary_point=True)[1, 1]
    8*sigma_1**2*sigma_eps_delta**2*(sigma_1 + sigma_2)**2
    """
    s = symbols(d)
    L = lagrangian(d)
    variables = (s.lam, *s.b)
    H = sp.hessian(L, variables)
    if check_bool("at_stationary_point", at_stationary_point):
        point = stationary_point(d)
        H = H.subs(point).applyfunc(sp.factor)
    return sp.ImmutableMatrix(H)


def leading_principal_minors(d: int, *, at_stationary_point: bool = False) -> list[sp.Expr]:
    """Determinants of the leading ``k x k`` blocks of :func:`bordered_hessian`, ``k = 1, ..., d+1``.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.  The cost grows quickly with ``d`` (symbolic
        determinants); ``d <= 8`` takes seconds.
    at_stationary_point : bool, optional
        If true, the minors of the bordered Hessian at :func:`stationary_point`.

    Returns
    -------
    list of sympy.Expr
        ``d + 1`` factored expressions; element ``k - 1`` is the minor of
        order ``k``.  The first is always ``0`` (the ``1 x 1`` block ``[0]``).

    Raises
    ------
    TypeError, ValueError
        If ``d`` is not an integer ``>= 1``.

    Notes
    -----
    Each determinant is computed by SymPy from the matrix (cofactor expansion,
    fast for this sparse matrix), not from the closed form; compare with
    :func:`minor_closed_form`.  At a general point the minors are returned
    unsimplified; at the stationary point they are factored.

    References
    ----------
    poulsen2023, magnus2019

    Examples
    --------
    >>> leading_principal_minors(2)[1]
    -4*b_1**2*sigma_1**4
    >>> for m in leading_principal_minors(2, at_stationary_point=True):
    ...     print(m)
    0
    -4*sigma_1**3/(sigma_1 + sigma_2)
    -32*sigma_1**2*sigma_2**2*sigma_eps_delta**2*(sigma_1 + sigma_2)**2
    """
    d = _check_d(d)
    H = bordered_hessian(d)
    if not check_bool("at_stationary_point", at_stationary_point):
        return [H[:k, :k].det(method="laplace") for k in range(1, d + 2)]
    # Substitute with S = sum(sigma) kept as one positive symbol while
    # factoring (expanding powers of the sum would be slow), then put it back.
    s = symbols(d)
    total = sp.Add(*s.sigma)
    S = sp.Dummy("S", positive=True)
    point = {key: value.subs(total, S) for key, value in stationary_point(d).items()}
    Hs = H.subs(point)
    return [sp.factor(Hs[:k, :k].det(method="laplace")).subs(S, total) for k in range(1, d + 2)]


def _entries(name: str, value: object) -> list[sp.Expr]:
    """A 1-d sequence of real numbers or SymPy expressions, as SymPy expressions."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"{name} must be a list, tuple or 1-d array of numbers or SymPy expressions, got {value!r:.60}")
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {value.shape}")
    out = []
    for x in value:
        try:
            e = sp.sympify(x, strict=True)
        except (sp.SympifyError, TypeError, ValueError) as exc:
            raise TypeError(f"{name} entries must be numbers or SymPy expressions, got {x!r:.60}") from exc
        if not isinstance(e, sp.Expr):
            raise TypeError(f"{name} entries must be numbers or SymPy expressions, got {x!r:.60}")
        if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise ValueError(f"{name} entries must be finite, got {x!r}")
        if e.is_number and e.is_real is False:
            raise ValueError(f"{name} entries must be real, got {x!r}")
        out.append(e)
    return out


def bordered_diagonal_determinant(g: Sequence[object], h: Sequence[object]) -> sp.Expr:
    """``det [[0, g^T], [g, diag(h)]] = -sum_k g_k^2 prod_{i != k} h_i`` (arrowhead determinant).

    Parameters
    ----------
    g : sequence of sympy expressions or numbers
        The border ``g_1, ..., g_n``.
    h : sequence of sympy expressions or numbers
        The diagonal ``h_1, ..., h_n``, of the same length as ``g``.

    Returns
    -------
    sympy.Expr
        The determinant of the ``(n+1) x (n+1)`` matrix (``0`` when ``n = 0``).

    Raises
    ------
    ValueError
        If ``g`` and ``h`` differ in length.

    Notes
    -----
    If all ``h_i != 0`` the Schur complement of ``diag(h)`` gives
    ``det = prod(h) * (0 - g^T diag(h)^-1 g)``; both sides are polynomials in
    ``(g, h)``, so the identity holds everywhere.  Expanding along the last row
    gives the recursion ``D_{n} = h_n D_{n-1} - g_n^2 prod_{i<n} h_i``.

    References
    ----------
    magnus2019

    Examples
    --------
    >>> g1, g2, h1, h2 = sp.symbols("g_1 g_2 h_1 h_2")
    >>> bordered_diagonal_determinant([g1, g2], [h1, h2])
    -g_1**2*h_2 - g_2**2*h_1
    >>> sp.Matrix([[0, g1, g2], [g1, h1, 0], [g2, 0, h2]]).det()
    -g_1**2*h_2 - g_2**2*h_1
    """
    g = _entries("g", g)
    h = _entries("h", h)
    if len(g) != len(h):
        raise ValueError(f"g and h must have the same length, got {len(g)} and {len(h)}")
    return -sp.Add(*(g[k] ** 2 * sp.Mul(*(h[:k] + h[k + 1 :])) for k in range(len(g))))


def minor_closed_form(d: int, k: int) -> sp.Expr:
    """Closed form of the leading principal minor of order ``k`` of the bordered Hessian at the stationary point.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.
    k : int
        Order of the minor, ``1 <= k <= d + 1``.

    Returns
    -------
    sympy.Expr
        ``0`` for ``k = 1``; for ``k = m + 1`` with ``1 <= m <= d``,
        ``-2^(3m-1) sigma_eps_delta^(2m-2) S^(2m-3) S_m prod_{j<=m} sigma_j^2``,
        where ``S = sigma_1 + ... + sigma_d`` and ``S_m = sigma_1 + ... + sigma_m``.
        Negative for every ``m >= 1``.

    Raises
    ------
    TypeError, ValueError
        If ``d`` or ``k`` is not an integer in range.

    Notes
    -----
    At the stationary point ``g_j = 2 sigma_j^(3/2) / sqrt(S)`` and
    ``h_j = 8 sigma_eps_delta^2 S^2 sigma_j^2``; insert into
    :func:`bordered_diagonal_determinant` with the first ``m`` entries.

    References
    ----------
    poulsen2023, magnus2019

    Examples
    --------
    >>> minor_closed_form(3, 3)
    -32*sigma_1**2*sigma_2**2*sigma_eps_delta**2*(sigma_1 + sigma_2)*(sigma_1 + sigma_2 + sigma_3)
    >>> sp.simplify(minor_closed_form(3, 3) - leading_principal_minors(3, at_stationary_point=True)[2])
    0
    """
    d = _check_d(d)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer in [1, {d + 1}], got {k!r}")
    if not 1 <= k <= d + 1:
        raise ValueError(f"k must be an integer in [1, d + 1] = [1, {d + 1}], got {k!r}")
    if k == 1:
        return sp.S.Zero
    s = symbols(d)
    m = int(k) - 1
    total = sp.Add(*s.sigma)
    partial = sp.Add(*s.sigma[:m])
    return (
        -sp.Integer(2) ** (3 * m - 1)
        * s.sigma_eps_delta ** (2 * m - 2)
        * total ** (2 * m - 3)
        * partial
        * sp.Mul(*s.sigma[:m]) ** 2
    )


@overflow_guard
def bordered_hessian_numeric(
    sigmas: ArrayLike, sigma_eps_delta: float, scaling: ArrayLike, lam: float
) -> NDArray[np.float64]:
    """The bordered Hessian of :func:`lagrangian` as a float array, at any point ``(b, lambda)``.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations, all ``> 0``.
    sigma_eps_delta : float
        ``2 C sigma_opt > 0``.
    scaling : array_like, shape (d,)
        The point ``b``, all ``> 0``.
    lam : float
        The multiplier ``lambda`` (any finite real).

    Returns
    -------
    numpy.ndarray, shape (d+1, d+1)
        ``[[0, g^T], [g, diag(h)]]`` with ``g_j = 2 sigma_j^2 b_j`` and
        ``h_j = 6 sigma_eps_delta^2 / b_j^4 + 2 lambda sigma_j^2`` (the
        derivatives of the Lagrangian, not the closed form at the stationary point).

    Raises
    ------
    ValueError
        If an array is empty, not 1-d, not finite or not positive, the shapes
        differ, or ``sigma_eps_delta <= 0``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> print(bordered_hessian_numeric([1.0, 2.0], 1.0, [1.0, 0.5], 0.5))
    [[ 0.  2.  4.]
     [ 2.  7.  0.]
     [ 4.  0. 100.]]
    """
    sig = check_array("sigmas", sigmas, positive=True)
    sed = check_positive("sigma_eps_delta", sigma_eps_delta)
    b = check_array("scaling", scaling, positive=True)
    if b.shape != sig.shape:
        raise ValueError(f"scaling must have the shape of sigmas {sig.shape}, got {b.shape}")
    lam_f = check_real("lam", lam)
    d = sig.size
    H = np.zeros((d + 1, d + 1))
    g = 2.0 * sig**2 * b
    H[0, 1:] = g
    H[1:, 0] = g
    H[np.arange(1, d + 1), np.arange(1, d + 1)] = 6.0 * sed**2 / b**4 + 2.0 * lam_f * sig**2
    return H


@overflow_guard
def log_abs_minors(sigmas: ArrayLike, sigma_eps_delta: float) -> NDArray[np.float64]:
    """``log|M_{m+1}|`` of the minors of :func:`minor_closed_form`, ``m = 1, ..., d``, in floating point.

    Parameters
    ----------
    sigmas : array_like, shape (d,)
        Standard deviations, all ``> 0``.
    sigma_eps_delta : float
        ``2 C sigma_opt > 0``.

    Returns
    -------
    numpy.ndarray, shape (d,)
        Element ``m - 1`` is the natural log of ``|M_{m+1}|``, the absolute
        value of the leading principal minor of order ``m + 1`` (all these
        minors are negative).  Stays finite where the minors themselves
        over- or underflow.

    Raises
    ------
    ValueError
        If ``sigmas`` is empty, not 1-d, not finite or not positive, or
        ``sigma_eps_delta <= 0``.

    Notes
    -----
    ``log|M_{m+1}| = (3m-1) log 2 + (2m-2) log sigma_eps_delta + (2m-3) log S
    + log S_m + 2 sum_{j<=m} log sigma_j``.

    References
    ----------
    poulsen2023

    Examples
    --------
    >>> print(np.round(log_abs_minors([1.0, 2.0], 1.0), 4))
    [0.2877 7.0493]
    >>> print(round(float(np.log(4 / 3)), 4), round(float(np.log(32 * 4 * 3**2)), 4))  # 4 s1^3/S, 32 s1^2 s2^2 S^2
    0.2877 7.0493
    """
    sig = check_array("sigmas", sigmas, positive=True)
    sed = check_positive("sigma_eps_delta", sigma_eps_delta)
    m = np.arange(1, sig.size + 1, dtype=np.float64)
    total = float(sig.sum())
    return (
        (3 * m - 1) * np.log(2.0)
        + (2 * m - 2) * np.log(sed)
        + (2 * m - 3) * np.log(total)
        + np.log(np.cumsum(sig))
        + 2 * np.cumsum(np.log(sig))
    )
