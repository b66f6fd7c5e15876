"""The chapter mutants, as data: one :class:`Mutant` entry per mutant.

Each entry names the chapter that claims to check something, the public egmlib
function the claim rests on ("egmlib.module.function"), what is wrong with the
mutant, and ``make``: a function that receives the original function and returns
the wrong version. The helpers below cover the usual cases (:func:`times`: the
result off by a factor; :func:`arg`: one argument changed before the call;
:func:`noise_times`: a mechanism's noise off by a factor). ``subtle`` marks an
error of a few percent in a quantity the chapter checks to better than that;
``until`` (a cell id) stops the run after the cell that should kill the mutant
(to keep ``make mutants`` fast; the table says so).

To cover a new chapter, add one entry, e.g.::

    Mutant("new_radius_2pct", "new_chapter", "egmlib.scaling.clip_radius",
           "radius C 2% too large", times(1.02), subtle=True),
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Mutant:
    """One wrong version of one public egmlib function, and the chapter that must notice."""

    name: str
    chapter: str                     # chapters/<chapter>.ipynb
    target: str                      # "egmlib.module.function"
    what: str                        # what is wrong, in a few words
    make: Callable[[Fn], Fn]         # original -> mutant
    subtle: bool = False             # an error of a few percent
    until: str | None = None         # run only up to this cell id


# ----------------------------------------------------------------------------------
# mutant makers


def times(factor: float) -> Callable[[Fn], Fn]:
    """The result multiplied by ``factor`` (floats, arrays, sympy expressions)."""
    def make(f: Fn) -> Fn:
        def mutant(*args: Any, **kwargs: Any) -> Any:
            return f(*args, **kwargs) * factor
        return mutant
    return make


def arg(name: str, change: Callable[[Any], Any]) -> Callable[[Fn], Fn]:
    """The argument ``name`` replaced by ``change(value)`` (defaults included) before the call."""
    def make(f: Fn) -> Fn:
        signature = inspect.signature(f)

        def mutant(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            bound.arguments[name] = change(bound.arguments[name])
            return f(*bound.args, **bound.kwargs)
        return mutant
    return make


def result(change: Callable[[Any], Any]) -> Callable[[Fn], Fn]:
    """The result replaced by ``change(result)``."""
    def make(f: Fn) -> Fn:
        def mutant(*args: Any, **kwargs: Any) -> Any:
            return change(f(*args, **kwargs))
        return mutant
    return make


def replace_field(field: str, change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """For :func:`result`: a dataclass result with one field changed."""
    return lambda res: dataclasses.replace(res, **{field: change(getattr(res, field))})


def noise_times(factor: float | Callable[[Any], float],
                noiseless: Callable[[inspect.BoundArguments, Any], Any]) -> Callable[[Fn], Fn]:
    """A mechanism whose noise is ``factor`` times too large (or small), nothing else changed.

    ``factor`` may be a function of the mechanism's result; ``noiseless(bound_arguments,
    result)`` gives the value before noise. The mechanism's own draw is kept, so the
    random stream is unchanged.
    """
    def make(f: Fn) -> Fn:
        signature = inspect.signature(f)

        def mutant(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            res = f(*args, **kwargs)
            k = factor(res) if callable(factor) else factor
            if isinstance(res, np.ndarray):
                exact = np.asarray(bound.arguments["value"], dtype=float)
                return exact + k * (res - exact)
            exact = noiseless(bound, res)
            return dataclasses.replace(res, estimate=exact + k * (res.estimate - exact))
        return mutant
    return make


def _row_sum(bound: inspect.BoundArguments, res: Any) -> Any:
    return np.asarray(bound.arguments["X"], dtype=float).sum(axis=0)


def _clipped_row_sum(bound: inspect.BoundArguments, res: Any) -> Any:
    from egmlib.mechanisms import clipped_sum  # the same rows, clipped as the mechanism did

    a = bound.arguments
    return clipped_sum(a["X"], a["center"], res.radius, res.scaling)[0]


def passthrough(f: Fn) -> Fn:
    """The control: a wrapper that changes nothing."""
    def mutant(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)
    return mutant


def _normalised_power(power: float, weight: Callable[[Any], Any] = lambda s: 1.0) -> Callable[[Fn], Fn]:
    """A scaling vector proportional to ``s ** power``, normalised so that ``||weight(s) * b|| = 1``."""
    def make(f: Fn) -> Fn:
        def mutant(values: Any) -> Any:
            s = np.asarray(values, dtype=float)
            b = s**power
            return b / np.linalg.norm(weight(s) * b)
        return mutant
    return make


def _symbolic_diagonal(factor: Any) -> Callable[[Any], Any]:
    import sympy as sp

    def change(matrix: Any) -> Any:
        m = sp.Matrix(matrix)
        for j in range(1, m.shape[0]):
            m[j, j] = m[j, j] * factor
        return sp.ImmutableMatrix(m)
    return change


def _last_negated(minors: list) -> list:
    return [*minors[:-1], -minors[-1]]


def _lambda_unsquared(point: dict) -> dict:
    import sympy as sp

    return {k: (sp.sqrt(v) if str(k) == "lambda" else v) for k, v in point.items()}


def _analytic_is_classic(f: Fn) -> Fn:
    def mutant(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return mutant


def _variances_not_squared(f: Fn) -> Fn:
    """clip_radius with covariance diag(b sigma), as the study prints it, not diag((b sigma)^2)."""
    def mutant(sigmas: Any, scaling: Any, p: Any) -> Any:
        s, b = np.asarray(sigmas, dtype=float), np.asarray(scaling, dtype=float)
        return f(np.sqrt(s * b) / b, b, p)
    return mutant


def _knorm_printed_scaling(f: Fn) -> Fn:
    """epsilon of K-norm noise with the shift Delta / sigma^2, as printed, not Delta / sigma."""
    def mutant(*, sensitivity: float, sigma: float = 1.0) -> float:
        return f(sensitivity=sensitivity / sigma, sigma=sigma)
    return mutant


def _euclidean(f: Fn) -> Fn:
    def mutant(vectors: Any, cov: Any) -> Any:
        return np.linalg.norm(np.asarray(vectors, dtype=float), axis=-1)
    return mutant


def _minus_lambda_g(f: Fn) -> Fn:
    """The Lagrangian F - lambda g: from L = F + lambda g, 2 F - L."""
    def mutant(d: int) -> Any:
        from egmlib.symbolic import objective

        return 2 * objective(d) - f(d)
    return mutant


def _ratio_over_d(f: Fn) -> Fn:
    def mutant(d: int, alpha: float, n: Any) -> Any:
        return f(d, alpha, n) / d
    return mutant


def _usual_bound_rho(f: Fn) -> Fn:
    """rho from the usual conversion epsilon = rho + 2 sqrt(rho log(1/delta)), not the exact profile."""
    def mutant(epsilon: float, delta: float) -> float:
        L = math.log(1.0 / delta)
        return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2
    return mutant


def _pipeline_steps(change: Callable[[Any], dict]) -> Callable[[Any], Any]:
    """For :func:`arg` on ``pipeline``: every step of a pipeline with fields changed."""
    return lambda pipeline: tuple(dataclasses.replace(s, **change(s)) for s in pipeline)


GM, EGM, GD, DER, BERN = ("gaussian_mechanism", "elliptical_gaussian_mechanism", "gaussian_data",
                          "derivation", "bernstein")
ZIPF, SIM, ELL = "zipf_experiments", "simulation", "elliptical_perturbations"
BEY_SCALING, BEY_MECH, BEY_CLIP, BEY_CENTRE = ("optimal_scaling", "alternative_mechanisms",
                                              "clipping_tradeoff", "private_centre")
SOTA = "state_of_the_art"
PLAN = "plan_reproduction"

MUTANTS: list[Mutant] = [
    # --- differential privacy (its exercise dp-ex-3 checks the closed-form delta) ------
    Mutant("dp_gaussian_delta_2pct", "differential_privacy", "egmlib.privacy.gaussian_delta",
           "exact delta of the Gaussian mechanism 2% too large", times(1.02), subtle=True),
    # --- the Gaussian mechanism -------------------------------------------------
    Mutant("gm_analytic_sigma_3pct", GM, "egmlib.privacy.analytic_sigma",
           "sigma_opt 3% too small (not private)", times(0.97), subtle=True),
    Mutant("gm_analytic_is_classic", GM, "egmlib.privacy.analytic_sigma",
           "analytic calibration replaced by the classic formula", _analytic_is_classic),
    Mutant("gm_delta_ignores_sensitivity", GM, "egmlib.privacy.gaussian_delta",
           "privacy profile computed for sensitivity 1 whatever the sensitivity",
           arg("sensitivity", lambda s: 1.0)),
    Mutant("gm_mechanism_noise_5pct", GM, "egmlib.mechanisms.gaussian_mechanism",
           "noise std 5% too large", noise_times(1.05, _row_sum), subtle=True),
    Mutant("gm_classic_sigma_5pct", GM, "egmlib.privacy.classic_sigma",
           "classic sigma 5% too small", times(0.95), subtle=True, until="c013"),
    Mutant("gm_analytic_sigma_half_pct", GM, "egmlib.privacy.analytic_sigma",
           "sigma_opt 0.5% too small (the chapter claims the calibration is exact)", times(0.995),
           subtle=True),
    # --- the Elliptical Gaussian Mechanism ------------------------------------
    Mutant("egm_scaling_power", EGM, "egmlib.scaling.egm_scaling",
           "b_j proportional to Delta_j^0.45, not Delta_j^0.5", _normalised_power(0.45), subtle=True),
    Mutant("egm_error_2pct", EGM, "egmlib.scaling.egm_error",
           "error formula 2% too large", times(1.02), subtle=True),
    Mutant("egm_mechanism_noise_6pct", EGM, "egmlib.mechanisms.elliptical_gaussian_mechanism",
           "noise std 6% too large", noise_times(1.06, _row_sum)),
    Mutant("egm_sqrt_sigma_opt", EGM, "egmlib.mechanisms.elliptical_gaussian_mechanism",
           "noise std sqrt(sigma_opt) Delta_j / b_j, as printed in Algorithm 2",
           noise_times(lambda res: res.sigma_opt**-0.5, _row_sum)),
    Mutant("egm_analytic_sigma_half_pct", EGM, "egmlib.privacy.analytic_sigma",
           "sigma_opt 0.5% too small (the chapter claims the worst pair meets delta exactly)",
           times(0.995), subtle=True),
    # --- Gaussian data ---------------------------------------------------------
    Mutant("gd_clip_3pct_outside", GD, "egmlib.mechanisms.clipped_sum",
           "clips at 1.03 C instead of C (sensitivity 2.06 C)", arg("radius", lambda c: 1.03 * c), subtle=True),
    Mutant("gd_scaling_3pct", GD, "egmlib.scaling.gaussian_data_scaling",
           "b 3% too large (E||x~||^2 = 1.06)", times(1.03), subtle=True),
    Mutant("gd_noise_error_6pct", GD, "egmlib.scaling.noise_error",
           "noise error formula 6% too large", times(1.06)),
    Mutant("gd_radius_3pct", GD, "egmlib.scaling.clip_radius",
           "radius C 3% too small", times(0.97), subtle=True),
    Mutant("gd_sensitivity_c", GD, "egmlib.mechanisms.gaussian_data_mechanism",
           "noise calibrated to sensitivity C, not 2C", noise_times(0.5, _clipped_row_sum)),
    Mutant("gd_variances_not_squared", GD, "egmlib.scaling.clip_radius",
           "radius for covariance diag(b sigma), as printed, not diag((b sigma)^2)", _variances_not_squared),
    Mutant("gd_radius_half_pct", GD, "egmlib.scaling.clip_radius",
           "radius C 0.5% too large (the chapter claims exact clipping probabilities)", times(1.005),
           subtle=True),
    # --- the derivation of Lemma 4.1 -------------------------------------------
    Mutant("der_scaling_power", DER, "egmlib.scaling.gaussian_data_scaling",
           "b_j proportional to sigma_j^-0.52, not sigma_j^-0.5", _normalised_power(-0.52, lambda s: s),
           subtle=True),
    Mutant("der_lambda_unsquared", DER, "egmlib.symbolic.stationary_point",
           "lambda* = sigma_eps_delta S, not its square", result(_lambda_unsquared)),
    Mutant("der_hessian_diagonal", DER, "egmlib.symbolic.bordered_hessian",
           "diagonal of the bordered Hessian 2% too large", result(_symbolic_diagonal(1.02)), subtle=True),
    Mutant("der_last_minor_sign", DER, "egmlib.symbolic.leading_principal_minors",
           "sign of the last leading principal minor flipped", result(_last_negated)),
    Mutant("der_log_minors_1pct", DER, "egmlib.symbolic.log_abs_minors",
           "log |minor| 1% too large", times(1.01), subtle=True),
    Mutant("der_radius_2pct", DER, "egmlib.scaling.clip_radius",
           "radius C 2% too large", times(1.02), subtle=True),
    Mutant("der_radius_half_pct", DER, "egmlib.scaling.clip_radius",
           "radius C 0.5% too large (the chapter claims exact radii)", times(1.005), subtle=True),
    Mutant("der_lagrangian_sign", DER, "egmlib.symbolic.lagrangian",
           "Lagrangian F - lambda g instead of F + lambda g", _minus_lambda_g),
    # --- Bernstein's bound and Theorem 4 -----------------------------------------
    Mutant("bern_radius2_half_t", BERN, "egmlib.bounds.bernstein_radius2",
           "Bernstein radius t sqrt(v) + sum sigma^2, not 2 t sqrt(v) + ...", arg("t", lambda t: t / 2)),
    Mutant("bern_t_max_line2", BERN, "egmlib.bounds.bernstein_t_max",
           "t_max too large by sqrt 2 (the study's line 2)", times(math.sqrt(2))),
    Mutant("bern_applies_3pct", BERN, "egmlib.bounds.theorem4_applies",
           "condition on n 3% off", arg("n", lambda n: 1.03 * n), subtle=True),
    Mutant("bern_error_bound_3pct", BERN, "egmlib.bounds.theorem4_error_bound",
           "Theorem 4 error bound 3% too small", times(0.97), subtle=True, until="c038"),
    Mutant("bern_isf_half_pct", BERN, "egmlib.gchi2.isf",
           "quantile C^2 0.5% too large (the chapter claims exact radii)", times(1.005), subtle=True),
    Mutant("bern_sf_half_pct", BERN, "egmlib.gchi2.sf",
           "tail probability 0.5% too large (the chapter claims exact tails)", times(1.005), subtle=True),
    # --- the Zipf experiments ----------------------------------------------------
    Mutant("zipf_alpha_2pct", ZIPF, "egmlib.zipf.zipf_sigmas",
           "Zipf exponent 2% too large", arg("alpha", lambda a: 1.02 * a), subtle=True),
    Mutant("zipf_isf_2pct", ZIPF, "egmlib.gchi2.isf",
           "quantile C^2 2% too large", times(1.02), subtle=True),
    Mutant("zipf_isf_half_pct", ZIPF, "egmlib.gchi2.isf",
           "quantile C^2 0.5% too large", times(1.005), subtle=True),
    Mutant("zipf_ratio_over_d", ZIPF, "egmlib.zipf.improvement_ratio",
           "improvement ratio divided by d, as the study plots it", _ratio_over_d),
    Mutant("zipf_cdf_shift", ZIPF, "egmlib.gchi2.cdf",
           "cdf evaluated at 1.01 c", arg("c", lambda c: 1.01 * np.asarray(c, dtype=float)), subtle=True),
    # --- simulation ----------------------------------------------------------------
    Mutant("sim_noise_5pct", SIM, "egmlib.mechanisms.gaussian_data_mechanism",
           "noise std 5% too large", noise_times(1.05, _clipped_row_sum), subtle=True),
    Mutant("sim_clip_p_10pct", SIM, "egmlib.scaling.clip_radius",
           "radius for clipping probability 1.1 p", arg("p", lambda p: 1.1 * np.asarray(p, dtype=float))),
    Mutant("sim_noise_error_3pct", SIM, "egmlib.scaling.noise_error",
           "noise error formula 3% too large", times(1.03), subtle=True),
    Mutant("sim_improvement_3pct", SIM, "egmlib.zipf.improvement_ratio",
           "improvement ratio 3% too large", times(1.03), subtle=True),
    # --- beyond the study ----------------------------------------------------------
    Mutant("bey_isf_gradient_1pct", BEY_SCALING, "egmlib.optimal.isf_gradient",
           "quantile gradient 1% too large", result(lambda r: (r[0], 1.01 * r[1])), subtle=True),
    Mutant("bey_optimal_scaling_reversed", BEY_SCALING, "egmlib.optimal.optimal_scaling",
           "optimal b in reverse order", result(replace_field("scaling", lambda b: b[::-1].copy()))),
    Mutant("bey_box_half_width_d1", BEY_MECH, "egmlib.optimal.box_half_width",
           "box half-width for one coordinate, whatever d", arg("d", lambda d: 1)),
    Mutant("bey_clipping_error_5pct", BEY_CLIP, "egmlib.optimal.clipping_error",
           "clipping error V 5% too large", times(1.05), subtle=True, until="c011"),
    Mutant("bey_sf_3pct", BEY_SCALING, "egmlib.gchi2.sf",
           "tail probability 3% too large", times(1.03), subtle=True),
    Mutant("bey_two_stage_5pct", BEY_CENTRE, "egmlib.optimal.two_stage_error",
           "two-stage error 5% too large", times(1.05), subtle=True, until="c011"),
    Mutant("bey_box_egm_error_5pct", BEY_MECH, "egmlib.optimal.box_egm_error",
           "box + EGM error 5% too large", times(1.05), subtle=True),
    # --- elliptical perturbations ----------------------------------------------------
    Mutant("ell_epsilon_t_1pct", ELL, "egmlib.elliptical.epsilon_multivariate_t",
           "epsilon of t noise 1% too small", times(0.99), subtle=True),
    Mutant("ell_knorm_printed_scaling", ELL, "egmlib.elliptical.epsilon_knorm",
           "epsilon of K-norm noise for the shift Delta/sigma^2, as printed", _knorm_printed_scaling),
    Mutant("ell_sq_norm_knorm_3pct", ELL, "egmlib.elliptical.expected_sq_norm_knorm",
           "E||K-norm noise||^2 3% too small", times(0.97), subtle=True),
    Mutant("ell_sigma_knorm_half", ELL, "egmlib.elliptical.sigma_knorm",
           "K-norm scale for epsilon halved", times(0.5)),
    Mutant("ell_mahalanobis_euclidean", ELL, "egmlib.elliptical.mahalanobis_norm",
           "Euclidean norm, covariance ignored", _euclidean),
    Mutant("ell_epsilon_elliptical_1pct", ELL, "egmlib.elliptical.epsilon_elliptical",
           "epsilon of a density generator 1% too small", times(0.99), subtle=True),
    Mutant("ell_optimal_nu_1p5", ELL, "egmlib.elliptical.optimal_t_nu",
           "best nu of the t family 1.5 times too large", times(1.5)),
    # --- the state of the art (zCDP accounting, pipelines) ----------------------------
    # (no ``until``: the chapter's cell ids moved when its sections were rewritten, and a
    # killed mutant stops at its killing cell anyway; the whole chapter runs in about 30 CPU-s)
    Mutant("sota_rho_for_usual_bound", SOTA, "egmlib.privacy.gaussian_rho",
           "budget from the usual bound rho + 2 sqrt(rho log(1/delta)) = epsilon, not the exact one",
           _usual_bound_rho),
    Mutant("sota_zcdp_delta_8pct", SOTA, "egmlib.privacy.gaussian_zcdp_delta",
           "exact delta of a composition 8% too small", times(0.92)),
    Mutant("sota_simulate_noise_10pct", SOTA, "egmlib.pipelines.simulate_pipeline",
           "every step's noise std 10% too large",
           arg("pipeline", _pipeline_steps(lambda s: {"noise_sd": 1.1 * s.noise_sd}))),
    Mutant("sota_run_pipeline_clip_2pct", SOTA, "egmlib.pipelines.run_pipeline",
           "rows clipped at 1.02 T, not T (sensitivity 2% above the calibrated one)",
           arg("pipeline", _pipeline_steps(lambda s: {"threshold": 1.02 * s.threshold})), subtle=True),
    Mutant("sota_rho_for_cks_2pct", SOTA, "egmlib.privacy.rho_for_cks",
           "Canonne-Kamath-Steinke budget 2% too large (not private at that epsilon)", times(1.02),
           subtle=True),
    Mutant("sota_two_stage_radius_2pct", SOTA, "egmlib.pipelines.two_stage_pipeline",
           "stage-2 radius 2% larger than its noise is calibrated for",
           result(_pipeline_steps(lambda s: {"threshold": 1.02 * s.threshold})), subtle=True),
    Mutant("sota_private_variances_7pct", SOTA, "egmlib.pipelines.private_variances",
           "variance estimates 7% too small", result(replace_field("variances", lambda v: 0.93 * v))),
    # --- PLAN, reproduced -------------------------------------------------------
    Mutant("plan_quantiles_10pct", PLAN, "egmlib.plan.exponential_quantiles",
           "every PrivQuantile 10% too large (in experiment A: the clipping radius)",
           times(1.1)),
    Mutant("plan_calibration_zcdp", PLAN, "egmlib.plan.plan_mean",
           "the published runs made with egmlib's calibration, not the authors'",
           arg("accounting", lambda a: "zcdp")),
    Mutant("plan_noscale_scales", PLAN, "egmlib.plan.plan_mean",
           "PLAN-NOSCALE runs the variance step and scales (PLAN)", arg("scaled", lambda s: True)),
    Mutant("plan_iome_book_split", PLAN, "egmlib.hly.hly_mean",
           "IOME with the book's threshold share 1/4, not the authors' 1%",
           arg("quantile_share", lambda q: 0.25)),
    # --- the quickstart ------------------------------------------------------------
    Mutant("qs_noise_10pct", "quickstart", "egmlib.mechanisms.gaussian_data_mechanism",
           "noise std 10% too large (the stated noise_std unchanged)",
           noise_times(1.1, _clipped_row_sum)),
]


def targets_of(chapter: str, mutants: list[Mutant] | None = None) -> list[str]:
    """The functions the chapter's mutants target (wrapped by its control)."""
    return list(dict.fromkeys(m.target for m in (MUTANTS if mutants is None else mutants) if m.chapter == chapter))


def patches_for(name: str, mutants: list[Mutant] | None = None) -> list[tuple[str, Callable[[Fn], Fn]]]:
    """(target, make) pairs to install for a mutant, or for ``control:<chapter>``."""
    mutants = MUTANTS if mutants is None else mutants
    if name.startswith("control:"):
        chapter = name.removeprefix("control:")
        targets = targets_of(chapter, mutants)
        if not targets:
            raise ValueError(f"no mutants for chapter {chapter!r}")
        return [(t, passthrough) for t in targets]
    for m in mutants:
        if m.name == name:
            return [(m.target, m.make)]
    raise ValueError(f"no mutant named {name!r}")
