"""Tests of egmlib.bounds: Lemma 4.2 and Theorem 4 against the exact tail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from egmlib.bounds import (
    bernstein_radius2,
    bernstein_t_max,
    theorem4_applies,
    theorem4_error_bound,
)
from egmlib.gchi2 import isf
from egmlib.scaling import gaussian_data_scaling, noise_error


def _random_sigmas(rng: np.random.Generator) -> np.ndarray:
    """Standard deviations of several shapes and scales (some zero)."""
    d = int(rng.integers(1, 400))
    kind = int(rng.integers(0, 5))
    if kind == 0:
        s = rng.uniform(0.0, 1.0, d)
    elif kind == 1:
        s = rng.lognormal(0.0, 1.5, d)
    elif kind == 2:
        s = np.ones(d)
    elif kind == 3:
        s = rng.pareto(1.0, d) + 1e-3
    else:
        s = np.where(rng.uniform(size=d) < 0.3, 0.0, rng.uniform(0.5, 1.0, d))
        s[0] = 1.0
    return s * 10.0 ** rng.uniform(-3, 3)


def test_t_max_formula_and_scale_invariance():
    s = np.array([1.0, 2.0, 3.0])
    assert bernstein_t_max(s) == pytest.approx(math.sqrt(2 * np.sum(s**4)) / (6 * 9.0), rel=1e-15)
    assert bernstein_t_max(1e-200 * s) == pytest.approx(bernstein_t_max(s), rel=1e-15)
    assert bernstein_t_max(np.ones(50)) == pytest.approx(math.sqrt(100) / 6, rel=1e-15)


def test_radius2_formula():
    s = np.array([0.5, 1.0, 0.0])
    t = 0.2  # t_max = 0.243
    expected = t * math.sqrt(8 * np.sum(s**4)) + np.sum(s**2)
    assert bernstein_radius2(s, t) == pytest.approx(expected, rel=1e-15)
    assert bernstein_radius2(s, 0.0) == pytest.approx(1.25, rel=1e-15)  # the mean


@pytest.mark.parametrize("t", [-1e-9, "t_max_plus", np.nan, np.inf])
def test_radius2_rejects_t_outside_validity(t):
    s = np.array([1.0, 0.4, 0.3])
    if t == "t_max_plus":
        t = bernstein_t_max(s) * (1 + 1e-12)
    with pytest.raises(ValueError, match="t must be"):
        bernstein_radius2(s, t)


def test_radius2_accepts_t_max():
    s = np.array([1.0, 0.4, 0.3])
    assert bernstein_radius2(s, bernstein_t_max(s)) > np.sum(s**2)


@pytest.mark.parametrize("bad", [[0.0, 0.0], [1.0, -1.0], [np.nan], []])
def test_bounds_reject_sigmas(bad):
    with pytest.raises(ValueError, match="sigmas"):
        bernstein_t_max(bad)


def test_lemma_4_2_holds_against_exact_tail():
    """For 60 seeded sigma vectors and t on [0, t_max]: exact C^2 <= Bernstein radius^2.

    The exact C^2 is the upper exp(-t^2) quantile of sum sigma_j^2 Z_j^2.  The
    ratio bound / exact is at least 1 everywhere; for t >= 1 it stays below 3.
    """
    rng = np.random.default_rng(2023)
    worst_large_t = 0.0
    for _ in range(60):
        s = _random_sigmas(rng)
        ts = np.linspace(0.0, bernstein_t_max(s), 7)[1:]
        exact = isf(np.exp(-(ts**2)), s**2)
        bound = np.array([bernstein_radius2(s, t) for t in ts])
        ratio = bound / exact
        assert np.all(ratio >= 1.0), (s.size, ts, ratio)
        if np.any(ts >= 1):
            worst_large_t = max(worst_large_t, float(ratio[ts >= 1].max()))
    assert 1.0 < worst_large_t < 3.0


def test_theorem4_condition_matches_lemma_4_2_on_scaled_sigmas():
    """ln n <= sum sigma^2 / (18 sigma_*^2)  iff  sqrt(ln n) <= t_max of sqrt(sigma / sum sigma)."""
    rng = np.random.default_rng(4)
    for _ in range(40):
        s = _random_sigmas(rng)
        scaled = np.sqrt(s / s.sum())  # b_j sigma_j of Lemma 4.1
        t_max = bernstein_t_max(scaled)
        for n in [1.0, 2.0, 50.0, 1e4, 1e9]:
            if abs(math.sqrt(math.log(n)) - t_max) > 1e-9:
                assert theorem4_applies(s, n) == (math.sqrt(math.log(n)) <= t_max)


def test_theorem4_bound_holds_and_is_tight_within_a_factor():
    """Wherever Theorem 4 applies, exact E||eta||^2 <= bound <= 1.6 exact (measured 1.12-1.49)."""
    rng = np.random.default_rng(99)
    ratios = []
    for _ in range(60):
        s = _random_sigmas(rng)
        b = gaussian_data_scaling(s)
        for n in [2.0, 10.0, 1e3, 1e6, 1e12]:
            if theorem4_applies(s, n):
                exact = noise_error(s, b, 1.0 / n, 0.8)
                ratios.append(theorem4_error_bound(s, n, 0.8) / exact)
    ratios = np.array(ratios)
    assert ratios.size >= 30
    assert ratios.min() >= 1.0
    assert ratios.max() < 1.6


def test_theorem4_bound_formula_and_refusal():
    s = np.ones(300)
    n = 1e6
    expected = 4 * 2.0**2 * 300 * (math.sqrt(8 * math.log(n) * 300) + 300)
    assert theorem4_error_bound(s, n, 2.0) == pytest.approx(expected, rel=1e-14)
    assert theorem4_applies(np.ones(249), 1e6) and not theorem4_applies(np.ones(248), 1e6)
    with pytest.raises(ValueError, match="Theorem 4 to apply"):
        theorem4_error_bound(np.ones(248), 1e6, 1.0)
    with pytest.raises(ValueError, match="n must be"):
        theorem4_applies(s, 0.5)
    with pytest.raises(ValueError, match="sigma_opt"):
        theorem4_error_bound(s, 10.0, -1.0)
