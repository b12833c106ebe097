# SPDX-License-Identifier: Apache-2.0
"""The deferred CSR offsets check (experimental, issue 39) on numpy arrays
(CPU backend): Context.set_offsets_check("wait" | "deferred"),
Context.check_deferred(), synchronize() reporting, and the
max_segment_length keyword of the segment_* calls. Deferred results equal
waiting ones; bad offsets, a broken promise and a bad mode are raised with
the library's words."""
import numpy as np
import pytest

import gpuprim

rng = np.random.default_rng(20261127)
INDEX_DTYPES = ["int64", "int32", "uint32", "uint64"]


def offsets_of(lengths, dtype, lead=0):
    return np.concatenate(([lead], lead + np.cumsum(lengths))).astype(dtype)


def every_call(context, x, offsets, max_segment_length=None):
    """Every segment_* call on x over offsets, each result as numpy arrays."""
    m = max_segment_length
    results = {
        "sort": context.segment_sort(x, offsets, max_segment_length=m),
        "sort pairs": context.segment_sort(x, offsets, values=np.arange(x.size, dtype=np.uint32),
                                           descending=True, max_segment_length=m),
        "sort bits": context.segment_sort(x, offsets, begin_bit=2, end_bit=9, max_segment_length=m),
        "argsort": context.segment_argsort(x, offsets, dtype="uint32", max_segment_length=m),
        "argsort i64": context.segment_argsort(x, offsets, descending=True, max_segment_length=m),
        "topk": context.segment_topk(x, offsets, 3, max_segment_length=m),
        "topk big k": context.segment_topk(x, offsets, 50, largest=False, dtype="int32",
                                           max_segment_length=m),
        "scan": context.segment_scan(x, offsets, "max", exclusive=True, max_segment_length=m),
        "cumsum": context.segment_cumsum(x, offsets, max_segment_length=m),
        "sum": context.segment_sum(x, offsets, max_segment_length=m),
        "min": context.segment_min(x, offsets, max_segment_length=m),
        "max": context.segment_max(x, offsets, max_segment_length=m),
    }
    return {name: value if isinstance(value, tuple) else (value,) for name, value in results.items()}


def test_mode_and_defaults():
    with gpuprim.Context("cpu") as context:
        assert context.offsets_check == "wait"
        context.check_deferred()  # nothing to report
        context.set_offsets_check("deferred")
        assert context.offsets_check == "deferred"
        with pytest.raises(ValueError, match="mode"):
            context.set_offsets_check("later")
        with pytest.raises(ValueError):
            context.set_offsets_check(True)
        assert context.offsets_check == "deferred"
        context.set_offsets_check("wait")
        assert context.offsets_check == "wait"
    closed = gpuprim.Context("cpu")
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed.check_deferred()
    with pytest.raises(ValueError, match="closed"):
        closed.set_offsets_check("deferred")


@pytest.mark.parametrize("offsets_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape", ["tiny", "varied", "long", "lead and tail", "empty"])
def test_deferred_equals_wait(offsets_dtype, shape):
    if shape == "tiny":
        lengths, lead, tail = [8, 8, 8, 8], 0, 0
    elif shape == "varied":
        lengths, lead, tail = rng.integers(0, 301, size=500), 0, 0
    elif shape == "long":
        lengths, lead, tail = [0, 10000, 37, 8193, 0, 5], 3, 4
    elif shape == "lead and tail":
        lengths, lead, tail = rng.integers(0, 40, size=50), 17, 9
    else:
        lengths, lead, tail = [0] * 30, 5, 5
    offsets = offsets_of(lengths, offsets_dtype, lead)
    n = int(offsets[-1]) + tail
    x = rng.integers(-50, 51, size=n).astype(np.int32)
    longest = int(np.max(lengths)) if len(lengths) else 0
    with gpuprim.Context("cpu") as context:
        waited = every_call(context, x, offsets)
        context.set_offsets_check("deferred")
        for promise in (None, max(longest, 1), max(longest, 4096)):
            deferred = every_call(context, x, offsets, promise)
            context.check_deferred()
            for name, arrays in waited.items():
                for want, got in zip(arrays, deferred[name]):
                    np.testing.assert_array_equal(got, want, err_msg=f"{name}, promise {promise}")
    # and against numpy where it is plain
    sums = [int(x[a:b].sum()) for a, b in zip(offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64))]
    np.testing.assert_array_equal(waited["sum"][0], np.array(sums, dtype=waited["sum"][0].dtype))


BAD = [
    # (offsets, n, the fault as the library words it)
    ([-3, 0, 4, 8], 8, "segment offsets: offsets[0] = -3 is negative"),
    ([0, 4, 8, 9], 8, "segment offsets: offsets[3] = 9 is past the end of the data (8 elements)"),
    ([0, 4, 3, 8], 8, "segment offsets: offsets[2] = 3 is less than offsets[1] = 4 (offsets must not decrease)"),
]


@pytest.mark.parametrize("values, n, fault", BAD)
def test_bad_offsets_deferred(values, n, fault):
    x = rng.integers(-50, 51, size=n).astype(np.int32)
    offsets = np.array(values, dtype=np.int64)
    with gpuprim.Context("cpu") as context:
        # waiting: raised by the call, without the deferred report's words
        with pytest.raises(gpuprim.InvalidArgumentError) as waited:
            context.segment_sum(x, offsets)
        assert fault in str(waited.value)
        assert "deferred" not in str(waited.value)
        context.set_offsets_check("deferred")
        out = np.full(n, 7, dtype=np.int32)
        context.segment_scan(x, offsets, out=out)  # returns: the check is deferred
        np.testing.assert_array_equal(out, np.full(n, 7, dtype=np.int32))  # nothing written
        with pytest.raises(gpuprim.InvalidArgumentError) as reported:
            context.check_deferred()
        message = str(reported.value)
        assert message.startswith("gpuprim_segmented_scan (call 2 on CSR offsets on this context, "
                                  "its offsets check deferred): ")
        assert fault in message
        assert reported.value.status_name == "INVALID_ARGUMENT"
        context.check_deferred()  # reported once
        # a valid call after a bad one is right
        good = np.array([0, 4, 4, n], dtype=np.int64)
        np.testing.assert_array_equal(context.segment_sum(x, good),
                                      [x[:4].sum(), 0, x[4:].sum()])
        context.check_deferred()


def test_several_bad_calls_and_synchronize():
    x = np.arange(12, dtype=np.float32)
    bad = np.array([0, 5, 4, 12], dtype=np.int32)
    with gpuprim.Context("cpu") as context:
        context.set_offsets_check("deferred")
        context.segment_max(x, bad)
        context.segment_sort(x, np.array([0, 6], dtype=np.int32))  # a good one between
        context.segment_topk(x, bad, 2)
        context.segment_argsort(x, bad)
        with pytest.raises(gpuprim.InvalidArgumentError) as reported:
            context.synchronize()
        message = str(reported.value)
        assert message.startswith("gpuprim_segmented_reduce (call 1 on CSR offsets")
        assert "offsets[2] = 4 is less than offsets[1] = 5" in message
        assert "; 2 more call(s) on offsets failed their deferred check after it" in message
        context.synchronize()
        context.check_deferred()
        # kept across a switch back to waiting
        context.segment_min(x, bad)
        context.set_offsets_check("wait")
        with pytest.raises(gpuprim.InvalidArgumentError, match="call 5 on CSR offsets"):
            context.check_deferred()


@pytest.mark.parametrize("deferred", [False, True])
def test_max_segment_length(deferred):
    x = rng.standard_normal(20).astype(np.float64)
    offsets = np.array([0, 8, 10, 20], dtype=np.uint32)  # lengths 8, 2, 10
    promise = "segments: segment 2 has 10 elements, more than segments->max_segment_length = 9"
    with gpuprim.Context("cpu") as context:
        if deferred:
            context.set_offsets_check("deferred")
        np.testing.assert_array_equal(context.segment_sort(x, offsets, max_segment_length=10),
                                      context.segment_sort(x, offsets))
        np.testing.assert_array_equal(context.segment_sum(x, offsets, max_segment_length=0),
                                      context.segment_sum(x, offsets))
        if deferred:
            context.segment_topk(x, offsets, 4, max_segment_length=9)
            with pytest.raises(gpuprim.InvalidArgumentError) as reported:
                context.check_deferred()
            assert str(reported.value).startswith("gpuprim_segmented_topk (call ")
        else:
            with pytest.raises(gpuprim.InvalidArgumentError) as reported:
                context.segment_topk(x, offsets, 4, max_segment_length=9)
        assert promise in str(reported.value)
        context.check_deferred()
        for bad in (-1, 1 << 64, 2.5, "8"):
            with pytest.raises((ValueError, TypeError)):
                context.segment_sum(x, offsets, max_segment_length=bad)


def test_module_functions_take_max_segment_length():
    x = np.array([3, 1, 2, 9, 7], dtype=np.int64)
    offsets = np.array([0, 3, 5], dtype=np.int64)
    np.testing.assert_array_equal(gpuprim.segment_sort(x, offsets, max_segment_length=3), [1, 2, 3, 7, 9])
    np.testing.assert_array_equal(gpuprim.segment_sum(x, offsets, max_segment_length=3), [6, 16])
    np.testing.assert_array_equal(gpuprim.segment_max(x, offsets, max_segment_length=3), [3, 9])
    values, indices = gpuprim.segment_topk(x, offsets, 1, max_segment_length=3)
    np.testing.assert_array_equal(values[:, 0], [3, 9])
    with pytest.raises(gpuprim.InvalidArgumentError, match="max_segment_length = 2"):
        gpuprim.segment_min(x, offsets, max_segment_length=2)
