"""Tests of egmlib.zipf: the Zipf parameters and the improvement ratio E_n / E_t."""

from __future__ import annotations

import math
import pathlib
import warnings

import numpy as np
import pytest
from scipy import stats

from egmlib.gchi2 import isf
from egmlib.scaling import gaussian_data_scaling, noise_error
from egmlib.zipf import improvement_ratio, zipf_sigmas

# Rows of results.csv of the original study (github.com/TSPoulsen/egm, commit c024974;
# /work/shared/reference/egm-original-results.csv): a seeded sample of the rows with
# d <= 250 and sigma_total <= 10.
# Columns: d, n_pow, alpha, sigma_total, trans_err, normal_err, c_trans, c_normal
# (errors divided by sigma_opt^2; c = squared clipping radius found by bisection).
ORIGINAL_ROWS = [
    (100, 1, 1.0, 1, 6.999999999999995, 54.6875, 1.75, 0.13671875),
    (100, 1, 0.01, 1, 4.843749999999999, 4.833984375, 1.2109375, 0.0120849609375),
    (100, 1, 10.0, 1, 9.999999999999991, 1000.0, 2.5, 2.5),
    (100, 2, 1.0, 10, 849.9999999999994, 10400.0, 2.125, 26.0),
    (100, 4, 10.0, 10, 6200.000000000001, 607500.0, 15.5, 1518.75),
    (100, 6, 10.0, 1, 95.15624999999991, 9515.625, 23.7890625, 23.7890625),
    (250, 1, 1.0, 1, 5.625000000000004, 109.375, 1.40625, 0.109375),
    (250, 1, 1.0, 10, 562.5000000000001, 9000.0, 1.40625, 9.0),
    (250, 5, 10.0, 10, 7768.750000000001, 1945718.75, 19.421875, 1945.71875),
    (250, 6, 0.1, 10, 596.0937499999995, 601.5625, 1.490234375, 0.6015625),
    (1, 2, 5.0, 1, 27.499999999999975, 27.5, 6.875, 6.875),
    (1, 2, 25.0, 1, 27.5, 27.5, 6.875, 6.875),
    (1, 3, 0.01, 1, 42.0, 42.0, 10.5, 10.5),
    (1, 3, 0.5, 1, 42.0, 42.0, 10.5, 10.5),
    (1, 3, 25.0, 1, 42.0, 42.0, 10.5, 10.5),
    (1, 6, 25.0, 1, 95.15625, 95.15625, 23.7890625, 23.7890625),
    (10, 2, 0.5, 1, 8.999999999999998, 14.6875, 2.25, 0.3671875),
    (10, 2, 100.0, 1, 27.5, 275.0, 6.875, 6.875),
    (10, 3, 0.01, 1, 11.625000000000005, 11.640625, 2.90625, 0.291015625),
    (10, 3, 100.0, 1, 42.0, 420.0, 10.5, 10.5),
    (10, 6, 25.0, 1, 95.15625, 951.5625, 23.7890625, 23.7890625),
    (100, 2, 100.0, 1, 27.5, 2750.0, 6.875, 6.875),
    (100, 3, 2.0, 1, 29.999999999999975, 1625.0, 7.5, 4.0625),
    (100, 6, 0.5, 1, 9.5625, 33.0078125, 2.390625, 0.08251953125),
]

_FULL_CSV = [
    pathlib.Path(__file__).resolve().parents[1] / "data" / "egm-original-results.csv",
    pathlib.Path("/work/shared/reference/egm-original-results.csv"),
]


def _half_bracket(v: float) -> float:
    """Half-width h of the final bisection bracket [v - h, v + h] whose midpoint is v.

    The original bisection starts on [0, 1] or [2^(k-1), 2^k] and halves, so
    the returned midpoint is an odd multiple of h: h is v's lowest set bit.
    """
    mant, exp = math.frexp(v)
    m = int(mant * 2**53)
    low = m & -m
    return low * 2.0 ** (exp - 53)


# --------------------------------------------------------------------------- zipf_sigmas


@pytest.mark.parametrize("d, alpha", [(10, 0.5), (100, 1.0), (1000, 2.0), (50, 10.0)])
def test_zipf_sigmas_match_scipy_zipfian(d, alpha):
    k = np.arange(1, d + 1)
    np.testing.assert_allclose(zipf_sigmas(d, alpha), stats.zipfian.pmf(k, alpha, d), rtol=1e-12)


def test_zipf_sigmas_basic_properties():
    s = zipf_sigmas(1000, 1.3)
    assert s.sum() == pytest.approx(1.0, rel=1e-14)
    assert np.all(np.diff(s) < 0)
    np.testing.assert_allclose(zipf_sigmas(7, 0.0), np.full(7, 1 / 7), rtol=1e-15)
    np.testing.assert_allclose(zipf_sigmas(1, 3.0), [1.0])


@pytest.mark.parametrize("d, alpha", [(100_000, 1e3), (100_000, 1e-3), (100_000, 50.0), (3, 1e6)])
def test_zipf_sigmas_extreme_without_warnings(d, alpha):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = zipf_sigmas(d, alpha)
    assert s.shape == (d,) and np.all(np.isfinite(s)) and np.all(s >= 0)
    assert s.sum() == pytest.approx(1.0, rel=1e-12)
    if alpha == 1e3:
        assert s[0] == 1.0
        assert s[1] == pytest.approx(2.0**-1000, rel=1e-12)  # representable, kept exact
        assert s[2] == 0.0  # 3^-1000 is below the smallest double


@pytest.mark.parametrize(
    "d, alpha, exc, match",
    [
        (0, 1.0, ValueError, "d must be"),
        (2.5, 1.0, TypeError, "d must be"),
        (10, -0.1, ValueError, "alpha must be"),
        (10, np.inf, ValueError, "alpha must be"),
    ],
)
def test_zipf_sigmas_rejects(d, alpha, exc, match):
    with pytest.raises(exc, match=match):
        zipf_sigmas(d, alpha)


# --------------------------------------------------------------------------- improvement_ratio


@pytest.mark.parametrize("d, alpha", [(10, 0.5), (100, 1.0), (37, 3.0)])
def test_ratio_equals_public_composition(d, alpha):
    """E_n / E_t via noise_error: b = 1 for E_n (which gives the factor d), Lemma 4.1 for E_t."""
    s = zipf_sigmas(d, alpha)
    n = np.array([1e2, 1e6])
    e_n = noise_error(s, np.ones(d), 1 / n, 1.0)
    e_t = noise_error(s, gaussian_data_scaling(s), 1 / n, 1.0)
    np.testing.assert_allclose(improvement_ratio(d, alpha, n), e_n / e_t, rtol=1e-10)
    np.testing.assert_allclose(e_n, d * 4 * isf(1 / n, s**2), rtol=1e-12)


def test_ratio_scale_invariance():
    """Multiplying every sigma by k leaves E_n / E_t unchanged."""
    s = zipf_sigmas(40, 0.8)
    ratio = improvement_ratio(40, 0.8, 1e4)
    for k in [1e-6, 3.0, 1e5]:
        e_n = noise_error(k * s, np.ones(40), 1e-4, 1.0)
        e_t = noise_error(k * s, gaussian_data_scaling(k * s), 1e-4, 1.0)
        assert e_n / e_t == pytest.approx(ratio, rel=1e-10)


@pytest.mark.parametrize("d", [2, 10, 1000, 100_000])
def test_ratio_limit_alpha_to_zero_is_one(d):
    """Equal sigmas: the scaling changes nothing, E_n = E_t (only with the factor d in E_n)."""
    n = [10.0, 1e12]
    np.testing.assert_allclose(improvement_ratio(d, 0.0, n), 1.0, rtol=1e-10)
    np.testing.assert_allclose(improvement_ratio(d, 1e-3, n), 1.0, rtol=1e-4)


@pytest.mark.parametrize("d", [2, 10, 1000, 100_000])
def test_ratio_limit_alpha_to_infinity_is_d(d):
    """One dominant sigma: E_n = d (2 C sigma_opt)^2 against E_t = (2 C sigma_opt)^2."""
    np.testing.assert_allclose(improvement_ratio(d, 1e3, [10.0, 1e12]), d, rtol=1e-12)
    assert d * 0.9 < improvement_ratio(d, 20.0, 1e6) <= d * (1 + 1e-12)


def test_ratio_between_limits_and_vectorised():
    n = np.array([1e2, 1e4, 1e12])
    r = improvement_ratio(100, 1.0, n)
    assert r.shape == (3,)
    np.testing.assert_allclose(r, [improvement_ratio(100, 1.0, x) for x in n], rtol=1e-13)
    assert np.all((r > 1) & (r < 100))
    # the ratio grows with n here: n is not irrelevant, unlike Section 5 says
    assert np.all(np.diff(r) > 0)


@pytest.mark.parametrize("n", [1.0, 0.5, np.nan, np.inf, [10.0, 1.0]])
def test_ratio_rejects_n(n):
    with pytest.raises(ValueError, match="n must be"):
        improvement_ratio(10, 1.0, n)


# --------------------------------------------------------------------------- original results


def _check_error_identities(rows):
    for d, _, _, total, trans_err, normal_err, c_trans, c_normal in rows:
        # E_n = d (2 C_n)^2: the original code has the factor d that Section 5 drops
        assert normal_err == pytest.approx(4 * d * c_normal, rel=1e-12)
        # E_t = (2 C_t)^2 sum b^-2 = (2 C_t)^2 (sum sigma)^2, sum sigma = sigma_total
        assert trans_err == pytest.approx(4 * c_trans * total**2, rel=1e-12)


def test_original_errors_use_the_factor_d():
    _check_error_identities(ORIGINAL_ROWS)


def test_original_errors_use_the_factor_d_full_file():
    path = next((p for p in _FULL_CSV if p.is_file()), None)
    if path is None:
        pytest.skip("results.csv of the original study is not available")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    assert data.shape == (544, 8)
    _check_error_identities([tuple(row) for row in data])


def test_exact_quantiles_within_original_bisection_tolerance():
    """The original C^2 values agree with the exact ones within the original procedure's slack.

    The original bisection stops when the Davies cdf (absolute error up to
    10^-n_pow = p) is within 0.1 p of 1 - p at one end of the bracket and then
    returns the bracket's midpoint v; the bracket is [v - h, v + h].  Judged with
    the exact tail, every bracket satisfies P(Q > v + h) <= 2.1 p and
    P(Q > v - h) >= 0.5 p.  Where both exact quantiles lie inside their brackets
    (9 of these 24 rows), our ratio lies in the interval the brackets allow.
    """
    strict = 0
    for d, n_pow, alpha, total, _, _, c_trans, c_normal in ORIGINAL_ROWS:
        s = zipf_sigmas(d, alpha) * total
        p = 10.0**-n_pow
        exact = {}
        brackets = {}
        for key, v, w in (("t", c_trans, s / s.sum()), ("n", c_normal, s**2)):
            h = _half_bracket(v)
            c_lo, c_hi, c_p = isf([0.5 * p, 2.1 * p, p], w)
            assert v + h >= c_hi, (d, n_pow, alpha, key)
            assert v - h <= c_lo, (d, n_pow, alpha, key)
            exact[key] = c_p
            brackets[key] = (v - h, v + h)
        if all(lo <= exact[k] <= hi for k, (lo, hi) in brackets.items()):
            strict += 1
            (tl, th), (nl, nh) = brackets["t"], brackets["n"]
            ratio = improvement_ratio(d, alpha, 10.0**n_pow)
            assert d * nl / (th * total**2) <= ratio <= d * nh / (tl * total**2)
    assert strict >= len(ORIGINAL_ROWS) // 3


def test_half_bracket():
    assert _half_bracket(1.25) == 0.25
    assert _half_bracket(6.875) == 0.125
    assert _half_bracket(1518.75) == 0.25
    assert _half_bracket(26.0) == 2.0
