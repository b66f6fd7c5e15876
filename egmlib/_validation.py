"""Input checks shared by every egmlib module (private).

Every public function validates its arguments with these helpers, so that bad
input raises a ``ValueError`` (or ``TypeError``) that names the parameter, the
accepted range and the value received -- never a silent NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__: list[str] = []


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given interval.

    ``low``/``high`` are the bounds (``None`` for unbounded); ``low_open`` /
    ``high_open`` make them strict.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number, got {_describe(value)}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    lo_ok = low is None or (x > low if low_open else x >= low)
    hi_ok = high is None or (x < high if high_open else x <= high)
    if not (lo_ok and hi_ok):
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        raise ValueError(f"{name} must be in {left}{lo}, {hi}{right}, got {_describe(value)}")
    return x


def check_int(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as a Python int in ``[low, high]`` (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}")
    k = int(value)
    if (low is not None and k < low) or (high is not None and k > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {_describe(value)}")
    return k


def check_positive(name: str, value: object) -> float:
    """A finite float > 0."""
    return check_real(name, value, low=0.0, low_open=True)


def check_probability(name: str, value: object, *, include_one: bool = False) -> float:
    """A float in (0, 1) (or (0, 1] with ``include_one``)."""
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=not include_one)


def check_array(
    name: str,
    value: ArrayLike,
    *,
    ndim: int | None = 1,
    nonempty: bool = True,
    nonnegative: bool = False,
    positive: bool = False,
    dtype: type = np.float64,
) -> NDArray[np.float64]:
    """Return ``value`` as a finite float array with the required shape and sign."""
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {_describe(value)}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-dimensional array, got shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    if positive and not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0 everywhere, got min {float(arr.min())!r}")
    if nonnegative and not np.all(arr >= 0):
        raise ValueError(f"{name} must be >= 0 everywhere, got min {float(arr.min())!r}")
    return arr


def check_rng(name: str, rng: object) -> np.random.Generator:
    """``rng`` must be a ``numpy.random.Generator`` (no global random state)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def warn_caller(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside egmlib (the
    user's call), however deep inside the package the warning arises."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)   # the caller of warn_caller: stacklevel 2 for warnings.warn
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
