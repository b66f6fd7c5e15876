"""Tests of egmlib.elliptical: Theorem 3 of Reimherr and Awan (2019), computed.

Closed forms are checked against the general one-dimensional routine, the
one-dimensional reduction against a direct maximisation over R^d, the
generators against scipy's densities and against their normalising
constants, and the noise errors against quadrature and seeded simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import gammaln, kv

from egmlib import elliptical as ell
from egmlib.elliptical import (
    epsilon_elliptical,
    epsilon_gaussian,
    epsilon_knorm,
    epsilon_multivariate_laplace,
    epsilon_multivariate_t,
    expected_sq_norm_elliptical,
    expected_sq_norm_knorm,
    expected_sq_norm_t,
    log_generator,
    mahalanobis_norm,
    max_log_density_ratio,
    optimal_t_nu,
    sample_knorm,
    sample_multivariate_t,
    sigma_elliptical,
    sigma_knorm,
    sigma_multivariate_t,
    tail_log_ratio,
)

SEED = 2019_05_22


def _random_problem(d: int, delta: float, rng: np.random.Generator):
    """A random dispersion and two centres at Mahalanobis distance ``delta``."""
    root = rng.normal(size=(d, d))
    cov = root @ root.T / d + 0.5 * np.eye(d)
    mean2 = rng.normal(size=d)
    shift = rng.normal(size=d)
    shift *= delta / mahalanobis_norm(shift, cov)
    return mean2 + shift, mean2, cov


# ---------------------------------------------------------------------------
# The generators
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 5])
@pytest.mark.parametrize("nu", [0.5, 3.0, 30.0])
def test_t_generator_matches_scipy_density(d, nu):
    rng = np.random.default_rng(SEED)
    x = rng.standard_t(4, size=(50, d)) * 2.0
    y = np.sum(x * x, axis=1)
    log_const = gammaln((nu + d) / 2) - gammaln(nu / 2) - d / 2 * math.log(nu * math.pi)
    ours = log_const + log_generator("t", d=d, nu=nu)(y)
    theirs = stats.multivariate_t(loc=np.zeros(d), shape=np.eye(d), df=nu).logpdf(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 10])
def test_laplace_density_of_example_3_integrates_to_one(d):
    """The density 2 (2 pi)^(-d/2) f(y) of Example 3 is normalised (Sigma = I)."""
    log_f = log_generator("laplace", d=d)
    sphere = 2 * math.pi ** (d / 2) / math.gamma(d / 2)

    def radial(r):
        return r ** (d - 1) * math.exp(float(log_f(np.array([r * r]))[0]))

    total = sum(integrate.quad(radial, lo, hi, limit=200)[0] for lo, hi in [(0, 1), (1, 10), (10, np.inf)])
    assert total * sphere * 2 * (2 * math.pi) ** (-d / 2) == pytest.approx(1.0, rel=1e-8)


@pytest.mark.parametrize("d", [1, 2, 3, 7, 30])
def test_laplace_generator_matches_plain_bessel_formula(d):
    y = np.geomspace(1e-6, 1e4, 40)
    v = (2 - d) / 2
    direct = np.log((y / 2) ** (v / 2) * kv(v, np.sqrt(2 * y)))
    np.testing.assert_allclose(log_generator("laplace", d=d)(y), direct, rtol=1e-12, atol=1e-12)


def test_laplace_generator_has_a_pole_only_for_d_at_least_2():
    assert log_generator("laplace", d=1)(np.array([0.0]))[0] == pytest.approx(math.log(math.sqrt(math.pi) / 2))
    for d in (2, 3, 10):
        assert log_generator("laplace", d=d)(np.array([0.0]))[0] == math.inf


@pytest.mark.parametrize("d", [1, 2, 4, 20])
def test_laplace_has_identity_covariance(d):
    """Laplace(0, I) is sqrt(W) Z with W ~ Exp(1): E||X||^2 = d."""
    assert expected_sq_norm_elliptical(log_generator("laplace", d=d), d) == pytest.approx(d, rel=1e-10)


def test_generator_repr_and_scalar_input():
    assert repr(log_generator("t", d=2, nu=3.0)) == "log_generator('t', d=2, nu=3.0)"
    assert float(log_generator("knorm")(4.0)) == -2.0


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (("cauchy",), {}, ValueError, "family must be one of"),
        (("t", 2), {}, ValueError, "nu must be given"),
        (("t", 2), {"nu": 0.0}, ValueError, r"nu must be in \(0\.0, inf\)"),
        (("gaussian", 2), {"nu": 3.0}, ValueError, "nu is only accepted"),
        (("laplace", 0), {}, ValueError, "d must be an integer >= 1"),
        (("laplace", 2.0), {}, TypeError, "d must be an integer"),
    ],
)
def test_log_generator_rejects(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        log_generator(*args, **kwargs)


# ---------------------------------------------------------------------------
# Closed forms against the general routine
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("nu", [0.05, 1.0, 3.0, 30.0, 1e4])
@pytest.mark.parametrize("d", [1, 2, 5, 20, 200])
@pytest.mark.parametrize("a", [1e-3, 0.3, 1.0, 7.0])
def test_t_closed_form_matches_general_routine(nu, d, a):
    numeric = epsilon_elliptical(log_generator("t", d=d, nu=nu), sensitivity=a)
    assert numeric == pytest.approx(epsilon_multivariate_t(nu, d, sensitivity=a), rel=1e-9, abs=1e-9)


def test_t_maximiser_and_closed_form_symbolically():
    """Example 6: c* = (Delta + sqrt(Delta^2 + 4 nu)) / 2 and our closed form of epsilon."""
    c, a, nu, d = sp.symbols("c Delta nu d", positive=True)
    ratio = (nu + c**2) / (nu + (c - a) ** 2)
    c_star = (a + sp.sqrt(a**2 + 4 * nu)) / 2
    assert sp.simplify(sp.diff(ratio, c).subs(c, c_star)) == 0
    # the derivative vanishes exactly at the roots of c^2 - Delta c - nu; only c* is >= Delta
    numerator = sp.factor(sp.numer(sp.together(sp.diff(ratio, c))))
    assert sp.simplify(numerator / (c**2 - a * c - nu)) == -2 * a
    other = (a - sp.sqrt(a**2 + 4 * nu)) / 2
    assert sp.simplify(c_star + other - a) == 0 and sp.simplify(c_star * other + nu) == 0
    assert sp.simplify(c_star - a - (sp.sqrt(a**2 + 4 * nu) - a) / 2) == 0  # c* - Delta >= 0
    x = a / (2 * sp.sqrt(nu))
    closed = (x + sp.sqrt(1 + x**2)) ** 2  # exp(2 asinh x)
    assert sp.simplify(sp.radsimp(ratio.subs(c, c_star)) - closed) == 0
    assert sp.simplify(sp.exp(2 * sp.asinh(x).rewrite(sp.log)) - closed) == 0


@pytest.mark.parametrize("a", [1e-4, 0.5, 3.0, 50.0])
@pytest.mark.parametrize("sigma", [0.25, 1.0, 4.0])
def test_knorm_gaussian_laplace_closed_forms(a, sigma):
    # documented accuracy: about 1e-9 (1 + epsilon) in absolute terms
    knorm = epsilon_elliptical(log_generator("knorm"), sensitivity=a, sigma=sigma)
    assert knorm == pytest.approx(epsilon_knorm(sensitivity=a, sigma=sigma), rel=1e-9, abs=1e-9)
    lap1 = epsilon_elliptical(log_generator("laplace", d=1), sensitivity=a, sigma=sigma)
    assert lap1 == pytest.approx(epsilon_multivariate_laplace(1, sensitivity=a, sigma=sigma), rel=1e-9, abs=1e-9)
    assert epsilon_elliptical(log_generator("gaussian"), sensitivity=a, sigma=sigma) == math.inf
    assert epsilon_gaussian(sensitivity=a, sigma=sigma) == math.inf
    for d in (2, 3, 20):
        assert epsilon_elliptical(log_generator("laplace", d=d), sensitivity=a, sigma=sigma) == math.inf
        assert epsilon_multivariate_laplace(d, sensitivity=a, sigma=sigma) == math.inf


@pytest.mark.parametrize("d", [2, 3, 5, 20])
def test_laplace_tail_limit_of_example_3(d):
    """Condition (2) holds for the Laplace family: the tail ratio tends to exp(sqrt 2 a).

    (The Bessel expansion converges slowly for large d, so the extrapolated
    limit is less accurate there.)"""
    for a in (0.1, 1.0, 5.0):
        lim = tail_log_ratio(log_generator("laplace", d=d), sensitivity=a)
        assert lim == pytest.approx(math.sqrt(2) * a, rel=1e-6 if d == 20 else 1e-8)


def test_zero_sensitivity_is_free():
    for log_f in (log_generator("gaussian"), log_generator("laplace", d=3), log_generator("t", d=2, nu=1.0)):
        assert epsilon_elliptical(log_f, sensitivity=0.0) == 0.0
        assert tail_log_ratio(log_f, sensitivity=0.0) == 0.0
    assert epsilon_gaussian(sensitivity=0.0) == 0.0
    assert epsilon_multivariate_laplace(4, sensitivity=0.0) == 0.0
    assert epsilon_multivariate_t(3.0, 2, sensitivity=0.0) == 0.0


@settings(max_examples=40, deadline=None)
@given(
    nu=st.floats(0.1, 500.0),
    d=st.integers(1, 100),
    a=st.floats(1e-3, 20.0),
    k=st.floats(0.1, 10.0),
)
def test_epsilon_depends_on_delta_over_sigma_and_increases(nu, d, a, k):
    log_f = log_generator("t", d=d, nu=nu)
    one = epsilon_elliptical(log_f, sensitivity=a)
    assert epsilon_elliptical(log_f, sensitivity=a * k, sigma=k) == pytest.approx(one, rel=1e-9, abs=1e-9)
    assert epsilon_elliptical(log_f, sensitivity=1.1 * a) > one
    assert one == pytest.approx(epsilon_multivariate_t(nu, d, sensitivity=a), rel=1e-9, abs=1e-9)


# ---------------------------------------------------------------------------
# The limit at infinity and bad generators
# ---------------------------------------------------------------------------
def _sup_at_infinity(y):
    """f(r^2) = (1 + r) e^-r: h(c) = a - log(1 + a / (1 + c - a)) rises to a, never reaching it."""
    r = np.sqrt(y)
    return np.log1p(r) - r


@pytest.mark.parametrize("a", [1e-3, 0.2, 1.0, 10.0, 300.0])
def test_supremum_approached_only_at_infinity_is_found(a):
    eps = epsilon_elliptical(_sup_at_infinity, sensitivity=a)
    assert eps == pytest.approx(a, rel=1e-9, abs=1e-10)
    c = np.array([1e2, 1e4]) * max(a, 1.0)
    finite_grid = np.max(_sup_at_infinity((c - a) ** 2) - _sup_at_infinity(c**2))
    assert finite_grid < a  # any finite grid falls short


def test_divergent_tails_give_infinity():
    slowly = lambda y: -np.sqrt(y) * np.log1p(np.sqrt(y))  # h ~ a log c
    assert epsilon_elliptical(slowly, sensitivity=1.0) == math.inf
    assert tail_log_ratio(slowly, sensitivity=1.0) == math.inf
    stretched = lambda y: -(y**0.6)  # g(r) = r^1.2: h ~ 1.2 a c^0.2
    assert epsilon_elliptical(stretched, sensitivity=0.5) == math.inf
    compact = lambda y: np.where(y <= 1.0, 0.0, -np.inf)  # uniform on a ball
    assert epsilon_elliptical(compact, sensitivity=0.1) == math.inf


def test_convergent_power_tails_are_summed():
    """g(r) = r + 3 log(1 + r): h(c) decreases to a; the supremum is at c = a: a + 3 log(1 + a)."""
    log_f = lambda y: -np.sqrt(y) - 3 * np.log1p(np.sqrt(y))
    assert epsilon_elliptical(log_f, sensitivity=1.0) == pytest.approx(1 + 3 * math.log(2), rel=1e-12)
    assert tail_log_ratio(log_f, sensitivity=1.0) == pytest.approx(1.0, rel=1e-9)


def test_tail_limit_argument_is_used():
    log_f = log_generator("knorm")
    assert epsilon_elliptical(log_f, sensitivity=1.0, tail_limit=5.0) == pytest.approx(5.0)
    assert epsilon_elliptical(log_f, sensitivity=1.0, tail_limit=math.inf) == math.inf
    assert epsilon_elliptical(log_f, sensitivity=1.0, tail_limit=0.0) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("log_f", "kwargs", "error", "match"),
    [
        (lambda y: np.sqrt(y), {"sensitivity": 1.0}, ValueError, "non-increasing"),
        (lambda y: np.full_like(y, np.nan), {"sensitivity": 1.0}, ValueError, "NaN"),
        (lambda y: 0.0, {"sensitivity": 1.0}, ValueError, "vectorised"),
        (lambda y: np.where(y > -1, -np.inf, 0.0), {"sensitivity": 1.0}, ValueError, r"log_f\(0\)"),
        ("knorm", {"sensitivity": 1.0}, TypeError, "log_f must be callable"),
        (lambda y: -y, {"sensitivity": -1.0}, ValueError, r"sensitivity must be in \[0\.0, inf\)"),
        (lambda y: -y, {"sensitivity": 1.0, "sigma": 0.0}, ValueError, r"sigma must be in \(0\.0, inf\)"),
        (lambda y: -y, {"sensitivity": 1.0, "tail_limit": -1.0}, ValueError, "tail_limit must be in"),
        (lambda y: -y, {"sensitivity": 1e300, "sigma": 1e-300}, ValueError, "must be finite"),
    ],
)
def test_epsilon_elliptical_rejects(log_f, kwargs, error, match):
    with pytest.raises(error, match=match):
        epsilon_elliptical(log_f, **kwargs)


# ---------------------------------------------------------------------------
# The reduction against a direct maximisation over R^d
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("d", [2, 5, 20])
@pytest.mark.parametrize(("family", "nu"), [("t", 3.0), ("t", 40.0), ("knorm", None)])
def test_direct_maximisation_over_rd_agrees(d, family, nu):
    rng = np.random.default_rng(SEED + d)
    delta, sigma = 1.3, 0.8
    mean1, mean2, cov = _random_problem(d, delta, rng)
    log_f = log_generator(family, d=d, nu=nu)
    one_d = epsilon_elliptical(log_f, sensitivity=delta, sigma=sigma)
    direct = max_log_density_ratio(log_f, mean1, mean2, cov, sigma=sigma, rng=rng, n_random=2000, n_starts=4)
    assert direct.log_ratio == pytest.approx(one_d, rel=1e-7)
    assert direct.log_ratio <= one_d + 1e-9
    assert direct.best_random <= one_d + 1e-9
    if family == "t":  # the maximiser lies on the ray through the shift, at radius c* (Example 6)
        a = delta / sigma
        c_star = (a + math.sqrt(a * a + 4 * nu)) / 2
        u = mean2 - mean1
        y = direct.argmax - mean2
        radius = mahalanobis_norm(y, cov) / sigma
        cosine = (y @ np.linalg.solve(cov, -u)) / (mahalanobis_norm(y, cov) * mahalanobis_norm(u, cov))
        assert radius == pytest.approx(c_star, rel=1e-4)
        assert cosine == pytest.approx(1.0, abs=1e-7)


def test_paper_scaling_sigma_minus_two_is_wrong():
    """Theorem 3 as printed shifts by Delta / sigma^2; the density ratio says Delta / sigma."""
    rng = np.random.default_rng(SEED)
    d, delta, sigma, nu = 3, 1.0, 2.5, 4.0
    mean1, mean2, cov = _random_problem(d, delta, rng)
    log_f = log_generator("t", d=d, nu=nu)
    direct = max_log_density_ratio(log_f, mean1, mean2, cov, sigma=sigma, rng=rng).log_ratio
    assert direct == pytest.approx(epsilon_multivariate_t(nu, d, sensitivity=delta / sigma), rel=1e-7)
    printed = epsilon_multivariate_t(nu, d, sensitivity=delta / sigma**2)
    assert abs(direct - printed) > 0.3 * direct


def test_gaussian_and_laplace_ratios_are_unbounded_in_rd():
    rng = np.random.default_rng(SEED)
    d = 5
    mean1, mean2, cov = _random_problem(d, 1.0, rng)
    small = max_log_density_ratio(log_generator("gaussian"), mean1, mean2, cov, rng=rng, radius=5.0, n_starts=2)
    large = max_log_density_ratio(log_generator("gaussian"), mean1, mean2, cov, rng=rng, radius=50.0, n_starts=2)
    assert large.log_ratio > 5 * small.log_ratio > 0
    # multivariate Laplace: the ratio blows up next to the centre mean1 (the pole)
    log_f = log_generator("laplace", d=d)
    direction = rng.normal(size=d)
    ratios = []
    for t in (1e-2, 1e-4, 1e-6):
        x = mean1 + t * direction
        q1 = mahalanobis_norm(x - mean1, cov) ** 2
        q2 = mahalanobis_norm(x - mean2, cov) ** 2
        ratios.append(float(log_f(np.array([q1]))[0] - log_f(np.array([q2]))[0]))
    assert ratios[1] - ratios[0] > 10 and ratios[2] - ratios[1] > 10  # ~ (d - 2) log(1/t)


def test_max_log_density_ratio_rejects():
    log_f = log_generator("knorm")
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="same shape"):
        max_log_density_ratio(log_f, [0.0], [0.0, 1.0], np.eye(2), rng=rng)
    with pytest.raises(ValueError, match="positive definite"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], [[1.0, 2.0], [2.0, 1.0]], rng=rng)
    with pytest.raises(ValueError, match="symmetric"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], [[1.0, 0.5], [0.0, 1.0]], rng=rng)
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], np.eye(3), rng=rng)
    with pytest.raises(TypeError, match="rng"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], np.eye(2), rng=0)
    with pytest.raises(ValueError, match=r"n_starts must be an integer in \[1, inf\]"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], np.eye(2), rng=rng, n_starts=0)
    with pytest.raises(ValueError, match="radius"):
        max_log_density_ratio(log_f, [0.0, 0.0], [0.0, 1.0], np.eye(2), rng=rng, radius=-1.0)


def test_mahalanobis_norm_against_explicit_inverse():
    rng = np.random.default_rng(SEED)
    _, _, cov = _random_problem(6, 1.0, rng)
    v = rng.normal(size=(10, 6))
    expected = np.sqrt(np.einsum("ij,jk,ik->i", v, np.linalg.inv(cov), v))
    np.testing.assert_allclose(mahalanobis_norm(v, cov), expected, rtol=1e-12)
    assert isinstance(mahalanobis_norm(v[0], cov), float)
    with pytest.raises(ValueError, match="vectors must have shape"):
        mahalanobis_norm(np.ones(5), cov)


# ---------------------------------------------------------------------------
# Noise scales for a target epsilon, and the error of the noise
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(("eps", "nu", "d"), [(1.0, 3.0, 1), (0.5, 10.0, 5), (2.0, 25.0, 20)])
def test_sigma_inversions(eps, nu, d):
    s_t = sigma_multivariate_t(eps, nu, d, sensitivity=2.0)
    assert epsilon_multivariate_t(nu, d, sensitivity=2.0, sigma=s_t) == pytest.approx(eps, rel=1e-12)
    assert sigma_elliptical(log_generator("t", d=d, nu=nu), epsilon=eps, sensitivity=2.0) == pytest.approx(
        s_t, rel=1e-8
    )
    assert sigma_elliptical(log_generator("knorm"), epsilon=eps, sensitivity=2.0) == pytest.approx(
        sigma_knorm(eps, sensitivity=2.0), rel=1e-8
    )


def test_sigma_elliptical_rejects_families_without_pure_dp():
    with pytest.raises(ValueError, match="epsilon = inf at every noise scale"):
        sigma_elliptical(log_generator("gaussian"), epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon = inf at every noise scale"):
        sigma_elliptical(log_generator("laplace", d=2), epsilon=1.0)
    with pytest.raises(ValueError, match=r"epsilon must be in \(0\.0, inf\)"):
        sigma_elliptical(log_generator("knorm"), epsilon=0.0)


@pytest.mark.parametrize("d", [1, 3, 20])
def test_expected_sq_norms_closed_forms_against_quadrature(d):
    for nu in (2.5, 4.0, 50.0):
        quad = expected_sq_norm_elliptical(log_generator("t", d=d, nu=nu), d, 1.7)
        assert quad == pytest.approx(expected_sq_norm_t(nu, d, 1.7), rel=1e-10)
    quad = expected_sq_norm_elliptical(log_generator("knorm"), d, 0.3)
    assert quad == pytest.approx(expected_sq_norm_knorm(d, 0.3), rel=1e-10)
    assert expected_sq_norm_elliptical(log_generator("gaussian"), d) == pytest.approx(d, rel=1e-10)
    assert expected_sq_norm_t(2.0, d) == math.inf
    assert expected_sq_norm_elliptical(log_generator("t", d=d, nu=1.5), d) == math.inf


def test_expected_sq_norms_by_simulation():
    rng = np.random.default_rng(SEED)
    n = 200_000
    for sample, exact in [
        (sample_multivariate_t(9.0, 5, n, scale=1.5, rng=rng), expected_sq_norm_t(9.0, 5, 1.5)),
        (sample_knorm(5, n, scale=0.7, rng=rng), expected_sq_norm_knorm(5, 0.7)),
    ]:
        sq = np.sum(sample**2, axis=1)
        assert abs(sq.mean() - exact) < 4 * sq.std(ddof=1) / math.sqrt(n)


def test_knorm_sampler_has_the_right_radial_law():
    rng = np.random.default_rng(SEED)
    x = sample_knorm(4, 20_000, scale=2.0, rng=rng)
    radius = np.linalg.norm(x, axis=1)
    assert stats.kstest(radius, stats.gamma(4, scale=2.0).cdf).pvalue > 1e-3
    directions = x / radius[:, None]
    assert np.all(np.abs(directions.mean(axis=0)) < 4 / math.sqrt(20_000))


def test_optimal_t_nu_is_the_minimiser_and_t_never_beats_knorm():
    for d in (1, 2, 5, 20, 100, 1000):
        for eps in (0.1, 1.0, 5.0):
            nu = optimal_t_nu(eps, d)
            best = ell._t_error_factor(nu, d, eps)
            grid = np.linspace(2.001, 10 * d + 50, 20_000)
            assert best <= min(ell._t_error_factor(g, d, eps) for g in grid) * (1 + 1e-9)
            assert best > expected_sq_norm_knorm(d, sigma_knorm(eps))
        if d >= 100:
            assert optimal_t_nu(0.1, d) == pytest.approx(d + 4, rel=1e-3)
            ratio = ell._t_error_factor(optimal_t_nu(0.1, d), d, 0.1) / expected_sq_norm_knorm(d, sigma_knorm(0.1))
            assert ratio == pytest.approx((d + 2) / (d + 1), rel=1e-4)


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "error", "match"),
    [
        (epsilon_multivariate_t, (0.0, 2), {"sensitivity": 1.0}, ValueError, "nu must be in"),
        (epsilon_multivariate_t, (1.0, 0), {"sensitivity": 1.0}, ValueError, "d must be an integer >= 1"),
        (epsilon_multivariate_t, (1.0, 2), {"sensitivity": math.nan}, ValueError, "sensitivity must be finite"),
        (epsilon_knorm, (), {"sensitivity": 1.0, "sigma": -1.0}, ValueError, "sigma must be in"),
        (epsilon_multivariate_laplace, (True,), {"sensitivity": 1.0}, TypeError, "d must be an integer"),
        (sigma_multivariate_t, (0.0, 3.0, 2), {}, ValueError, "epsilon must be in"),
        (sigma_knorm, (1.0,), {"sensitivity": 0.0}, ValueError, "sensitivity must be in"),
        (expected_sq_norm_t, (3.0, 2, 0.0), {}, ValueError, "scale must be in"),
        (expected_sq_norm_knorm, (0,), {}, ValueError, "d must be an integer >= 1"),
        (optimal_t_nu, (-1.0, 3), {}, ValueError, "epsilon must be in"),
        (sample_knorm, (2, -1), {"rng": np.random.default_rng(0)}, ValueError, "size must be an integer >= 0"),
        (sample_multivariate_t, (3.0, 2, 5), {"rng": None}, TypeError, "rng must be a numpy.random.Generator"),
        (expected_sq_norm_elliptical, (lambda y: -y, 2, -1.0), {}, ValueError, "scale must be in"),
    ],
)
def test_public_functions_reject_bad_input(func, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(*args, **kwargs)
