"""Tests of egmlib.optimal: quantile gradient, exact optimal scaling, box clipping,
clipping error, optimal clipping probability and the two-stage pipeline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from egmlib import gchi2
from egmlib.optimal import (
    box_egm_error,
    box_half_width,
    clipping_error,
    isf_gradient,
    optimal_clip_probability,
    optimal_scaling,
    total_error,
    two_stage_error,
)
from egmlib.privacy import analytic_sigma
from egmlib.scaling import clip_radius, egm_error, gaussian_data_scaling, noise_error
from egmlib.zipf import zipf_sigmas


def _fd_gradient(p: float, w: np.ndarray, j: int, step: float = 1e-5) -> float:
    """Central difference of gchi2.isf in log w_j (independent of egmlib.optimal)."""
    up, down = w.copy(), w.copy()
    up[j] *= math.exp(step)
    down[j] *= math.exp(-step)
    return (gchi2.isf(p, up) - gchi2.isf(p, down)) / (2.0 * step * w[j])


# --------------------------------------------------------------------------- isf_gradient


@pytest.mark.parametrize(
    ("weights", "p"),
    [
        (np.array([1.0, 0.5, 0.25]), 1e-3),
        (np.array([1.0, 1.0, 0.3, 0.3, 0.01]), 1e-8),      # ties are grouped
        (zipf_sigmas(40, 1.0), 1e-6),                       # series tiers for small weights
        (np.array([0.2, 0.9, 0.4]), 0.4),                   # below the mean: lower contour
    ],
)
def test_isf_gradient_matches_finite_differences(weights, p):
    c, grad = isf_gradient(p, weights)
    assert c == pytest.approx(gchi2.isf(p, weights), rel=1e-15)
    for j in range(0, weights.size, max(1, weights.size // 6)):
        assert grad[j] == pytest.approx(_fd_gradient(p, weights, j), rel=2e-7)


def test_isf_gradient_closed_forms_and_euler_identity():
    # one weight: c = w q, dc/dw = q; equal weights: dc/dw_j = c / (d w) by symmetry
    c, g = isf_gradient(1e-4, [2.0])
    assert g[0] == pytest.approx(c / 2.0, rel=1e-12)
    c, g = isf_gradient(1e-5, np.full(7, 0.3))
    np.testing.assert_allclose(g, c / (7 * 0.3), rtol=1e-11)
    # degree-1 homogeneity: sum_j w_j dc/dw_j = c; zero weights have gradient 1
    w = np.array([0.7, 0.0, 0.2, 0.05, 0.0])
    c, g = isf_gradient(1e-9, w)
    assert float(g @ w) == pytest.approx(c, rel=1e-12)
    assert g[1] == 1.0 and g[4] == 1.0
    # the conditional second moment grows with the weight
    assert np.all(np.diff(g[[3, 2, 0]]) > 0)


@pytest.mark.parametrize("p", [1e-3, 1e-4])
def test_isf_gradient_with_dense_branch_points(p):
    """w_j ~ j^-1/2, d = 1e4: the first parabola leaves the integrand
    unresolved (see egmlib.gchi2, test_dense_branch_points_are_resolved); the
    contour is flattened, no warning (warnings are errors here), and the
    gradient keeps the Euler identity and matches finite differences."""
    w = zipf_sigmas(10_000, 0.5)
    c, grad = isf_gradient(p, w)
    assert float(grad @ w) == pytest.approx(c, rel=1e-13)
    for j in (0, 9, 999):
        assert grad[j] == pytest.approx(_fd_gradient(p, w, j), rel=2e-6)


@pytest.mark.parametrize(
    ("p", "weights", "match"),
    [
        (0.0, [1.0], "p must be in"),
        (1.0, [1.0], "p must be in"),
        (1e-3, [1.0, -0.1], "weights must be >= 0"),
        (1e-3, [0.0, 0.0], "at least one value > 0"),
        (1e-3, [[1.0]], "1-dimensional"),
    ],
)
def test_isf_gradient_rejects_invalid_input(p, weights, match):
    with pytest.raises(ValueError, match=match):
        isf_gradient(p, weights)


# --------------------------------------------------------------------------- optimal_scaling


def _noise_factor(sigmas: np.ndarray, b: np.ndarray, p: float) -> float:
    return gchi2.isf(p, (b * sigmas) ** 2) * float(np.sum(1.0 / b**2))


def test_optimal_scaling_beats_lemma_and_is_stationary():
    sig = zipf_sigmas(12, 1.0)
    p = 1e-6
    res = optimal_scaling(sig, p)
    lemma = gaussian_data_scaling(sig)
    assert res.lemma_noise_factor == pytest.approx(_noise_factor(sig, lemma, p), rel=1e-13)
    assert res.noise_factor == pytest.approx(_noise_factor(sig, res.scaling, p), rel=1e-13)
    assert res.gain == pytest.approx(res.lemma_noise_factor / res.noise_factor, rel=1e-15)
    assert res.gain > 1.2 and res.stationarity < 1e-7
    assert float(np.sum((res.scaling * sig) ** 2)) == pytest.approx(1.0, rel=1e-12)
    assert res.radius == pytest.approx(float(clip_radius(sig, res.scaling, p)), rel=1e-14)
    assert res.noise_factor == pytest.approx(noise_error(sig, res.scaling, p, 0.5), rel=1e-13)


def test_optimal_scaling_is_a_local_minimum():
    """No random perturbation of the optimum (also scale changes) lowers the exact noise."""
    sig = zipf_sigmas(6, 1.5)
    p = 1e-4
    res = optimal_scaling(sig, p)
    best = res.noise_factor
    rng = np.random.default_rng(3)
    for size in (1e-1, 1e-2, 1e-3):
        for _ in range(25):
            b = res.scaling * np.exp(size * rng.standard_normal(6)) * rng.uniform(0.5, 2.0)
            assert _noise_factor(sig, b, p) >= best * (1 - 1e-12)


def test_optimal_scaling_trivial_cases_and_invariances():
    # equal sigmas: Lemma 4.1 is already optimal (by symmetry)
    res = optimal_scaling(np.full(5, 2.0), 1e-3)
    assert res.gain == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(res.scaling, gaussian_data_scaling(np.full(5, 2.0)), rtol=1e-6)
    # a constant coordinate gets b = inf; one positive sigma: nothing to optimise
    res = optimal_scaling([0.0, 3.0, 0.0], 1e-3)
    assert np.isinf(res.scaling[0]) and np.isinf(res.scaling[2]) and res.gain == pytest.approx(1.0, rel=1e-14)
    # scale invariance: sigmas times 10 gives b / 10 and the same gain
    sig = zipf_sigmas(5, 0.8)
    one, ten = optimal_scaling(sig, 1e-5), optimal_scaling(10 * sig, 1e-5)
    assert ten.gain == pytest.approx(one.gain, rel=1e-9)
    np.testing.assert_allclose(ten.scaling * 10, one.scaling, rtol=1e-5)


@pytest.mark.parametrize(
    ("sigmas", "p", "match"),
    [([1.0, -1.0], 1e-3, "sigmas must be >= 0"), ([0.0, 0.0], 1e-3, "at least one entry > 0"),
     ([1.0, 2.0], 0.7, "p must be in"), ([1.0, np.nan], 1e-3, "finite")],
)
def test_optimal_scaling_rejects_invalid_input(sigmas, p, match):
    with pytest.raises(ValueError, match=match):
        optimal_scaling(sigmas, p)


# --------------------------------------------------------------------------- box clipping


@pytest.mark.parametrize(("d", "p"), [(1, 0.05), (10, 1e-3), (1000, 1e-6), (3, 0.9)])
def test_box_half_width_solves_its_equation(d, p):
    k = box_half_width(d, p)
    assert -math.expm1(d * math.log1p(-2.0 * norm.sf(k))) == pytest.approx(p, rel=1e-10)
    assert k < norm.isf(p / (2 * d)) + 1e-12          # tighter than the union bound


def test_box_egm_error_formula():
    sig = np.array([3.0, 1.0, 0.0, 0.5])
    k = box_half_width(3, 1e-4)                      # the constant coordinate never clips
    assert box_egm_error(sig, 1e-4, 2.0) == pytest.approx(egm_error(2 * k * sig, 2.0), rel=1e-15)
    assert box_egm_error(sig, 1e-4, 2.0) == pytest.approx(4.0 * (2 * k * 4.5) ** 2, rel=1e-14)


@pytest.mark.parametrize(
    ("call", "match"),
    [(lambda: box_half_width(0, 0.1), "d must be an integer >= 1"),
     (lambda: box_half_width(3, 1.0), "p must be in"),
     (lambda: box_egm_error([1.0], 0.1, 0.0), "sigma_opt must be in"),
     (lambda: box_egm_error([-1.0], 0.1, 1.0), "sigmas must be >= 0")],
)
def test_box_rejects_invalid_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_box_half_width_needs_an_integer():
    with pytest.raises(TypeError, match="d must be an integer"):
        box_half_width(2.5, 0.1)


# --------------------------------------------------------------------------- clipping error


def _clip_reference(sig: np.ndarray, b: np.ndarray, p: float) -> float:
    """sum_j sigma_j^2 int_0^1 2 (1 - v) P(Q + w_j chi2_2 > C^2 / v^2) dv, by scipy.quad and gchi2.sf."""
    w = (b * sig) ** 2
    c2 = float(clip_radius(sig, b, p)) ** 2
    total = 0.0
    for j in range(sig.size):
        wj = np.concatenate([w, [w[j], w[j]]])
        value, _ = integrate.quad(lambda v: 2 * (1 - v) * gchi2.sf(c2 / (v * v), wj), 0, 1,
                                  epsabs=0, epsrel=1e-10, limit=100)
        total += sig[j] ** 2 * value
    return total


@pytest.mark.parametrize("p", [0.999, 0.5, 1e-3, 1e-10])
def test_clipping_error_one_coordinate_closed_form(p):
    k = norm.isf(p / 2)                               # sigma^2 E(|Z| - k)_+^2
    exact = 2 * ((1 + k * k) * norm.sf(k) - k * norm.pdf(k))
    assert clipping_error([2.0], [5.0], p) == pytest.approx(4.0 * exact, rel=1e-11)


@pytest.mark.parametrize(("alpha", "p", "lemma"), [(1.0, 1e-6, True), (0.5, 1e-2, False), (2.0, 0.9, True)])
def test_clipping_error_against_quadrature(alpha, p, lemma):
    sig = zipf_sigmas(3, alpha)
    b = gaussian_data_scaling(sig) if lemma else np.ones(3)
    assert clipping_error(sig, b, p) == pytest.approx(_clip_reference(sig, b, p), rel=1e-9)


def test_clipping_error_monte_carlo():
    rng = np.random.default_rng(7)
    sig = zipf_sigmas(8, 1.0)
    b = gaussian_data_scaling(sig)
    p = 0.05
    radius = float(clip_radius(sig, b, p))
    x = sig * rng.standard_normal((400_000, 8))
    shrink = np.maximum(1 - radius / np.linalg.norm(x * b, axis=1), 0.0)
    err = ((shrink[:, None] * x) ** 2).sum(axis=1)
    z = (err.mean() - clipping_error(sig, b, p)) / (err.std(ddof=1) / math.sqrt(err.size))
    assert abs(z) < 4


def test_clipping_error_limits_and_invariances():
    sig = np.array([2.0, 1.0, 0.0])
    b = np.array([0.5, 1.0, np.inf])
    assert clipping_error(sig, b, 1.0) == pytest.approx(5.0, rel=1e-15)      # everything to the centre
    # multiplying b by a constant moves C with it: no change; a constant coordinate adds nothing
    assert clipping_error(sig, 3 * b, 1e-3) == pytest.approx(clipping_error(sig, b, 1e-3), rel=1e-11)
    assert clipping_error(sig, b, 1e-3) == pytest.approx(clipping_error(sig[:2], b[:2], 1e-3), rel=1e-12)
    values = [clipping_error(sig, b, p) for p in (1e-8, 1e-4, 1e-1, 0.9)]
    assert np.all(np.diff(values) > 0)


def test_total_error_is_noise_plus_n_clipping_error():
    sig = zipf_sigmas(5, 1.0)
    b = gaussian_data_scaling(sig)
    expected = noise_error(sig, b, 1e-2, 3.0) + 250 * clipping_error(sig, b, 1e-2)
    assert total_error(sig, b, 1e-2, 250, 3.0) == pytest.approx(expected, rel=1e-14)


def test_optimal_clip_probability_is_a_minimum():
    sig = zipf_sigmas(6, 1.0)
    b = gaussian_data_scaling(sig)
    n, s = 1e5, 4.0
    opt = optimal_clip_probability(sig, b, n, s)
    assert opt.total_error == pytest.approx(opt.noise_error + opt.clipping_error, rel=1e-15)
    assert opt.total_error == pytest.approx(total_error(sig, b, opt.probability, n, s), rel=1e-8)
    for factor in (0.8, 1.25):
        assert total_error(sig, b, opt.probability * factor, n, s) > opt.total_error
    assert opt.total_error < total_error(sig, b, 1 / n, n, s)


@pytest.mark.parametrize(
    ("call", "match"),
    [(lambda: clipping_error([1.0], [1.0], 0.0), "p must be in"),
     (lambda: clipping_error([1.0, 2.0], [1.0], 0.1), "scaling must have the shape"),
     (lambda: clipping_error([1.0], [0.0], 0.1), r"scaling must be in \(0, inf\]"),
     (lambda: clipping_error([1.0], [np.inf], 0.1), "inf only where sigmas is 0"),
     (lambda: total_error([1.0], [1.0], 0.1, 1.0, 1.0), "n must be in"),
     (lambda: optimal_clip_probability([1.0], [1.0], 10, -1.0), "sigma_opt must be in")],
)
def test_clipping_functions_reject_invalid_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------- two-stage pipeline


def test_two_stage_error_formula():
    sig = zipf_sigmas(5, 1.0)
    n, rho, eps, delta, rng_ = 1e4, 0.25, 1.0, 1e-6, 8.0
    half = rng_ + box_half_width(5, 1 / n)
    widths = 2 * half * sig
    nu2 = analytic_sigma(rho * eps, rho * delta) ** 2 * widths * widths.sum()
    eff = np.sqrt(sig**2 * (1 - 1 / n) + nu2 / n**2)
    s2 = analytic_sigma((1 - rho) * eps, (1 - rho) * delta)
    for scaled, b in ((True, gaussian_data_scaling(eff)), (False, np.ones(5))):
        expected = noise_error(eff, b, 1 / n, s2) + n * clipping_error(eff, b, 1 / n)
        got = two_stage_error(sig, n, rho, epsilon=eps, delta=delta, public_range=rng_, scaled=scaled)
        assert got == pytest.approx(expected, rel=1e-12)


def test_two_stage_error_grows_with_the_public_range_and_approaches_the_oracle():
    sig = zipf_sigmas(5, 1.0)
    errs = [two_stage_error(sig, 1e5, 0.1, epsilon=1.0, delta=1e-6, public_range=r) for r in (0.0, 10.0, 100.0)]
    assert errs[0] < errs[1] < errs[2]
    # huge n: the centre is nearly free, only the budget share 1 - rho is lost
    oracle = noise_error(sig, gaussian_data_scaling(sig), 1e-12, analytic_sigma(0.9, 0.9e-6))
    big = two_stage_error(sig, 1e12, 0.1, epsilon=1.0, delta=1e-6, public_range=10.0)
    assert big == pytest.approx(oracle, rel=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"rho": 1.0}, ValueError, "rho must be in"),
     ({"rho": 0.0}, ValueError, "rho must be in"),
     ({"public_range": -1.0}, ValueError, "public_range must be in"),
     ({"n": 1.0}, ValueError, "n must be in"),
     ({"delta": 1.0}, ValueError, "delta must be in"),
     ({"scaled": "yes"}, TypeError, "scaled must be a bool")],
)
def test_two_stage_error_rejects_invalid_input(kwargs, error, match):
    args = {"sigmas": [1.0, 0.5], "n": 100.0, "rho": 0.5, "epsilon": 1.0, "delta": 1e-6,
            "public_range": 5.0, "scaled": True}
    args.update(kwargs)
    sigmas, n, rho = args.pop("sigmas"), args.pop("n"), args.pop("rho")
    with pytest.raises(error, match=match):
        two_stage_error(sigmas, n, rho, **args)


def test_unresolved_contours_warn_at_the_callers_line(monkeypatch):
    """With every shape forced to look unresolved the step is still refined,
    the results stay accurate, and the warning names the user's line."""
    w = zipf_sigmas(30, 1.0)
    c0, g0 = isf_gradient(1e-4, w)
    e0 = clipping_error(w, gaussian_data_scaling(w), 1e-3)
    monkeypatch.setattr(gchi2, "_MAX_PHASE_STEP", -1.0)     # the one engine, in gchi2
    with pytest.warns(RuntimeWarning, match="self-check failed") as record:
        c1, g1 = isf_gradient(1e-4, w)
        e1 = clipping_error(w, gaussian_data_scaling(w), 1e-3)
    assert {r.filename for r in record} == {__file__}
    assert c1 == pytest.approx(c0, rel=1e-13)
    np.testing.assert_allclose(g1, g0, rtol=1e-10)
    assert e1 == pytest.approx(e0, rel=1e-10)
