"""egmlib: the helper library of "Differentially private vector sums for normally
distributed data", an executable report.

Small modules of pure functions (numpy in, numpy out); randomness only through an
explicit ``rng: numpy.random.Generator``.  See the book's API reference.

Modules: :mod:`egmlib.privacy` (Gaussian calibration), :mod:`egmlib.gchi2`
(generalized chi-square tails and quantiles: ``egmlib.gchi2.sf/cdf/isf``),
:mod:`egmlib.scaling`, :mod:`egmlib.bounds`, :mod:`egmlib.zipf`,
:mod:`egmlib.mechanisms`, :mod:`egmlib.elliptical`, :mod:`egmlib.symbolic`
(the SymPy objects of the Lagrangian derivation; needs SymPy, the ``symbolic``
extra, and is imported on first use), :mod:`egmlib.optimal` (the exactly
optimal scaling, box clipping, the clipping-probability trade-off, a private centre),
:mod:`egmlib.coinpress` (CoinPress), :mod:`egmlib.pipelines` (the private-centre
pipelines the book compares, their simulation and error formula, private variances),
:mod:`egmlib.report` (how the book prints numbers), :mod:`egmlib.hly` (Huang, Liang & Yi's shifted clipped mean), :mod:`egmlib.plan`
(PLAN of Aumüller, Lebeda, Nelson & Pagh: private centre, variances and scaling).
The zCDP accounting is in :mod:`egmlib.privacy`.
"""

from __future__ import annotations

import importlib.metadata as _metadata

from egmlib import (bounds, coinpress, elliptical, gchi2, hly, mechanisms, optimal, pipelines, privacy,
                    scaling, zipf)
from egmlib.bounds import bernstein_radius2, bernstein_t_max, theorem4_applies, theorem4_error_bound
from egmlib.mechanisms import (
    EllipticalResult,
    GaussianDataSetup,
    GaussianDataResult,
    clipped_sum,
    elliptical_gaussian_mechanism,
    gaussian_data_mechanism,
    gaussian_mechanism,
    gaussian_data_setup,
)
from egmlib import plan
from egmlib.plan import PLANResult, plan_mean
from egmlib.privacy import analytic_sigma, classic_sigma, gaussian_delta
from egmlib.scaling import clip_radius, egm_error, egm_scaling, gaussian_data_scaling, noise_error
from egmlib.zipf import improvement_ratio, zipf_sigmas

try:  # the version is written once, in pyproject.toml
    __version__: str = _metadata.version("egmlib")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"



def __getattr__(name: str):
    """``egmlib.symbolic`` on first use: only it needs SymPy (the ``symbolic`` extra)."""
    if name == "symbolic":
        import importlib

        return importlib.import_module("egmlib.symbolic")
    raise AttributeError(f"module 'egmlib' has no attribute {name!r}")


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
