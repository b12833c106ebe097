# SPDX-License-Identifier: Apache-2.0
"""Read-only arrays: never written. Every function that writes into an array
it is given (out=, values_out=, in place) refuses a read-only one with
numpy's own error (ValueError "output array is read-only") before anything
is written; read-only inputs are read and left as they are."""
import numpy as np
import pytest

import gpuprim

rng = np.random.default_rng(31)
READ_ONLY = "output array is read-only"


def bytes_backed(x):
    """x's values in an immutable bytes object, viewed by a read-only array
    (x's shape), and the bytes themselves."""
    raw = x.tobytes()
    return np.frombuffer(raw, dtype=x.dtype).reshape(x.shape), raw


def flag_read_only(x):
    """A copy of x with flags.writeable cleared."""
    y = x.copy()
    y.flags.writeable = False
    return y


def read_only_kinds(x):
    """(array, check) pairs: check() asserts the array's memory is unchanged."""
    b, raw = bytes_backed(x)
    expected = x.tobytes()  # another bytes object: raw is the one that must not change
    f = flag_read_only(x)
    before = f.copy()
    return [(b, lambda: raw == expected and b.tobytes() == expected),
            (f, lambda: np.array_equal(f.view(np.uint8), before.view(np.uint8)))]


def keys(n=1000, shape=None):
    x = rng.integers(-1000, 1000, size=n).astype(np.int32)
    return x.reshape(shape) if shape is not None else x


OFFSETS = np.array([3, 100, 100, 700, 990], np.int64)


# (name, call(ro)): a call that gives the read-only array `ro` as an output.
WRITERS = [
    ("sort out=x", lambda ro: gpuprim.sort(ro, out=ro)),
    ("sort out", lambda ro: gpuprim.sort(keys(), out=ro)),
    ("sort descending out=x", lambda ro: gpuprim.sort(ro, descending=True, out=ro)),
    ("sort bit range out=x", lambda ro: gpuprim.sort(ro, out=ro, begin_bit=0, end_bit=8)),
    ("sort values_out=values",
     lambda ro: gpuprim.sort(keys(), values=ro, values_out=ro)),
    ("sort values_out", lambda ro: gpuprim.sort(keys(), values=keys(), values_out=ro)),
    ("sort in place, values_out read-only",
     lambda ro: gpuprim.sort(keys(), values=keys(), out=np.zeros(1000, np.int32), values_out=ro)),
    ("scan out=x", lambda ro: gpuprim.scan(ro, "max", out=ro)),
    ("scan out", lambda ro: gpuprim.scan(keys(), "min", exclusive=True, out=ro)),
    ("cumsum out=x", lambda ro: gpuprim.cumsum(ro, out=ro)),
    ("cumsum exclusive out=x", lambda ro: gpuprim.cumsum(ro, exclusive=True, out=ro)),
    ("segment_sort out=x", lambda ro: gpuprim.segment_sort(ro, OFFSETS, out=ro)),
    ("segment_sort values_out",
     lambda ro: gpuprim.segment_sort(keys(), OFFSETS, values=ro, values_out=ro)),
    ("segment_scan out=x", lambda ro: gpuprim.segment_scan(ro, OFFSETS, "max", out=ro)),
    ("segment_cumsum out=x", lambda ro: gpuprim.segment_cumsum(ro, OFFSETS, out=ro)),
    ("segment_cumsum out", lambda ro: gpuprim.segment_cumsum(keys(), OFFSETS, out=ro)),
    ("Context.sort out=x", lambda ro: gpuprim.Context("cpu").sort(ro, out=ro)),
    ("Context.cumsum out=x", lambda ro: gpuprim.Context("cpu").cumsum(ro, out=ro)),
    ("Context.segment_sort out=x",
     lambda ro: gpuprim.Context("cpu").segment_sort(ro, OFFSETS, out=ro)),
]

ROW_WRITERS = [
    ("sort axis=-1 out=x", lambda ro: gpuprim.sort(ro, axis=-1, out=ro)),
    ("sort axis=-1 values_out",
     lambda ro: gpuprim.sort(keys(shape=(20, 50)), axis=-1, values=ro, values_out=ro)),
    ("cumsum axis=-1 out=x", lambda ro: gpuprim.cumsum(ro, axis=-1, out=ro)),
    ("scan axis=-1 out", lambda ro: gpuprim.scan(keys(shape=(20, 50)), "max", axis=-1, out=ro)),
]


@pytest.mark.parametrize("name,call", WRITERS + ROW_WRITERS, ids=[w[0] for w in WRITERS + ROW_WRITERS])
def test_read_only_output_is_refused_and_unchanged(name, call):
    shape = (20, 50) if (name, call) in ROW_WRITERS else None
    for ro, unchanged in read_only_kinds(keys(shape=shape)):
        assert not ro.flags.writeable
        with pytest.raises(ValueError, match=READ_ONLY):
            call(ro)
        assert unchanged(), name


@pytest.mark.parametrize("n", [0, 1])
def test_read_only_empty_and_tiny_outputs(n):
    """Refused whatever the size, as numpy does (np.cumsum(x, out=ro))."""
    for ro, unchanged in read_only_kinds(keys(n)):
        with pytest.raises(ValueError, match=READ_ONLY):
            gpuprim.sort(ro, out=ro)
        with pytest.raises(ValueError, match=READ_ONLY):
            gpuprim.cumsum(ro, out=ro)
        assert unchanged()


def test_numpy_gives_the_same_error():
    ro = flag_read_only(keys())
    with pytest.raises(ValueError, match=READ_ONLY):
        np.cumsum(ro, out=ro)


def test_read_only_memory_map(tmp_path):
    """A file mapped read-only (mode "r": pages without write permission):
    a write through it would crash the process."""
    path = tmp_path / "keys.bin"
    x = keys()
    x.tofile(path)
    mapped = np.memmap(path, dtype=np.int32, mode="r")
    for call in (lambda: gpuprim.sort(mapped, out=mapped),
                 lambda: gpuprim.cumsum(mapped, out=mapped),
                 lambda: gpuprim.segment_sort(mapped, OFFSETS, out=mapped)):
        with pytest.raises(ValueError, match=READ_ONLY):
            call()
    np.testing.assert_array_equal(mapped, x)
    np.testing.assert_array_equal(gpuprim.sort(mapped), np.sort(x, kind="stable"))
    del mapped
    assert path.read_bytes() == x.tobytes()


def test_read_only_inputs_are_read_not_written():
    """Every function on read-only inputs (keys, values, offsets, dot
    operands): correct results in new, writable arrays; inputs unchanged."""
    x = keys()
    values = np.arange(1000, dtype=np.float64)
    for (ro, unchanged), (rv, values_unchanged), (ro2, unchanged2), (off, offsets_unchanged) in zip(
            read_only_kinds(x), read_only_kinds(values), read_only_kinds(keys(shape=(20, 50))),
            read_only_kinds(OFFSETS)):
        perm = np.argsort(x, kind="stable")
        results = [gpuprim.sort(ro), gpuprim.argsort(ro), gpuprim.cumsum(ro),
                   gpuprim.scan(ro, "min", exclusive=True)]
        k, v = gpuprim.sort(ro, values=rv)
        results += [k, v]
        np.testing.assert_array_equal(results[0], x[perm])
        np.testing.assert_array_equal(results[1], perm)
        np.testing.assert_array_equal(v, values[perm])
        k, v = gpuprim.sort_by_key(ro, rv, descending=True)
        results += [k, v]
        results += list(gpuprim.topk(ro, 10))
        results += [gpuprim.sort(ro2, axis=-1), gpuprim.argsort(ro2, axis=-1),
                    gpuprim.cumsum(ro2, axis=-1), gpuprim.sum(ro2, axis=-1)]
        results += list(gpuprim.topk(ro2, 5, axis=-1))
        results += [gpuprim.segment_sort(ro, off), gpuprim.segment_argsort(ro, off),
                    gpuprim.segment_cumsum(ro, off), gpuprim.segment_scan(ro, off, "max"),
                    gpuprim.segment_sum(ro, off), gpuprim.segment_min(ro, off),
                    gpuprim.segment_max(ro, off)]
        results += list(gpuprim.segment_sort(ro, off, values=rv))
        results += list(gpuprim.segment_topk(ro, off, 4))
        assert gpuprim.sum(ro) == x.sum() and gpuprim.min(ro) == x.min()
        assert gpuprim.max(ro) == x.max() and gpuprim.dot(ro, ro) == np.dot(x, x)
        for r in results:
            assert isinstance(r, np.ndarray) and r.flags.writeable
        # an output that is a new array may be written after
        assert gpuprim.sort(ro, out=np.empty_like(x))[0] == x.min()
        assert unchanged() and values_unchanged() and unchanged2() and offsets_unchanged()
