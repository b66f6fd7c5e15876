"""egmlib: the helper library of "Differentially private vector sums for normally
distributed data", an executable report.

Small modules of pure functions (numpy in, numpy out); randomness only through an
explicit ``rng: numpy.random.Generator``.  See the book's API reference.
"""

from __future__ import annotations

from egmlib.privacy import analytic_sigma, classic_sigma, gaussian_delta

__version__ = "0.1.0"

__all__: list[str] = [
    "__version__",
    "analytic_sigma",
    "classic_sigma",
    "gaussian_delta",
]
