"""Benchmark: Algorithm 3 (gaussian_data_mechanism) against a plain row sum.

Times ``gaussian_data_mechanism`` on n = 10^6 rows and d = 100 float64
coordinates against ``X.sum(axis=0)`` in the same process (runs interleaved,
best of several), and measures the peak memory allocated during one call with
``tracemalloc`` (``X`` itself is allocated before tracing starts).

Goals: at most 4x the time of the plain sum, extra memory O(block * d),
independent of n.  Then :func:`setup_speedup` prints how much faster repeated
calls on small data sets are with a precomputed ``gaussian_data_setup`` setup.  Run: ``.venv/bin/python bench/bench_mechanisms.py``.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from egmlib.mechanisms import _BLOCK_ELEMENTS, gaussian_data_mechanism

N, D, REPEATS = 1_000_000, 100, 7
TIME_GOAL, MEMORY_GOAL_BYTES = 4.0, 64 * 2**20


def _timed(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> None:
    rng = np.random.default_rng(20230120)
    sigmas = np.linspace(0.1, 5.0, D)
    center = rng.normal(size=D)
    X = center + sigmas * rng.standard_normal((N, D))

    def run() -> object:
        return gaussian_data_mechanism(X, sigmas, center, epsilon=1.0, delta=1e-6, rng=rng)

    run()  # warm-up (imports, caches)
    plain, mech = [], []
    for _ in range(REPEATS):
        plain.append(_timed(lambda: X.sum(axis=0)))
        mech.append(_timed(run))
    best_ratio = min(mech) / min(plain)
    median_ratio = float(np.median(mech) / np.median(plain))

    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    result = run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    extra = peak - base

    print(f"n = {N}, d = {D}, float64, X = {X.nbytes / 2**20:.0f} MiB, rows clipped = {result.n_clipped}")
    print(f"X.sum(axis=0): best {min(plain) * 1e3:.1f} ms; gaussian_data_mechanism: best {min(mech) * 1e3:.1f} ms")
    print(f"time ratio: best/best {best_ratio:.2f}, median/median {median_ratio:.2f} (goal <= {TIME_GOAL:.0f})")
    print(
        f"peak extra memory during the call: {extra / 2**20:.2f} MiB "
        f"(work block {_BLOCK_ELEMENTS * 8 / 2**20:.0f} MiB; {extra / X.nbytes:.2%} of X)"
    )
    print("time goal met" if best_ratio <= TIME_GOAL else "time goal NOT met")
    print("memory goal met" if extra <= MEMORY_GOAL_BYTES else "memory goal NOT met")


def setup_speedup() -> None:
    """Repeated runs on small data sets: gaussian_data_mechanism without and with a setup.

    The shapes of the simulation chapters; the setup (gaussian_data_setup) holds the
    clipping radius and sigma_opt, which the call otherwise recomputes every time.
    """
    from egmlib.mechanisms import gaussian_data_setup
    from egmlib.zipf import zipf_sigmas

    rng = np.random.default_rng(20230121)
    for d, n in ((10, 500), (50, 1000), (1000, 1000)):
        sigmas = zipf_sigmas(d, 1.0)
        center = np.zeros(d)
        X = sigmas * rng.standard_normal((n, d))
        setup = gaussian_data_setup(sigmas, n=n, epsilon=1.0, delta=1e-6)
        kw = dict(epsilon=1.0, delta=1e-6, rng=rng)
        plain = [_timed(lambda: gaussian_data_mechanism(X, sigmas, center, **kw)) for _ in range(REPEATS)]
        fast = [_timed(lambda: gaussian_data_mechanism(X, sigmas, center, setup=setup, **kw)) for _ in range(REPEATS)]
        print(
            f"d = {d:4d}, n = {n:5d}: without setup {np.median(plain) * 1e3:7.2f} ms, with setup "
            f"{np.median(fast) * 1e3:6.3f} ms (medians): {np.median(plain) / np.median(fast):6.1f}x faster"
        )


if __name__ == "__main__":
    main()
    setup_speedup()
