"""Tests of egmlib.pipelines: the budget schedule, the sensitivity of every step,
the semi-exact error against simulation, private variances and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from egmlib.pipelines import (
    Step,
    _apply,
    coinpress_pipeline,
    hybrid_pipeline,
    pipeline_error,
    private_variances,
    run_pipeline,
    simulate_pipeline,
    standard_schedule,
    step_rho,
    two_stage_pipeline,
)
from egmlib.privacy import gaussian_rho
from egmlib.zipf import zipf_sigmas


def test_standard_schedules_are_the_authors():
    rho = 0.5
    np.testing.assert_allclose(standard_schedule(rho, 1), [rho])
    np.testing.assert_allclose(standard_schedule(rho, 2), [rho / 4, 3 * rho / 4])
    np.testing.assert_allclose(standard_schedule(rho, 3), [rho / 8, rho / 8, 3 * rho / 4])
    np.testing.assert_allclose(standard_schedule(rho, 4), [rho / 12] * 3 + [3 * rho / 4])


# --------------------------------------------------------------------------- sensitivity


def _pipelines():
    sig = zipf_sigmas(6, 1.0)
    return [
        (np.ones(6), coinpress_pipeline(np.ones(6), 50, 5.0, [0.1, 0.2])),
        (sig, two_stage_pipeline(sig, 50, 2.0, 0.3, share=0.2, scaling="lemma")),
        (sig, hybrid_pipeline(sig, 50, 2.0, [0.05, 0.05, 0.2], scaling="optimal")),
    ]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_step_sensitivity_random_and_adversarial_neighbours(which):
    """Replacing one row moves each step's working-space mean by at most its bound."""
    sig, pipeline = _pipelines()[which]
    n, d = 50, 6
    rng = np.random.default_rng(11 + which)
    X = rng.standard_normal((n, d)) * sig + 1.0
    centre = rng.normal(size=(1, d))
    for step in pipeline:
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
def test_pipeline_error_matches_simulation(kind):
    d, n, R = 8, 2000, 5.0
    sig = zipf_sigmas(d, 1.0)
    rho = gaussian_rho(1.0, 1e-6)
    if kind in ("none", "lemma"):
        pipeline = two_stage_pipeline(sig, n, R, rho, share=0.2, scaling=kind)
    elif kind == "hybrid":
        pipeline = hybrid_pipeline(sig, n, R, standard_schedule(rho, 3))
    else:
        pipeline = coinpress_pipeline(sig, n, R / sig.min(), standard_schedule(rho, 3))
    rng = np.random.default_rng(5)
    mu = rng.normal(size=d)
    mu *= 0.9 * R / np.linalg.norm(mu)
    e = simulate_pipeline(pipeline, sig, mu, np.zeros(d), n, 300, rng=rng).sample
    se = e.std(ddof=1) / math.sqrt(e.size)
    assert abs(e.mean() - pipeline_error(pipeline, sig, n)) < 4 * se
    assert se < 0.1 * e.mean()


def test_run_pipeline_equals_simulate_pipeline_for_one_replicate():
    sig = np.array([2.0, 1.0, 0.5])
    pipeline = hybrid_pipeline(sig, 300, 4.0, [0.1, 0.2])
    e1 = simulate_pipeline(pipeline, sig, np.ones(3), np.zeros(3), 300, 1, rng=np.random.default_rng(4))
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1, 300, 3))[0] * sig + 1.0
    est = run_pipeline(X, np.zeros(3), pipeline, rng=rng)
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
    ("call", "match"),
    [
        (lambda: standard_schedule(0.5, 0), "t must be an integer >= 1"),
        (lambda: two_stage_pipeline([1.0, 0.0], 10, 1.0, 0.5, share=0.5), "sigmas must be > 0"),
        (lambda: two_stage_pipeline([1.0], 10, 1.0, 0.5, share=1.0), "share must be in"),
        (lambda: two_stage_pipeline([1.0], 10, 1.0, 0.5, share=0.5, scaling="x"), "scaling must be"),
        (lambda: hybrid_pipeline([1.0], 10, 1.0, [0.5]), "rhos must have at least 2"),
        (lambda: private_variances(np.ones((3, 2)), 1.0, [0.1], rng=np.random.default_rng(0)), "at least 4 rows"),
        (lambda: private_variances(np.ones((8, 2)), 0.0, [0.1], rng=np.random.default_rng(0)), "upper must be > 0"),
        (lambda: simulate_pipeline(coinpress_pipeline([1.0], 5, 1.0, [0.1]), [1.0, 1.0], [0.0, 0.0], [0.0, 0.0], 5, 2,
                               rng=np.random.default_rng(0)), "pipeline is for dimension"),
    ],
)
def test_pipeline_functions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="pipeline must be"):
        run_pipeline(np.ones((4, 2)), np.zeros(2), [1, 2], rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="step must be"):
        step_rho("ball", 10)


def test_clip_probability_default_is_one_over_n_and_sets_the_radius():
    from egmlib.gchi2 import sf

    sig = zipf_sigmas(6, 1.0)
    rho = gaussian_rho(1.0, 1e-6)
    for build in (lambda c: two_stage_pipeline(sig, 500, 2.0, rho, share=0.2, clip_probability=c),
                  lambda c: hybrid_pipeline(sig, 500, 2.0, standard_schedule(rho, 3), clip_probability=c)):
        default, explicit, wide = build(None), build(1 / 500), build(0.05)
        assert float(default[-1].threshold) == float(explicit[-1].threshold)
        # the radius clips a row of the marginal law with the requested probability
        prev, last = wide[-2], wide[-1]
        eff = np.sqrt(sig**2 * (1 - 1 / 500) + (prev.noise_sd / prev.scaling) ** 2)
        p = sf(float(last.threshold) ** 2, (last.scaling * eff) ** 2)
        assert p == pytest.approx(0.05, rel=1e-6)
        assert step_rho(last, 500) == pytest.approx(last.rho, rel=1e-12)
    with pytest.raises(ValueError, match="clip_probability must be in"):
        hybrid_pipeline(sig, 500, 2.0, [0.1, 0.2], clip_probability=1.0)
