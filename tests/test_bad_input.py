"""The bad-input battery: every public function of every egmlib module, every parameter.

Functions are discovered from each module's ``__all__``; :data:`VALID` holds one valid
call per function, and :func:`test_every_public_function_has_a_valid_call` fails when a
function has none, so a new public function cannot escape the battery (adding it is one
line: ``"module.name": call(...)``).

For each parameter of that call (including those left at their defaults) the battery
substitutes NaN, +-inf, +-1e308, a complex scalar, a complex array, a wrong shape, an
empty array, a string, None and a ``numpy.random.RandomState``; for array parameters
also the valid array with one entry replaced by NaN, inf or 1e308, and the valid array
filled with 1e308.  Each substituted call must either

* raise ``ValueError`` or ``TypeError`` whose message names the parameter, or
* return a result whose numbers are all finite (a huge but finite input may have a
  well-defined finite answer),

and nothing else: no OverflowError, no ZeroDivisionError, and no warning (the pytest
configuration turns warnings, e.g. numpy's RuntimeWarning or ComplexWarning, into
errors, which are neither ValueError nor TypeError).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import numbers
import pkgutil
import re
import warnings

import numpy as np
import pytest
import sympy as sp

import egmlib


def call(*args: object, **kwargs: object) -> tuple[tuple[object, ...], dict[str, object]]:
    """One registry entry: the positional and keyword arguments of a valid call."""
    return args, kwargs


def _log_f() -> object:
    return egmlib.elliptical.log_generator("t", 2, nu=5.0)


SIG3 = [3.0, 1.0, 0.5]
B3 = [0.2, 0.4, 0.6]
X3 = np.random.default_rng(0).normal(0.0, SIG3, size=(200, 3))

#: One valid (and cheap) call of every public function, keyed "module.name".
VALID: dict[str, tuple[tuple[object, ...], dict[str, object]]] = {
    # bounds
    "bounds.bernstein_t_max": call(SIG3),
    "bounds.bernstein_radius2": call(SIG3, 0.1),
    "bounds.theorem4_applies": call(SIG3, 1000.0),
    # Theorem 4 needs ln n <= sum(sigma^2) / (18 max sigma^2): many equal sigmas
    "bounds.theorem4_error_bound": call(np.ones(200), 1000.0, 5.0),
    # elliptical
    "elliptical.log_generator": call("t", 2, nu=5.0),
    "elliptical.tail_log_ratio": call(_log_f(), sensitivity=1.0, sigma=2.0),
    "elliptical.epsilon_elliptical": call(_log_f(), sensitivity=1.0, sigma=2.0),
    "elliptical.sigma_elliptical": call(_log_f(), epsilon=1.0, sensitivity=1.0),
    "elliptical.epsilon_multivariate_t": call(5.0, 2, sensitivity=1.0, sigma=2.0),
    "elliptical.epsilon_knorm": call(sensitivity=1.0, sigma=2.0),
    "elliptical.epsilon_gaussian": call(sensitivity=1.0, sigma=2.0),
    "elliptical.epsilon_multivariate_laplace": call(2, sensitivity=1.0, sigma=2.0),
    "elliptical.sigma_multivariate_t": call(1.0, 5.0, 2, sensitivity=1.0),
    "elliptical.sigma_knorm": call(1.0, sensitivity=1.0),
    "elliptical.mahalanobis_norm": call([[1.0, 2.0], [0.5, -1.0]], [[2.0, 0.3], [0.3, 1.0]]),
    "elliptical.max_log_density_ratio": call(
        egmlib.elliptical.log_generator("gaussian"), [0.0, 0.0], [1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]],
        sigma=1.0, rng=np.random.default_rng(1), n_random=50, n_starts=1, radius=10.0,
    ),
    "elliptical.expected_sq_norm_t": call(5.0, 3, 2.0),
    "elliptical.expected_sq_norm_knorm": call(3, 2.0),
    "elliptical.expected_sq_norm_elliptical": call(_log_f(), 2, 2.0),
    "elliptical.optimal_t_nu": call(1.0, 3),
    "elliptical.sample_multivariate_t": call(5.0, 2, 4, scale=2.0, rng=np.random.default_rng(1)),
    "elliptical.sample_knorm": call(2, 4, scale=2.0, rng=np.random.default_rng(1)),
    # gchi2
    "gchi2.sf": call(5.0, SIG3),
    "gchi2.cdf": call(5.0, SIG3),
    "gchi2.isf": call(1e-3, SIG3),
    "gchi2.pdf": call(5.0, SIG3),
    "gchi2.isf_gradient": call(1e-3, SIG3),
    # mechanisms
    "mechanisms.gaussian_mechanism": call([1.0, 2.0], 1.0, epsilon=1.0, delta=1e-6, rng=np.random.default_rng(1)),
    "mechanisms.elliptical_gaussian_mechanism": call(
        [[0.5, 1.0, 0.0], [0.2, -1.0, 0.1]], [-1.0, -2.0, -1.0], [1.0, 2.0, 1.0],
        epsilon=1.0, delta=1e-6, rng=np.random.default_rng(1),
    ),
    "mechanisms.clipped_sum": call([[0.5, 1.0, 0.0], [0.2, -1.0, 0.1]], [0.0, 0.0, 0.0], 2.0, B3),
    "mechanisms.gaussian_data_mechanism": call(
        [[0.5, 1.0, 0.0], [0.2, -1.0, 0.1]], SIG3, [0.0, 0.0, 0.0],
        epsilon=1.0, delta=1e-6, clip_probability=0.1, rng=np.random.default_rng(1),
    ),
    "mechanisms.gaussian_data_setup": call(SIG3, n=100, epsilon=1.0, delta=1e-6, clip_probability=0.1),
    # optimal
    "optimal.isf_gradient": call(1e-3, SIG3),
    "optimal.optimal_scaling": call(SIG3, 1e-3),
    "optimal.box_half_width": call(3, 1e-3),
    "optimal.box_egm_error": call(SIG3, 1e-3, 5.0),
    "optimal.clipping_error": call(SIG3, B3, 1e-3),
    "optimal.total_error": call(SIG3, B3, 1e-3, 1000.0, 5.0),
    "optimal.optimal_clip_probability": call(SIG3, B3, 1000.0, 5.0),
    "optimal.two_stage_error": call(SIG3, 1000.0, 0.3, epsilon=1.0, delta=1e-6, public_range=10.0),
    # privacy
    "privacy.classic_sigma": call(0.5, 1e-5, 1.0),
    "privacy.gaussian_delta": call(1.0, sigma=[1.0, 2.0], sensitivity=1.0),
    "privacy.analytic_sigma": call(1.0, 1e-6, 1.0),
    # report (the printed form of numbers; glue_number needs myst-nb)
    "report.format_number": call(1.5e-6, 3),
    "report.glue_number": call("x", 1.5e-6, 3),
    "report.glue": call("x", 1.5e-6, display=False),
    "report.markdown_table": call(["a", "b"], [["1", "2"]]),
    # scaling
    "scaling.egm_scaling": call(SIG3),
    "scaling.egm_error": call(SIG3, 5.0),
    "scaling.gaussian_data_scaling": call(SIG3),
    "scaling.clip_radius": call(SIG3, B3, 1e-3),
    "scaling.noise_error": call(SIG3, B3, 1e-3, 5.0),
    # symbolic
    "symbolic.symbols": call(2),
    "symbolic.objective": call(2),
    "symbolic.constraint": call(2),
    "symbolic.lagrangian": call(2),
    "symbolic.stationary_point": call(2),
    "symbolic.bordered_hessian": call(2, at_stationary_point=False),
    "symbolic.leading_principal_minors": call(2, at_stationary_point=False),
    "symbolic.bordered_diagonal_determinant": call([1.0, 2.0], [3.0, 4.0]),
    "symbolic.minor_closed_form": call(3, 2),
    "symbolic.bordered_hessian_numeric": call(SIG3, 2.0, B3, 0.5),
    "symbolic.log_abs_minors": call(SIG3, 2.0),
    # coinpress (CoinPress)
    "coinpress.tail_bound": call(3, 0.01),
    "coinpress.coinpress_schedule": call(200, 3, 10.0, [0.1, 0.3], tail=2.5),
    "pipelines.coinpress_mean": call(X3, [0.0, 0.0, 0.0], 10.0, [0.1, 0.3], rng=np.random.default_rng(1)),
    # privacy: zCDP accounting
    "privacy.gaussian_rho": call(1.0, 1e-6),
    "privacy.gaussian_zcdp_delta": call(0.5, epsilon=1.0),
    "privacy.gaussian_zcdp_epsilon": call(0.5, delta=1e-6),
    "privacy.zcdp_epsilon_bound": call(0.5, 1e-6),
    "privacy.zcdp_epsilon_cks": call(0.5, 1e-6),
    "privacy.rho_for_cks": call(1.0, 1e-6),
    # pipelines (the private-centre step sequences of the chapter)
    "pipelines.step_rho": call(egmlib.pipelines.coinpress_pipeline(SIG3, 200, 10.0, [0.1, 0.3])[0], 200),
    "pipelines.coinpress_pipeline": call(SIG3, 200, 10.0, [0.1, 0.3]),
    "pipelines.coinpress_exact_pipeline": call(SIG3, 200, 10.0, [0.1, 0.3]),
    "pipelines.two_stage_pipeline": call(SIG3, 200, 10.0, 0.4, share=0.25),
    "pipelines.hybrid_pipeline": call(SIG3, 200, 10.0, [0.1, 0.3]),
    "pipelines.run_pipeline": call(X3, [0.0, 0.0, 0.0],
                                   egmlib.pipelines.coinpress_pipeline(SIG3, 200, 10.0, [0.1, 0.3]),
                                   rng=np.random.default_rng(1)),
    "pipelines.simulate_pipeline": call(egmlib.pipelines.coinpress_pipeline(SIG3, 200, 10.0, [0.1, 0.3]), SIG3,
                                        [0.0, 0.0, 0.0], [0.5, 0.0, 0.0], 200, 3, rng=np.random.default_rng(1)),
    "pipelines.pipeline_error": call(egmlib.pipelines.coinpress_pipeline(SIG3, 200, 10.0, [0.1, 0.3]), SIG3, 200),
    "pipelines.private_variances": call(X3, [4.0, 4.0, 4.0], [0.1, 0.3], rng=np.random.default_rng(1)),
    "pipelines.standard_schedule": call(0.5, 3),
    # hly (Huang, Liang & Yi)
    "hly.padded_dimension": call(3),
    "hly.random_signs": call(4, rng=np.random.default_rng(1)),
    "hly.rotate": call(np.ones((2, 4)), np.ones((3, 4))),
    "hly.rotate_back": call(np.ones(4), np.ones((3, 4))),
    "hly.private_quantiles": call(np.ones((50, 4)), 25.0, -10.0, 10.0, 0.5, 5, rng=np.random.default_rng(1)),
    "hly.clipped_mean": call(np.ones((5, 4)), 1.0),
    "hly.hly_mean": call(X3, [0.0, 0.0, 0.0], 10.0, 0.5, rng=np.random.default_rng(1)),
    "hly.simulate_hly": call(SIG3, [0.0, 0.0, 0.0], [0.5, 0.0, 0.0], 200, 3, 10.0, 0.5, rng=np.random.default_rng(1)),
    # plan (PLAN, Aumüller, Lebeda, Nelson & Pagh)
    "plan.exponential_quantiles": call(X3, 0.5, -10.0, 10.0, 0.5, rng=np.random.default_rng(1)),
    "plan.plan_mean": call(X3, 0.5, (-10.0, 10.0), rng=np.random.default_rng(1)),
    # zipf
    "zipf.zipf_sigmas": call(5, 1.0),
    "zipf.improvement_ratio": call(5, 1.0, 1000.0),
}

#: Names in an ``__all__`` that are not functions: result types and type aliases,
#: built only by the library's own functions.  A new one must be added here on purpose.
NOT_FUNCTIONS = {
    "elliptical.LogGenerator", "elliptical.RatioMaximum",
    "mechanisms.EllipticalResult", "mechanisms.GaussianDataResult", "mechanisms.GaussianDataSetup",
    "optimal.OptimalScaling", "optimal.ClipOptimum",
    "symbolic.GaussianDataSymbols",
    "coinpress.CoinPressSchedule",
    "gchi2.GeneralizedChi2",  # its constructor and methods: tests/test_gchi2.py
    "pipelines.Step", "pipelines.PipelineErrors", "pipelines.VarianceEstimate",
    "hly.HLYResult", "hly.HLYErrors",
    "plan.PLANResult",
}


def _public_names() -> dict[str, object]:
    """``{"module.name": object}`` for every name in the ``__all__`` of every public module."""
    out = {}
    for info in pkgutil.iter_modules(egmlib.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"egmlib.{info.name}")
        for name in module.__all__:
            out[f"{info.name}.{name}"] = getattr(module, name)
    return out


PUBLIC = _public_names()
FUNCTIONS = sorted(key for key, obj in PUBLIC.items() if inspect.isfunction(obj))


def test_every_public_function_has_a_valid_call() -> None:
    missing = [key for key in FUNCTIONS if key not in VALID]
    assert not missing, f"add a valid call to VALID in tests/test_bad_input.py for: {missing}"
    stale = [key for key in VALID if key not in FUNCTIONS]
    assert not stale, f"VALID lists names that are not public functions: {stale}"
    others = {key for key, obj in PUBLIC.items() if not inspect.isfunction(obj)}
    assert others == NOT_FUNCTIONS, f"classify these public names: {sorted(others ^ NOT_FUNCTIONS)}"
    # the package namespace re-exports only names checked here
    for name in egmlib.__all__:
        obj = getattr(egmlib, name)
        if inspect.isfunction(obj):
            assert f"{obj.__module__.split('.')[-1]}.{name}" in VALID, name


# ---------------------------------------------------------------------------
# substitutions
# ---------------------------------------------------------------------------
def _is_array_like(value: object) -> bool:
    return isinstance(value, (list, tuple, np.ndarray)) and np.asarray(value).dtype.kind in "fiu"


def _substitutes(value: object) -> list[tuple[str, object]]:
    """The bad values tried in place of a parameter whose valid value is ``value``."""
    out: list[tuple[str, object]] = [
        ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf),
        ("1e308", 1e308), ("-1e308", -1e308), ("complex", 1.0 + 2.0j),
        ("empty array", np.array([])), ("string", "abc"), ("RandomState", np.random.RandomState(0)),
    ]
    if value is not None:
        out.append(("None", None))
    if _is_array_like(value):
        arr = np.asarray(value, dtype=np.float64)
        out.append(("complex array", arr + 1j))
        out.append(("complex array, zero imaginary part", arr.astype(complex)))
        out.append(("wrong shape", np.ones(arr.shape + (2,))))
        out.append(("filled with 1e308", np.full(arr.shape, 1e308)))
        out.append(("filled with -1e308", np.full(arr.shape, -1e308)))
        for label, bad in (("nan", math.nan), ("inf", math.inf), ("1e308", 1e308)):
            arr2 = arr.copy()
            arr2.flat[0] = bad
            out.append((f"one entry {label}", arr2))
        if arr.ndim >= 1 and arr.shape[0] > 1:
            out.append(("one entry fewer", arr[:-1]))
    else:
        out.append(("complex array", np.array([1.0 + 1.0j, 2.0])))
        out.append(("wrong shape", np.ones((2, 2))))
    return out


def _finite(result: object) -> bool:
    """Whether every number inside ``result`` is finite (arrays, dataclasses, tuples, sympy)."""
    if result is None or isinstance(result, (bool, str)) or callable(result) and not isinstance(result, np.ndarray):
        return True
    if isinstance(result, sp.Basic):  # sympy numbers have unbounded exponents: 1e616 is finite
        return not result.has(sp.nan, sp.zoo, sp.oo, -sp.oo)
    if isinstance(result, (numbers.Number, np.number)):
        return bool(np.isfinite(complex(result)))
    if isinstance(result, np.ndarray):
        return result.dtype.kind not in "fc" or bool(np.all(np.isfinite(result)))
    if isinstance(result, sp.MatrixBase):
        return all(_finite(x) for x in result)
    if dataclasses.is_dataclass(result):
        return all(_finite(getattr(result, f.name)) for f in dataclasses.fields(result))
    if isinstance(result, dict):
        return all(_finite(k) and _finite(v) for k, v in result.items())
    if isinstance(result, (tuple, list)):
        return all(_finite(x) for x in result)
    return True


#: Functions whose documented answer may be +inf (a privacy loss that is unbounded, the
#: mechanism being not epsilon-DP for any finite epsilon; a diverging moment); NaN is
#: still refused.
INF_IS_AN_ANSWER = {
    "elliptical.epsilon_elliptical", "elliptical.tail_log_ratio",
    "elliptical.epsilon_gaussian", "elliptical.epsilon_multivariate_laplace",
    "elliptical.expected_sq_norm_t", "elliptical.expected_sq_norm_elliptical",  # diverging moments
    "gchi2.pdf",  # the density of a single weight is +inf at c = 0
}


def _cases(key: str) -> list[tuple[str, str, object]]:
    func = PUBLIC[key]
    args, kwargs = VALID[key]
    bound = inspect.signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    return [(param, label, bad) for param, value in bound.arguments.items() for label, bad in _substitutes(value)]


def _run(key: str, param: str, bad: object) -> str | None:
    """None if the substituted call behaves; else a description of what went wrong."""
    func = PUBLIC[key]
    args, kwargs = VALID[key]
    bound = inspect.signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    bound.arguments[param] = bad
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = func(*bound.args, **bound.kwargs)
    except (ValueError, TypeError) as exc:
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", str(exc)):
            return None
        return f"{type(exc).__name__} not naming {param!r}: {exc}"
    except Exception as exc:  # noqa: BLE001 - anything else is a failure of the battery
        return f"{type(exc).__name__}: {exc}"
    if not _finite(result) and not (key in INF_IS_AN_ANSWER and result == math.inf):
        return f"non-finite result {result!r:.80}"
    return None


@pytest.mark.parametrize("key", FUNCTIONS)
def test_bad_input_battery(key: str) -> None:
    if key not in VALID:
        pytest.skip("no valid call registered (test_every_public_function_has_a_valid_call fails)")
    if key == "report.glue_number":
        pytest.importorskip("myst_nb")  # the book's environment only (make library-check has none)
    if key == "report.glue":
        pytest.importorskip("IPython")  # a kernel's package (make library-check has none)
    func = PUBLIC[key]
    args, kwargs = VALID[key]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = func(*args, **kwargs)
        assert _finite(result) or key in INF_IS_AN_ANSWER and result == math.inf, "the valid call must work"
    failures = []
    for param, label, bad in _cases(key):
        problem = _run(key, param, bad)
        if problem is not None:
            failures.append(f"{param} = {label}: {problem}")
    assert not failures, f"{key}: {len(failures)} bad inputs slipped through:\n  " + "\n  ".join(failures)


# ---------------------------------------------------------------------------
# ragged input: rows (or entries) of different lengths get a ValueError that names
# the parameter and says "ragged" (issue 32 item 7), not numpy's "inhomogeneous
# shape" nor a complaint about the type
# ---------------------------------------------------------------------------
def _ragged_cases() -> list[tuple[str, str]]:
    out = []
    for key in FUNCTIONS:
        # symbolic takes SymPy input; hly's Y must already be a float64 ndarray (a list is a TypeError naming Y)
        # report.* takes text cells (its own messages name the parameter)
        if key not in VALID or key.startswith(("report.", "symbolic.")):
            continue
        args, kwargs = VALID[key]
        bound = inspect.signature(PUBLIC[key]).bind(*args, **kwargs)
        for param, value in bound.arguments.items():
            if key.startswith("hly.") and param == "Y":
                continue
            if isinstance(value, (list, np.ndarray)) and np.ndim(value) in (1, 2) and np.size(value) >= 2:
                out.append((key, param))
    return out


def _make_ragged(value: object) -> list:
    rows = np.asarray(value).tolist()
    if np.ndim(value) == 2:
        return rows[:-1] + [rows[-1][:-1]]        # last row one entry short
    return [[rows[0], rows[0]]] + rows[1:]          # first entry a pair


RAGGED = _ragged_cases()


def test_ragged_cases_cover_the_issue():
    names = {(k.split(".")[1], p) for k, p in RAGGED}
    for pair in [("gaussian_data_mechanism", "X"), ("elliptical_gaussian_mechanism", "X"), ("clipped_sum", "X"),
                 ("gaussian_mechanism", "value"), ("egm_scaling", "sensitivities"), ("clip_radius", "sigmas"),
                 ("optimal_scaling", "sigmas")]:
        assert pair in names, pair


@pytest.mark.parametrize("key, param", RAGGED)
def test_ragged_input_is_named(key: str, param: str) -> None:
    func = PUBLIC[key]
    args, kwargs = VALID[key]
    bound = inspect.signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    bound.arguments[param] = _make_ragged(bound.arguments[param])
    with pytest.raises(ValueError, match=rf"{re.escape(param)} is ragged"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            func(*bound.args, **bound.kwargs)
