"""Tests of egmlib.scaling: optimal scalings, clipping radii and noise errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from egmlib.scaling import (
    clip_radius,
    egm_error,
    egm_scaling,
    gaussian_data_scaling,
    noise_error,
)


def _sphere_point(rng: np.random.Generator, d: int) -> np.ndarray:
    """A random positive vector with unit norm."""
    v = np.abs(rng.standard_normal(d)) + 1e-3
    return v / np.linalg.norm(v)


# --------------------------------------------------------------------------- egm_scaling


def test_egm_scaling_formula_and_unit_norm():
    delta = np.array([1.0, 2.0, 3.0, 10.0])
    b = egm_scaling(delta)
    np.testing.assert_allclose(b, np.sqrt(delta / 16.0), rtol=1e-15)
    assert np.linalg.norm(b) == pytest.approx(1.0, rel=1e-15)


def test_egm_scaling_scale_invariant_and_extreme_values():
    delta = np.array([1e300, 3e300, 1.7e308])
    np.testing.assert_allclose(egm_scaling(delta), egm_scaling(delta / 1e300), rtol=1e-14)
    tiny = np.array([5e-324, 1e-320])
    assert np.all(np.isfinite(egm_scaling(tiny)))


def test_egm_scaling_is_optimal_among_unit_vectors():
    """No other unit vector gives Algorithm 2 less noise (Theorem 3)."""
    rng = np.random.default_rng(11)
    delta = rng.uniform(0.1, 5.0, 6)
    best = np.sum((delta / egm_scaling(delta)) ** 2)
    assert best == pytest.approx(egm_error(delta, 1.0), rel=1e-12)
    others = [np.sum((delta / _sphere_point(rng, 6)) ** 2) for _ in range(2000)]
    assert min(others) >= best * (1 - 1e-12)


def test_egm_error_against_gaussian_mechanism():
    """Improvement d ||Delta||^2 / ||Delta||_1^2 lies in [1, d], equal to 1 for equal Delta."""
    assert egm_error(np.ones(7), 2.0) == pytest.approx(7 * 4.0 * 7.0, rel=1e-15)
    rng = np.random.default_rng(5)
    for _ in range(50):
        delta = rng.exponential(size=10)
        ratio = 10 * np.sum(delta**2) / (egm_error(delta, 1.0))
        assert 1.0 - 1e-12 <= ratio <= 10.0


def test_zero_sensitivity_needs_no_noise():
    delta = np.array([2.0, 0.0, 2.0])
    b = egm_scaling(delta)
    assert b[1] == 0.0
    assert np.linalg.norm(b) == pytest.approx(1.0)
    assert egm_error(delta, 1.0) == pytest.approx(16.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        ([0.0, 0.0], "at least one entry > 0"),
        ([1.0, -1.0], ">= 0"),
        ([1.0, np.nan], "finite"),
        ([1.0, np.inf], "finite"),
        ([], "empty"),
        ([[1.0, 2.0]], "1-dimensional"),
    ],
)
def test_egm_scaling_rejects(bad, match):
    with pytest.raises(ValueError, match=match):
        egm_scaling(bad)


@pytest.mark.parametrize("sigma_opt", [0.0, -1.0, np.inf, np.nan])
def test_egm_error_rejects_sigma_opt(sigma_opt):
    with pytest.raises(ValueError, match="sigma_opt"):
        egm_error([1.0], sigma_opt)


# --------------------------------------------------------------------------- Lemma 4.1


def test_gaussian_data_scaling_formula_and_constraint():
    rng = np.random.default_rng(2)
    sigmas = rng.lognormal(0.0, 2.0, 50)
    b = gaussian_data_scaling(sigmas)
    np.testing.assert_allclose(b, 1.0 / np.sqrt(sigmas * sigmas.sum()), rtol=1e-14)
    # the constraint (10) holds exactly, and sum b^-2 = (sum sigma)^2
    assert np.sum((b * sigmas) ** 2) == pytest.approx(1.0, rel=1e-13)
    assert np.sum(b**-2.0) == pytest.approx(sigmas.sum() ** 2, rel=1e-13)


def test_gaussian_data_scaling_minimises_noise_on_the_constraint():
    """Any other b with sum (b sigma)^2 = 1 has a larger sum b^-2 (Lemma 4.1)."""
    rng = np.random.default_rng(3)
    sigmas = rng.uniform(0.2, 4.0, 5)
    best = np.sum(gaussian_data_scaling(sigmas) ** -2.0)
    for _ in range(2000):
        u = _sphere_point(rng, 5)  # u_j = b_j sigma_j on the unit sphere
        assert np.sum((sigmas / u) ** 2) >= best * (1 - 1e-12)


def test_gaussian_data_scaling_constant_coordinate():
    b = gaussian_data_scaling([4.0, 0.0, 1.0])
    assert np.isinf(b[1])
    np.testing.assert_allclose(b[[0, 2]], gaussian_data_scaling([4.0, 1.0]), rtol=1e-15)


@pytest.mark.parametrize(
    "bad, match",
    [([0.0, 0.0], "at least one entry > 0"), ([1.0, -0.5], ">= 0"), ([np.nan], "finite")],
)
def test_gaussian_data_scaling_rejects(bad, match):
    with pytest.raises(ValueError, match=match):
        gaussian_data_scaling(bad)


# --------------------------------------------------------------------------- clip_radius


def test_clip_radius_one_dimension_is_normal_quantile():
    for p in [0.5, 0.05, 1e-6, 1e-12]:
        c = clip_radius([2.0], [1.5], p)
        assert c == pytest.approx(3.0 * stats.norm.isf(p / 2), rel=1e-11)


def test_clip_radius_equal_weights_is_chi_quantile():
    d, s, b = 40, 0.3, 2.0
    p = np.array([0.3, 1e-3, 1e-9])
    c = clip_radius(np.full(d, s), np.full(d, b), p)
    np.testing.assert_allclose(c, s * b * np.sqrt(stats.chi2.isf(p, d)), rtol=1e-11)


def test_clip_radius_monte_carlo():
    """P(||(x - mu) * b|| > C) = p, checked on 2e5 seeded draws (4 standard errors)."""
    rng = np.random.default_rng(7)
    sigmas = np.array([3.0, 1.0, 0.5, 0.1])
    b = gaussian_data_scaling(sigmas)
    p, m = 0.02, 200_000
    c = clip_radius(sigmas, b, p)
    norms = np.linalg.norm(rng.standard_normal((m, 4)) * sigmas * b, axis=1)
    se = np.sqrt(p * (1 - p) / m)
    assert abs(np.mean(norms > c) - p) < 4 * se


def test_clip_radius_scale_equivariance_and_vectorisation():
    sigmas = np.array([1.0, 2.0, 5.0])
    b = np.array([0.7, 0.3, 0.1])
    p = np.array([0.1, 1e-4])
    c = clip_radius(sigmas, b, p)
    np.testing.assert_allclose(clip_radius(1e6 * sigmas, b / 1e6, p), c, rtol=1e-12)
    np.testing.assert_allclose(c, [clip_radius(sigmas, b, q) for q in p], rtol=1e-14)
    assert isinstance(clip_radius(sigmas, b, 0.1), float)


def test_clip_radius_constant_coordinate_and_p_one():
    sigmas = np.array([1.0, 0.0, 2.0])
    b = gaussian_data_scaling(sigmas)
    reduced = clip_radius([1.0, 2.0], gaussian_data_scaling([1.0, 2.0]), 1e-3)
    assert clip_radius(sigmas, b, 1e-3) == pytest.approx(reduced, rel=1e-14)
    # a finite b on a zero sigma changes nothing either
    assert clip_radius(sigmas, [b[0], 7.0, b[2]], 1e-3) == pytest.approx(reduced, rel=1e-14)
    assert clip_radius(sigmas, b, 1.0) == 0.0


@pytest.mark.parametrize(
    "scaling, p, match",
    [
        ([1.0, 1.0], 0.0, "p must be in"),
        ([1.0, 1.0], 1.5, "p must be in"),
        ([1.0, 1.0], np.nan, "p must be in"),
        ([1.0, 0.0], 0.1, "scaling must be in"),
        ([1.0, -1.0], 0.1, "scaling must be in"),
        ([1.0, np.inf], 0.1, "inf only where sigmas is 0"),
        ([1.0], 0.1, "shape"),
    ],
)
def test_clip_radius_rejects(scaling, p, match):
    with pytest.raises(ValueError, match=match):
        clip_radius([1.0, 2.0], scaling, p)


# --------------------------------------------------------------------------- noise_error


def test_noise_error_formulas():
    sigmas = np.array([3.0, 1.0, 0.25])
    p, s = 1e-4, 1.7
    c_n = clip_radius(sigmas, np.ones(3), p)
    assert noise_error(sigmas, np.ones(3), p, s) == pytest.approx(3 * (2 * c_n * s) ** 2, rel=1e-14)
    b = gaussian_data_scaling(sigmas)
    c_t = clip_radius(sigmas, b, p)
    expected = 4 * s**2 * c_t**2 * sigmas.sum() ** 2  # sum b^-2 = (sum sigma)^2
    assert noise_error(sigmas, b, p, s) == pytest.approx(expected, rel=1e-13)


def test_noise_error_equal_sigmas_scaling_does_not_matter():
    sigmas = np.full(8, 0.5)
    e_t = noise_error(sigmas, gaussian_data_scaling(sigmas), 1e-6, 1.0)
    e_n = noise_error(sigmas, np.ones(8), 1e-6, 1.0)
    assert e_t == pytest.approx(e_n, rel=1e-12)


def test_noise_error_constant_coordinate_adds_nothing():
    e3 = noise_error([2.0, 0.0, 1.0], gaussian_data_scaling([2.0, 0.0, 1.0]), 1e-3, 1.0)
    e2 = noise_error([2.0, 1.0], gaussian_data_scaling([2.0, 1.0]), 1e-3, 1.0)
    assert e3 == pytest.approx(e2, rel=1e-14)


def test_noise_error_rejects_sigma_opt():
    with pytest.raises(ValueError, match="sigma_opt"):
        noise_error([1.0], [1.0], 0.1, 0.0)
