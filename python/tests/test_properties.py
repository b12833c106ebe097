# SPDX-License-Identifier: Apache-2.0
"""Property-based checks (hypothesis) of sort, argsort and scans on numpy."""
import numpy as np
import pytest

import gpuprim
from reference import bits, numpy_cumsum, range_permutation, sort_permutation, wrap_cumsum

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

FLOAT_OR_INT = st.sampled_from(["float32", "float64", "int32", "uint32", "int64", "uint64",
                                "float16", "int8", "uint8", "int16", "uint16"])


def arrays(dtype):
    return hnp.arrays(np.dtype(dtype), st.integers(0, 300),
                      elements=hnp.from_dtype(np.dtype(dtype), allow_nan=True, allow_infinity=True)
                      if np.dtype(dtype).kind == "f" else None)


@settings(max_examples=150, deadline=None)
@given(st.data(), FLOAT_OR_INT, st.booleans())
def test_sort_and_argsort_match_the_documented_order(data, dtype, descending):
    x = data.draw(arrays(dtype))
    perm = sort_permutation(x, descending)
    np.testing.assert_array_equal(bits(gpuprim.sort(x, descending=descending)), bits(x[perm]))
    np.testing.assert_array_equal(gpuprim.argsort(x, descending=descending), perm)


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 500)), st.booleans())
def test_cumsum_wraps_like_c(x, exclusive):
    np.testing.assert_array_equal(gpuprim.cumsum(x, exclusive=exclusive), wrap_cumsum(x, exclusive))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.uint32, st.integers(1, 500)))
def test_sort_pairs_carry_values(x):
    values = np.arange(x.size, dtype=np.uint64)
    k, v = gpuprim.sort(x, values=values)
    np.testing.assert_array_equal(x[v], k)
    np.testing.assert_array_equal(v, sort_permutation(x))


@settings(max_examples=200, deadline=None)
@given(st.data(), FLOAT_OR_INT, st.booleans())
def test_bit_range_sort_matches_numpy_stable_argsort(data, dtype, descending):
    x = data.draw(arrays(dtype))
    width = x.dtype.itemsize * 8
    begin = data.draw(st.integers(0, width - 1))
    end = data.draw(st.sampled_from([None, 0]) | st.integers(begin + 1, width))
    perm = range_permutation(x, descending, begin, end)
    np.testing.assert_array_equal(
        bits(gpuprim.sort(x, descending=descending, begin_bit=begin, end_bit=end)), bits(x[perm]))
    np.testing.assert_array_equal(
        gpuprim.argsort(x, descending=descending, begin_bit=begin, end_bit=end), perm)


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int8, np.uint8, np.int16, np.uint16]), st.integers(0, 500)),
       st.booleans())
def test_narrow_cumsum_wraps_like_c(x, exclusive):
    # in x's own dtype when asked (dtype=x.dtype); the default widens (below)
    np.testing.assert_array_equal(gpuprim.cumsum(x, exclusive=exclusive, dtype=x.dtype),
                                  wrap_cumsum(x, exclusive))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]),
                  st.integers(0, 500)), st.booleans())
def test_narrow_cumsum_and_sum_are_numpys(x, exclusive):
    """Integers narrower than 64 bits: numpy's int64/uint64 results."""
    got = gpuprim.cumsum(x, exclusive=exclusive)
    want = numpy_cumsum(x, exclusive)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    total = gpuprim.sum(x)
    assert total.dtype == np.sum(x).dtype and total == np.sum(x)
