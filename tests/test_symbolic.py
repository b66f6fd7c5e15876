"""egmlib.symbolic: the Lagrangian derivation of Lemma 4.1, checked symbolically and numerically."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from egmlib import symbolic as sy

DIMS = range(1, 6)


def _random_rationals(symbols, seed):
    """Exact random positive rationals for a Schwartz-Zippel style identity check."""
    rng = np.random.default_rng(seed)
    return {s: sp.Rational(int(rng.integers(1, 97)), int(rng.integers(1, 89))) for s in symbols}


# --- symbols and building blocks -------------------------------------------------


def test_symbols_are_positive_and_shared():
    s = sy.symbols(4)
    assert len(s.sigma) == len(s.b) == 4
    for sym in (*s.sigma, *s.b, s.lam, s.sigma_eps_delta):
        assert sym.is_positive
    assert sy.symbols(4) == s  # the same objects in every call
    assert s.sigma[:2] == sy.symbols(2).sigma
    assert sp.latex(s.sigma_eps_delta) == r"\sigma_{\varepsilon,\delta}"
    assert str(s.sigma_eps_delta) == "sigma_eps_delta"


@pytest.mark.parametrize("d", [0, -3])
def test_bad_dimension_value(d):
    with pytest.raises(ValueError, match=r"d must be an integer >= 1"):
        sy.symbols(d)


@pytest.mark.parametrize("d", [2.0, "3", True, None])
def test_bad_dimension_type(d):
    with pytest.raises(TypeError, match=r"d must be an integer"):
        sy.lagrangian(d)


@pytest.mark.parametrize("k", [0, 5, -1])
def test_minor_closed_form_bad_order(k):
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, d \+ 1\] = \[1, 4\]"):
        sy.minor_closed_form(3, k)


def test_minor_closed_form_order_type():
    with pytest.raises(TypeError, match="k must be an integer"):
        sy.minor_closed_form(3, 2.0)


def test_numpy_integer_dimension_accepted():
    assert sy.lagrangian(np.int64(2)) == sy.lagrangian(2)


@pytest.mark.parametrize("d", DIMS)
def test_lagrangian_is_objective_plus_multiplier_times_constraint(d):
    s = sy.symbols(d)
    expected = s.sigma_eps_delta**2 * sum(bj**-2 for bj in s.b) + s.lam * (
        sum(sj**2 * bj**2 for sj, bj in zip(s.sigma, s.b)) - 1
    )
    assert sp.expand(sy.lagrangian(d) - expected) == 0


# --- first-order conditions --------------------------------------------------------


@pytest.mark.parametrize("d", DIMS)
def test_stationary_point_zeroes_the_gradient(d):
    s = sy.symbols(d)
    L = sy.lagrangian(d)
    point = sy.stationary_point(d)
    assert set(point) == {*s.b, s.lam}
    for var in (*s.b, s.lam):
        assert sp.simplify(sp.diff(L, var).subs(point)) == 0


@pytest.mark.parametrize("d", DIMS)
def test_constraint_holds_and_objective_value(d):
    s = sy.symbols(d)
    point = sy.stationary_point(d)
    total = sum(s.sigma)
    assert sp.simplify(sy.constraint(d).subs(point)) == 0
    assert sp.simplify(sy.objective(d).subs(point) - s.sigma_eps_delta**2 * total**2) == 0


@pytest.mark.parametrize("d", [1, 2])
def test_stationary_point_is_the_positive_solution_of_the_full_system(d):
    """sp.solve of all d+1 equations at once (feasible for small d) finds our point."""
    s = sy.symbols(d)
    L = sy.lagrangian(d)
    eqs = [sp.diff(L, v) for v in (*s.b, s.lam)]
    solutions = sp.solve(eqs, [*s.b, s.lam], dict=True)
    point = sy.stationary_point(d)
    assert any(all(sp.simplify(sol[v] - point[v]) == 0 for v in point) for sol in solutions)
    # every other solution is not real and positive for some positive sigmas
    values = {sj: sp.Integer(j + 2) for j, sj in enumerate(s.sigma)}
    positive = [sol for sol in solutions if all(sol[v].subs(values).is_positive for v in s.b)]
    assert len(positive) == 1


def test_stationary_point_matches_a_numerical_constrained_minimiser():
    rng = np.random.default_rng(7)
    sig = rng.uniform(0.1, 3.0, size=5)
    sed = 1.7
    res = optimize.minimize(
        lambda b: sed**2 * np.sum(b**-2.0),
        x0=np.full(5, 1.0 / np.sqrt(np.sum(sig**2))),
        constraints=[{"type": "eq", "fun": lambda b: np.sum((sig * b) ** 2) - 1.0}],
        bounds=[(1e-6, None)] * 5,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success
    s = sy.symbols(5)
    values = {**dict(zip(s.sigma, sig)), s.sigma_eps_delta: sed}
    point = sy.stationary_point(5)
    b_star = np.array([float(point[bj].subs(values)) for bj in s.b])
    np.testing.assert_allclose(res.x, b_star, rtol=1e-5)


# --- bordered Hessian ---------------------------------------------------------------


@pytest.mark.parametrize("d", DIMS)
def test_bordered_hessian_structure(d):
    s = sy.symbols(d)
    H = sy.bordered_hessian(d)
    assert H.shape == (d + 1, d + 1)
    assert H[0, 0] == 0
    for j in range(d):
        assert sp.simplify(H[0, j + 1] - 2 * s.sigma[j] ** 2 * s.b[j]) == 0
        assert H[j + 1, 0] == H[0, j + 1]
        h = 6 * s.sigma_eps_delta**2 / s.b[j] ** 4 + 2 * s.lam * s.sigma[j] ** 2
        assert sp.simplify(H[j + 1, j + 1] - h) == 0
        for i in range(d):
            if i != j:
                assert H[i + 1, j + 1] == 0


@pytest.mark.parametrize("d", DIMS)
def test_bordered_hessian_at_stationary_point(d):
    s = sy.symbols(d)
    H = sy.bordered_hessian(d, at_stationary_point=True)
    total = sum(s.sigma)
    for j in range(d):
        border = 2 * s.sigma[j] ** sp.Rational(3, 2) / sp.sqrt(total)
        diagonal = 8 * s.sigma_eps_delta**2 * total**2 * s.sigma[j] ** 2
        assert sp.simplify(H[0, j + 1] - border) == 0
        assert sp.simplify(H[j + 1, j + 1] - diagonal) == 0


def test_study_printed_entries_are_wrong():
    """Appendix A prints 2 sigma_j^(2/3)/sqrt(S) and 2 sed^2 S^2 (3 sigma_j^2 + 1)."""
    s = sy.symbols(2)
    H = sy.bordered_hessian(2, at_stationary_point=True)
    total = sum(s.sigma)
    printed_border = 2 * s.sigma[0] ** sp.Rational(2, 3) / sp.sqrt(total)
    printed_diag = 2 * s.sigma_eps_delta**2 * total**2 * (3 * s.sigma[0] ** 2 + 1)
    assert sp.simplify(H[0, 1] - printed_border) != 0
    assert sp.simplify(H[1, 1] - printed_diag) != 0


def test_numeric_hessian_matches_finite_differences():
    rng = np.random.default_rng(11)
    d = 4
    sig = rng.uniform(0.5, 2.0, size=d)
    b = rng.uniform(0.5, 1.5, size=d)
    lam, sed = 0.8, 1.3

    def L(v):
        return sed**2 * np.sum(v[1:] ** -2.0) + v[0] * (np.sum((sig * v[1:]) ** 2) - 1.0)

    x0 = np.concatenate(([lam], b))
    eps = 1e-4
    fd = np.empty((d + 1, d + 1))
    for i in range(d + 1):
        for j in range(d + 1):
            e_i, e_j = np.eye(d + 1)[i] * eps, np.eye(d + 1)[j] * eps
            fd[i, j] = (L(x0 + e_i + e_j) - L(x0 + e_i - e_j) - L(x0 - e_i + e_j) + L(x0 - e_i - e_j)) / (4 * eps**2)
    H = sy.bordered_hessian_numeric(sig, sed, b, lam)
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("d", [1, 3])
def test_numeric_hessian_matches_sympy(d):
    s = sy.symbols(d)
    rng = np.random.default_rng(d)
    sig, b = rng.uniform(0.2, 2.0, size=(2, d))
    lam, sed = -0.4, 0.9
    values = {**dict(zip(s.sigma, sig)), **dict(zip(s.b, b)), s.lam: lam, s.sigma_eps_delta: sed}
    exact = np.array(sy.bordered_hessian(d).subs(values).evalf(30), dtype=float)
    np.testing.assert_allclose(sy.bordered_hessian_numeric(sig, sed, b, lam), exact, rtol=1e-13)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([1.0, -1.0], 1.0, [1.0, 1.0], 0.0), "sigmas must be > 0"),
        (([1.0, 1.0], 0.0, [1.0, 1.0], 0.0), "sigma_eps_delta must be in"),
        (([1.0, 1.0], 1.0, [1.0, 0.0], 0.0), "scaling must be > 0"),
        (([1.0, 1.0], 1.0, [1.0], 0.0), "scaling must have the shape"),
        (([1.0, 1.0], 1.0, [1.0, 1.0], float("nan")), "lam must be finite"),
    ],
)
def test_numeric_hessian_rejects(args, match):
    with pytest.raises(ValueError, match=match):
        sy.bordered_hessian_numeric(*args)


# --- leading principal minors ---------------------------------------------------------


@pytest.mark.parametrize("n", range(0, 7))
def test_bordered_diagonal_determinant_generic(n):
    g = sp.symbols(f"g_1:{n + 1}")
    h = sp.symbols(f"h_1:{n + 1}")
    M = sp.zeros(n + 1, n + 1)
    for k in range(n):
        M[0, k + 1] = M[k + 1, 0] = g[k]
        M[k + 1, k + 1] = h[k]
    assert sp.expand(M.det(method="berkowitz") - sy.bordered_diagonal_determinant(g, h)) == 0


def test_bordered_diagonal_determinant_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        sy.bordered_diagonal_determinant([1, 2], [1])


@pytest.mark.parametrize("d", DIMS)
def test_general_minors_follow_the_arrowhead_formula(d):
    s = sy.symbols(d)
    H = sy.bordered_hessian(d)
    minors = sy.leading_principal_minors(d)
    assert len(minors) == d + 1 and minors[0] == 0
    values = _random_rationals((*s.sigma, *s.b, s.lam, s.sigma_eps_delta), seed=d)
    for k in range(1, d + 1):
        formula = sy.bordered_diagonal_determinant(
            [H[0, j] for j in range(1, k + 1)], [H[j, j] for j in range(1, k + 1)]
        )
        assert (minors[k] - formula).subs(values) == 0
        if d <= 3:
            assert sp.cancel(minors[k] - formula) == 0


@pytest.mark.parametrize("d", DIMS)
def test_minors_at_stationary_point_match_closed_form(d):
    minors = sy.leading_principal_minors(d, at_stationary_point=True)
    for k, minor in enumerate(minors, start=1):
        closed = sy.minor_closed_form(d, k)
        assert sp.cancel(minor - closed) == 0
        if k >= 2:
            assert closed.is_negative


def test_minors_at_stationary_point_d6():
    d = 6
    minors = sy.leading_principal_minors(d, at_stationary_point=True)
    s = sy.symbols(d)
    S = sp.Dummy("S", positive=True)
    total = sum(s.sigma)
    for k, minor in enumerate(minors, start=1):
        assert sp.cancel((minor - sy.minor_closed_form(d, k)).subs(total, S)) == 0


@settings(max_examples=40, deadline=None)
@given(
    sig=st.lists(st.floats(0.05, 20.0), min_size=1, max_size=8),
    sed=st.floats(0.1, 5.0),
)
def test_closed_form_against_numeric_determinants(sig, sed):
    sig = np.array(sig)
    d = sig.size
    total = sig.sum()
    b = 1.0 / np.sqrt(sig * total)
    lam = sed**2 * total**2
    H = sy.bordered_hessian_numeric(sig, sed, b, lam)
    logs = sy.log_abs_minors(sig, sed)
    for m in range(1, d + 1):
        sign, logdet = np.linalg.slogdet(H[: m + 1, : m + 1])
        assert sign == -1.0
        assert logdet == pytest.approx(logs[m - 1], rel=1e-10, abs=1e-9)


def test_closed_form_numeric_against_sympy_closed_form():
    d = 4
    s = sy.symbols(d)
    sig, sed = np.array([0.3, 1.2, 2.5, 0.7]), 1.9
    values = {**dict(zip(s.sigma, sig)), s.sigma_eps_delta: sed}
    logs = sy.log_abs_minors(sig, sed)
    for m in range(1, d + 1):
        exact = sy.minor_closed_form(d, m + 1).subs(values)
        assert float(sp.log(-exact)) == pytest.approx(logs[m - 1], rel=1e-12)


def test_log_abs_minors_d1000_no_overflow():
    rng = np.random.default_rng(3)
    sig = rng.uniform(1e-3, 1.0, size=1000)
    logs = sy.log_abs_minors(sig, 1e-2)
    assert logs.shape == (1000,) and np.all(np.isfinite(logs))
    # a direct log-determinant of the largest minor agrees
    total = sig.sum()
    H = sy.bordered_hessian_numeric(sig, 1e-2, 1.0 / np.sqrt(sig * total), 1e-4 * total**2)
    sign, logdet = np.linalg.slogdet(H)
    assert sign == -1.0 and logdet == pytest.approx(logs[-1], rel=1e-10)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([], 1.0), "must not be empty"),
        (([1.0, 0.0], 1.0), "sigmas must be > 0"),
        (([1.0], -1.0), "sigma_eps_delta must be in"),
    ],
)
def test_log_abs_minors_rejects(args, match):
    with pytest.raises(ValueError, match=match):
        sy.log_abs_minors(*args)


# --- global minimality ------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    sig=st.lists(st.floats(0.01, 10.0), min_size=1, max_size=10),
    raw=st.lists(st.floats(0.01, 10.0), min_size=10, max_size=10),
)
def test_stationary_value_is_a_global_lower_bound(sig, raw):
    """Cauchy-Schwarz: sum b^-2 >= (sum sigma)^2 for every feasible b > 0."""
    sig = np.array(sig)
    b = np.array(raw[: sig.size])
    b = b / np.sqrt(np.sum((sig * b) ** 2))  # project onto the constraint
    assert np.sum(b**-2.0) >= sig.sum() ** 2 * (1 - 1e-12)
