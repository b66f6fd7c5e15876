"""Tests of egmlib.coinpress: the authors' published data, accounting, sensitivity,
bad input and determinism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm, trim_mean
from scipy.stats.mstats import winsorize

from egmlib.coinpress import (
    Step,
    _apply,
    coinpress_mean,
    coinpress_plan,
    coinpress_schedule,
    hybrid_plan,
    plan_error,
    private_variances,
    rho_for,
    run_plan,
    simulate_plan,
    standard_schedule,
    step_rho,
    tail_bound,
    two_stage_plan,
    zcdp_delta,
    zcdp_epsilon_bound,
    zcdp_to_epsilon_delta,
)
from egmlib.zipf import zipf_sigmas

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "coinpress-synthetic-mean"


# --------------------------------------------------------------------------- the authors' data


def _trimmed_se(x: np.ndarray, cut: float = 0.1) -> float:
    """Standard error of the trimmed mean: winsorised sd / ((1 - 2 cut) sqrt(n))."""
    w = np.asarray(winsorize(x, limits=(cut, cut)))
    return float(np.std(w, ddof=1) / ((1.0 - 2.0 * cut) * math.sqrt(x.size)))


@pytest.mark.parametrize(("index", "t"), [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4)])
def test_reproduces_the_authors_published_errors(index, t):
    """d = 50, N(0, I), prior radius 10 sqrt(d), rho = 0.5, 100 trials, 10%-trimmed mean."""
    ns = np.loadtxt(REFERENCE / "counters-1.txt")
    published = np.loadtxt(REFERENCE / f"t{t}-1.txt")[index]
    n, d = int(ns[index]), 50
    plan = coinpress_plan(np.ones(d), n, 10 * math.sqrt(d), standard_schedule(0.5, t))
    rng = np.random.default_rng(1000 + 10 * index + t)
    err = simulate_plan(plan, np.ones(d), np.zeros(d), np.zeros(d), n, 100, rng=rng).population
    ours = trim_mean(err, 0.1)
    # both values are trimmed means of 100 trials: the difference has sd sqrt(2) se
    tol = 4.0 * math.sqrt(2.0) * _trimmed_se(err)
    assert abs(ours - published) < tol
    assert tol < 0.08 * published            # power: an 8% shift would be detected


def test_reference_files_are_the_documented_ones():
    ns = np.loadtxt(REFERENCE / "counters-1.txt")
    np.testing.assert_allclose(ns, np.linspace(1000, 10000, 12), rtol=1e-15)
    nonpriv = np.loadtxt(REFERENCE / "nonpr-1.txt")
    # the non-private mean of N(0, I_50): E||x_bar|| ~ sqrt(d / n)
    np.testing.assert_allclose(nonpriv, np.sqrt(50 / ns), rtol=0.05)


# --------------------------------------------------------------------------- schedule


def test_tail_bound_is_an_upper_bound_of_the_exact_quantile():
    from scipy.stats import chi2

    for d in (1, 5, 50, 1000):
        for beta in (0.1, 0.01, 1e-6):
            assert tail_bound(d, beta) ** 2 >= chi2.isf(beta, d)
            assert tail_bound(d, beta) ** 2 <= 1.6 * chi2.isf(beta, d) + 5


def test_schedule_recursion_by_hand():
    n, d, r = 2000, 7, 30.0
    s = coinpress_schedule(n, d, r, [0.1, 0.3])
    g = math.sqrt(d + 2 * math.sqrt(d * math.log(100)) + 2 * math.log(100))
    t1 = min(math.sqrt(r * r + 6 * r + g * g), r + g)
    s1 = 2 * t1 / n / math.sqrt(0.2)
    r1 = g * math.sqrt(1 / n + s1 * s1)
    np.testing.assert_allclose([s.thresholds[0], s.noise_sds[0], s.radii[0]], [t1, s1, r1], rtol=1e-14)
    t2 = min(math.sqrt(r1 * r1 + 6 * r1 + g * g), r1 + g)
    assert s.thresholds[1] == pytest.approx(t2, rel=1e-14)


def test_standard_schedules_are_the_authors():
    rho = 0.5
    np.testing.assert_allclose(standard_schedule(rho, 1), [rho])
    np.testing.assert_allclose(standard_schedule(rho, 2), [rho / 4, 3 * rho / 4])
    np.testing.assert_allclose(standard_schedule(rho, 3), [rho / 8, rho / 8, 3 * rho / 4])
    np.testing.assert_allclose(standard_schedule(rho, 4), [rho / 12] * 3 + [3 * rho / 4])


# --------------------------------------------------------------------------- accounting


def _delta_by_quadrature(mu: float, eps: float) -> float:
    """delta(eps) = E[(1 - exp(eps - L))_+], L ~ N(mu^2/2, mu^2), by quadrature."""
    m, s = mu * mu / 2, mu

    def f(x):
        return (1 - math.exp(eps - x)) * norm.pdf(x, m, s)

    return integrate.quad(f, eps, m + 40 * s, epsabs=0, epsrel=1e-11, limit=200)[0]


@pytest.mark.parametrize("rho", [0.01, 0.028, 0.5, 2.0])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_zcdp_delta_matches_the_privacy_loss_integral(rho, eps):
    exact = zcdp_delta(rho, eps)
    if exact > 1e-250:
        assert exact == pytest.approx(_delta_by_quadrature(math.sqrt(2 * rho), eps), rel=1e-7)


def test_composition_of_losses_is_one_gaussian():
    """Sum of simulated privacy losses of three Gaussian mechanisms vs the exact profile."""
    rng = np.random.default_rng(7)
    rhos = np.array([0.02, 0.05, 0.13])
    loss = sum(rng.normal(r, math.sqrt(2 * r), 2_000_000) for r in rhos)
    eps = 0.8
    mc = np.mean(np.maximum(0.0, 1 - np.exp(eps - loss)))
    se = np.std(np.maximum(0.0, 1 - np.exp(eps - loss))) / math.sqrt(loss.size)
    assert abs(mc - zcdp_delta(rhos.sum(), eps)) < 5 * se


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.5, 1e-6), (4.0, 1e-9), (0.1, 1e-3)])
def test_rho_for_and_inverse(eps, delta):
    rho = rho_for(eps, delta)
    assert zcdp_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
    assert zcdp_to_epsilon_delta(rho, delta) == pytest.approx(eps, rel=1e-9)
    assert zcdp_epsilon_bound(rho, delta) > eps


# --------------------------------------------------------------------------- sensitivity


def _plans():
    sig = zipf_sigmas(6, 1.0)
    return [
        (np.ones(6), coinpress_plan(np.ones(6), 50, 5.0, [0.1, 0.2])),
        (sig, two_stage_plan(sig, 50, 2.0, 0.3, share=0.2, scaling="lemma")),
        (sig, hybrid_plan(sig, 50, 2.0, [0.05, 0.05, 0.2], scaling="optimal")),
    ]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_step_sensitivity_random_and_adversarial_neighbours(which):
    """Replacing one row moves each step's working-space mean by at most its bound."""
    sig, plan = _plans()[which]
    n, d = 50, 6
    rng = np.random.default_rng(11 + which)
    X = rng.standard_normal((n, d)) * sig + 1.0
    centre = rng.normal(size=(1, d))
    for step in plan:
        bound = (2 * float(step.threshold) / n if step.kind == "ball"
                 else 2 * step.threshold / n)
        silent = Step(step.kind, step.scaling, step.threshold, np.zeros(d), step.rho)
        base = (_apply(silent, X[None], centre, rng)[0] - centre[0]) * step.scaling
        worst = 0.0
        for k in range(400):
            i = k % n
            Y = X.copy()
            if k < 200:     # random neighbours of X, rows at scales 1e-2 ... 1e6
                Y[i] = rng.normal(size=d) * 10 ** rng.uniform(-2, 6)
                moved = _apply(silent, Y[None], centre, rng)[0] - centre[0]
                moved = moved * step.scaling - base
            else:           # adversarial pairs: row i at two opposite extremes
                if step.kind == "box":
                    direction = np.sign(rng.normal(size=d))
                else:
                    direction = rng.normal(size=d)
                Z = X.copy()
                Y[i] = centre[0] + 1e8 * direction / step.scaling
                Z[i] = centre[0] - 1e8 * direction / step.scaling
                moved = (_apply(silent, Y[None], centre, rng)[0]
                         - _apply(silent, Z[None], centre, rng)[0]) * step.scaling
            if step.kind == "ball":
                worst = max(worst, float(np.linalg.norm(moved)) / bound)
            else:
                worst = max(worst, float(np.max(np.abs(moved) / bound)))
        assert worst <= 1 + 1e-12
        assert worst > 1 - 1e-9         # and attained by the adversarial pairs (construction)
        assert step_rho(step, n) == pytest.approx(step.rho, rel=1e-12)


# --------------------------------------------------------------------------- semi-exact error


@pytest.mark.parametrize("kind", ["none", "lemma", "hybrid", "coinpress"])
def test_plan_error_matches_simulation(kind):
    d, n, R = 8, 2000, 5.0
    sig = zipf_sigmas(d, 1.0)
    rho = rho_for(1.0, 1e-6)
    if kind in ("none", "lemma"):
        plan = two_stage_plan(sig, n, R, rho, share=0.2, scaling=kind)
    elif kind == "hybrid":
        plan = hybrid_plan(sig, n, R, standard_schedule(rho, 3))
    else:
        plan = coinpress_plan(sig, n, R / sig.min(), standard_schedule(rho, 3))
    rng = np.random.default_rng(5)
    mu = rng.normal(size=d)
    mu *= 0.9 * R / np.linalg.norm(mu)
    e = simulate_plan(plan, sig, mu, np.zeros(d), n, 300, rng=rng).sample
    se = e.std(ddof=1) / math.sqrt(e.size)
    assert abs(e.mean() - plan_error(plan, sig, n)) < 4 * se
    assert se < 0.1 * e.mean()


# --------------------------------------------------------------------------- estimators


def test_coinpress_mean_is_close_and_deterministic():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5000, 4)) + [10.0, -3.0, 0.0, 2.0]
    a = coinpress_mean(X, np.zeros(4), 50.0, [0.2, 0.8], rng=np.random.default_rng(9))
    b = coinpress_mean(X, np.zeros(4), 50.0, [0.2, 0.8], rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    assert np.linalg.norm(a - X.mean(axis=0)) < 0.05
    X0 = X.copy()
    coinpress_mean(X, np.zeros(4), 50.0, [0.2, 0.8], rng=rng)
    np.testing.assert_array_equal(X, X0)              # the data are not modified


def test_run_plan_equals_simulate_plan_for_one_replicate():
    sig = np.array([2.0, 1.0, 0.5])
    plan = hybrid_plan(sig, 300, 4.0, [0.1, 0.2])
    e1 = simulate_plan(plan, sig, np.ones(3), np.zeros(3), 300, 1, rng=np.random.default_rng(4))
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1, 300, 3))[0] * sig + 1.0
    est = run_plan(X, np.zeros(3), plan, rng=rng)
    assert e1.sample[0] == pytest.approx(float(np.sum((est - X.mean(0)) ** 2)), rel=1e-12)


def test_private_variances_recover_sigma():
    rng = np.random.default_rng(8)
    sig = np.array([5.0, 1.0, 0.2, 0.05])
    X = rng.standard_normal((40000, 4)) * sig - 3.0
    v = private_variances(X, 100.0, [0.5, 0.5, 0.5, 1.0], rng=rng)
    np.testing.assert_allclose(np.sqrt(v.variances), sig, rtol=0.05)
    assert np.all(v.upper >= v.variances)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"X": np.ones((1, 3))}, "X must have at least 2 rows"),
        ({"X": np.full((4, 3), np.nan)}, "X must contain only finite"),
        ({"center": np.zeros(2)}, "center must have shape"),
        ({"radius": 0.0}, "radius must be in"),
        ({"radius": -1.0}, "radius must be in"),
        ({"rhos": [0.1, -0.1]}, "rhos must be > 0"),
        ({"rhos": []}, "rhos must not be empty"),
    ],
)
def test_coinpress_mean_rejects_bad_input(kwargs, match):
    args = {"X": np.ones((4, 3)), "center": np.zeros(3), "radius": 1.0, "rhos": [0.5]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        coinpress_mean(args["X"], args["center"], args["radius"], args["rhos"], rng=np.random.default_rng(0))


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        coinpress_mean(np.ones((4, 3)), np.zeros(3), 1.0, [0.5], rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        coinpress_mean(np.ones((4, 3)), np.zeros(3), 1.0, [0.5], rng=None)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rho_for(0.0, 1e-6), "epsilon"),
        (lambda: rho_for(1.0, 1.0), "delta"),
        (lambda: zcdp_to_epsilon_delta(-1.0, 1e-6), "rho must be in"),
        (lambda: zcdp_to_epsilon_delta(0.5, 0.0), "delta must be in"),
        (lambda: zcdp_delta(0.5, math.inf), "epsilon must be finite"),
        (lambda: tail_bound(0, 0.1), "d must be an integer >= 1"),
        (lambda: tail_bound(3, 1.0), "beta must be in"),
        (lambda: coinpress_schedule(1, 3, 1.0, [0.1]), "n must be an integer >= 2"),
        (lambda: standard_schedule(0.5, 0), "t must be an integer >= 1"),
        (lambda: two_stage_plan([1.0, 0.0], 10, 1.0, 0.5, share=0.5), "sigmas must be > 0"),
        (lambda: two_stage_plan([1.0], 10, 1.0, 0.5, share=1.0), "share must be in"),
        (lambda: two_stage_plan([1.0], 10, 1.0, 0.5, share=0.5, scaling="x"), "scaling must be"),
        (lambda: hybrid_plan([1.0], 10, 1.0, [0.5]), "rhos must have at least 2"),
        (lambda: private_variances(np.ones((3, 2)), 1.0, [0.1], rng=np.random.default_rng(0)), "at least 4 rows"),
        (lambda: private_variances(np.ones((8, 2)), 0.0, [0.1], rng=np.random.default_rng(0)), "upper must be > 0"),
        (lambda: simulate_plan(coinpress_plan([1.0], 5, 1.0, [0.1]), [1.0, 1.0], [0.0, 0.0], [0.0, 0.0], 5, 2,
                               rng=np.random.default_rng(0)), "plan is for dimension"),
    ],
)
def test_other_functions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="n must be an integer"):
        coinpress_schedule(10.5, 3, 1.0, [0.1])
    with pytest.raises(TypeError, match="plan must be"):
        run_plan(np.ones((4, 2)), np.zeros(2), [1, 2], rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="step must be"):
        step_rho("ball", 10)
