"""Input checks shared by every egmlib module (private).

Every public function validates its arguments with these helpers, so that bad
input raises a ``ValueError`` (or ``TypeError``) that names the parameter, the
accepted range and the value received -- never a silent NaN.
"""

from __future__ import annotations

import math
import numbers
import threading

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


def check_count(name: str, value: object, low: int = 1) -> int:
    """Return ``value`` as a Python int ``>= low`` (bools and floats are refused): the
    counts of the estimators (rows, dimensions, rounds, replicates)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_rows(name: str, value: object, low: int = 2) -> NDArray[np.float64]:
    """Return ``value`` as a finite real 2-d float array with at least ``low`` rows."""
    arr = check_array(name, value, ndim=2)
    if arr.shape[0] < low:
        raise ValueError(f"{name} must have at least {low} rows, got {arr.shape[0]}")
    return arr


def check_positive(name: str, value: object) -> float:
    """A finite float > 0."""
    return check_real(name, value, low=0.0, low_open=True)


def check_probability(name: str, value: object, *, include_one: bool = False) -> float:
    """A float in (0, 1) (or (0, 1] with ``include_one``)."""
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=not include_one)


def _lengths(value: object) -> str:
    """The lengths of the items of a nested sequence, for an error message (at most 8)."""
    out = []
    try:
        for item in value:  # type: ignore[union-attr]
            out.append(str(len(item)) if hasattr(item, "__len__") and not isinstance(item, (str, bytes)) else "scalar")
            if len(out) == 8:
                out.append("...")
                break
    except TypeError:
        return "?"
    return ", ".join(out)


def ragged_error(name: str, value: object) -> ValueError:
    """The ValueError for a nested sequence whose items differ in length (not an array)."""
    return ValueError(f"{name} is ragged: its items have different lengths ({_lengths(value)}); "
                      f"{name} must be a rectangular array (every row of the same length)")


def as_float_array(name: str, value: object) -> NDArray[np.float64]:
    """``value`` as a float64 array, refusing complex, string and object input by name.

    ``np.asarray(z, dtype=float)`` would drop the imaginary part of a complex
    ``z`` with only a warning; here it is a ``TypeError`` naming ``name``.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be an array of real numbers (or a real number), got {_describe(value)}")
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
    except ValueError as exc:  # ragged nested sequences ("inhomogeneous shape")
        raise ragged_error(name, value) from exc
    except TypeError as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {_describe(value)}") from exc
    if raw.dtype.kind == "O" and raw.ndim >= 1 and any(isinstance(v, (list, tuple, np.ndarray)) for v in raw.flat):
        raise ragged_error(name, value)
    if raw.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values ({_describe(value)})")
    if raw.dtype.kind not in "fiub" or raw.dtype.kind == "b" and raw.ndim == 0:
        raise TypeError(f"{name} must be a real number or an array of real numbers, got {_describe(value)}")
    return raw.astype(np.float64, copy=False)


def check_bool(name: str, value: object) -> bool:
    """A Python or numpy bool (not an int, array or string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_describe(value)}")
    return bool(value)


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
    arr = as_float_array(name, value).astype(dtype, copy=False)
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


def check_scaling(sigmas: NDArray[np.float64], scaling: object) -> NDArray[np.float64]:
    """A scaling vector matching ``sigmas``: entries in (0, inf], inf only where sigma is 0."""
    b = as_float_array("scaling", scaling)
    if b.shape != sigmas.shape:
        raise ValueError(f"scaling must have the shape of sigmas {sigmas.shape}, got {b.shape}")
    bad = np.isnan(b) | ~(b > 0)
    if np.any(bad):
        raise ValueError(f"scaling must be in (0, inf] everywhere, got {float(b[bad][0])!r}")
    if np.any(np.isinf(b) & (sigmas > 0)):
        raise ValueError("scaling may be inf only where sigmas is 0 (a constant coordinate)")
    return b


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


def _numbers(value: object) -> list[float]:
    """The finite-or-not real numbers inside a float, array or (nested) sequence, else []."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        return []
    if isinstance(value, (numbers.Real, np.floating, np.integer)):
        return [float(value)]
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return []
        return arr.ravel().tolist()
    return []


def _is_finite(result: object) -> bool:
    """Whether every number of a float, array, tuple or dataclass result is finite."""
    import dataclasses

    if isinstance(result, (bool, np.bool_)) or result is None:
        return True
    if isinstance(result, (numbers.Real, np.floating, np.integer)):
        return math.isfinite(float(result))
    if isinstance(result, np.ndarray):
        return result.dtype.kind not in "fc" or bool(np.all(np.isfinite(result)))
    if isinstance(result, tuple):
        return all(_is_finite(x) for x in result)
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return all(_is_finite(getattr(result, f.name)) for f in dataclasses.fields(result))
    return True


class _GuardState(threading.local):
    depth = 0


_GUARD = _GuardState()


def overflow_guard(func=None, *, huge: float = 1e150, check_result: bool = True):  # type: ignore[no-untyped-def]
    """Decorator of public numeric functions: overflow becomes a ValueError naming the input.

    The wrapped call runs with numpy overflow and invalid operations raised as
    errors; an ``OverflowError`` or ``FloatingPointError`` from inside, or (with
    ``check_result``) a result holding inf or NaN, becomes a ``ValueError``
    naming the numeric arguments with magnitude above ``huge`` (all numeric
    arguments if none is), with the advice to rescale.  Inputs are validated by
    the function itself first, so a bad argument still gets its own message.

    The wrapper is created with the globals of ``func``'s module, so doctest
    and Sphinx treat it as the module's own function.
    """
    import functools
    import inspect
    import types

    def decorate(f):  # type: ignore[no-untyped-def]
        signature = inspect.signature(f)

        def overflowed(args, kwargs):  # type: ignore[no-untyped-def]
            bound = signature.bind(*args, **kwargs)
            found = {k: v for k, v in bound.arguments.items() if _numbers(v)}
            big = [k for k, v in found.items() if max((abs(x) for x in _numbers(v)), default=0.0) > huge]
            names = big or list(found)
            listed = " and ".join(names)
            got = ", ".join(f"{k}={_describe(bound.arguments[k])}" for k in names)
            return ValueError(
                f"{listed} too large in magnitude for {f.__name__} ({got}): the result would overflow "
                f"double precision; accepted are finite {listed} for which the result stays below "
                "1.8e308 -- rescale the inputs"
            )

        def run(args, kwargs):  # type: ignore[no-untyped-def]
            if _GUARD.depth:  # called from inside another guarded function: it reports
                return f(*args, **kwargs)
            _GUARD.depth += 1
            try:
                with np.errstate(over="raise", invalid="raise"):
                    result = f(*args, **kwargs)
            except (OverflowError, FloatingPointError) as exc:
                raise overflowed(args, kwargs) from exc
            finally:
                _GUARD.depth -= 1
            if check_result and not _is_finite(result):
                raise overflowed(args, kwargs)
            return result

        def template(*args, **kwargs):  # type: ignore[no-untyped-def]
            return run(args, kwargs)

        wrapper = types.FunctionType(
            template.__code__, f.__globals__, f.__name__, template.__defaults__, template.__closure__
        )
        functools.update_wrapper(wrapper, f)
        wrapper.__kwdefaults__ = None
        return wrapper

    return decorate if func is None else decorate(func)
