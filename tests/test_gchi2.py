"""Tests of egmlib.gchi2: P(sum_j w_j Z_j^2 > c) and its quantile.

Independent references: mpmath (incomplete gamma, erfc, a one-dimensional
Bessel integral for two weights, and a contour of its own at 30-50 digits),
a seeded Monte Carlo estimate, gx2 (Ruben's series) and, when installed,
chi2comb (Davies).  The stored high-precision grid bench/reference_gchi2.csv
(bench/make_reference_gchi2.py) is checked row by row.
"""

from __future__ import annotations

import csv
import math
import os
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from egmlib import gchi2
from egmlib.gchi2 import cdf, isf, sf

REF_CSV = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "reference_gchi2.csv")


def rel(a, b):
    return abs(float(a) - float(b)) / abs(float(b))


def zipf_weights(family, alpha, d):
    i = np.arange(1, d + 1, dtype=np.float64)
    sigma = i ** (-alpha)
    sigma = sigma / sigma.sum()
    return sigma * sigma if family == "sq" else sigma / sigma.sum()


# --------------------------------------------------------------------------
# exact special cases
# --------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3, 10, 1000, 100000])
@pytest.mark.parametrize("z", [-3.0, 0.0, 3.0, 10.0, 40.0])
def test_equal_weights_is_scaled_chi_square(d, z):
    w = 2.5
    c = w * max(d + z * math.sqrt(2 * d), 1e-3 * d)
    mp.mp.dps = 40
    ref_sf = mp.gammainc(mp.mpf(d) / 2, mp.mpf(c) / (2 * w), mp.inf, regularized=True)
    ref_cdf = 1 - ref_sf
    # relative accuracy limited only by the conditioning c f(c) / P
    assert rel(sf(c, np.full(d, w)), ref_sf) < 1e-12
    assert rel(cdf(c, np.full(d, w)), ref_cdf) < 1e-12


@pytest.mark.parametrize("c", [1e-12, 1e-3, 0.5, 1.0, 7.0, 60.0, 250.0])
def test_one_weight_is_two_sided_normal_tail(c):
    w = 0.37
    mp.mp.dps = 30
    x = mp.sqrt(mp.mpf(c) / w)
    ref = mp.erfc(x / mp.sqrt(2))          # 2 * Phi(-sqrt(c / w))
    assert rel(sf(c, [w]), ref) < 1e-13
    assert rel(cdf(c, [w]), 1 - ref) < 1e-13


def _two_weight_sf(c, w1, w2):
    """P(w1 Z1^2 + w2 Z2^2 > c) from the closed-form density
    f(q) = exp(-q (w1 + w2) / (4 w1 w2)) I0(q (w1 - w2) / (4 w1 w2)) / (2 sqrt(w1 w2))."""
    mp.mp.dps = 30
    w1, w2, c = mp.mpf(w1), mp.mpf(w2), mp.mpf(c)
    a = (w1 + w2) / (4 * w1 * w2)
    b = (w1 - w2) / (4 * w1 * w2)

    def dens(q):
        # exp(-a q) I0(b q), written with the scaled Bessel function to avoid overflow
        return mp.exp(-(a - b) * q) * mp.besseli(0, b * q) * mp.exp(-b * q) / (2 * mp.sqrt(w1 * w2))

    return mp.quad(dens, [c, c + 1 / (a - b), c + 10 / (a - b), mp.inf])


@pytest.mark.parametrize("w1,w2", [(1.0, 0.3), (2.0, 1e-3)])
@pytest.mark.parametrize("c", [0.05, 1.5, 80.0])
def test_two_weights_closed_form(w1, w2, c):
    ref = _two_weight_sf(c, w1, w2)
    assert rel(sf(c, [w1, w2]), ref) < 1e-12
    assert rel(sf(c, [w2, w1]), ref) < 1e-12


def _hairpin_sf(c, w, dps=50):
    """P(Q > c) at ``dps`` digits along a contour unlike the library's:
    vertical from s0 to s0 + iY, then horizontal to +infinity."""
    mp.mp.dps = dps
    w = [mp.mpf(x) for x in w]
    c = mp.mpf(c)
    s0 = 1 / (4 * max(w))                # any point in (0, 1/(2 max w)) will do
    Y = mp.mpf(3) / mp.sqrt(sum(x * x for x in w))

    def g(s):
        k = -sum(mp.log(1 - 2 * x * s) for x in w) / 2
        return mp.exp(k - s * c) / s

    v = mp.quad(lambda y: g(mp.mpc(s0, y)) * 1j, [0, Y])
    r = mp.quad(lambda x: g(mp.mpc(s0 + x, Y)), [0, 1 / c, 10 / c, mp.inf])
    return (v + r).imag / mp.pi


@pytest.mark.parametrize("c", [6.0, 70.0])
def test_fifty_digit_contour(c):
    w = [1.7, 1.0, 0.35, 0.2]
    ref = _hairpin_sf(c, w)
    assert rel(sf(c, w), ref) < 1e-13


# --------------------------------------------------------------------------
# Monte Carlo, gx2, chi2comb
# --------------------------------------------------------------------------
def test_monte_carlo_at_one_percent():
    w = np.array([3.0, 1.0, 0.5, 0.2, 0.2, 0.05])
    p = 1e-2
    c = isf(p, w)
    rng = np.random.default_rng(20230120)
    n = 400_000
    q = (rng.standard_normal((n, w.size)) ** 2) @ w
    frac = float(np.mean(q > c))
    se = math.sqrt(p * (1 - p) / n)
    assert abs(frac - p) < 5 * se


def test_agrees_with_gx2_at_moderate_p():
    gx2 = pytest.importorskip("gx2")
    w = np.array([3.0, 1.0, 0.5, 0.2, 0.1])
    for p in (0.3, 1e-1, 1e-2, 1e-3):
        c = isf(p, w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = float(gx2.cdf(c, w, np.ones(w.size), np.zeros(w.size), 0, 0, side="upper"))
        assert rel(g, p) < 1e-9


def test_agrees_with_chi2comb():
    chi2comb = pytest.importorskip("chi2comb")
    w = [3.0, 1.0, 0.5, 0.2, 0.1]
    comps = [chi2comb.ChiSquared(x, 0.0, 1) for x in w]
    for p in (1e-1, 1e-2, 1e-3):
        c = isf(p, w)
        res, _, _ = chi2comb.chi2comb_cdf(c, comps, 0.0)
        assert abs((1 - res) - p) < 1e-6


# --------------------------------------------------------------------------
# stored high-precision reference grid
# --------------------------------------------------------------------------
def _reference_rows():
    if not os.path.exists(REF_CSV):
        return []
    with open(REF_CSV, newline="") as fh:
        return list(csv.DictReader(fh))


def test_reference_grid():
    rows = _reference_rows()
    if not rows:
        pytest.skip("bench/reference_gchi2.csv not generated")
    worst = 0.0
    for r in rows:
        w = zipf_weights(r["family"], float(r["alpha"]), int(r["d"]))
        got = isf(float(r["p"]), w)
        worst = max(worst, rel(got, mp.mpf(r["isf"])))
    assert worst < 1e-12


# --------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------
weights_st = st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=12).map(np.array)


@settings(max_examples=25, deadline=None)
@given(w=weights_st, p=st.floats(1e-15, 0.5))
def test_sf_inverts_isf(w, p):
    c = isf(p, w)
    assert rel(sf(c, w), p) < 1e-12


@settings(max_examples=20, deadline=None)
@given(w=weights_st, p=st.floats(1e-14, 0.9), k=st.floats(1e-6, 1e6))
def test_scale_invariance(w, p, k):
    assert rel(isf(p, k * w), k * isf(p, w)) < 1e-13


@settings(max_examples=20, deadline=None)
@given(w=weights_st, p=st.floats(1e-14, 0.9), seed=st.integers(0, 2**32 - 1))
def test_permutation_invariance(w, p, seed):
    perm = np.random.default_rng(seed).permutation(w.size)
    assert rel(isf(p, w[perm]), isf(p, w)) < 1e-14


@settings(max_examples=20, deadline=None)
@given(w=weights_st, p1=st.floats(1e-15, 0.99), p2=st.floats(1e-15, 0.99))
def test_monotone(w, p1, p2):
    lo, hi = sorted((p1, p2))
    if hi > lo * (1 + 1e-9):
        c_hi, c_lo = isf(lo, w), isf(hi, w)
        assert c_hi > c_lo
        s = sf([c_lo, c_hi], w)
        assert s[0] >= s[1]


def test_monotone_on_a_grid():
    w = [2.0, 1.0, 0.25, 1e-3]
    c = np.concatenate([np.linspace(0.0, 5.0, 60), np.linspace(5.0, 200.0, 60)[1:]])
    s = sf(c, w)
    f = cdf(c, w)
    assert np.all(np.diff(s) <= 0)
    assert np.all(np.diff(f) >= 0)
    np.testing.assert_allclose(s + f, 1.0, rtol=0, atol=2e-16)


# --------------------------------------------------------------------------
# extreme arguments, shapes
# --------------------------------------------------------------------------
def test_extreme_c():
    w = [1.0, 0.5, 1e-9]
    s = sf([-np.inf, -5.0, 0.0, 5e-324, 1e-200, 1e4, 1e6, 1e300, np.inf], w)
    assert np.all(np.isfinite(s))
    np.testing.assert_array_equal(s[:5], 1.0)
    np.testing.assert_array_equal(s[5:], 0.0)     # P(Q > 1e4) ~ exp(-5000) underflows
    assert 0.0 < sf(1300.0, w) < 1e-280            # still representable
    f = cdf([1e-200, 1e-30], [1.0, 2.0])
    # small-c limit: P(Q <= c) ~ c / (2 sqrt(w1 w2)) for two weights
    np.testing.assert_allclose(f, np.array([1e-200, 1e-30]) / (2 * math.sqrt(2.0)), rtol=1e-12)


def test_shapes_and_types():
    w = [1.0, 0.3]
    assert isinstance(sf(1.0, w), float)
    assert isinstance(isf(0.1, w), float)
    assert sf(np.ones((2, 3)), w).shape == (2, 3)
    assert isf(np.full((4, 1), 0.1), w).shape == (4, 1)
    assert isf(1.0, w) == 0.0


def test_underflowing_zipf_weights():
    # alpha = 100: all but the first weights underflow relative to the largest
    for family in ("sq", "lin"):
        w = zipf_weights(family, 100.0, 1000)
        c = isf(1e-6, w)
        w1 = w.max()
        ref = 2 * stats.norm.isf(0.5e-6) ** 2 / 2    # chi-square(1) quantile
        assert rel(c / w1, ref) < 1e-6                # the other weights add ~1e-30
        assert rel(sf(c, w), 1e-6) < 1e-12


# --------------------------------------------------------------------------
# dropping tiny weights: the bound of the Notes of sf
# --------------------------------------------------------------------------
@pytest.mark.parametrize("t", [1e-8, 1e-4, 1e-2, 0.5])
def test_chi2_1_window_inequality(t):
    """g(y) = P(y - t < Z^2 <= y) <= 2.6 sqrt(t) P(Z^2 > y) for all y (key step)."""
    mp.mp.dps = 30
    for y in np.concatenate([np.linspace(1e-9, 2.0, 400), np.geomspace(2.0, 2000.0, 400)]):
        y = mp.mpf(y)
        s1 = lambda v: 1 if v <= 0 else mp.erfc(mp.sqrt(v / 2))
        g = s1(y - t) - s1(y)
        assert g <= 2.6 * math.sqrt(t) * s1(y)


def test_dropping_bound_holds():
    base = [1.0, 0.7, 0.3]
    tau = 1e-6
    small = [1e-6] * 100
    m = sum(small)
    t = 2 * m + 3200 * tau
    bound = 2.6 * math.sqrt(t)
    assert gchi2._drop_bound(base + small, tau) == pytest.approx(bound)
    for c in (0.5, 3.0, 20.0, 60.0):
        full = sf(c, base + small)
        kept = sf(c, base)
        assert 0.0 <= full - kept <= bound * kept + math.exp(-800)
        # and the true effect is of the order of the dropped mass
        assert (full - kept) / kept < 10 * m


def test_library_threshold_changes_nothing():
    w = [1.0, 0.4, 0.1]
    tiny = [1e-55] * 1000
    assert gchi2._drop_bound(w + tiny, 1e-50) < 1e-20
    for p in (0.3, 1e-3, 1e-12):
        assert rel(isf(p, w + tiny), isf(p, w)) < 1e-15
    for c in (5.0, 50.0):
        assert rel(sf(c, w + tiny), sf(c, w)) < 1e-15


# --------------------------------------------------------------------------
# invalid input
# --------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [[], [-1.0, 1.0], [np.nan, 1.0], [np.inf], [0.0, 0.0],
                                     [[1.0, 2.0]]])
@pytest.mark.parametrize("func,arg", [(sf, 1.0), (cdf, 1.0), (isf, 0.1)])
def test_invalid_weights(func, arg, weights):
    with pytest.raises(ValueError, match="weights"):
        func(arg, weights)


@pytest.mark.parametrize("c", [np.nan, [1.0, np.nan]])
def test_invalid_c(c):
    for func in (sf, cdf):
        with pytest.raises(ValueError, match="c must"):
            func(c, [1.0])


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5, np.nan, [0.5, 2.0]])
def test_invalid_p(p):
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\]"):
        isf(p, [1.0])


def test_hundred_thousand_dense_weights():
    # d = 1e5 Zipf weights crowd the branch points s = 1/(2 w_j) together; the
    # contour has to stay clear of the resulting ridge of |M(s)| (it used to
    # overflow there).  Self-consistency and the closed form for a scaled
    # chi-square bracket the answer.
    w = zipf_weights("lin", 0.5, 100_000)
    for p in (1e-2, 1e-15):
        c = isf(p, w)
        assert rel(sf(c, w), p) < 1e-12
        lo = stats.chi2.isf(p, w.size) * w.min()       # Q >= min(w) chi2_d
        hi = stats.chi2.isf(p, w.size) * w.max()       # Q <= max(w) chi2_d
        assert lo < c < hi


def _imhof_sf(c, w, panels=400, order=30):
    """P(Q > c) by Imhof's (1961) formula, independent of the contour:
    1/2 + (1/pi) int_0^U sin(theta(u)) / (u rho(u)) du with
    theta = sum_j arctan(w_j u) / 2 - c u / 2, rho = prod_j (1 + w_j^2 u^2)^(1/4);
    composite Gauss-Legendre on [0, U], U where 1/rho < e^-40."""
    def log_rho(u):
        return 0.25 * np.log1p(np.multiply.outer(u, w * w) * u[:, None]).sum(axis=1)

    upper = 1.0
    while log_rho(np.array([upper]))[0] < 40.0:
        upper *= 2.0
    x, g = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(0.0, upper, panels + 1)
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        u = 0.5 * (b - a) * x + 0.5 * (a + b)
        theta = 0.5 * np.arctan(np.multiply.outer(u, w)).sum(axis=1) - 0.5 * c * u
        total += 0.5 * (b - a) * float(g @ (np.sin(theta) * np.exp(-log_rho(u)) / u))
    return 0.5 + total / math.pi


@pytest.mark.parametrize("p", [1e-3, 3e-4, 1e-4, 3e-5])
def test_dense_branch_points_are_resolved(p):
    """w_j ~ j^-1/2, d = 1e4: the first parabola passes just above thousands of
    branch points and the integrand turns faster than the step resolves.  The
    sums at step h and 2h agreed there to 2e-8 while both were 0.2% off (a
    whole turn of the phase per step; see test_the_trap_the_phase_check_closes);
    the step-halving check failed four times and a RuntimeWarning was raised
    for p = 3e-4, 1e-4 and 3e-5.  The phase-step check
    flattens the parabola instead (warnings are errors in this suite)."""
    w = zipf_weights("lin", 0.5, 10_000)
    c = isf(p, w)
    assert rel(sf(c, w), p) < 1e-13
    assert rel(_imhof_sf(c, w), p) < 1e-10


def test_phase_step_sees_a_whole_turn_per_node():
    """Samples of an oscillation that advances by a whole turn per node look
    constant to the step-doubling check; the argument change between nodes
    does not.  A smooth bump passes."""
    t = np.linspace(0.0, 10.0, 201)
    envelope = np.exp(-0.5 * t * t)
    smooth = envelope * np.exp(0.3j * t)
    assert gchi2._phase_step(smooth) < 0.1
    # local frequency growing from 0: somewhere the phase step is near pi
    chirp = envelope * np.exp(1j * (2.0 * np.pi / 0.05) * t * t / 20.0)
    assert gchi2._phase_step(chirp) > gchi2._MAX_PHASE_STEP
    # only where the modulus matters
    tail = np.where(t < 5.0, smooth, 1e-14 * np.exp(3.1j * np.arange(t.size)))
    assert gchi2._phase_step(tail) < 0.1


def test_unresolved_contours_warn_at_the_callers_line(monkeypatch):
    """If every shape looks unresolved, the flattest is refined anyway, the
    result stays accurate here, and the RuntimeWarning names the user's line
    (not a line inside egmlib), from sf, cdf and isf alike."""
    w = zipf_weights("lin", 1.0, 50)
    expect = (sf(3.0, w), cdf(0.2, w), isf(1e-6, w))
    monkeypatch.setattr(gchi2, "_MAX_PHASE_STEP", -1.0)
    for k, call in enumerate((lambda: sf(3.0, w), lambda: cdf(0.2, w), lambda: isf(1e-6, w))):
        with pytest.warns(RuntimeWarning, match="self-check failed") as record:
            got = call()
        assert {r.filename for r in record} == {__file__}
        assert rel(got, expect[k]) < 1e-12


def test_phase_step_of_a_non_finite_integrand_is_infinite():
    assert gchi2._phase_step(np.array([1.0, np.inf, 0.5])) == math.inf
    assert gchi2._phase_step(np.array([1.0, np.nan, 0.5])) == math.inf


def test_the_trap_the_phase_check_closes():
    """The case behind _phase_step, reproduced on gchi2's own pieces: on the
    first parabola the trapezoid sums at h = 0.1 and 0.05 agree to 2e-5 (the
    step-doubling check would need only a looser tolerance to accept them) but
    are 4% off; their phase steps are near pi.  The flattened parabola gets the
    value with step 0.1 and is resolved."""
    w = zipf_weights("lin", 0.5, 10_000)
    W = gchi2._pair(np.asarray(w)).up
    c = isf(1e-4, w) / w.max()
    s0, u0 = gchi2._saddle(W, c, True)
    r = 2.0 * W.w / gchi2._one_minus_2ws(W, s0, u0)
    nr = W.n * r
    kp = 0.5 * float(nr.sum())
    b2 = 0.5 * float(nr @ r) + 1.0 / s0**2
    b3 = float((nr * r) @ r) - 2.0 / s0**3
    sb = math.sqrt(b2)
    al = max(min(b3 / (6.0 * b2 * sb), gchi2._GAMMA * 0.25 * float(r[0]) / sb), gchi2._ALPHA_MIN)
    tmax = gchi2._probe(W, r, c, s0, sb, al)

    def trapezoid(a, h):
        t = h * np.arange(int(math.ceil(tmax / h)) + 1)
        dl = (a * t * t + 1j * t) / sb
        em = np.exp(gchi2._cgf_on_nodes(r, W.n, dl) + (kp - c) * dl - np.log1p(dl / s0)) * (1 - 2j * a * t)
        wt = np.full(t.size, h / (math.pi * sb))
        wt[0] *= 0.5
        return float(wt @ em.real), gchi2._phase_step(em)

    truth, _ = trapezoid(al, 0.00625)
    coarse, ph_coarse = trapezoid(al, 0.1)
    fine, ph_fine = trapezoid(al, 0.05)
    assert rel(fine, coarse) < 1e-4 and rel(fine, truth) > 0.02      # the doubling check is fooled
    assert min(ph_coarse, ph_fine) > gchi2._MAX_PHASE_STEP            # the phase check is not
    flat, ph_flat = trapezoid(al / 2, 0.1)
    assert ph_flat < gchi2._MAX_PHASE_STEP and rel(flat, truth) < 1e-13


def _lower_tail_parabola(c, w, shape):
    """P(Q <= c) at 30 digits on the parabola s = s0 + (shape/|s0|) y^2 + i y
    through s0 < 0 (adaptive mpmath quadrature; independent of egmlib's nodes)."""
    with mp.workdps(30):
        c = mp.mpf(c)
        w = [mp.mpf(float(x)) for x in w]

        def excess(s):
            return sum(x / (1 - 2 * x * s) for x in w) - c - 1 / s

        lo, hi = mp.mpf(-1), mp.mpf("-1e-30")
        while excess(lo) > 0:
            lo *= 2
        for _ in range(150):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if excess(mid) > 0 else (mid, hi)
        s0 = (lo + hi) / 2
        a = shape / abs(s0)

        def integrand(y):
            s = mp.mpc(s0 + a * y * y, y)
            k = -sum(mp.log(1 - 2 * x * s) for x in w) / 2
            return (mp.exp(k - s * c) / s * (1 - 2j * a * y)).real

        y = 1 / abs(s0)
        return -mp.quad(integrand, [0, y / 10, y, 3 * y, 10 * y, 30 * y, 100 * y, mp.inf]) / mp.pi


@pytest.mark.parametrize("q", [1e-3, 1e-6])
def test_lower_tail_of_very_skewed_weights(q):
    """w_j ~ j^-4 (d = 30): the lower tail P(Q <= c) against a 30-digit
    reference on two different parabolas (which agree to 1e-16 or better)."""
    w = zipf_weights("sq", 2.0, 30)
    c = isf(1.0 - q, w)
    ref1 = _lower_tail_parabola(c, w, 1.0)
    ref2 = _lower_tail_parabola(c, w, 0.3)
    assert rel(ref1, ref2) < 1e-15
    assert rel(cdf(c, w), ref1) < 1e-13


# --------------------------------------------------------------------------
# the density
# --------------------------------------------------------------------------
def _chi2_density(c, d, w):
    """Density of w chi2_d at c, 40 digits."""
    with mp.workdps(40):
        x = mp.mpf(c) / w
        half = mp.mpf(d) / 2
        return (x / 2) ** (half - 1) * mp.exp(-x / 2) / (2 * mp.gamma(half) * w)


@pytest.mark.parametrize("d", [1, 2, 3, 10, 1000, 100000])
@pytest.mark.parametrize("z", [-3.0, 0.0, 3.0, 10.0, 40.0])
def test_pdf_equal_weights_is_scaled_chi_square(d, z):
    w = 2.5
    c = w * max(d + z * math.sqrt(2 * d), 1e-3 * d)
    assert rel(gchi2.pdf(c, np.full(d, w)), _chi2_density(c, d, w)) < 1e-12


@pytest.mark.parametrize("w1,w2", [(1.0, 0.3), (2.0, 1e-3), (0.5, 0.49)])
@pytest.mark.parametrize("c", [1e-6, 0.1, 1.0, 5.0, 40.0, 300.0])
def test_pdf_two_weights_closed_form(w1, w2, c):
    """f(q) = exp(-a q) I0(b q) / (2 sqrt(w1 w2)), a = (w1 + w2) / (4 w1 w2),
    b = (w1 - w2) / (4 w1 w2), at 30 digits."""
    with mp.workdps(30):
        m1, m2, q = mp.mpf(w1), mp.mpf(w2), mp.mpf(c)
        a = (m1 + m2) / (4 * m1 * m2)
        b = (m1 - m2) / (4 * m1 * m2)
        ref = mp.exp(-a * q) * mp.besseli(0, b * q) / (2 * mp.sqrt(m1 * m2))
    assert rel(gchi2.pdf(c, [w1, w2]), ref) < 1e-12


@pytest.mark.parametrize("c", [0.05, 1.0, 4.0, 30.0, 200.0])
def test_pdf_hypoexponential(c):
    """Each weight twice: Q is a sum of exponentials with rates 1 / (2 w_j),
    f(c) = sum_j l_j exp(-l_j c) prod_{k != j} l_k / (l_k - l_j), at 50 digits
    (the alternating sum needs them)."""
    w = [1.0, 0.6, 0.3, 0.17, 0.05]
    with mp.workdps(50):
        lam = [1 / (2 * mp.mpf(x)) for x in w]
        ref = mp.mpf(0)
        for j, lj in enumerate(lam):
            term = lj * mp.exp(-lj * c)
            for k, lk in enumerate(lam):
                if k != j:
                    term *= lk / (lk - lj)
            ref += term
    assert rel(gchi2.pdf(c, np.repeat(w, 2)), ref) < 1e-12


def test_pdf_near_zero_and_out_of_range():
    # one weight: f(c) = (2 pi c w)^-1/2 exp(-c / (2 w)), also below 1e-300 max(w)
    for c in (1e-305, 1e-200, 1e-50, 1e-3):
        assert rel(gchi2.pdf(c, [0.7]), _chi2_density(c, 1, 0.7)) < 1e-13
    # three weights, tiny c: c^(1/2) / (2^(3/2) Gamma(3/2) sqrt(w1 w2 w3))
    w = [1.0, 0.5, 0.25]
    for c in (1e-305, 1e-150, 1e-20):
        ref = mp.sqrt(c) / (2 ** 1.5 * mp.gamma(1.5) * mp.sqrt(0.125))
        assert rel(gchi2.pdf(c, w), ref) < 1e-12
    assert gchi2.pdf(0.0, [2.0]) == math.inf
    assert gchi2.pdf(0.0, [2.0, 0.5]) == pytest.approx(0.5, rel=1e-15)
    assert gchi2.pdf(0.0, w) == 0.0
    np.testing.assert_array_equal(gchi2.pdf([-1.0, -np.inf, np.inf, 1e6], w), 0.0)


@pytest.mark.parametrize("family,alpha,d", [("lin", 0.5, 1000), ("sq", 1.0, 100), ("lin", 2.0, 30)])
def test_pdf_is_the_derivative_of_cdf(family, alpha, d):
    """Richardson-extrapolated central differences of cdf (the integral with
    the factor 1 / s, another integrand) match the density in both tails."""
    w = zipf_weights(family, alpha, d)
    for p in (0.9, 0.5, 1e-3, 1e-9):
        c = isf(p, w)
        h = 1e-3 * math.sqrt(2.0 * float(w @ w))
        d1 = (sf(c - h, w) - sf(c + h, w)) / (2 * h)
        d2 = (sf(c - h / 2, w) - sf(c + h / 2, w)) / h
        assert rel(gchi2.pdf(c, w), (4 * d2 - d1) / 3) < 1e-8


def test_pdf_shapes_and_invalid_input():
    assert isinstance(gchi2.pdf(1.0, [1.0]), float)
    assert gchi2.pdf(np.ones((2, 3)), [1.0, 2.0]).shape == (2, 3)
    with pytest.raises(ValueError, match="c must not contain NaN"):
        gchi2.pdf([1.0, np.nan], [1.0])
    with pytest.raises(ValueError, match="weights"):
        gchi2.pdf(1.0, [1.0, -1.0])


# --------------------------------------------------------------------------
# the quantile's gradient in the weights
# --------------------------------------------------------------------------
def _fd_gradient(p, w, j, step=1e-5):
    """Central difference of isf in log w_j."""
    up, down = w.copy(), w.copy()
    up[j] *= math.exp(step)
    down[j] *= math.exp(-step)
    return (isf(p, up) - isf(p, down)) / (2.0 * step * w[j])


@pytest.mark.parametrize(
    ("weights", "p"),
    [
        (np.array([1.0, 0.5, 0.25]), 1e-3),
        (np.array([1.0, 1.0, 0.3, 0.3, 0.01]), 1e-8),      # ties
        (zipf_weights("sq", 1.0, 40), 1e-6),                # series for small weights
        (zipf_weights("lin", 0.5, 2000), 1e-12),
        (np.array([0.2, 0.9, 0.4]), 0.4),                   # below the mean
        (np.array([0.2, 0.9, 0.4, 1e-3]), 0.95),            # lower tail, p > 1/2
    ],
)
def test_isf_gradient_matches_finite_differences(weights, p):
    c, grad = gchi2.isf_gradient(p, weights)
    assert c == isf(p, weights)
    assert float(grad @ weights) == pytest.approx(c, rel=1e-13)        # Euler
    for j in range(0, weights.size, max(1, weights.size // 6)):
        # the difference quotient carries isf's own error (1e-14 c) over 2e-5 w_j
        tol = 2e-7 * grad[j] + 1e-14 * c / (2e-5 * weights[j])
        assert abs(grad[j] - _fd_gradient(p, weights, j)) <= tol


@pytest.mark.parametrize("family,alpha", [("lin", 0.5), ("sq", 0.25), ("lin", 2.0)])
def test_isf_gradient_euler_identity_at_scale(family, alpha):
    """c is homogeneous of degree 1 in w: sum_j w_j dc/dw_j = c, d = 1e5."""
    w = zipf_weights(family, alpha, 100_000)
    for p in (1e-2, 1e-12):
        c, grad = gchi2.isf_gradient(p, w)
        assert float(grad @ w) == pytest.approx(c, rel=1e-12)
        assert np.all(np.diff(grad) <= 1e-12 * grad[0])    # E[Z_j^2 | Q = c] grows with w_j


def test_isf_gradient_closed_forms_and_dropped_weights():
    c, g = gchi2.isf_gradient(1e-4, [2.0])                 # c = w q
    assert g[0] == pytest.approx(c / 2.0, rel=1e-13)
    c, g = gchi2.isf_gradient(1e-5, np.full(7, 0.3))       # symmetry
    np.testing.assert_allclose(g, c / (7 * 0.3), rtol=1e-12)
    c, g = gchi2.isf_gradient(1e-6, [1.0, 0.0, 1e-60, 0.5])   # zero and negligible weights: 1
    assert g[1] == 1.0 and g[2] == 1.0


@pytest.mark.parametrize(("p", "error"), [(0.0, ValueError), (1.0, ValueError), (np.nan, ValueError),
                                          ("0.1", TypeError), ([0.1], TypeError)])
def test_isf_gradient_rejects_invalid_p(p, error):
    with pytest.raises(error, match="p must"):
        gchi2.isf_gradient(p, [1.0])


# --------------------------------------------------------------------------
# the fast paths at large d against their exact counterparts
# --------------------------------------------------------------------------
@pytest.mark.parametrize("tol", [1e-17, 1e-25, 1e-30])
def test_series_lengths_against_brute_force(tol):
    """The prefix lengths L[m] (weights needing power m) equal a per-weight
    search for the smallest order M with q^(M+1) / (1 - q) <= tol."""
    q = np.sort(np.random.default_rng(1).uniform(0.0, 0.5, 3000))[::-1]
    q[-5:] = 0.0
    orders = np.array([next(m for m in range(400) if x ** (m + 1) / (1 - x) <= tol) for x in q])
    brute = [int(np.sum(orders >= m)) for m in range(orders.max() + 1)]
    np.testing.assert_array_equal(gchi2._series_lengths(q, tol), brute)


@pytest.mark.parametrize("family,alpha,p", [("lin", 0.5, 1e-4), ("sq", 1.0, 1e-12), ("lin", 0.1, 1e-2)])
def test_probes_with_moments_match_exact_probes(family, alpha, p):
    """The truncation probe that sums small weights by suffix moments returns
    the same truncation point as the probe with one logarithm per weight."""
    w = zipf_weights(family, alpha, 20_000)
    W = gchi2._pair(np.asarray(w)).up
    c = isf(p, w) / w.max()
    s0, u0 = gchi2._saddle(W, c, True)
    r = 2.0 * W.w / gchi2._one_minus_2ws(W, s0, u0)
    sb = math.sqrt(0.5 * float(W.n @ (r * r)) + 1.0 / s0**2)
    mom = gchi2._suffix_moments(W, r, sb)
    assert mom is not None
    for al in (0.5, 0.1, 0.02, 0.005):
        assert gchi2._probe(W, r, c, s0, sb, al, mom) == gchi2._probe(W, r, c, s0, sb, al)


def test_accurate_sum_is_correctly_rounded():
    t = -np.random.default_rng(2).uniform(0.0, 1e-2, 100_000) ** 3
    assert gchi2._accurate_sum(t) == math.fsum(t)


def test_results_do_not_depend_on_blas():
    """Sums are numpy's own: a quantile at d = 1e5 is bit-identical with
    BLAS limited to one thread (when threadpoolctl is importable)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    w = zipf_weights("lin", 0.5, 100_000)
    c = isf(1e-6, w)
    with threadpoolctl.threadpool_limits(1):
        assert isf(1e-6, w) == c


# --------------------------------------------------------------------------
# GeneralizedChi2: the prepared distribution egmlib.optimal uses
# --------------------------------------------------------------------------
def test_generalized_chi2_agrees_with_the_functions():
    from egmlib.gchi2 import GeneralizedChi2, isf, isf_gradient

    w = np.array([2.0, 1.0, 0.25, 0.0])
    q = GeneralizedChi2(w)
    for p in (0.3, 1e-3, 1e-10):
        assert q.isf(p) == isf(p, w)
        c, g = q.isf_gradient(p)
        c0, g0 = isf_gradient(p, w)
        assert c == c0 and np.array_equal(g, g0)
        # a starting guess changes the Newton path, not the answer (to rounding)
        c1, g1 = q.isf_gradient(p, guess=0.5 * c0)
        assert abs(c1 / c0 - 1) < 1e-13 and np.allclose(g1, g0, rtol=1e-10)
    assert q.isf(1.0) == 0.0


def test_generalized_chi2_clipping_moment_against_one_dimension():
    """d = 1: E[(1 - C/|Z|)_+^2 Z^2] = E(|Z| - C)_+^2 = 2((1 + C^2) Phi(-C) - C phi(C))."""
    from scipy.stats import norm

    from egmlib.gchi2 import GeneralizedChi2

    for k in (0.5, 1.96, 4.0):
        exact = 2 * ((1 + k * k) * norm.sf(k) - k * norm.pdf(k))
        slope = -4 * (norm.pdf(k) - k * norm.sf(k))       # d/dk of the line above
        v, dv = GeneralizedChi2([3.0]).clipping_moment(k * 3.0**0.5, [1.0])
        assert v == pytest.approx(exact, rel=1e-10)
        assert dv * 3.0**0.5 == pytest.approx(slope, rel=1e-9)


@pytest.mark.parametrize("bad, match", [
    (dict(weights=[1.0, np.nan]), "weights"),
    (dict(weights=[0.0, 0.0]), "weights"),
    (dict(weights=[[1.0, 2.0]]), "weights"),
    (dict(p=0.0), "p must"),
    (dict(p=0.7), "p must"),
    (dict(guess=-1.0), "guess must"),
    (dict(radius=0.0), "radius must"),
    (dict(a=[1.0]), "a must have the shape"),
    (dict(a=[1.0, -1.0]), "a must"),
])
def test_generalized_chi2_rejects_bad_input(bad, match):
    from egmlib.gchi2 import GeneralizedChi2

    args = dict(weights=[1.0, 0.5], p=1e-3, guess=None, radius=2.0, a=[1.0, 1.0]) | bad
    with pytest.raises(ValueError, match=match):
        q = GeneralizedChi2(args["weights"])
        q.isf_gradient(args["p"], guess=args["guess"])
        q.clipping_moment(args["radius"], args["a"])
