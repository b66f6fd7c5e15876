"""The shared input checks: clear errors that name the parameter and the range."""

from __future__ import annotations

import numpy as np
import pytest

from egmlib import _validation as v


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf")])
def test_check_positive_rejects(value):
    with pytest.raises(ValueError, match="epsilon"):
        v.check_positive("epsilon", value)


def test_check_positive_accepts_numpy_scalars():
    assert v.check_positive("x", np.float32(2.5)) == 2.5
    assert v.check_positive("x", np.array(3.0)) == 3.0


@pytest.mark.parametrize("value", ["1", None, [1.0], True])
def test_check_real_rejects_non_numbers(value):
    with pytest.raises(TypeError, match="delta"):
        v.check_real("delta", value)


def test_check_probability_message_names_range():
    with pytest.raises(ValueError, match=r"delta must be in \(0\.0, 1\.0\), got 1\.0"):
        v.check_probability("delta", 1.0)
    assert v.check_probability("p", 1.0, include_one=True) == 1.0


@pytest.mark.parametrize(
    ("value", "kwargs", "match"),
    [
        ([], {}, "must not be empty"),
        ([[1.0]], {}, "1-dimensional"),
        ([1.0, np.nan], {}, "finite"),
        ([1.0, -1.0], {"nonnegative": True}, ">= 0"),
        ([1.0, 0.0], {"positive": True}, "> 0"),
    ],
)
def test_check_array_rejects(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        v.check_array("weights", value, **kwargs)


def test_check_rng():
    assert isinstance(v.check_rng("rng", np.random.default_rng(1)), np.random.Generator)
    with pytest.raises(TypeError, match="rng"):
        v.check_rng("rng", np.random.RandomState(1))


@pytest.mark.parametrize("value", [[1.0 + 2.0j], np.array([1.0, 2.0], dtype=complex), 1j])
def test_as_float_array_refuses_complex_by_name(value):
    with pytest.raises(TypeError, match="weights must be real"):
        v.as_float_array("weights", value)


@pytest.mark.parametrize("value", ["1.0", None, [None, 1.0], np.random.RandomState(0), True])
def test_as_float_array_refuses_non_numbers(value):
    with pytest.raises(TypeError, match="weights"):
        v.as_float_array("weights", value)


@pytest.mark.parametrize("value", [[[1.0], [1.0, 2.0]], [[1.0, 2.0], 3.0], [[1.0, 2.0], [3.0]]])
def test_as_float_array_names_ragged_input_as_a_shape_problem(value):
    """Rows of different lengths are a ValueError about the shape, naming the parameter."""
    with pytest.raises(ValueError, match=r"weights is ragged: its items have different lengths \("):
        v.as_float_array("weights", value)


def test_as_float_array_converts_real_input():
    out = v.as_float_array("x", [1, 2, 3])
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]
    arr = np.ones(3)
    assert v.as_float_array("x", arr) is arr  # no copy of float64 input


def test_check_int_and_check_bool():
    assert v.check_int("n", np.int64(5), low=1) == 5
    with pytest.raises(TypeError, match="n must be an integer"):
        v.check_int("n", 5.0)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 10\], got 11"):
        v.check_int("n", 11, low=1, high=10)
    assert v.check_bool("flag", np.bool_(True)) is True
    with pytest.raises(TypeError, match="flag must be True or False"):
        v.check_bool("flag", 1)


def test_overflow_guard_names_the_huge_argument():
    @v.overflow_guard
    def square_sum(x, scale=1.0):
        return float(np.sum(np.asarray(x) ** 2)) * scale

    assert square_sum([3.0, 4.0]) == 25.0
    with pytest.raises(ValueError, match=r"^x too large in magnitude for square_sum"):
        square_sum([1e200, 1.0])  # numpy overflow in the square
    with pytest.raises(ValueError, match=r"^scale too large in magnitude"):
        square_sum([100.0], scale=1e305)  # Python float product: inf without an exception
    with pytest.raises(ValueError, match=r"^x and scale too large"):
        square_sum([1e160], scale=1e300)


def test_overflow_guard_reports_only_at_the_outermost_call():
    @v.overflow_guard
    def inner(y):
        return y**2.0  # Python float: OverflowError

    @v.overflow_guard
    def outer(z):
        return inner(z * 1e10)

    with pytest.raises(ValueError, match=r"^z too large in magnitude for outer"):
        outer(1e300)
    assert v._GUARD.depth == 0


def test_overflow_guard_keeps_the_module_globals():
    """Doctest and Sphinx find a wrapped function as their module's own."""
    import egmlib.scaling as scaling

    assert scaling.egm_error.__globals__ is vars(scaling)
    assert scaling.egm_error.__wrapped__.__name__ == "egm_error"
