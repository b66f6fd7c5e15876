"""Tests of egmlib.coinpress: the authors' published data, the schedule, the estimator
and its bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import trim_mean
from scipy.stats.mstats import winsorize

from egmlib.coinpress import coinpress_schedule, tail_bound
from egmlib.pipelines import coinpress_mean
from egmlib.pipelines import coinpress_pipeline, simulate_pipeline, standard_schedule

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
    pipeline = coinpress_pipeline(np.ones(d), n, 10 * math.sqrt(d), standard_schedule(0.5, t))
    rng = np.random.default_rng(1000 + 10 * index + t)
    err = simulate_pipeline(pipeline, np.ones(d), np.zeros(d), np.zeros(d), n, 100, rng=rng).population
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
        (lambda: tail_bound(0, 0.1), "d must be an integer >= 1"),
        (lambda: tail_bound(3, 1.0), "beta must be in"),
        (lambda: coinpress_schedule(1, 3, 1.0, [0.1]), "n must be an integer >= 2"),
        (lambda: coinpress_schedule(10, 3, 1.0, [0.1], tail=0.0), "tail must be"),
        (lambda: coinpress_schedule(10, 3, 1.0, [0.1], tail=float("nan")), "tail must be"),
    ],
)
def test_other_functions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="n must be an integer"):
        coinpress_schedule(10.5, 3, 1.0, [0.1])


def test_schedule_tail():
    """``tail`` replaces Laurent and Massart's bound: the default equals passing it,
    and a smaller tail gives smaller thresholds (the recursion is monotone in g)."""
    from scipy.stats import chi2

    base = coinpress_schedule(1000, 20, 30.0, [0.1, 0.2, 0.3])
    same = coinpress_schedule(1000, 20, 30.0, [0.1, 0.2, 0.3], tail=tail_bound(20, 0.01))
    np.testing.assert_array_equal(base.thresholds, same.thresholds)
    exact = coinpress_schedule(1000, 20, 30.0, [0.1, 0.2, 0.3], tail=float(np.sqrt(chi2.isf(0.01, 20))))
    assert np.all(exact.thresholds < base.thresholds)
    # the last radius is g * sqrt(1/n + s^2), by hand
    s = exact.noise_sds[-1]
    assert exact.radii[-1] == pytest.approx(np.sqrt(chi2.isf(0.01, 20)) * np.sqrt(1 / 1000 + s * s), rel=1e-12)
