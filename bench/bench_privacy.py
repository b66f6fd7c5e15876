"""Benchmark: analytic Gaussian calibration, egmlib against IBM diffprivlib.

For every grid point of ``bench/reference_privacy.csv`` (50-digit mpmath
reference ``sigma*``, written by ``bench/make_reference_privacy.py``) both
implementations compute the smallest noise level for unit sensitivity:

* ``egmlib.privacy.analytic_sigma(epsilon, delta)``;
* ``diffprivlib.mechanisms.GaussianAnalytic(epsilon=..., delta=...,
  sensitivity=1.0)``, whose noise standard deviation is the attribute
  ``_scale`` (what ``randomise`` multiplies a standard normal by;
  ``variance(0)`` returns its square).

Printed per implementation: max and median relative error against
``sigma*``, how many results are below ``sigma*`` (too little noise: the
mechanism is then *not* ``(epsilon, delta)``-DP), and the median time per
call, with the ratio to egmlib's time.  Both run in this same process.
Comparisons with ``sigma*`` are exact (mpmath, 60 digits).

Run: ``.venv/bin/python bench/bench_privacy.py``; or import and call
:func:`bench_privacy`.
"""

from __future__ import annotations

import csv
import importlib.util
import statistics
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path

import mpmath as mp

from egmlib.privacy import analytic_sigma

REFERENCE = Path(__file__).with_name("reference_privacy.csv")
REPEATS = 3
_GAUSSIAN_ANALYTIC: type | None = None


def _gaussian_analytic_class() -> type:
    """``diffprivlib.mechanisms.GaussianAnalytic``, importable even with a newer scikit-learn.

    ``import diffprivlib`` runs ``diffprivlib/__init__.py``, which imports the
    scikit-learn models; diffprivlib 0.6.6 fails there with scikit-learn >=
    1.8 (``sklearn.tree._tree`` no longer exports ``DOUBLE``).  The
    mechanisms do not need scikit-learn, so on that failure the package is
    registered as a bare namespace and only ``diffprivlib.mechanisms`` is
    loaded, from the installed files, unchanged.
    """
    try:
        from diffprivlib.mechanisms import GaussianAnalytic
    except ImportError:
        for name in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
            del sys.modules[name]
        spec = importlib.util.find_spec("diffprivlib")
        if spec is None or spec.submodule_search_locations is None:
            raise
        package = types.ModuleType("diffprivlib")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["diffprivlib"] = package
        from diffprivlib.mechanisms import GaussianAnalytic
    return GaussianAnalytic


def _diffprivlib_sigma(epsilon: float, delta: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = _GAUSSIAN_ANALYTIC(epsilon=epsilon, delta=delta, sensitivity=1.0)
    return float(mech._scale)


def _load_reference() -> list[tuple[float, float, mp.mpf]]:
    with REFERENCE.open(newline="") as fh:
        return [(float(r["epsilon"]), float(r["delta"]), mp.mpf(r["sigma"])) for r in csv.DictReader(fh)]


def _run(
    fn: Callable[[float, float], float], cases: list[tuple[float, float, mp.mpf]]
) -> dict[str, float]:
    errors, below, times, failures = [], 0, [], 0
    by_delta: dict[float, float] = {}
    for eps, delta, ref in cases:
        best = float("inf")
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            try:
                sigma = fn(eps, delta)
            except Exception:  # noqa: BLE001 - a reference library may reject a case
                sigma = float("nan")
            best = min(best, time.perf_counter() - t0)
        times.append(best)
        if not sigma == sigma:  # NaN: failed
            failures += 1
            continue
        errors.append(float(abs(mp.mpf(sigma) - ref) / ref))
        by_delta[delta] = max(by_delta.get(delta, 0.0), errors[-1])
        below += mp.mpf(sigma) < ref
    return {
        "max_rel_error": max(errors) if errors else float("nan"),
        "median_rel_error": statistics.median(errors) if errors else float("nan"),
        "below_minimum": below,
        "failures": failures,
        "cases": len(cases),
        "median_time_s": statistics.median(times),
        "max_rel_error_by_delta": by_delta,
    }


def bench_privacy(verbose: bool = True) -> dict[str, dict[str, float]]:
    """Run the comparison; print a table when ``verbose``; return the numbers.

    Returns ``{"egmlib": {...}, "diffprivlib": {...}}`` with keys
    ``max_rel_error``, ``median_rel_error``, ``below_minimum``, ``failures``,
    ``cases``, ``median_time_s``, ``time_ratio`` (time / egmlib's time) and
    ``max_rel_error_by_delta`` (``{delta: max rel error}``).
    """
    global _GAUSSIAN_ANALYTIC
    _GAUSSIAN_ANALYTIC = _gaussian_analytic_class()
    mp.mp.dps = 60
    cases = _load_reference()
    results = {
        "egmlib": _run(analytic_sigma, cases),
        "diffprivlib": _run(_diffprivlib_sigma, cases),
    }
    base = results["egmlib"]["median_time_s"]
    for res in results.values():
        res["time_ratio"] = res["median_time_s"] / base
    if verbose:
        print(
            f"analytic Gaussian sigma, {len(cases)} cases: eps in [1e-3, 50] (25 log-spaced), "
            "delta in {0.5, 1e-1, 1e-3, 1e-6, 1e-9, 1e-12, 1e-15}; reference: mpmath, 50 digits"
        )
        header = f"{'implementation':<14} {'max rel err':>11} {'median rel err':>14} {'below sigma*':>12} " \
                 f"{'failed':>6} {'median time':>12} {'time ratio':>10}"
        print(header)
        for name, res in results.items():
            print(
                f"{name:<14} {res['max_rel_error']:>11.2e} {res['median_rel_error']:>14.2e} "
                f"{res['below_minimum']:>12d} {res['failures']:>6d} "
                f"{res['median_time_s'] * 1e3:>9.3f} ms {res['time_ratio']:>10.2f}"
            )
        speedup = results["diffprivlib"]["time_ratio"]
        print(
            f"median time per call: egmlib {results['egmlib']['median_time_s'] * 1e6:.1f} us, diffprivlib "
            f"{results['diffprivlib']['median_time_s'] * 1e6:.1f} us: egmlib is {speedup:.1f}x faster (goal >= 10x)"
        )
        deltas = sorted(results["egmlib"]["max_rel_error_by_delta"], reverse=True)
        print("max rel err by delta: " + " ".join(f"{d:>8.0e}" for d in deltas))
        for name, res in results.items():
            by = res["max_rel_error_by_delta"]
            print(f"  {name:<19}" + " ".join(f"{by.get(d, float('nan')):>8.1e}" for d in deltas))
    return results


if __name__ == "__main__":
    bench_privacy()
    sys.exit(0)
