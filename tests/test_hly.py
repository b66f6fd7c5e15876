"""Tests of egmlib.hly (Huang, Liang & Yi 2021): rotation, a literal reference
implementation, sensitivity, the exact noise law, bad input and determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import hadamard
from scipy.stats import chi2, norm

from egmlib.hly import (
    _budgets,
    clipped_mean,
    hly_mean,
    padded_dimension,
    private_quantiles,
    random_signs,
    rotate,
    rotate_back,
    simulate_hly,
)


# --------------------------------------------------------------------------- rotation
@pytest.mark.parametrize("D", [1, 2, 16, 128, 2048])
def test_rotation_is_the_authors_matrix_and_orthogonal(D):
    rng = np.random.default_rng(D)
    s = random_signs(D, rng=rng)
    H = hadamard(D) / math.sqrt(D)
    M = np.eye(D)
    for k in range(3):                      # the authors' (H D1)(H D2)(H D3)
        M = M @ H @ np.diag(s[k])
    Y = rng.standard_normal((5, D))
    got = rotate(Y.copy(), s)
    assert np.allclose(got, Y @ M.T, atol=1e-12)       # both code paths (dense, butterflies)
    assert np.allclose(np.linalg.norm(got, axis=1), np.linalg.norm(Y, axis=1))
    assert np.allclose(rotate_back(got[2], s), Y[2], atol=1e-12)


# --------------------------------------------------------------------------- literal reference
def _reference(X, center, R, rho, rng, T=10):
    """The authors' random_rotation_mean, written out loop by loop (dense matrices)."""
    n, d = X.shape
    D = padded_dimension(d)
    s = np.where(rng.random((3, D)) < 0.5, -1.0, 1.0)
    H = hadamard(D) / math.sqrt(D)
    HD = (H @ np.diag(s[0])) @ (H @ np.diag(s[1])) @ (H @ np.diag(s[2]))
    xp = np.zeros((n, D))
    xp[:, :d] = X - center
    xh = xp @ HD.T
    rc = 0.25 * rho
    lefts, rights = np.full(D, -R), np.full(D, R)
    for _ in range(T):                       # all coordinates share one noisy round
        noise = rng.standard_normal(D) * math.sqrt(T / (2.0 * rc / D))
        for j in range(D):
            mid = (lefts[j] + rights[j]) / 2
            count = sum(1 for v in xh[:, j] if v <= mid)
            if count + noise[j] <= 0.5 * n:
                lefts[j] = mid
            else:
                rights[j] = mid
    c = (lefts + rights) / 2
    xs = xh - c
    p1, p2 = 0.25 * 0.75 * rho, 0.75 * 0.75 * rho
    m = int(n - 2 * math.sqrt(D / (2 * p2)) - math.sqrt(T / (2 * p1)))
    norms = np.linalg.norm(xs, axis=1)
    left, right = 0.0, 2 * (1 + math.sqrt(D)) * R
    for _ in range(T):
        mid = (left + right) / 2
        count = sum(1 for v in norms if v <= mid)
        if count + rng.standard_normal(1)[0] * math.sqrt(T / (2 * p1)) <= m:
            left = mid
        else:
            right = mid
    C = (left + right) / 2
    clipped = [min(C / v, 1.0) * row if v > 0 else row for v, row in zip(norms, xs)]
    y = np.mean(clipped, axis=0) + rng.standard_normal(D) * (2 * C / math.sqrt(2 * p2) / n)
    return (HD.T @ (y + c))[:d] + center


@pytest.mark.parametrize("d, n", [(3, 400), (10, 2000), (20, 300)])
def test_agrees_with_a_literal_reference_implementation(d, n):
    data = np.random.default_rng(7).standard_normal((n, d)) * 0.5 + 2.0
    center = np.full(d, 1.0)
    got = hly_mean(data, center, 5.0, 0.3, rng=np.random.default_rng(11)).mean
    want = _reference(data, center, 5.0, 0.3, np.random.default_rng(11))
    assert np.allclose(got, want, rtol=0, atol=1e-9)


def test_iome_settings_of_the_plan_authors():
    """Their random_rotation_mean: T = 20, p1 = 0.01 p, m = n - 4 sqrt(d/(2 p2)) - 2 sqrt(T/(2 p1))."""
    n, d, rho = 3000, 16, 0.5
    X = np.random.default_rng(1).standard_normal((n, d))
    res = hly_mean(X, np.zeros(d), 25.0, rho, rng=np.random.default_rng(2), rounds=20,
                   quantile_share=0.01, norm_bound=100.0, noise_margin=4.0, count_margin=2.0)
    p = 0.75 * rho
    assert res.rank == int(n - 4 * math.sqrt(d / (2 * 0.99 * p)) - 2 * math.sqrt(20 / (2 * 0.01 * p)))
    assert 0 < res.threshold < 100.0
    default = hly_mean(X, np.zeros(d), 25.0, rho, rng=np.random.default_rng(2))
    p1, p2 = 0.25 * p, 0.75 * p
    assert default.rank == int(n - 2 * math.sqrt(d / (2 * p2)) - math.sqrt(10 / (2 * p1)))


def test_rank_margin_lowers_the_rank_and_simulate_reports_the_threshold():
    X = np.random.default_rng(1).standard_normal((2000, 4))
    a = hly_mean(X, np.zeros(4), 5.0, 0.5, rng=np.random.default_rng(2))
    b = hly_mean(X, np.zeros(4), 5.0, 0.5, rng=np.random.default_rng(2), count_margin=3.0)
    sd = math.sqrt(10 / (2 * 0.25 * 0.75 * 0.5))
    assert abs((a.rank - b.rank) - 2 * sd) <= 1
    e = simulate_hly(np.ones(4), np.ones(4), np.zeros(4), 500, 3, 5.0, 0.5,
                     rng=np.random.default_rng(4), rounds=20, count_margin=3.0)
    assert e.threshold.shape == (3,) and np.all(e.threshold > 0)


# --------------------------------------------------------------------------- privacy
def test_budgets_add_up_to_rho():
    rc, r1, r2 = _budgets(0.37, 0.25, 0.25)
    assert math.isclose(rc + r1 + r2, 0.37, rel_tol=1e-15)
    assert math.isclose(rc, 0.0925) and math.isclose(r1, 0.25 * 0.2775)


@pytest.mark.parametrize("seed", [0, 1])
def test_clipped_step_sensitivity_random_and_adversarial_neighbours(seed):
    rng = np.random.default_rng(seed)
    n, D, C = 50, 16, 0.8
    Y = rng.standard_normal((n, D)) * 0.5
    bound = 2 * C / n
    base, _ = clipped_mean(Y, C)
    worst = 0.0
    for k in range(300):                    # random neighbours, one row replaced
        Z = Y.copy()
        Z[k % n] = rng.standard_normal(D) * 10 ** rng.uniform(-2, 4)
        worst = max(worst, np.linalg.norm(clipped_mean(Z, C)[0] - base) / bound)
    assert worst <= 1 + 1e-12
    u = rng.standard_normal(D)             # adversarial: the row sent to two far opposite points
    A, B = Y.copy(), Y.copy()
    A[3], B[3] = 1e6 * u, -1e6 * u
    move = np.linalg.norm(clipped_mean(A, C)[0] - clipped_mean(B, C)[0]) / bound
    assert abs(move - 1) < 1e-9


def test_quantile_counts_have_the_stated_noise():
    # every value below every midpoint: each count is n; in one round the search moves
    # right exactly when n + noise <= rank, noise N(0, k / (2 rho)) for k columns searched
    n, k, rho = 100, 4096, 2.0
    sd = math.sqrt(k / (2 * rho))
    Y = np.full((n, k), -5.0)
    out = private_quantiles(Y, n - sd, 0.0, 16.0, rho, 1, rng=np.random.default_rng(3))
    p = norm.cdf(-1.0)
    frac = float(np.mean(out > 8.0))
    assert abs(frac - p) < 4 * math.sqrt(p * (1 - p) / k)


# --------------------------------------------------------------------------- error law
def test_error_is_clipping_plus_exact_gaussian_noise():
    """Given the threshold, est - xbar = R^T (clipped mean - mean + N(0, sd^2 I)) restricted
    to the first d coordinates; so ||est - xbar - R^T(bias)||^2 / sd^2 is chi^2_d, independently
    of everything else. A chi^2 test on 200 replicates."""
    rng = np.random.default_rng(5)
    d, n, reps = 6, 3000, 200
    total, dof = 0.0, 0
    for _ in range(reps):
        X = rng.standard_normal((n, d)) * [1, 0.5, 0.2, 0.2, 0.1, 0.1] + 3.0
        res = hly_mean(X, np.zeros(d), 10.0, 0.5, rng=rng)
        D = padded_dimension(d)
        Y = np.zeros((n, D))
        Y[:, :d] = X
        rotate(Y, res.signs)
        Y -= res.shift
        bias = clipped_mean(Y, res.threshold)[0] - Y.mean(axis=0)
        resid = res.mean - X.mean(axis=0) - rotate_back(bias, res.signs)[:d]
        total += float(np.sum(resid**2)) / res.noise_sd**2
        dof += d
    z = (total - dof) / math.sqrt(2 * dof)
    assert abs(z) < 4, z
    assert chi2.sf(total, dof) > 1e-4 and chi2.cdf(total, dof) > 1e-4


def test_error_on_identity_gaussian_where_clipping_is_negligible():
    """N(mu, I), n large: the clipping error is negligible and E||est - xbar||^2 = E[d sd^2]."""
    d, n = 4, 200_000
    e = simulate_hly(np.ones(d), np.full(d, 2.0), np.zeros(d), n, 60, 10.0, 1.0,
                     rng=np.random.default_rng(9))
    ratio = e.sample / e.noise
    z = (ratio.mean() - 1) / (ratio.std(ddof=1) / math.sqrt(ratio.size))
    assert abs(z) < 4
    assert abs(ratio.mean() - 1) < 0.3


# --------------------------------------------------------------------------- determinism
def test_deterministic_given_the_generator():
    X = np.random.default_rng(0).standard_normal((500, 5))
    a = hly_mean(X, np.zeros(5), 3.0, 0.5, rng=np.random.default_rng(1))
    b = hly_mean(X, np.zeros(5), 3.0, 0.5, rng=np.random.default_rng(1))
    c = hly_mean(X, np.zeros(5), 3.0, 0.5, rng=np.random.default_rng(2))
    assert np.array_equal(a.mean, b.mean) and a.threshold == b.threshold
    assert not np.array_equal(a.mean, c.mean)
    s1 = simulate_hly(np.ones(3), np.ones(3), np.zeros(3), 100, 3, 5.0, 0.5, rng=np.random.default_rng(4))
    s2 = simulate_hly(np.ones(3), np.ones(3), np.zeros(3), 100, 3, 5.0, 0.5, rng=np.random.default_rng(4))
    assert np.array_equal(s1.sample, s2.sample)


# --------------------------------------------------------------------------- bad input
GOOD = dict(X=np.ones((10, 3)), center=np.zeros(3), radius=1.0, rho=0.5)


@pytest.mark.parametrize("change, exc", [
    (dict(X=np.ones(10)), ValueError),
    (dict(X=np.ones((1, 3))), ValueError),
    (dict(X=np.array([[np.nan, 1, 1]] * 3)), ValueError),
    (dict(X="abc"), TypeError),
    (dict(center=np.zeros(2)), ValueError),
    (dict(radius=0.0), ValueError),
    (dict(radius=-1.0), ValueError),
    (dict(rho=0.0), ValueError),
    (dict(rho=float("inf")), ValueError),
    (dict(center_share=1.0), ValueError),
    (dict(quantile_share=0.0), ValueError),
    (dict(rounds=0), ValueError),
    (dict(rounds=2.5), TypeError),
    (dict(rounds=True), TypeError),
    (dict(norm_bound=-1.0), ValueError),
    (dict(noise_margin=-1.0), ValueError),
    (dict(count_margin=float("nan")), ValueError),
])
def test_hly_mean_rejects_bad_input(change, exc):
    kwargs = {**GOOD, **change}
    X = kwargs.pop("X")
    with pytest.raises(exc):
        hly_mean(X, rng=np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0)])
def test_rng_must_be_a_generator(rng):
    with pytest.raises(TypeError):
        hly_mean(np.ones((10, 3)), np.zeros(3), 1.0, 0.5, rng=rng)
    with pytest.raises(TypeError):
        simulate_hly(np.ones(3), np.ones(3), np.zeros(3), 10, 1, 1.0, 0.5, rng=rng)


def test_other_functions_reject_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        random_signs(12, rng=rng)
    with pytest.raises(ValueError):
        padded_dimension(0)
    with pytest.raises(TypeError):
        rotate(np.ones((2, 4), dtype=np.float32), np.ones((1, 4)))
    with pytest.raises(ValueError):
        rotate(np.ones((2, 4)), np.ones((1, 8)))
    with pytest.raises(ValueError):
        rotate(np.ones((2, 4)), np.full((1, 4), 0.5))
    with pytest.raises(ValueError):
        private_quantiles(np.ones((3, 2)), 1, 2.0, 1.0, 0.5, 3, rng=rng)
    with pytest.raises(ValueError):
        clipped_mean(np.ones((3, 2)), -1.0)
    with pytest.raises(ValueError):
        simulate_hly(np.ones(3), np.ones(2), np.zeros(3), 10, 1, 1.0, 0.5, rng=rng)
    with pytest.raises(ValueError):
        simulate_hly(np.array([1.0, 0.0, 1.0]), np.ones(3), np.zeros(3), 10, 1, 1.0, 0.5, rng=rng)
