"""Tests of the two ablation pipelines of egmlib.pipelines (issue 34):
coinpress_exact_pipeline and hybrid_pipeline(start="coinpress"), each against a
computation written out here with scipy (not egmlib's quantile code) and a Monte Carlo
check of the quantile they rest on."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from egmlib.pipelines import (
    coinpress_exact_pipeline,
    coinpress_pipeline,
    hybrid_pipeline,
    step_rho,
    standard_schedule,
)
from egmlib.zipf import zipf_sigmas


def test_coinpress_exact_steps_by_hand():
    sig, n, R = zipf_sigmas(7, 1.0), 2000, 10.0
    rhos = standard_schedule(0.3, 4)
    pipe = coinpress_exact_pipeline(sig, n, R / sig.min(), rhos)
    g = math.sqrt(chi2.ppf(0.99, 7))
    r = R / sig.min()
    for step, p in zip(pipe, rhos):
        t = min(math.sqrt(r * r + 6 * r + g * g), r + g)
        s = 2 * t / n / math.sqrt(2 * p)
        assert math.isclose(float(step.threshold), t, rel_tol=1e-12)
        np.testing.assert_allclose(step.noise_sd, s, rtol=1e-12)
        np.testing.assert_allclose(step.scaling, 1 / sig, rtol=1e-15)
        r = g * math.sqrt(1 / n + s * s)
    assert math.isclose(sum(step_rho(st, n) for st in pipe), 0.3, rel_tol=1e-12)


def test_coinpress_exact_quantile_is_the_099_quantile_and_below_the_bound():
    # a whitened row leaves the ball of radius g with probability 0.01 (Monte Carlo)
    d = 5
    pipe = coinpress_exact_pipeline(np.ones(d), 1000, 1e-9, [0.5])
    g = float(pipe[0].threshold) - 1e-9     # r tiny: T = r + g
    z = np.random.default_rng(3).standard_normal((400_000, d))
    p = float(np.mean(np.linalg.norm(z, axis=1) > g))
    assert abs(p - 0.01) < 4 * math.sqrt(0.01 * 0.99 / 400_000)
    # and the authors' Laurent-Massart radius is larger, so CoinPress clips less
    cp = coinpress_pipeline(np.ones(d), 1000, 1e-9, [0.5])
    assert float(cp[0].threshold) > float(pipe[0].threshold)


def test_hybrid_start_coinpress_by_hand():
    sig, n, R = zipf_sigmas(6, 2.0), 3000, 10.0
    rhos = standard_schedule(0.4, 3)
    pipe = hybrid_pipeline(sig, n, R, rhos, start="coinpress")
    base = hybrid_pipeline(sig, n, R, rhos)
    b = 1 / np.sqrt(sig * sig.sum())
    w = (b * sig) ** 2
    # the hybrid's quantile g by Monte Carlo (not egmlib.gchi2)
    z = np.random.default_rng(5).standard_normal((400_000, 6))
    g_mc = math.sqrt(np.quantile((z**2) @ w, 0.99))
    r0 = (R / sig.min()) / math.sqrt(chi2.ppf(0.99, 6))   # radius in units of g
    t_mc = min(math.sqrt((g_mc * r0) ** 2 + 6 * g_mc * r0 * math.sqrt(w.max()) + g_mc**2),
               g_mc * r0 + g_mc)
    assert math.isclose(float(pipe[0].threshold), t_mc, rel_tol=0.02)
    # the start changes only the first radius: the default is the image R max(b)
    r_def = R * b.max()
    t_def = min(math.sqrt(r_def**2 + 6 * r_def * math.sqrt(w.max()) + g_mc**2), r_def + g_mc)
    assert math.isclose(float(base[0].threshold), t_def, rel_tol=0.02)
    assert math.isclose(sum(step_rho(st, n) for st in pipe), 0.4, rel_tol=1e-12)
    np.testing.assert_allclose(pipe[0].scaling, b, rtol=1e-12)


def test_hybrid_start_rejects_bad_values():
    with pytest.raises(ValueError, match="start"):
        hybrid_pipeline(np.ones(3), 100, 1.0, [0.1, 0.2], start="whitened")
