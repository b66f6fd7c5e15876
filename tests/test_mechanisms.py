"""Tests of egmlib.mechanisms: Algorithms 1-3 on data arrays, and their privacy invariants."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest
from scipy import stats

import egmlib.mechanisms as mech
from egmlib.mechanisms import (
    clipped_sum,
    elliptical_gaussian_mechanism,
    gaussian_data_mechanism,
    gaussian_mechanism,
)
from egmlib.privacy import analytic_sigma
from egmlib.scaling import clip_radius, egm_error, egm_scaling, gaussian_data_scaling, noise_error

EPS, DELTA = 1.0, 1e-6


def _reference_clipped_sum(X, center, radius, b):
    """Row-by-row definition: n c + (1/b) sum_i y_i min(1, C / ||y_i||), y_i = (x_i - c) b."""
    X = np.asarray(X, dtype=np.float64)
    y = (X - center) * b
    norms = np.linalg.norm(y, axis=1)
    factor = np.ones(len(X))
    out = norms > radius
    factor[out] = radius / norms[out]
    return len(X) * center + (y * factor[:, None]).sum(axis=0) / b, int(out.sum())


def _study_clipped_sum(X, center, radius, b):
    """Algorithm 3 of the study as printed: T += clip(x~) + mu_hat, then T_j *= 1 / b_j."""
    y = (np.asarray(X, dtype=np.float64) - center) * b
    norms = np.linalg.norm(y, axis=1)
    factor = np.minimum(1.0, radius / norms)
    T = (y * factor[:, None] + center).sum(axis=0)
    return T / b


def _assert_variance(z, label=""):
    """z should be iid N(0, 1): mean and variance tests at level 1e-6 each."""
    m = z.size
    assert abs(z.mean()) < 5.0 / np.sqrt(m), label
    stat = np.sum((z - z.mean()) ** 2)
    lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], m - 1)
    assert lo < stat < hi, (label, stat / (m - 1))


@pytest.fixture
def small_blocks(monkeypatch):
    """Force many small blocks (and a partial last block)."""
    monkeypatch.setattr(mech, "_BLOCK_ELEMENTS", 37)


# --------------------------------------------------------------------------- Algorithm 1


def test_gaussian_mechanism_types_and_zero_sensitivity():
    rng = np.random.default_rng(0)
    out = gaussian_mechanism(3.0, 1.0, epsilon=EPS, delta=DELTA, rng=rng)
    assert isinstance(out, float)
    arr = gaussian_mechanism(np.zeros((2, 3)), 1.0, epsilon=EPS, delta=DELTA, rng=rng)
    assert arr.shape == (2, 3)
    assert gaussian_mechanism(3.0, 0.0, epsilon=EPS, delta=DELTA, rng=rng) == 3.0


def test_gaussian_mechanism_noise_distribution():
    rng = np.random.default_rng(1)
    sens = 2.5
    noise = gaussian_mechanism(np.zeros(20_000), sens, epsilon=0.5, delta=1e-8, rng=rng)
    _assert_variance(noise / analytic_sigma(0.5, 1e-8, sens))


def test_gaussian_mechanism_rejects():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError):
        gaussian_mechanism(1.0, 1.0, EPS, DELTA, rng)  # privacy parameters are keyword-only
    with pytest.raises(TypeError, match="rng"):
        gaussian_mechanism(1.0, 1.0, epsilon=EPS, delta=DELTA, rng=np.random.RandomState(0))
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_mechanism(1.0, -1.0, epsilon=EPS, delta=DELTA, rng=rng)
    with pytest.raises(ValueError, match="value"):
        gaussian_mechanism([1.0, np.nan], 1.0, epsilon=EPS, delta=DELTA, rng=rng)
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(1.0, 1.0, epsilon=EPS, delta=1.5, rng=rng)
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(1.0, 0.0, epsilon=EPS, delta=1.5, rng=rng)


# --------------------------------------------------------------------------- Algorithm 2


def test_elliptical_noise_scale_and_sum():
    rng = np.random.default_rng(2)
    lower, upper = np.array([0.0, -1.0, 5.0]), np.array([1.0, 3.0, 5.0])
    X = rng.uniform(lower, upper, size=(500, 3))
    res = elliptical_gaussian_mechanism(X, lower, upper, epsilon=EPS, delta=DELTA, rng=rng)
    width = upper - lower
    sigma_opt = analytic_sigma(EPS, DELTA)
    assert res.sigma_opt == pytest.approx(sigma_opt, rel=1e-15)
    b = egm_scaling(width)
    np.testing.assert_allclose(res.scaling, b, rtol=1e-15)
    np.testing.assert_allclose(res.noise_std[:2], sigma_opt * width[:2] / b[:2], rtol=1e-13)
    assert res.noise_std[2] == 0.0  # zero width: no noise
    assert res.estimate[2] == pytest.approx(500 * 5.0, rel=1e-15)
    assert np.sum(res.noise_std**2) == pytest.approx(egm_error(width, sigma_opt), rel=1e-13)
    assert np.all(np.abs(res.estimate - X.sum(axis=0)) <= 6 * res.noise_std)
    with pytest.raises(ValueError):
        res.estimate[0] = 0.0  # results are read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.sigma_opt = 1.0


def test_elliptical_noise_distribution():
    """Estimate on an all-zero data set = noise; standardised by sigma_opt sqrt(Delta_j ||Delta||_1)."""
    rng = np.random.default_rng(3)
    width = np.repeat([0.5, 1.0, 4.0, 20.0], 1000)
    res = elliptical_gaussian_mechanism(
        np.zeros((3, width.size)), -width / 2, width / 2, epsilon=0.7, delta=1e-7, rng=rng
    )
    std = analytic_sigma(0.7, 1e-7) * np.sqrt(width * width.sum())
    z = res.estimate / std
    for k in range(4):
        _assert_variance(z[1000 * k : 1000 * (k + 1)], label=k)


def test_elliptical_all_widths_zero_is_exact():
    rng = np.random.default_rng(4)
    X = np.tile([1.0, 2.0], (10, 1))
    res = elliptical_gaussian_mechanism(X, [1.0, 2.0], [1.0, 2.0], epsilon=EPS, delta=DELTA, rng=rng)
    np.testing.assert_array_equal(res.estimate, [10.0, 20.0])


def test_elliptical_rejects_rows_outside_box(small_blocks):
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, size=(100, 3))
    X[0] = [0.0, 1.0, 0.5]  # on the boundary: fine
    elliptical_gaussian_mechanism(X, np.zeros(3), np.ones(3), epsilon=EPS, delta=DELTA, rng=rng)
    X[73, 1] = 1.0 + 1e-12
    with pytest.raises(ValueError, match="row 73 lies outside the box"):
        elliptical_gaussian_mechanism(X, np.zeros(3), np.ones(3), epsilon=EPS, delta=DELTA, rng=rng)
    X[73, 1] = np.nan
    with pytest.raises(ValueError, match="row 73"):
        elliptical_gaussian_mechanism(X, np.zeros(3), np.ones(3), epsilon=EPS, delta=DELTA, rng=rng)


@pytest.mark.parametrize(
    "lower, upper, match",
    [
        ([0.0, 1.0], [1.0, 0.0], "upper must be >= lower"),
        ([0.0], [1.0], "shape"),
        ([0.0, np.nan], [1.0, 1.0], "finite"),
        ([-1.7e308, 0.0], [1.7e308, 1.0], "too wide"),
    ],
)
def test_elliptical_rejects_bounds(lower, upper, match):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=match):
        elliptical_gaussian_mechanism(np.zeros((2, 2)), lower, upper, epsilon=EPS, delta=DELTA, rng=rng)


def test_elliptical_float32_equals_float64():
    X = np.random.default_rng(6).uniform(0, 1, size=(3000, 4)).astype(np.float32)
    kw = dict(epsilon=EPS, delta=DELTA)
    a = elliptical_gaussian_mechanism(X, np.zeros(4), np.ones(4), rng=np.random.default_rng(9), **kw)
    b = elliptical_gaussian_mechanism(
        X.astype(np.float64), np.zeros(4), np.ones(4), rng=np.random.default_rng(9), **kw
    )
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-13)


# --------------------------------------------------------------------------- clipped_sum


@pytest.mark.parametrize("radius", [np.inf, 1e6])
def test_clipped_sum_without_clipping_is_the_row_sum(radius, small_blocks):
    """And the study's Algorithm 3 (mu_hat added before unscaling) fails this check."""
    rng = np.random.default_rng(7)
    center = np.array([10.0, -3.0, 0.5])
    b = np.array([0.2, 3.0, 1.0])
    X = center + rng.normal(size=(101, 3))
    total, k = clipped_sum(X, center, radius, b)
    assert k == 0
    np.testing.assert_allclose(total, X.sum(axis=0), rtol=1e-12, atol=1e-10)
    study = _study_clipped_sum(X, center, radius, b)
    assert not np.allclose(study, X.sum(axis=0), rtol=1e-6)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    "dtype, b_kind",  # float32 cannot hold data scaled by 1e+-60
    [(np.float64, "tame"), (np.float32, "tame"), (np.float64, "extreme")],
)
def test_clipped_sum_matches_definition(dtype, order, b_kind, small_blocks):
    rng = np.random.default_rng(8)
    d = 5
    b = np.array([0.5, 2.0, 1.0, 0.1, 4.0])
    if b_kind == "extreme":
        b = b * np.array([1e-60, 1.0, 1e60, 1.0, 1.0])
    center = rng.normal(size=d) / b
    X = center + rng.standard_normal((203, d)) / b
    X[::17] += 30.0 / b  # outliers, clipped
    X = np.asarray(X, dtype=dtype, order=order)
    total, k = clipped_sum(X, center, 3.0, b)
    ref, k_ref = _reference_clipped_sum(X, center, 3.0, b)
    assert k == k_ref > 10
    np.testing.assert_allclose(total, ref, rtol=1e-12)


def test_clipped_sum_radius_zero_and_constant_columns():
    X = np.array([[1.0, 5.0], [2.0, 5.0], [1.0, 6.0]])
    total, k = clipped_sum(X, [1.0, 5.0], 0.0, [1.0, 1.0])
    np.testing.assert_array_equal(total, [3.0, 15.0])
    assert k == 2
    # an infinite scaling marks a constant coordinate: released as n * center_j
    total, k = clipped_sum(X, [1.0, 4.0], 10.0, [1.0, np.inf])
    np.testing.assert_allclose(total, [4.0, 12.0], rtol=1e-15)
    with pytest.raises(ValueError, match="row 1"):
        clipped_sum(np.array([[1.0, 5.0], [1.0, np.nan]]), [1.0, 4.0], 10.0, [1.0, np.inf])


def test_clipped_sum_rows_beyond_overflow_are_clipped_exactly():
    """Rows whose scaled norm (or x - c itself) overflows are clipped to norm C exactly."""
    b = np.array([1.0, 1e10, 1.0])
    X = np.array([[1.7e308, 0.0, 0.0], [0.0, 1e300, 1e300], [0.0, 0.0, 1.0]])
    total, k = clipped_sum(X, np.zeros(3), 2.0, b)
    assert k == 2
    # scaled rows (1.7e308, 0, 0), (0, 1e310, 1e300), (0, 0, 1): the first two have norm > C = 2
    expected_scaled = np.array([2.0, 0.0, 0.0]) + np.array([0.0, 2.0, 2e-10]) + np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(total * b, expected_scaled, rtol=1e-12)
    # x - c overflows: the contribution is still C times the right direction
    center = np.array([-1e308, 0.0, 0.0])
    rows, k = mech._clip_rows(np.array([[1e308, 1.0, 0.0]]), center, b, 2.0)
    assert k == 1
    np.testing.assert_allclose(rows, [[2.0, 0.0, 0.0]], rtol=1e-12, atol=1e-290)
    total, k = clipped_sum(np.array([[1e308, 1.0, 0.0]]), center, 2.0, b)
    assert k == 1 and np.all(np.isfinite(total))


def test_clipped_sum_rejects_non_finite_rows(small_blocks):
    X = np.ones((50, 3))
    X[41, 2] = np.inf
    with pytest.raises(ValueError, match="X row 41 contains NaN or inf"):
        clipped_sum(X, np.zeros(3), 1.0, np.ones(3))
    X[41, 2] = np.nan
    with pytest.raises(ValueError, match="X row 41"):
        clipped_sum(X, np.zeros(3), 1e-3, np.ones(3))


@pytest.mark.parametrize(
    "center, radius, scaling, exc, match",
    [
        ([0.0, 0.0], -1.0, [1.0, 1.0], ValueError, "radius"),
        ([0.0, 0.0], np.nan, [1.0, 1.0], ValueError, "radius"),
        ([0.0, 0.0], 1e-60, [1.0, 1.0], ValueError, "radius"),
        ([0.0, 0.0], 1.0, [1.0, 0.0], ValueError, "scaling"),
        ([0.0, 0.0], 1.0, [1.0], ValueError, "scaling"),
        ([0.0], 1.0, [1.0, 1.0], ValueError, "center"),
        ([0.0, np.inf], 1.0, [1.0, 1.0], ValueError, "center"),
    ],
)
def test_clipped_sum_rejects_arguments(center, radius, scaling, exc, match):
    with pytest.raises(exc, match=match):
        clipped_sum(np.zeros((3, 2)), center, radius, scaling)


@pytest.mark.parametrize("X", [np.zeros(3), np.zeros((0, 2)), np.array([["a", "b"]])])
def test_clipped_sum_rejects_data(X):
    with pytest.raises((ValueError, TypeError), match="X must"):
        clipped_sum(X, [0.0, 0.0], 1.0, [1.0, 1.0])


def test_clipped_sum_memory_is_bounded():
    """No copy of X: the extra memory is a few work blocks, not O(n d)."""
    X = np.random.default_rng(10).standard_normal((400_000, 20))  # 61 MiB
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        clipped_sum(X, np.zeros(20), 5.0, np.ones(20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - base < 4 * mech._BLOCK_ELEMENTS * 8


# --------------------------------------------------------------------------- privacy invariants


def _adversarial_rows(rng, m, d, center, b, radius):
    """Model rows, rows far outside the ball, rows on its boundary, huge single coordinates."""
    kind = rng.integers(0, 5, m)
    y = rng.standard_normal((m, d))  # scaled space
    y[kind == 1] *= 10.0 ** rng.uniform(1, 300, (np.count_nonzero(kind == 1), 1))
    boundary = kind == 2
    y[boundary] *= (radius * (1 + rng.uniform(-1e-15, 1e-15, np.count_nonzero(boundary))))[
        :, None
    ] / np.linalg.norm(y[boundary], axis=1)[:, None]
    y[kind == 3] = 0.0
    huge = np.flatnonzero(kind == 4)
    y[huge, rng.integers(0, d, huge.size)] = rng.choice([-1, 1], huge.size) * 1e250
    with np.errstate(over="ignore"):
        x = center + y / b
    return np.where(np.isfinite(x), x, np.sign(x) * 1.7e308)


@pytest.mark.parametrize("b_kind", ["tame", "extreme"])
def test_sensitivity_of_clipped_sum_on_1e5_neighbouring_pairs(b_kind):
    """Replacing one row moves the scaled clipped sum by at most 2 C (to rounding).

    Vectorised: the contribution of a row is clip((x - c) * b), computed for
    1e5 original rows and 1e5 replacements by the block code of clipped_sum.
    """
    rng = np.random.default_rng(11)
    d, m = 6, 100_000
    sigmas = np.array([5.0, 2.0, 1.0, 0.5, 0.1, 0.01])
    if b_kind == "extreme":
        sigmas = sigmas * np.array([1e100, 1.0, 1.0, 1.0, 1.0, 1e-100])
    b = gaussian_data_scaling(sigmas)
    radius = clip_radius(sigmas, b, 1e-5)
    center = rng.normal(size=d) * sigmas
    X = _adversarial_rows(rng, m, d, center, b, radius)
    Y = _adversarial_rows(rng, m, d, center, b, radius)
    gx, _ = mech._clip_rows(X, center, b, radius)
    gy, _ = mech._clip_rows(Y, center, b, radius)
    assert np.all(np.linalg.norm(gx, axis=1) <= radius * (1 + 1e-12))
    moves = np.linalg.norm(gx - gy, axis=1)
    assert np.all(moves <= 2 * radius * (1 + 1e-12))
    assert moves.max() > 1.9 * radius  # the bound 2 C is nearly attained


def test_sensitivity_of_clipped_sum_end_to_end():
    """Through the public function: 300 neighbouring data sets with adversarial rows."""
    rng = np.random.default_rng(12)
    d, n = 4, 6
    sigmas = np.array([3.0, 1.0, 0.2, 0.05])
    b = gaussian_data_scaling(sigmas)
    radius = clip_radius(sigmas, b, 1 / n)
    center = np.array([1.0, -2.0, 0.0, 5.0])
    worst = 0.0
    for _ in range(300):
        X = _adversarial_rows(rng, n, d, center, b, radius)
        X2 = X.copy()
        X2[rng.integers(n)] = _adversarial_rows(rng, 1, d, center, b, radius)[0]
        s1, _ = clipped_sum(X, center, radius, b)
        s2, _ = clipped_sum(X2, center, radius, b)
        worst = max(worst, float(np.linalg.norm((s1 - s2) * b)))
    assert worst <= 2 * radius * (1 + 1e-9)


def test_gaussian_data_noise_distribution():
    """Zero data at the centre: estimate = noise ~ N(0, (2 C sigma_opt / b_j)^2), independent."""
    rng = np.random.default_rng(13)
    sigmas = np.repeat([0.01, 0.3, 1.0, 7.0], 500)
    p = 1e-3
    res = gaussian_data_mechanism(
        np.zeros((10, sigmas.size)), sigmas, np.zeros(sigmas.size),
        epsilon=0.8, delta=1e-9, clip_probability=p, rng=rng,
    )  # fmt: skip
    b = gaussian_data_scaling(sigmas)
    radius = clip_radius(sigmas, b, p)
    std = 2 * radius * analytic_sigma(0.8, 1e-9) / b  # noise in scaled space, mapped back by 1/b
    assert res.radius == pytest.approx(radius, rel=1e-14)
    np.testing.assert_allclose(res.noise_std, std, rtol=1e-12)
    assert np.sum(res.noise_std**2) == pytest.approx(
        noise_error(sigmas, b, p, res.sigma_opt), rel=1e-12
    )
    z = res.estimate / std
    for k in range(4):
        _assert_variance(z[500 * k : 500 * (k + 1)], label=k)


def test_gaussian_data_noise_covariance_over_repeated_draws():
    rng = np.random.default_rng(14)
    sigmas = np.array([4.0, 1.0, 0.25])
    X = np.full((20, 3), 2.0)
    draws = np.array([
        gaussian_data_mechanism(X, sigmas, [2.0, 2.0, 2.0], epsilon=EPS, delta=DELTA, rng=rng).estimate
        for _ in range(250)
    ])  # fmt: skip
    b = gaussian_data_scaling(sigmas)
    std = 2 * clip_radius(sigmas, b, 1 / 20) * analytic_sigma(EPS, DELTA) / b
    z = (draws - 40.0) / std
    for j in range(3):
        _assert_variance(z[:, j], label=j)
    corr = np.corrcoef(z, rowvar=False)
    off = corr[~np.eye(3, dtype=bool)]
    assert np.all(np.abs(off) < 5 / np.sqrt(250))


def test_gaussian_data_radius_does_not_depend_on_the_data():
    sigmas = np.array([2.0, 1.0, 0.5])
    center = np.zeros(3)
    quiet = np.zeros((1000, 3))
    wild = np.random.default_rng(15).standard_normal((1000, 3)) * 1e6
    kw = dict(epsilon=EPS, delta=DELTA)
    r1 = gaussian_data_mechanism(quiet, sigmas, center, rng=np.random.default_rng(1), **kw)
    r2 = gaussian_data_mechanism(wild, sigmas, center, rng=np.random.default_rng(1), **kw)
    assert r1.radius == r2.radius == clip_radius(sigmas, gaussian_data_scaling(sigmas), 1e-3)
    np.testing.assert_array_equal(r1.noise_std, r2.noise_std)
    np.testing.assert_array_equal(r1.scaling, r2.scaling)
    assert r1.n_clipped == 0 and r2.n_clipped > 900
    # same seed: the estimates differ exactly by the difference of the clipped sums
    s1, _ = clipped_sum(quiet, center, r1.radius, r1.scaling)
    s2, _ = clipped_sum(wild, center, r1.radius, r1.scaling)
    np.testing.assert_allclose(r2.estimate - r1.estimate, s2 - s1, rtol=1e-10, atol=1e-9)


def test_gaussian_data_constant_coordinate_and_single_row():
    rng = np.random.default_rng(16)
    sigmas = np.array([1.0, 0.0, 2.0])
    X = rng.normal([0.0, 4.0, 1.0], sigmas, size=(300, 3))
    X[:, 1] = 4.5  # the model says constant 4.0; the column is not read
    res = gaussian_data_mechanism(X, sigmas, [0.0, 4.0, 1.0], epsilon=EPS, delta=DELTA, rng=rng)
    assert res.estimate[1] == 300 * 4.0 and res.noise_std[1] == 0.0
    assert np.isinf(res.scaling[1])
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        gaussian_data_mechanism(X, sigmas, [0.0, 4.0, 1.0], epsilon=EPS, delta=DELTA, rng=rng)
    # one row: default clip probability 1, radius 0, the centre is released exactly
    one = gaussian_data_mechanism([[5.0, 4.0, 1.0]], sigmas, [0.0, 4.0, 1.0], epsilon=EPS, delta=DELTA, rng=rng)
    assert one.radius == 0.0 and one.clip_probability == 1.0
    np.testing.assert_array_equal(one.estimate, [0.0, 4.0, 1.0])


def test_gaussian_data_float32_and_blocks(small_blocks):
    rng = np.random.default_rng(17)
    sigmas = np.array([3.0, 1.0, 0.2])
    X = rng.normal(1.0, sigmas, size=(500, 3)).astype(np.float32)
    kw = dict(epsilon=EPS, delta=DELTA, clip_probability=0.05)
    a = gaussian_data_mechanism(X, sigmas, np.ones(3), rng=np.random.default_rng(3), **kw)
    b = gaussian_data_mechanism(X.astype(np.float64), sigmas, np.ones(3), rng=np.random.default_rng(3), **kw)
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-12)
    assert a.n_clipped == b.n_clipped > 5


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(clip_probability=0.0), ValueError, "clip_probability"),
        (dict(clip_probability=1.5), ValueError, "clip_probability"),
        (dict(sigmas=[1.0, -1.0]), ValueError, "sigmas"),
        (dict(sigmas=[0.0, 0.0]), ValueError, "sigmas"),
        (dict(sigmas=[1.0]), ValueError, "sigmas"),
        (dict(center=[0.0, np.nan]), ValueError, "center"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(rng=None), TypeError, "rng"),
    ],
)
def test_gaussian_data_rejects(kwargs, exc, match):
    args = dict(
        sigmas=[1.0, 2.0], center=[0.0, 0.0], epsilon=EPS, delta=DELTA, rng=np.random.default_rng(0)
    )
    args.update(kwargs)
    sig, cen = args.pop("sigmas"), args.pop("center")
    with pytest.raises(exc, match=match):
        gaussian_data_mechanism(np.zeros((5, 2)), sig, cen, **args)


# ----------------------------------------------------------------------------------
# setups: the data-independent part of Algorithm 3, computed once


def test_setup_gives_the_same_result_as_no_setup():
    """Same rng seed, with and without a setup: bit-identical estimates, and the setup's
    radius and noise agree with an independent recomputation from clip_radius."""
    sigmas = np.array([3.0, 1.0, 0.0, 0.2])
    X = np.random.default_rng(21).normal(0.0, sigmas, size=(400, 4))
    center = np.array([0.1, 0.0, 0.0, -0.1])
    for p in (None, 0.02):
        setup = mech.gaussian_data_setup(sigmas, n=400, epsilon=EPS, delta=DELTA, clip_probability=p)
        kw = dict(epsilon=EPS, delta=DELTA, clip_probability=p)
        a = gaussian_data_mechanism(X, sigmas, center, rng=np.random.default_rng(5), **kw)
        b = gaussian_data_mechanism(X, sigmas, center, rng=np.random.default_rng(5), setup=setup, **kw)
        np.testing.assert_array_equal(a.estimate, b.estimate)
        assert (a.radius, a.n_clipped, a.sigma_opt, a.clip_probability) == (
            b.radius, b.n_clipped, b.sigma_opt, b.clip_probability
        )
        np.testing.assert_array_equal(a.noise_std, b.noise_std)
        p_used = 1 / 400 if p is None else p
        assert setup.clip_probability == p_used
        radius = clip_radius(sigmas, gaussian_data_scaling(sigmas), p_used)
        assert setup.radius == pytest.approx(radius, rel=1e-15)
        std = 2 * radius * analytic_sigma(EPS, DELTA) * np.sqrt(sigmas * sigmas.sum())
        np.testing.assert_allclose(setup.noise_std, std, rtol=1e-14)
        assert not setup.noise_std.flags.writeable and not setup.sigmas.flags.writeable


def test_setup_is_reused_across_data_sets():
    sigmas = np.array([2.0, 0.5])
    setup = mech.gaussian_data_setup(sigmas, n=50, epsilon=0.5, delta=1e-8)
    rng_a, rng_b = np.random.default_rng(8), np.random.default_rng(8)
    data = np.random.default_rng(9).normal(0.0, sigmas, size=(5, 50, 2))
    for X in data:
        a = gaussian_data_mechanism(X, sigmas, [0.0, 0.0], epsilon=0.5, delta=1e-8, rng=rng_a)
        b = gaussian_data_mechanism(X, sigmas, [0.0, 0.0], epsilon=0.5, delta=1e-8, rng=rng_b, setup=setup)
        np.testing.assert_array_equal(a.estimate, b.estimate)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (dict(sigmas=[3.0, 1.0, 0.3]), ValueError, "setup does not match.*sigmas"),
        (dict(sigmas=[3.0, 1.0]), ValueError, r"sigmas must have shape \(3,\)"),
        (dict(epsilon=0.5), ValueError, "setup does not match.*epsilon"),
        (dict(delta=1e-7), ValueError, "setup does not match.*delta"),
        (dict(n=99), ValueError, "setup does not match.*n=100"),
        (dict(clip_probability=0.05), ValueError, "setup does not match.*clip_probability"),
        (dict(setup="setup"), TypeError, "setup must be a GaussianDataSetup"),
    ],
)
def test_setup_mismatch_is_refused(call, exc, match):
    sigmas = [3.0, 1.0, 0.2]
    setup = mech.gaussian_data_setup(sigmas, n=100, epsilon=EPS, delta=DELTA)
    kw = dict(sigmas=sigmas, epsilon=EPS, delta=DELTA, n=100, setup=setup) | call
    X = np.zeros((kw.pop("n"), 3))
    with pytest.raises(exc, match=match):
        gaussian_data_mechanism(X, center=np.zeros(3), rng=np.random.default_rng(1), **kw)


def test_hand_made_setup_is_refused():
    setup = mech.gaussian_data_setup([1.0, 2.0], n=10, epsilon=EPS, delta=DELTA)
    forged = dataclasses.replace(setup, radius=0.0, _token=None)
    with pytest.raises(ValueError, match="setup must be made by gaussian_data_setup"):
        gaussian_data_mechanism(np.zeros((10, 2)), [1.0, 2.0], [0.0, 0.0], epsilon=EPS, delta=DELTA,
                                rng=np.random.default_rng(1), setup=forged)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(n=0), ValueError, r"n must be an integer in \[1, inf\]"),
        (dict(n=10.0), TypeError, "n must be an integer"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(delta=2.0), ValueError, "delta"),
        (dict(clip_probability=0.0), ValueError, "clip_probability"),
        (dict(sigmas=[0.0, 0.0]), ValueError, "sigmas"),
    ],
)
def test_setup_invalid_arguments(kwargs, exc, match):
    args = dict(sigmas=[1.0, 2.0], n=10, epsilon=EPS, delta=DELTA) | kwargs
    with pytest.raises(exc, match=match):
        mech.gaussian_data_setup(args.pop("sigmas"), **args)
