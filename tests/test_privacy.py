"""Tests of egmlib.privacy: classic and analytic Gaussian calibration, zCDP accounting.

References are computed here with mpmath at 60 digits from the defining
formula of the privacy profile, independently of egmlib's cancellation-free
evaluation.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from scipy import integrate
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from egmlib.privacy import (
    _PROFILE_RTOL,
    analytic_sigma,
    classic_sigma,
    gaussian_delta,
    gaussian_rho,
    rho_for_cks,
    gaussian_zcdp_delta,
    zcdp_epsilon_bound,
    zcdp_epsilon_cks,
    gaussian_zcdp_epsilon,
)

DPS = 60

# Hypothesis caches data in ./.hypothesis by default; keep the checkout clean
# (pytest would otherwise warn about that directory, and warnings are errors).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "egmlib-hypothesis")


# ---------------------------------------------------------------------------
# Independent references (mpmath)
# ---------------------------------------------------------------------------
def _mp_delta(sigma: float, eps: float, sens: float = 1.0) -> mp.mpf:
    """Balle-Wang profile by its defining formula, at DPS digits."""
    with mp.workdps(DPS):
        s = mp.mpf(sigma) / mp.mpf(sens)
        e = mp.mpf(eps)
        u = e * s - 1 / (2 * s)
        v = e * s + 1 / (2 * s)
        return (mp.erfc(u / mp.sqrt(2)) - mp.exp(e) * mp.erfc(v / mp.sqrt(2))) / 2


def _mp_sigma(eps: float, delta: float, start: float) -> mp.mpf:
    """Root of the profile = delta (unit sensitivity) by Newton at DPS digits.

    The profile is strictly decreasing, so the root is unique; ``start`` only
    has to be close enough for Newton to converge, which the test checks.
    """
    with mp.workdps(DPS):
        s, e, d = mp.mpf(start), mp.mpf(eps), mp.mpf(delta)
        for _ in range(40):
            u = e * s - 1 / (2 * s)
            correction = (_mp_delta(s, e) - d) / (-mp.npdf(u) / s**2)
            s -= correction
            if abs(correction) < mp.mpf(10) ** (-45) * s:
                return s
    raise AssertionError(f"mpmath Newton did not converge for eps={eps}, delta={delta}")


def _rel(value: float, ref: mp.mpf) -> float:
    with mp.workdps(DPS):
        return float((mp.mpf(value) - ref) / ref)


# ---------------------------------------------------------------------------
# classic_sigma
# ---------------------------------------------------------------------------
def test_classic_sigma_by_hand() -> None:
    # sqrt(2 ln(1.25 / 1e-5)) / 0.5 = 2 sqrt(2 ln 125000); ln 125000 = 11.7360690162844...
    assert classic_sigma(0.5, 1e-5) == pytest.approx(2.0 * math.sqrt(2.0 * 11.736069016284437), rel=1e-15)
    assert classic_sigma(0.5, 1e-5) == pytest.approx(9.689610525210778, rel=1e-15)
    assert classic_sigma(0.5, 1e-5, 3.0) == pytest.approx(3.0 * classic_sigma(0.5, 1e-5), rel=1e-15)
    # delta = 1.25 e^{-1/2} makes the square root 1, so sigma = Delta / epsilon
    assert classic_sigma(0.25, 1.25 * math.exp(-0.5), 2.0) == pytest.approx(8.0, rel=1e-15)


@pytest.mark.parametrize("eps", [1.0, 1.5, 10.0])
def test_classic_sigma_rejects_epsilon_at_least_one(eps: float) -> None:
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1\).*Theorem 3\.22 only holds"):
        classic_sigma(eps, 1e-5)


# ---------------------------------------------------------------------------
# gaussian_delta against mpmath, and against the naive formula
# ---------------------------------------------------------------------------
_PROFILE_POINTS = [
    (eps, d) for eps in (1e-4, 1e-3, 0.1, 1.0, 10.0, 50.0, 1e3) for d in (0.5, 1e-3, 1e-15, 1e-100, 1e-280)
]


def _raw_delta(eps: float, sigma: float) -> float:
    """The profile as evaluated, before gaussian_delta rounds it up (its accuracy is what is bounded)."""
    from egmlib import privacy as P

    return P._profile(sigma, eps)[0]


def test_gaussian_delta_matches_mpmath() -> None:
    """35 points spanning the regimes: u < 0, cancelling integral branch, tiny delta, huge epsilon."""
    worst = 0.0
    for eps, d in _PROFILE_POINTS:
        sigma = 0.97 * analytic_sigma(eps, d)  # profile somewhat above d
        worst = max(worst, abs(_rel(_raw_delta(eps, sigma), _mp_delta(sigma, eps))))
    # analytic_sigma's safety argument needs this below _PROFILE_RTOL, with room
    assert worst <= _PROFILE_RTOL / 4
    assert worst > 0.0  # the comparison is not vacuous


def test_gaussian_delta_random_points_match_mpmath() -> None:
    rng = np.random.default_rng(20230120)
    eps = 10.0 ** rng.uniform(-4.0, 3.0, size=30)
    sigma = 10.0 ** rng.uniform(-2.0, 4.0, size=30)
    for e, s in zip(eps, sigma):
        ref = _mp_delta(s, e)
        if ref < mp.mpf("1e-300"):
            assert _raw_delta(e, s) < 1.1e-300
            continue
        assert abs(_rel(_raw_delta(e, s), ref)) <= _PROFILE_RTOL / 4


def test_naive_formula_fails_where_gaussian_delta_holds() -> None:
    """The textbook evaluations lose digits (or overflow) here; egmlib does not."""
    eps = 1e-5
    sigma = analytic_sigma(eps, 1e-15)  # the two terms are ~1e5 times delta: they cancel
    u, v = eps * sigma - 0.5 / sigma, eps * sigma + 0.5 / sigma
    ref = _mp_delta(sigma, eps)
    naive = float(ndtr(-u)) - math.exp(eps) * float(ndtr(-v))
    logspace = float(ndtr(-u)) - math.exp(eps + float(log_ndtr(-v)))
    assert abs(_rel(naive, ref)) > 1e-10
    assert abs(_rel(logspace, ref)) > 1e-10
    assert abs(_rel(_raw_delta(eps, sigma), ref)) < 1e-14
    # large epsilon: e^eps overflows in the naive formula, not here
    eps = 1000.0
    sigma = analytic_sigma(eps, 1e-10)
    with np.errstate(over="ignore", invalid="ignore"):
        naive_big = np.exp(np.float64(eps)) * ndtr(-(eps * sigma + 0.5 / sigma))
    assert not np.isfinite(naive_big)
    assert abs(_rel(_raw_delta(eps, sigma), _mp_delta(sigma, eps))) < 1e-14


def test_gaussian_delta_vectorised_shape_and_values() -> None:
    sigma = np.array([[0.5, 1.0], [2.0, 4.0]])
    out = gaussian_delta(1.0, sigma=sigma)
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    for idx in np.ndindex(sigma.shape):
        # identical arithmetic by design (analytic_sigma's guarantee relies on it)
        assert out[idx] == pytest.approx(gaussian_delta(1.0, sigma=float(sigma[idx])), rel=0, abs=0)
    assert isinstance(gaussian_delta(1.0, sigma=1.0), float)
    assert isinstance(gaussian_delta(1.0, sigma=np.float64(1.0)), float)


def test_gaussian_delta_sensitivity_is_a_scale() -> None:
    for k in (0.25, 3.0, 1e3):
        assert gaussian_delta(0.8, sigma=k * 1.7, sensitivity=k) == pytest.approx(gaussian_delta(0.8, sigma=1.7), rel=1e-13)


def test_gaussian_delta_extremes_are_finite() -> None:
    assert gaussian_delta(1.0, sigma=1e-6) == pytest.approx(1.0, abs=1e-15)
    assert 0.0 < gaussian_delta(1.0, sigma=1e6) <= 1e-323    # underflow: the smallest doubles, not 0
    assert 0.001 < gaussian_delta(1e4, sigma=0.0072) < 0.01
    assert gaussian_delta(1.0, sigma=1e-300) == pytest.approx(1.0, abs=1e-15)
    assert gaussian_delta(1e-300, sigma=1e300) == pytest.approx(
        float(_mp_delta(1e300, 1e-300)), rel=1e-6
    )  # absurd magnitudes: plain formula, still sensible


# ---------------------------------------------------------------------------
# Monotonicity
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [1e-3, 0.3, 1.0, 7.0, 50.0])
def test_gaussian_delta_decreases_in_sigma(eps: float) -> None:
    sigma = np.geomspace(0.05, 1e4, 400)
    d = gaussian_delta(eps, sigma=sigma)
    keep = (d > 1e-300) & (d < 1.0 - 1e-12)  # away from underflow and from 1
    assert keep.sum() > 50
    assert np.all(np.diff(d[keep]) < 0.0)


def test_gaussian_delta_decreases_in_epsilon() -> None:
    eps = np.geomspace(1e-3, 50.0, 200)
    d = np.array([gaussian_delta(e, sigma=0.2) for e in eps])
    assert d[-1] > 1e-300
    assert np.all(np.diff(d) < 0.0)


def test_analytic_sigma_decreases_in_delta_and_epsilon() -> None:
    deltas = np.geomspace(1e-15, 0.5, 25)
    for eps in (1e-3, 1.0, 50.0):
        s = np.array([analytic_sigma(eps, d) for d in deltas])
        assert np.all(np.diff(s) < 0.0)
    eps_grid = np.geomspace(1e-3, 50.0, 25)
    s = np.array([analytic_sigma(e, 1e-6) for e in eps_grid])
    assert np.all(np.diff(s) < 0.0)


# ---------------------------------------------------------------------------
# analytic_sigma: accuracy, safety, relation to the classic bound
# ---------------------------------------------------------------------------
_SIGMA_POINTS = [
    (float(e), d) for e in np.geomspace(1e-3, 50.0, 7) for d in (0.5, 1e-3, 1e-9, 1e-15)
]


def test_analytic_sigma_matches_mpmath_and_is_never_below() -> None:
    errors = []
    for eps, d in _SIGMA_POINTS:
        sigma = analytic_sigma(eps, d)
        ref = _mp_sigma(eps, d, start=sigma)
        with mp.workdps(DPS):
            assert abs(_mp_delta(ref, eps) - d) < mp.mpf(10) ** (-40) * d
        err = _rel(sigma, ref)
        assert err >= 0.0, (eps, d, err)  # never below the true minimum
        errors.append(err)
    assert max(errors) <= 2e-14  # goal: 1e-12; the rounding-safe margin costs ~1e-14
    assert np.median(errors) <= 2e-15


@pytest.mark.parametrize(
    ("eps", "d"), [(1e-12, 0.9), (1e-12, 1e-300), (1e-6, 1e-100), (1e4, 0.5), (1e12, 1e-300), (1e12, 0.9)]
)
def test_analytic_sigma_far_outside_the_usual_range(eps: float, d: float) -> None:
    sigma = analytic_sigma(eps, d)
    err = _rel(sigma, _mp_sigma(eps, d, start=sigma))
    assert 0.0 <= err <= 5e-14
    assert gaussian_delta(eps, sigma=sigma) <= d


def test_analytic_sigma_safe_on_dense_grid() -> None:
    """gaussian_delta(e, sigma=analytic_sigma(e, d)) <= d holds exactly, and sigma is minimal.

    Minimal in the sense of the rounding-safe acceptance test: the double two
    steps below the result already has a profile above ``d (1 - r)``.
    """
    for eps in np.geomspace(1e-3, 50.0, 24):
        for d in np.geomspace(1e-15, 0.5, 12):
            e, dd = float(eps), float(d)
            sigma = analytic_sigma(e, dd)
            assert gaussian_delta(e, sigma=sigma) <= dd
            lower = math.nextafter(math.nextafter(sigma, 0.0), 0.0)
            assert gaussian_delta(e, sigma=lower) > dd * (1.0 - _PROFILE_RTOL)
            for k in (0.3, 7.0):
                assert gaussian_delta(e, sigma=analytic_sigma(e, dd, k), sensitivity=k) <= dd


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    eps=st.floats(min_value=1e-3, max_value=50.0),
    log10_delta=st.floats(min_value=-15.0, max_value=math.log10(0.5)),
    sens=st.floats(min_value=1e-3, max_value=1e3),
)
def test_analytic_sigma_safety_property(eps: float, log10_delta: float, sens: float) -> None:
    d = 10.0**log10_delta
    sigma = analytic_sigma(eps, d, sens)
    assert gaussian_delta(eps, sigma=sigma, sensitivity=sens) <= d
    assert sigma == pytest.approx(sens * analytic_sigma(eps, d), rel=1e-14)
    if eps < 1.0:
        assert sigma < classic_sigma(eps, d, sens)


def test_sensitivity_scaling() -> None:
    for eps, d in [(0.1, 1e-6), (1.0, 1e-3), (20.0, 1e-12)]:
        base = analytic_sigma(eps, d)
        for k in (0.5, 4.0, 1e-3, 3.7, 1e4):
            assert analytic_sigma(eps, d, k) == pytest.approx(k * base, rel=2e-15)


def test_analytic_below_classic_and_classic_is_private() -> None:
    ratios = []
    for eps in np.geomspace(1e-3, 0.99, 15):
        for d in (0.5, 1e-3, 1e-6, 1e-12, 1e-15):
            e = float(eps)
            classic = classic_sigma(e, d)
            analytic = analytic_sigma(e, d)
            assert analytic < classic
            # Theorem 3.22 is correct: the classic sigma does give (eps, delta)-DP
            assert gaussian_delta(e, sigma=classic) <= d
            ratios.append(analytic / classic)
    # not tight (Balle and Wang): the classic sigma is visibly too large
    assert max(ratios) < 0.95


# ---------------------------------------------------------------------------
# The privacy profile as a probability: Monte Carlo
# ---------------------------------------------------------------------------
def test_profile_definition_monte_carlo() -> None:
    """delta = P[L > eps] - e^eps P[L' > eps], L the privacy loss ln(p/q) of
    N(0, s^2) against N(Delta, s^2), evaluated at Y ~ P (L) and Y' ~ Q (L')."""
    rng = np.random.default_rng(12345)
    s, delta_sens, eps, n = 1.3, 1.0, 0.5, 1_000_000

    def loss(y: np.ndarray) -> np.ndarray:
        return (delta_sens**2 - 2.0 * y * delta_sens) / (2.0 * s**2)

    hit_p = loss(rng.normal(0.0, s, n)) > eps
    hit_q = loss(rng.normal(delta_sens, s, n)) > eps
    p1, p2 = hit_p.mean(), hit_q.mean()
    estimate = p1 - math.exp(eps) * p2
    se = math.sqrt(p1 * (1 - p1) / n + math.exp(2 * eps) * p2 * (1 - p2) / n)
    exact = gaussian_delta(eps, sigma=s, sensitivity=delta_sens)
    assert abs(estimate - exact) < 4.0 * se
    assert se < 0.01 * exact  # the check has power: a 5% error would be caught


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, r"epsilon must be in \(0\.0, inf\)"),
        ({"epsilon": -1.0}, r"epsilon must be in \(0\.0, inf\)"),
        ({"epsilon": math.nan}, "epsilon must be finite"),
        ({"epsilon": math.inf}, "epsilon must be finite"),
        ({"delta": 0.0}, r"delta must be in \(0\.0, 1\.0\)"),
        ({"delta": 1.0}, r"delta must be in \(0\.0, 1\.0\)"),
        ({"delta": -0.1}, r"delta must be in \(0\.0, 1\.0\)"),
        ({"delta": math.nan}, "delta must be finite"),
        ({"sensitivity": 0.0}, r"sensitivity must be in \(0\.0, inf\)"),
        ({"sensitivity": -2.0}, r"sensitivity must be in \(0\.0, inf\)"),
        ({"sensitivity": math.inf}, "sensitivity must be finite"),
    ],
)
def test_classic_sigma_invalid(kwargs: dict, match: str) -> None:
    args = {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        classic_sigma(**args)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, r"epsilon must be in \[1e-12, 1000000000000\.0\]"),
        ({"epsilon": -1.0}, r"epsilon must be in \[1e-12"),
        ({"epsilon": 1e13}, r"epsilon must be in \[1e-12"),
        ({"epsilon": math.nan}, "epsilon must be finite"),
        ({"epsilon": math.inf}, "epsilon must be finite"),
        ({"delta": 0.0}, r"delta must be in \[1e-300, 1\.0\)"),
        ({"delta": 1e-301}, r"delta must be in \[1e-300, 1\.0\)"),
        ({"delta": 1.0}, r"delta must be in \[1e-300, 1\.0\)"),
        ({"delta": 1.5}, r"delta must be in \[1e-300, 1\.0\)"),
        ({"delta": -0.1}, r"delta must be in \[1e-300, 1\.0\)"),
        ({"delta": math.nan}, "delta must be finite"),
        ({"sensitivity": 0.0}, r"sensitivity must be in \(0\.0, inf\)"),
        ({"sensitivity": -2.0}, r"sensitivity must be in \(0\.0, inf\)"),
        ({"sensitivity": math.nan}, "sensitivity must be finite"),
    ],
)
def test_analytic_sigma_invalid(kwargs: dict, match: str) -> None:
    args = {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        analytic_sigma(**args)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sigma": 0.0}, "sigma must be > 0"),
        ({"sigma": -1.0}, "sigma must be > 0"),
        ({"sigma": [1.0, -1.0]}, "sigma must be > 0"),
        ({"sigma": math.nan}, "sigma must contain only finite values"),
        ({"sigma": [1.0, math.inf]}, "sigma must contain only finite values"),
        ({"epsilon": 0.0}, r"epsilon must be in \(0\.0, inf\)"),
        ({"epsilon": -1.0}, r"epsilon must be in \(0\.0, inf\)"),
        ({"epsilon": math.nan}, "epsilon must be finite"),
        ({"epsilon": math.inf}, "epsilon must be finite"),
        ({"sensitivity": 0.0}, r"sensitivity must be in \(0\.0, inf\)"),
        ({"sensitivity": math.inf}, "sensitivity must be finite"),
    ],
)
def test_gaussian_delta_invalid(kwargs: dict, match: str) -> None:
    args = {"sigma": 1.0, "epsilon": 0.5, "sensitivity": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        gaussian_delta(**args)


def test_wrong_types() -> None:
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        analytic_sigma("0.5", 1e-5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sigma must be an array of real numbers"):
        gaussian_delta(0.5, sigma="abc")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# The branches of the profile evaluation, each against mpmath
# ---------------------------------------------------------------------------
def _branch(s: float, eps: float) -> str:
    """Which evaluation _profile uses at (s, eps), replaying its decisions."""
    from egmlib import privacy as P

    u = eps * s - 0.5 / s
    x = u / math.sqrt(2.0)
    mid = (eps / math.sqrt(2.0)) * s
    width = 1.0 / (math.sqrt(2.0) * s)
    if P._erfcx_rough(mid + 0.5 * width) <= 0.45 * P._erfcx_rough(x):
        return "direct"
    if x >= 2.0 and width >= 0.1:
        return "two continued fractions"
    return f"{len(P._gl_rule(0.5 * width, mid)[0])}-point rule"


def test_every_profile_branch_matches_mpmath() -> None:
    """Random points of the calibration domain, sorted by the branch that evaluates them:
    each branch (direct subtraction, two continued fractions, Gauss-Legendre with 2, 4,
    8 and 16 points) is hit and agrees with the 60-digit defining formula."""
    rng = np.random.default_rng(20260105)
    worst: dict[str, float] = {}
    for _ in range(1500):
        eps = float(10.0 ** rng.uniform(-4.0, 3.0))
        d = float(10.0 ** rng.uniform(-280.0, -0.3)) if rng.random() < 0.3 else float(10.0 ** rng.uniform(-16, -0.3))
        s = analytic_sigma(eps, d) * float(10.0 ** rng.uniform(-0.02, 0.02))
        ref = _mp_delta(s, eps)
        if ref < mp.mpf("1e-290"):
            continue
        key = _branch(s, eps)
        worst[key] = max(worst.get(key, 0.0), abs(_rel(_raw_delta(eps, s), ref)))
    assert set(worst) == {"direct", "two continued fractions"} | {f"{n}-point rule" for n in (2, 4, 8, 16)}
    assert max(worst.values()) <= _PROFILE_RTOL / 4, worst


def test_short_quadrature_rules_agree_with_the_16_point_rule() -> None:
    """The 2-, 4- and 8-point rules are used only where they agree with the 16-point rule
    to rounding level (the rule's truncation error is far below it)."""
    from egmlib import privacy as P

    rule16 = (P._GL_RULES[-1][1], P._GL_RULES[-1][2])
    rng = np.random.default_rng(7)
    count, worst = 0, 0.0
    for _ in range(3000):
        eps = float(10.0 ** rng.uniform(-12.0, 4.0))
        d = float(10.0 ** rng.uniform(-280.0, -0.1))
        s = analytic_sigma(eps, d) * float(10.0 ** rng.uniform(-0.05, 0.05))
        if _branch(s, eps) not in {"2-point rule", "4-point rule", "8-point rule"}:
            continue
        ref = P._profile(s, eps, rule16)[0]
        if ref > 1e-290:
            count += 1
            worst = max(worst, abs(P._profile(s, eps)[0] - ref) / ref)
    assert count > 500
    assert worst <= 1.5e-15


def test_analytic_sigma_against_the_stored_50_digit_references() -> None:
    """Every row of bench/reference_privacy.csv (mpmath, 50 digits, written by
    bench/make_reference_privacy.py): within 1e-13 and never below sigma*."""
    import csv

    path = Path(__file__).resolve().parents[1] / "bench" / "reference_privacy.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 60
    worst = 0.0
    for row in rows:
        eps, d = float(row["epsilon"]), float(row["delta"])
        err = _rel(analytic_sigma(eps, d), mp.mpf(row["sigma"]))
        assert err >= 0.0, (eps, d, err)
        worst = max(worst, err)
    assert worst <= 1e-13


# --------------------------------------------------------------------------- zCDP accounting
# (moved from tests/test_coinpress.py with the accounting functions)


def _delta_by_quadrature(mu: float, eps: float) -> float:
    """delta(eps) = E[(1 - exp(eps - L))_+], L ~ N(mu^2/2, mu^2), by quadrature."""
    m, s = mu * mu / 2, mu

    def f(x):
        return (1 - math.exp(eps - x)) * norm.pdf(x, m, s)

    return integrate.quad(f, eps, m + 40 * s, epsabs=0, epsrel=1e-11, limit=200)[0]


@pytest.mark.parametrize("rho", [0.01, 0.028, 0.5, 2.0])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_zcdp_delta_matches_the_privacy_loss_integral(rho, eps):
    exact = gaussian_zcdp_delta(rho, epsilon=eps)
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
    assert abs(mc - gaussian_zcdp_delta(rhos.sum(), epsilon=eps)) < 5 * se


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.5, 1e-6), (4.0, 1e-9), (0.1, 1e-3)])
def test_rho_for_and_inverse(eps, delta):
    rho = gaussian_rho(eps, delta)
    assert gaussian_zcdp_delta(rho, epsilon=eps) == pytest.approx(delta, rel=1e-6)
    assert gaussian_zcdp_epsilon(rho, delta=delta) == pytest.approx(eps, rel=1e-9)
    assert zcdp_epsilon_bound(rho, delta) > eps


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gaussian_rho(0.0, 1e-6), "epsilon"),
        (lambda: gaussian_rho(1.0, 1.0), "delta"),
        (lambda: gaussian_zcdp_epsilon(-1.0, delta=1e-6), "rho must be in"),
        (lambda: gaussian_zcdp_epsilon(0.5, delta=0.0), "delta must be in"),
        (lambda: gaussian_zcdp_delta(0.5, epsilon=math.inf), "epsilon must be finite"),
    ],
)
def test_accounting_rejects_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------- CKS conversion


def _cks_mpmath(rho: float, delta: float) -> float:
    """CKS's epsilon at 50 digits: the stationary point of the bound in alpha (mpmath's
    findroot on the derivative, from the approximate minimiser), not egmlib's search."""
    with mp.workdps(50):
        r, L = mp.mpf(rho), mp.log(1 / mp.mpf(delta))

        def f(a):
            return a * r + (L + (a - 1) * mp.log(1 - 1 / a) - mp.log(a)) / (a - 1)

        a0 = 1 + mp.sqrt(L / r)
        a = mp.findroot(lambda x: mp.diff(f, x), a0)
        assert a > 1
        # a stationary point of a function that is convex here: a dense grid agrees
        grid = [a0 * mp.mpf(k) / 200 for k in range(201, 2000, 7)] + [1 + mp.mpf(10) ** (-k) for k in range(1, 8)]
        assert all(f(x) >= f(a) - mp.mpf(10) ** -30 for x in grid if x > 1)
        return float(f(a))


@pytest.mark.parametrize("rho", [0.001, 0.028, 0.5, 3.0, 200.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_cks_conversion_matches_mpmath_and_sits_between_the_others(rho, delta):
    cks = zcdp_epsilon_cks(rho, delta)
    assert cks == pytest.approx(_cks_mpmath(rho, delta), rel=1e-9, abs=1e-12)
    assert gaussian_zcdp_epsilon(rho, delta=delta) <= cks * (1 + 1e-12)
    assert cks <= zcdp_epsilon_bound(rho, delta)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.25, 1e-6), (4.0, 1e-9)])
def test_rho_for_cks_inverts_and_is_bracketed(eps, delta):
    rho = rho_for_cks(eps, delta)
    assert zcdp_epsilon_cks(rho, delta) == pytest.approx(eps, rel=1e-9)
    L = math.log(1 / delta)
    assert (math.sqrt(L + eps) - math.sqrt(L)) ** 2 < rho < gaussian_rho(eps, delta)


def test_cks_delta_form():
    """CKS's Proposition in its delta form, at the epsilon found: inf over alpha of
    exp((alpha-1)(alpha rho - eps)) (1 - 1/alpha)^alpha / (alpha - 1) equals delta."""
    rho, delta = 0.3, 1e-6
    eps = zcdp_epsilon_cks(rho, delta)
    alphas = np.exp(np.linspace(math.log(1.001), math.log(200), 200001))
    logd = (alphas - 1) * (alphas * rho - eps) + alphas * np.log1p(-1 / alphas) - np.log(alphas - 1)
    assert math.exp(logd.min()) == pytest.approx(delta, rel=1e-6)


def test_cks_bad_input():
    with pytest.raises(ValueError, match="rho must be in"):
        zcdp_epsilon_cks(0.0, 1e-6)
    with pytest.raises(ValueError, match="delta must be in"):
        zcdp_epsilon_cks(0.5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        rho_for_cks(-1.0, 1e-6)
