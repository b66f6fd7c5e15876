"""egmlib: the helper library of "Differentially private vector sums for normally
distributed data", an executable report.

Small modules of pure functions (numpy in, numpy out); randomness only through an
explicit ``rng: numpy.random.Generator``.  See the book's API reference.

Modules: :mod:`egmlib.privacy` (Gaussian calibration), :mod:`egmlib.gchi2`
(generalized chi-square tails and quantiles: ``egmlib.gchi2.sf/cdf/isf``),
:mod:`egmlib.scaling`, :mod:`egmlib.bounds`, :mod:`egmlib.zipf`,
:mod:`egmlib.mechanisms`, :mod:`egmlib.elliptical`, :mod:`egmlib.symbolic`
(the SymPy objects of the Lagrangian derivation; needs SymPy, ``pip install
"sympy>=1.13"``), :mod:`egmlib.optimal` (the exactly
optimal scaling, box clipping, the clipping-probability trade-off, a private centre),
:mod:`egmlib.coinpress` (CoinPress), :mod:`egmlib.pipelines` (the private-centre
pipelines the book compares, their simulation and error formula, private variances),
:mod:`egmlib.report` (how the book prints numbers), :mod:`egmlib.hly` (Huang, Liang & Yi's shifted clipped mean), :mod:`egmlib.plan`
(PLAN of Aumüller, Lebeda, Nelson & Pagh: private centre, variances and scaling).
The zCDP accounting is in :mod:`egmlib.privacy`.

Not for deployment as it stands: the mechanisms draw float64 Gaussian noise from the
caller's ``numpy.random.Generator`` (seeded, so that the book's outputs reproduce to
the digit).  That is not a secure sampler -- PCG64 is not cryptographic, and
floating-point noise leaks through its low-order bits (Mironov 2012; Jin et al. 2022;
Holohan and Braghin 2021).  For releases about real people, take the calibration
from egmlib and the noise from a library with secure samplers, such as OpenDP.  See
the docstring of :mod:`egmlib.mechanisms`.

``import egmlib`` imports nothing else: submodules and the names re-exported here
are loaded on first use.
"""

from __future__ import annotations

import importlib as _importlib

# Nothing is imported until it is used (PEP 562): ``import egmlib`` loads neither
# numpy's nor scipy's heavier parts, nor SymPy.  ``egmlib.privacy`` or
# ``from egmlib import analytic_sigma`` imports the module that defines the name.
_MODULES = ("bounds", "coinpress", "elliptical", "gchi2", "hly", "mechanisms", "optimal", "pipelines",
            "plan", "privacy", "scaling", "symbolic", "zipf", "report")
_NAMES = {
    "bounds": ("bernstein_radius2", "bernstein_t_max", "theorem4_applies", "theorem4_error_bound"),
    "mechanisms": ("EllipticalResult", "GaussianDataSetup", "GaussianDataResult", "clipped_sum",
                   "elliptical_gaussian_mechanism", "gaussian_data_mechanism", "gaussian_mechanism",
                   "gaussian_data_setup"),
    "plan": ("PLANResult", "plan_mean"),
    "privacy": ("analytic_sigma", "classic_sigma", "gaussian_delta"),
    "scaling": ("clip_radius", "egm_error", "egm_scaling", "gaussian_data_scaling", "noise_error"),
    "zipf": ("improvement_ratio", "zipf_sigmas"),
}
_HOME = {name: module for module, names in _NAMES.items() for name in names}


def __getattr__(name: str):
    """Submodules and re-exported names on first use (``egmlib.symbolic`` needs SymPy)."""
    if name == "__version__":   # written once, in pyproject.toml
        import importlib.metadata as metadata

        try:
            version = metadata.version("egmlib")
        except metadata.PackageNotFoundError:  # a source tree that is not installed
            version = "0+unknown"
        globals()["__version__"] = version
        return version
    if name in _MODULES:
        return _importlib.import_module(f"egmlib.{name}")
    if name in _HOME:
        value = getattr(_importlib.import_module(f"egmlib.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'egmlib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES) | set(_HOME) | {"__version__"})


# ``symbolic`` is not in __all__: ``from egmlib import *`` works without SymPy.
__all__: list[str] = [
    "__version__",
    # modules
    "bounds", "coinpress", "elliptical", "gchi2", "hly", "mechanisms", "optimal", "pipelines", "privacy", "scaling",
    "zipf",
    # privacy
    "analytic_sigma", "classic_sigma", "gaussian_delta",
    # scaling
    "egm_scaling", "egm_error", "gaussian_data_scaling", "clip_radius", "noise_error",
    # bounds
    "bernstein_radius2", "bernstein_t_max", "theorem4_error_bound", "theorem4_applies",
    # zipf
    "zipf_sigmas", "improvement_ratio",
    # mechanisms
    "gaussian_mechanism", "elliptical_gaussian_mechanism", "clipped_sum", "gaussian_data_mechanism",
    "EllipticalResult", "GaussianDataResult", "GaussianDataSetup", "gaussian_data_setup",
    # PLAN
    "plan", "plan_mean", "PLANResult",
]
