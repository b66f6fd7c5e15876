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
