# SPDX-License-Identifier: Apache-2.0
"""Property-based checks (hypothesis) of the toolbox calls on numpy: each
call against a reference written from its docstring's rule (numpy's own
function where the rule is numpy's), on arrays with the values that break
things (NaNs of both signs, +-0.0, +-inf, subnormals, each dtype's min and
max, few distinct values), every dtype the rule covers."""
import os

import numpy as np
import pytest

import gpuprim
from reference import bits, min_max_identity, sort_permutation

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
ANY = INTS + FLOATS
# More for a longer search: GPUPRIM_HYPOTHESIS_EXAMPLES=5000.
EXAMPLES = int(os.environ.get("GPUPRIM_HYPOTHESIS_EXAMPLES", "60"))


def values(dtype):
    """Elements of dtype, the edges often: few distinct values (small
    integers), the dtype's extremes, and for floats NaNs of both signs,
    +-0.0, +-inf and subnormals."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, float(info.max), float(info.min),
                 float(info.smallest_subnormal), -float(info.smallest_subnormal), 1.0, -1.0]
        return st.one_of(st.sampled_from(edges), st.integers(-3, 3).map(float),
                         hnp.from_dtype(dtype, allow_nan=True, allow_infinity=True, allow_subnormal=True))
    info = np.iinfo(dtype)
    return st.one_of(st.sampled_from([int(info.min), int(info.max), 0, 1]), st.integers(0, 3),
                     st.integers(int(info.min), int(info.max)))


def arrays(dtype, min_size=0, max_size=200):
    return hnp.arrays(np.dtype(dtype), st.integers(min_size, max_size), elements=values(dtype))


def same(got, want):
    """Equal values and dtype, NaNs equal to NaNs, zeros of either sign equal."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    assert np.array_equal(bits(got), bits(want)), (got, want)


def sort_order(x):
    """x in the library's order (sort_permutation: -0.0 before +0.0, NaNs
    last by bit pattern)."""
    return x[sort_permutation(x)]


def offsets_over(data, n):
    """CSR offsets over n elements: 0 to 6 random cuts (empty segments
    among them when cuts repeat), from 0 to n."""
    cuts = np.sort(data.draw(hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(0, n))))
    return np.concatenate(([0], cuts, [n])).astype(np.int64)


def runs(x):
    """Starts of runs of equal bit patterns."""
    b = bits(x)
    if b.size == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1])))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.booleans(), st.booleans())
def test_unique_is_numpys(data, dtype, return_inverse, return_counts):
    x = data.draw(arrays(dtype))
    got = gpuprim.unique(x, return_inverse=return_inverse, return_counts=return_counts)
    want = np.unique(x, return_inverse=return_inverse, return_counts=return_counts)
    if not (return_inverse or return_counts):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    same(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        same(np.asarray(g).reshape(np.asarray(w).shape), w)
    if return_inverse:
        same(got[0][got[1]], x)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY))
def test_argmin_argmax_are_numpys(data, dtype):
    x = data.draw(arrays(dtype, min_size=1))
    assert gpuprim.argmin(x) == np.argmin(x)
    assert gpuprim.argmax(x) == np.argmax(x)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY))
def test_min_max_are_the_ieee_rule(data, dtype):
    x = data.draw(arrays(dtype, min_size=1))
    for got, want in ((gpuprim.min(x), np.min(x)), (gpuprim.max(x), np.max(x))):
        same(np.asarray(got, dtype=x.dtype), np.asarray(want))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(["left", "right"]))
def test_searchsorted_is_numpys_where_the_orders_agree(data, dtype, side):
    a = np.sort(data.draw(arrays(dtype)))
    v = data.draw(arrays(dtype))
    if np.dtype(dtype).kind == "f":
        # numpy ties -0.0 with +0.0 and every NaN: the sort's order differs
        a, v = np.where(a == 0, 0, a).astype(dtype), np.where(v == 0, 0, v).astype(dtype)
        a, v = a[~np.isnan(a)], v[~np.isnan(v)]
    same(gpuprim.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side).astype(np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(["left", "right"]))
def test_searchsorted_descending_mirrors_ascending(data, dtype, side):
    a = sort_order(data.draw(arrays(dtype)))[::-1].copy()
    v = data.draw(arrays(dtype))
    got = gpuprim.searchsorted(a, v, side=side, descending=True)
    # each element's rank in the library's ascending order of a and v together
    rank = np.argsort(sort_permutation(np.concatenate((a, v))), kind="stable")
    rank_a, rank_v = rank[:a.size], rank[a.size:]
    bits_a, bits_v = bits(a), bits(v)
    # descending: the keys before v are those after it ascending (not equal to
    # it), and with side="right" the keys equal to it too
    want = [np.count_nonzero((rank_a > rank_v[j]) & (bits_a != bits_v[j])) +
            (np.count_nonzero(bits_a == bits_v[j]) if side == "right" else 0) for j in range(v.size)]
    same(got, np.array(want, np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(INTS), st.integers(0, 40))
def test_bincount_is_numpys(data, dtype, minlength):
    x = data.draw(hnp.arrays(np.dtype(dtype), st.integers(0, 200), elements=st.integers(0, 60)))
    same(gpuprim.bincount(x, minlength=minlength), np.bincount(x, minlength=minlength).astype(np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY))
def test_histogram_with_edges_is_numpys(data, dtype):
    x = data.draw(arrays(dtype))
    finite = hnp.arrays(np.dtype(dtype), st.integers(1, 12), elements=values(dtype)).filter(
        lambda e: not np.isnan(e.astype(np.float64)).any())
    edges = np.sort(data.draw(finite))
    counts, got_edges = gpuprim.histogram(x, edges)
    want, _ = np.histogram(x[~np.isnan(x.astype(np.float64))] if x.dtype.kind == "f" else x, edges)
    same(counts, want.astype(np.int64))
    same(got_edges, edges)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.integers(1, 20))
def test_histogram_with_bins_is_numpys_on_integers_and_exact_edges(data, dtype, bins):
    x = data.draw(hnp.arrays(np.dtype(dtype), st.integers(1, 200), elements=st.integers(-50, 50)
                             if np.dtype(dtype).kind != "u" else st.integers(0, 100)))
    counts, edges = gpuprim.histogram(x, bins)
    want, want_edges = np.histogram(x, bins)
    same(edges, want_edges)
    if x.dtype.kind == "f" and x.dtype.itemsize < 8:
        return  # the float edges round; the bins by float64 may differ by the docstring
    same(counts, want.astype(np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.booleans())
def test_merge_is_a_stable_sort_of_the_concatenation(data, dtype, descending):
    a = sort_order(data.draw(arrays(dtype)))
    b = sort_order(data.draw(arrays(dtype)))
    if descending:
        a, b = a[::-1].copy(), b[::-1].copy()
    va, vb = np.arange(a.size, dtype=np.int64), np.arange(a.size, a.size + b.size, dtype=np.int64)
    keys, moved = gpuprim.merge(a, b, values_a=va, values_b=vb, descending=descending)
    both = np.concatenate((a, b))
    order = sort_permutation(both, descending)
    same_bits(keys, both[order])
    same(moved, np.concatenate((va, vb))[order])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY))
def test_compress_nonzero_are_numpys(data, dtype):
    x = data.draw(arrays(dtype))
    mask = data.draw(hnp.arrays(np.bool_, st.just(x.size)))
    same_bits(gpuprim.compress(mask, x), np.compress(mask, x))
    same(gpuprim.flatnonzero(x), np.flatnonzero(x).astype(np.int64))
    same(gpuprim.nonzero(x)[0], np.nonzero(x)[0].astype(np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.booleans())
def test_run_length_encode_and_unique_consecutive_by_bits(data, dtype, non_trivial):
    x = data.draw(arrays(dtype))
    starts = runs(x)
    lengths = np.diff(np.append(starts, x.size)).astype(np.int64)
    keep = lengths >= 2 if non_trivial else np.ones(starts.size, bool)
    keys, got_starts, got_lengths = gpuprim.run_length_encode(x, non_trivial=non_trivial)
    same_bits(keys, x[starts[keep]])
    same(got_starts, starts[keep].astype(np.int64))
    same(got_lengths, lengths[keep])
    firsts, counts = gpuprim.unique_consecutive(x, return_counts=True)
    same_bits(firsts, x[starts])
    same(counts, lengths)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(INTS + ["float64"]), st.sampled_from(["sum", "min", "max"]))
def test_reduce_by_key_by_runs(data, key_dtype, value_dtype, op):
    keys = data.draw(arrays(key_dtype))
    vals = data.draw(hnp.arrays(np.dtype(value_dtype), st.just(keys.size), elements=values(value_dtype)))
    if op == "sum" and vals.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            vals = np.where(np.isfinite(vals), np.round(vals) % 1000, 1.0)  # exact sums
    starts = runs(keys)
    got_keys, got, counts = gpuprim.reduce_by_key(keys, vals, op, return_counts=True)
    same_bits(got_keys, keys[starts])
    same(counts, np.diff(np.append(starts, keys.size)).astype(np.int64))
    if op == "sum":
        wide = np.dtype(np.int64) if vals.dtype.kind == "i" else np.dtype(np.uint64) if vals.dtype.kind == "u" \
            else vals.dtype
        want = np.add.reduceat(vals.astype(wide), starts) if starts.size else np.zeros(0, wide)
    else:
        f = np.minimum if op == "min" else np.maximum
        want = f.reduceat(vals, starts) if starts.size else np.zeros(0, vals.dtype)
    same(got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(["sum", "min", "max"]))
def test_groupby_is_numpys_unique_then_reduce(data, key_dtype, op):
    keys = data.draw(arrays(key_dtype))
    vals = data.draw(hnp.arrays(np.int64, st.just(keys.size), elements=st.integers(-1000, 1000)))
    call = {"sum": gpuprim.groupby_sum, "min": gpuprim.groupby_min, "max": gpuprim.groupby_max}[op]
    got_keys, got, counts = call(keys, vals, return_counts=True)
    want_keys, inverse, want_counts = np.unique(keys, return_inverse=True, return_counts=True)
    same(got_keys, want_keys)
    same(counts, want_counts.astype(np.int64))
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    start = {"sum": 0, "min": np.iinfo(np.int64).max, "max": np.iinfo(np.int64).min}[op]
    want = np.full(want_keys.size, start, np.int64)
    ufunc.at(want, inverse.reshape(-1), vals)
    same(got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY))
def test_adjacent_difference_is_numpys_diff(data, dtype):
    x = data.draw(arrays(dtype))
    with np.errstate(all="ignore"):
        want = np.diff(x, prepend=np.zeros(1, x.dtype)) if x.size else x.copy()
    if x.size:
        want[0] = x[0]
    # integers bit for bit; floats by value (a NaN result is the canonical NaN)
    (same if x.dtype.kind == "f" else same_bits)(gpuprim.adjacent_difference(x), want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.booleans())
def test_topk_is_the_sorts_first_k(data, dtype, largest):
    x = data.draw(arrays(dtype, min_size=1))
    k = data.draw(st.integers(1, x.size))
    got_values, got_indices = gpuprim.topk(x, k, largest=largest)
    order = sort_permutation(x, largest)[:k]
    same_bits(got_values, x[order])
    same(got_indices, order.astype(np.int64))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(["sum", "min", "max"]))
def test_segment_reductions_are_per_segment(data, dtype, op):
    x = data.draw(arrays(dtype))
    offsets = offsets_over(data, x.size)
    if op == "sum":
        if x.dtype.kind == "f":
            return  # float sums: order of the additions (test_segmented.py)
        got = gpuprim.segment_sum(x, offsets)
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        with np.errstate(all="ignore"):
            want = np.array([x[b:e].astype(wide).sum(dtype=wide) for b, e in zip(offsets[:-1], offsets[1:])],
                            wide)
        same(got, want)
        return
    call = gpuprim.segment_min if op == "min" else gpuprim.segment_max
    got = call(x, offsets)
    f = np.min if op == "min" else np.max
    want = np.array([f(x[b:e]) if e > b else min_max_identity(x.dtype, op)
                     for b, e in zip(offsets[:-1], offsets[1:])], x.dtype)
    same(got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.booleans())
def test_segment_sort_is_per_segment(data, dtype, descending):
    x = data.draw(arrays(dtype))
    offsets = offsets_over(data, x.size)
    got = gpuprim.segment_sort(x, offsets, descending=descending)
    got_idx = gpuprim.segment_argsort(x, offsets, descending=descending)
    want = x.copy()
    want_idx = np.zeros(x.size, np.int64)
    for b, e in zip(offsets[:-1], offsets[1:]):
        p = sort_permutation(x[b:e], descending)
        want[b:e] = x[b:e][p]
        want_idx[b:e] = p
    same_bits(got, want)
    same(got_idx, want_idx)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(INTS))
def test_integer_sum_and_dot_wrap_like_numpy(data, dtype):
    a = data.draw(arrays(dtype))
    b = data.draw(hnp.arrays(np.dtype(dtype), st.just(a.size), elements=values(dtype)))
    with np.errstate(all="ignore"):
        same(np.asarray(gpuprim.sum(a)), np.asarray(np.sum(a)))
        same(np.asarray(gpuprim.dot(a, b)), np.asarray(np.dot(a, b)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data(), st.sampled_from(ANY), st.sampled_from(["min", "max"]), st.booleans())
def test_min_max_scans_are_accumulates(data, dtype, op, exclusive):
    x = data.draw(arrays(dtype))
    got = gpuprim.scan(x, op, exclusive=exclusive)
    f = np.minimum if op == "min" else np.maximum
    want = f.accumulate(x) if x.size else x.copy()
    if exclusive and x.size:
        want = np.concatenate((np.array([min_max_identity(x.dtype, op)], x.dtype), want[:-1]))
    same(got, want)
