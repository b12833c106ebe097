# SPDX-License-Identifier: Apache-2.0
"""gpuprim's distributed calls on numpy arrays (CPU backend, MPI through
mpi4py), checked against references of the global data built with
reference.py:

    mpirun --oversubscribe -np 3 python3 -m pytest -q python/tests/test_distributed.py
    python3 -m pytest -q python/tests/test_distributed.py      # one rank

Every rank makes its own data from a seed, the test and its rank (sizes
differ across ranks, zero included), gathers every rank's data with mpi4py
(comm.allgather) to build the reference of the concatenation in rank order,
and checks its own part. Under plain pytest MPI.COMM_WORLD has one rank: the
same tests then check the one-rank case, and the tests on MPI.COMM_SELF check,
at any rank count, that a distributed call on a one-rank communicator gives
exactly the one-rank call's result.

The calls are collective: every rank must run the same tests in the same
order (the same pytest arguments on every rank). Skips depend only on the
library and on mpi4py, the same on every rank. Skipped: without mpi4py, with
a libgpuprim that has no distributed calls or was built without MPI. A rank
that fails an assertion leaves the test while the others wait for it in a
collective call: with several ranks, a watchdog aborts the job (MPI_Abort)
when a test has not finished after GPUPRIM_TEST_WATCHDOG seconds (120), naming
the test; add -x to see the first failure's report before that.
"""
import math
import os
import sys
import threading
import zlib

import numpy as np
import pytest

import gpuprim
from reference import (ALL_DTYPES, DTYPES, bits, dtype_of, is_float, is_half, numpy_cumsum,
                       numpy_sum_dtype, pattern, range_permutation, sort_permutation, specials,
                       wrap_cumsum)


def _mpi():
    """mpi4py's MPI module (MPI initialized), or None without mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI


def _engine_skip_reason():
    """Why the distributed tests cannot run here, or None."""
    if not gpuprim.has_distributed():
        return f"libgpuprim has no distributed calls ({gpuprim.LIBRARY_PATH})"
    MPI = _mpi()
    if MPI is None:
        return "mpi4py is not installed (python3 -m pip install mpi4py)"
    with gpuprim.Context("cpu") as context:
        try:
            context.attach_communicator(MPI.COMM_WORLD)
        except gpuprim.DeviceError as error:
            if error.status_name == "BACKEND_UNAVAILABLE":
                return f"libgpuprim was built without MPI: {error}"
            raise
    return None


SKIP_REASON = _engine_skip_reason()
needs_mpi = pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")
MPI = _mpi() if SKIP_REASON is None else None
WORLD = MPI.COMM_WORLD if MPI is not None else None
RANK = WORLD.Get_rank() if WORLD is not None else 0
RANKS = WORLD.Get_size() if WORLD is not None else 1

# Per-rank sizes: a rank's size is SIZES[(rank + shift) % len(SIZES)], the
# shift changing from case to case, so every rank (rank 0 too) is sometimes
# empty, and with one rank every size comes up.
SIZES = [1000, 0, 4097, 1, 31, 70001, 2, 0]
SEED = 20261126


WATCHDOG_SECONDS = float(os.environ.get("GPUPRIM_TEST_WATCHDOG", "120"))


@pytest.fixture(autouse=True)
def _watchdog(request):
    """With several ranks: MPI_Abort when the test has not finished in time
    (a hang: some rank left the test early), rather than waiting forever."""
    if WORLD is None or RANKS == 1:
        yield
        return

    def abort():
        sys.stderr.write(f"\ntest_distributed: rank {RANK}: {request.node.name} has not finished "
                         f"after {WATCHDOG_SECONDS:g} s: a rank that failed before a collective "
                         "call leaves the others waiting (run with -x to see the first failure); "
                         "aborting the job\n")
        sys.stderr.flush()
        WORLD.Abort(1)
    timer = threading.Timer(WATCHDOG_SECONDS, abort)
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()


def raised(call):
    """The exception call() raises, or None: for checks made after the
    collective calls that follow, so that no rank leaves a test early."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 (checked by the caller)
        return error
    return None


def rng_for(*case):
    """The generator for this rank and case: different data on every rank,
    the same on every run."""
    return np.random.default_rng([SEED, RANK] + [zlib.crc32(str(c).encode()) for c in case])


def local_size(shift):
    return SIZES[(RANK + shift) % len(SIZES)]


def gathered(x, comm=None):
    """Every rank's x concatenated in rank order, and this rank's offset in it."""
    comm = comm or WORLD
    parts = comm.allgather(x)
    offset = sum(part.size for part in parts[:comm.Get_rank()])
    return np.concatenate(parts), offset


def assert_same_bits(got, want, message=""):
    assert got.dtype == want.dtype and got.shape == want.shape, message
    np.testing.assert_array_equal(bits(np.ascontiguousarray(got)), bits(np.ascontiguousarray(want)),
                                  err_msg=message)


def all_ranks_agree(value):
    """Whether every rank holds the same bits (a result every rank receives)."""
    mine = bits(np.array([value]) if np.ndim(value) == 0 else np.asarray(value)).tobytes()
    return len(set(WORLD.allgather(mine))) == 1


# -- no communicator, no library: clear errors (no MPI needed) ----------------

def test_no_communicator_is_a_clear_error():
    x = np.arange(10, dtype=np.int32)
    with gpuprim.Context("cpu") as context:
        assert context.communicator is None
        calls = [lambda: context.distributed_sort(x), lambda: context.distributed_argsort(x),
                 lambda: context.distributed_topk(x, 3), lambda: context.distributed_scan(x),
                 lambda: context.distributed_reduce(x), lambda: context.rank,
                 lambda: context.rank_count]
        for call in calls:
            if gpuprim.has_distributed():
                with pytest.raises(gpuprim.InvalidArgumentError, match="attach_communicator") as info:
                    call()
                assert info.value.status_name == "INVALID_ARGUMENT"
            else:
                with pytest.raises(gpuprim.DeviceError, match="no distributed calls"):
                    call()
        context.detach_communicator()  # none attached: nothing to do


def test_communicator_argument_checks():
    with gpuprim.Context("cpu") as context:
        with pytest.raises(TypeError, match="mpi4py communicator"):
            context.attach_communicator("COMM_WORLD")
        with pytest.raises(ValueError, match="null"):
            context.attach_communicator(0)
        with pytest.raises(ValueError, match="kind"):
            context.attach_communicator(1234, kind="gloo")
        if gpuprim.has_distributed():
            with pytest.raises(ValueError, match="NCCL communicator needs a CUDA context"):
                context.attach_communicator(0x1000)
        assert context.communicator is None


# -- attach, detach, rank ------------------------------------------------------

@needs_mpi
def test_attach_detach_rank():
    with gpuprim.Context("cpu") as context:
        context.attach_communicator(WORLD)
        assert context.communicator is WORLD
        assert (context.rank, context.rank_count) == (RANK, RANKS)
        context.attach_communicator(MPI.COMM_SELF)   # replaces WORLD
        assert (context.rank, context.rank_count) == (0, 1)
        context.detach_communicator()
        assert context.communicator is None
        with pytest.raises(gpuprim.InvalidArgumentError, match="attach_communicator"):
            context.rank
        with pytest.raises(ValueError, match="COMM_NULL"):
            context.attach_communicator(MPI.COMM_NULL)
        with pytest.raises(ValueError, match="kind='nccl'"):
            context.attach_communicator(WORLD, kind="nccl")
        # an MPI_Comm's address given as an int
        context.attach_communicator(MPI._addressof(WORLD), kind="mpi")
        assert context.rank_count == RANKS


# -- sort, argsort -------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_keys(dtype, descending):
    for shift, kind in enumerate(["random", "few", "equal", "sorted", "reversed"]):
        x = pattern(dtype, local_size(shift), kind, rng_for("sort", dtype, descending, shift))
        keep = x.copy()
        whole, offset = gathered(x)
        expected = whole[sort_permutation(whole, descending)][offset:offset + x.size]
        got = gpuprim.distributed_sort(x, comm=WORLD, descending=descending)
        assert type(got) is np.ndarray and got.shape == x.shape
        assert_same_bits(got, expected, f"{kind}, shift {shift}")
        assert_same_bits(x, keep, "input changed")


@needs_mpi
@pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "float64", "float16", "uint8"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_pairs(dtype, descending):
    """Values move with their keys; ties keep (rank, position) order: the
    values are the global positions, so a stable result is exact."""
    for shift in range(4):
        keys = pattern(dtype, local_size(shift), "few", rng_for("pairs", dtype, descending, shift))
        whole, offset = gathered(keys)
        values = np.arange(offset, offset + keys.size, dtype=np.int64)
        perm = sort_permutation(whole, descending)
        mine = slice(offset, offset + keys.size)
        got_keys, got_values = gpuprim.distributed_sort(keys, comm=WORLD, values=values,
                                                        descending=descending)
        assert_same_bits(got_keys, whole[perm][mine])
        np.testing.assert_array_equal(got_values, perm[mine])
        # in place, float values
        k, v = keys.copy(), values.astype(np.float64)
        result = gpuprim.distributed_sort(k, comm=WORLD, values=v, out=k, values_out=v,
                                          descending=descending)
        assert result[0] is k and result[1] is v
        assert_same_bits(k, whole[perm][mine])
        np.testing.assert_array_equal(v, perm[mine].astype(np.float64))


@needs_mpi
@pytest.mark.parametrize("descending", [False, True])
def test_sort_bit_range(descending):
    for shift, (begin, end) in enumerate([(0, 16), (4, 12), (8, 32), (31, 32)]):
        x = rng_for("bits", descending, shift).integers(0, 1 << 32, size=local_size(shift),
                                                        dtype=np.uint32)
        whole, offset = gathered(x)
        perm = range_permutation(whole, descending, begin, end)
        mine = slice(offset, offset + x.size)
        got = gpuprim.distributed_sort(x, comm=WORLD, descending=descending, begin_bit=begin,
                                       end_bit=end)
        np.testing.assert_array_equal(got, whole[perm][mine], err_msg=f"[{begin}, {end})")
        order = gpuprim.distributed_argsort(x, comm=WORLD, descending=descending,
                                            begin_bit=begin, end_bit=end)
        np.testing.assert_array_equal(order, perm[mine])


@needs_mpi
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_argsort(dtype, descending):
    for shift, kind in enumerate(["random", "few", "equal"]):
        x = pattern(dtype, local_size(shift + 3), kind, rng_for("argsort", dtype, descending, shift))
        whole, offset = gathered(x)
        expected = sort_permutation(whole, descending)[offset:offset + x.size]
        got = gpuprim.distributed_argsort(x, comm=WORLD, descending=descending)
        assert got.dtype == np.int64 and got.shape == x.shape
        np.testing.assert_array_equal(got, expected, err_msg=f"{kind}, shift {shift}")
    unsigned = gpuprim.distributed_argsort(x, comm=WORLD, descending=descending, dtype="uint64")
    assert unsigned.dtype == np.uint64
    np.testing.assert_array_equal(unsigned.astype(np.int64), expected)


@needs_mpi
def test_argsort_index_dtype_is_global():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(TypeError, match="int64 or uint64|int64, uint64"):
        gpuprim.distributed_argsort(x, comm=WORLD, dtype="int32")
    # every rank refused and joined: the next call still lines up
    whole, offset = gathered(x)
    np.testing.assert_array_equal(gpuprim.distributed_argsort(x, comm=WORLD),
                                  sort_permutation(whole)[offset:offset + x.size])


# -- top-k ---------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    for shift, kind in enumerate(["random", "few", "equal"]):
        x = pattern(dtype, local_size(shift), kind, rng_for("topk", dtype, largest, shift))
        whole, _ = gathered(x)
        perm = sort_permutation(whole, descending=largest)
        for k in sorted({k for k in (0, 1, 7, whole.size // 2, whole.size - 1, whole.size)
                         if 0 <= k <= whole.size}):
            values, indices = gpuprim.distributed_topk(x, k, comm=WORLD, largest=largest)
            assert indices.dtype == np.int64 and values.dtype == x.dtype
            np.testing.assert_array_equal(indices, perm[:k], err_msg=f"{kind} k={k}")
            assert_same_bits(values, whole[perm[:k]])
    values, indices = gpuprim.distributed_topk(x, whole.size, comm=WORLD, largest=largest,
                                               dtype="uint32")
    np.testing.assert_array_equal(indices.astype(np.int64), perm)


@needs_mpi
def test_topk_ties_across_ranks():
    """Every rank holds the same keys: the ties go to the lower global
    position, so the k largest come from the lowest ranks first."""
    x = np.array([5, 1, 5, 3, 5], np.int16)
    values, indices = gpuprim.distributed_topk(x, 4, comm=WORLD)
    np.testing.assert_array_equal(indices, [0, 2, 4, 5] if RANKS > 1 else [0, 2, 4, 3])
    np.testing.assert_array_equal(values, [5, 5, 5, 5] if RANKS > 1 else [5, 5, 5, 3])
    values, indices = gpuprim.distributed_topk(x, 2, comm=WORLD, largest=False)
    np.testing.assert_array_equal(indices, [1, 6] if RANKS > 1 else [1, 3])


@needs_mpi
def test_topk_past_the_global_count_fails_everywhere():
    x = np.arange(local_size(0), dtype=np.float32)
    total = sum(WORLD.allgather(x.size))
    with pytest.raises(gpuprim.InvalidArgumentError):
        gpuprim.distributed_topk(x, total + 1, comm=WORLD)
    values, indices = gpuprim.distributed_topk(x, total, comm=WORLD)  # still usable
    assert values.size == total


@needs_mpi
def test_topk_k_checked_before_the_outputs_are_made():
    """A k far past the global count fails on every rank with the k check,
    before outputs of k elements are allocated (issue 35: numpy's "Unable to
    allocate" instead); a large valid k still works, and the ranks line up."""
    x = np.arange(local_size(5), dtype=np.float64)  # 70001 on rank 0 of one
    total = sum(WORLD.allgather(x.size))
    for k in (2 ** 40, 2 ** 64 - 1, max(total + 1, (1 << 16) + 1)):
        error = raised(lambda: gpuprim.distributed_topk(x, k, comm=WORLD))
        assert isinstance(error, gpuprim.InvalidArgumentError), error
        assert f"k = {k} is more than the {total} elements" in str(error), error
    whole, _ = gathered(x)
    k = min(total, (1 << 16) + 7)
    values, indices = gpuprim.distributed_topk(x, k, comm=WORLD, dtype=np.uint64)
    perm = sort_permutation(whole, descending=True)
    np.testing.assert_array_equal(indices.astype(np.int64), perm[:k])
    assert indices.dtype == np.uint64


# -- scan ----------------------------------------------------------------------

def _exclusive(inclusive, identity):
    """An inclusive scan shifted right by one, starting at identity."""
    return np.concatenate((np.array([identity], inclusive.dtype), inclusive[:-1]))[:inclusive.size]


@needs_mpi
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("op", ["sum", "min", "max"])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_integers(dtype, op, exclusive):
    info = np.iinfo(dtype)
    for shift in range(4):
        x = specials(dtype, local_size(shift), rng_for("scan", dtype, op, exclusive, shift))
        whole, offset = gathered(x)
        if op == "sum":
            # numpy's dtype (narrower integers widened); in place: x's own, wrapping
            expected, own = numpy_cumsum(whole, exclusive), wrap_cumsum(whole, exclusive)
        else:
            ufunc = np.minimum if op == "min" else np.maximum
            expected = ufunc.accumulate(whole) if whole.size else whole
            if exclusive:
                expected = _exclusive(expected, info.max if op == "min" else info.min)
            own = expected
        got = gpuprim.distributed_scan(x, op, comm=WORLD, exclusive=exclusive)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected[offset:offset + x.size], err_msg=f"shift {shift}")
        out = x.copy()
        assert gpuprim.distributed_scan(out, op, comm=WORLD, exclusive=exclusive, out=out) is out
        np.testing.assert_array_equal(out, own[offset:offset + x.size])
        got = gpuprim.distributed_scan(x, op, comm=WORLD, exclusive=exclusive, dtype=x.dtype)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, own[offset:offset + x.size])


@needs_mpi
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_float_sum(dtype, exclusive):
    """Float sums: close to the exact prefix sums (each rank's scan starts
    from the sum of the ranks before it), and the same bits run to run."""
    for shift in range(4):
        x = rng_for("fscan", dtype, exclusive, shift).standard_normal(local_size(shift)).astype(dtype)
        whole, offset = gathered(x)
        exact = np.cumsum(whole.astype(np.float64))
        scale = np.cumsum(np.abs(whole.astype(np.float64)))
        if exclusive:
            exact, scale = _exclusive(exact, 0.0), _exclusive(scale, 0.0)
        mine = slice(offset, offset + x.size)
        got = gpuprim.distributed_scan(x, comm=WORLD, exclusive=exclusive)
        tolerance = 4 * whole.size * np.finfo(dtype).eps * scale[mine] + 1e-30
        assert np.all(np.abs(got - exact[mine]) <= tolerance), f"shift {shift}"
        assert_same_bits(gpuprim.distributed_scan(x, comm=WORLD, exclusive=exclusive), got)


@needs_mpi
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_scan_float_min_max(dtype, op):
    x = specials(dtype, local_size(2), rng_for("fminmax", dtype, op))
    with np.errstate(invalid="ignore"):
        x[x == 0] = 1  # the sign of zero: test_reduce_signed_zero
    whole, offset = gathered(x)
    ufunc = np.minimum if op == "min" else np.maximum
    with np.errstate(invalid="ignore"):
        expected = ufunc.accumulate(whole.astype(np.float64)) if whole.size else whole
    got = gpuprim.distributed_scan(x, op, comm=WORLD)
    np.testing.assert_array_equal(got.astype(np.float64), expected[offset:offset + x.size])


# -- reduce --------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(dtype):
    for shift in range(len(SIZES)):
        x = specials(dtype, local_size(shift), rng_for("reduce", dtype, shift))
        whole, _ = gathered(x)
        got_min = gpuprim.distributed_reduce(x, "min", comm=WORLD)
        got_max = gpuprim.distributed_reduce(x, "max", comm=WORLD)
        assert isinstance(got_min, np.generic) and got_min.dtype == x.dtype
        assert all_ranks_agree(got_min) and all_ranks_agree(got_max)
        if is_float(x.dtype):
            if not whole.size:
                assert got_min == np.inf and got_max == -np.inf
            elif np.isnan(whole).any():
                assert np.isnan(got_min) and np.isnan(got_max)
            else:
                assert got_min == whole.min() and got_max == whole.max()
        else:
            info = np.iinfo(dtype)
            assert got_min == (whole.min() if whole.size else info.max)
            assert got_max == (whole.max() if whole.size else info.min)
            total = gpuprim.distributed_reduce(x, comm=WORLD)  # narrower integers widened
            assert total.dtype == numpy_sum_dtype(x.dtype) and total == np.sum(whole)
            with np.errstate(over="ignore"):
                total = gpuprim.distributed_reduce(x, comm=WORLD, dtype=x.dtype)
                assert total.dtype == x.dtype and total == np.sum(whole, dtype=whole.dtype)


@needs_mpi
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduce_float_sum(dtype):
    """Close to the exact sum, the same bits on every rank and run to run."""
    for shift in range(len(SIZES)):
        x = rng_for("fsum", dtype, shift).standard_normal(local_size(shift)).astype(dtype)
        whole, _ = gathered(x)
        total = gpuprim.distributed_reduce(x, comm=WORLD)
        assert isinstance(total, np.generic) and total.dtype == x.dtype
        exact = math.fsum(whole.astype(np.float64))
        assert abs(float(total) - exact) <= \
            whole.size * np.finfo(dtype).eps * float(np.abs(whole.astype(np.float64)).sum()) + 1e-30
        assert all_ranks_agree(total)
        assert_same_bits(np.array([gpuprim.distributed_reduce(x, comm=WORLD)]), np.array([total]))


@needs_mpi
def test_reduce_any_shape():
    x = np.full((3, 4), RANK + 1, np.int64)
    assert gpuprim.distributed_reduce(x, comm=WORLD) == 12 * RANKS * (RANKS + 1) // 2


# -- one rank: a distributed call on a one-rank communicator is the one-rank call

@needs_mpi
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_one_rank_equals_local_call(dtype):
    """MPI.COMM_SELF (and MPI.COMM_WORLD of a one-rank run): every result,
    float sums and the sign of zero included, bit for bit the local call's."""
    comms = [MPI.COMM_SELF] + ([WORLD] if RANKS == 1 else [])
    for n in (0, 1, 1000, 4097):
        x = specials(dtype, n, rng_for("self", dtype, n))
        if is_half(dtype):
            sums = (rng_for("self-sum", dtype, n).standard_normal(n) * 4).astype(dtype_of(dtype))
        elif is_float(x.dtype):
            sums = rng_for("self-sum", dtype, n).standard_normal(n).astype(dtype)
        else:
            sums = x
        values = np.arange(n, dtype=np.uint32)
        for comm in comms:
            for descending in (False, True):
                assert_same_bits(gpuprim.distributed_sort(x, comm=comm, descending=descending),
                                 gpuprim.sort(x, descending=descending))
                k, v = gpuprim.distributed_sort(x, comm=comm, values=values, descending=descending)
                k1, v1 = gpuprim.sort(x, values=values, descending=descending)
                assert_same_bits(k, k1)
                np.testing.assert_array_equal(v, v1)
                np.testing.assert_array_equal(
                    gpuprim.distributed_argsort(x, comm=comm, descending=descending),
                    gpuprim.argsort(x, descending=descending))
                for k in sorted({min(1, n), n // 2, n, 0}):
                    got = gpuprim.distributed_topk(x, k, comm=comm, largest=descending)
                    want = gpuprim.topk(x, k, largest=descending)
                    assert_same_bits(got[0], want[0])
                    np.testing.assert_array_equal(got[1], want[1])
            for op, local in (("sum", gpuprim.sum), ("min", gpuprim.min), ("max", gpuprim.max)):
                data = sums if op == "sum" else x
                assert_same_bits(np.array([gpuprim.distributed_reduce(data, op, comm=comm)]),
                                 np.array([local(data)]), f"{op} n={n}")
                for exclusive in (False, True):
                    assert_same_bits(gpuprim.distributed_scan(data, op, comm=comm, exclusive=exclusive),
                                     gpuprim.scan(data, op, exclusive=exclusive), f"scan {op} n={n}")


@needs_mpi
def test_one_rank_signed_zero():
    """One rank's result is the local call's, the sign of zero included:
    combining the ranks' results (one here) or starting a scan from the
    carry of the ranks before (none here) adds no identity element."""
    for comm in [MPI.COMM_SELF] + ([WORLD] if RANKS == 1 else []):
        for x in (np.array([-0.0, -0.0]), np.array([-0.0]), np.array([0.0, -0.0]),
                  np.array([-0.0, 0.0], np.float32)):
            for op in ("sum", "min", "max"):
                assert_same_bits(np.array([gpuprim.distributed_reduce(x, op, comm=comm)]),
                                 np.array([getattr(gpuprim, op)(x)]), f"{op} {x}")
                for exclusive in (False, True):
                    assert_same_bits(gpuprim.distributed_scan(x, op, comm=comm, exclusive=exclusive),
                                     gpuprim.scan(x, op, exclusive=exclusive), f"scan {op} {x}")


# -- agreement: one rank's bad argument fails the call on every rank ------------

@needs_mpi
def test_bad_argument_on_one_rank_fails_every_rank():
    """Rank 0's bit range is past its keys' bits (the library's check): every
    rank raises, the others naming rank 0; afterwards the ranks still line up."""
    keys = np.arange(10, dtype=np.int32)
    error = raised(lambda: gpuprim.distributed_sort(keys, comm=WORLD, end_bit=40 if RANK == 0 else None))
    after = gpuprim.distributed_sort(keys, comm=WORLD)
    whole, offset = gathered(keys)
    assert isinstance(error, gpuprim.InvalidArgumentError), error
    assert error.status_name == "INVALID_ARGUMENT"
    if RANK != 0:
        assert "rank 0" in str(error)
    np.testing.assert_array_equal(after, np.sort(whole, kind="stable")[offset:offset + keys.size])


@needs_mpi
def test_package_refusal_on_one_rank_fails_every_rank():
    """Rank 0's out has the wrong size, which the package refuses before the
    library sees it: rank 0 still joins the call (the library refuses its
    NULL operands), so the others fail instead of waiting for it."""
    x = np.arange(10, dtype=np.float32)
    out = np.empty(9 if RANK == 0 else 10, np.float32)
    error = raised(lambda: gpuprim.distributed_sort(x, comm=WORLD, out=out))
    total = gpuprim.distributed_reduce(x, comm=WORLD)
    if RANK == 0:
        assert isinstance(error, ValueError) and "has 9 elements" in str(error), error
    else:
        assert isinstance(error, gpuprim.GpuprimError), error
    assert total == 45 * RANKS


@needs_mpi
def test_bool_arrays():
    """bools as on one rank: sorted and top-k as bools, counted in int64 by
    sums, min/max bools (True / False where there is nothing)."""
    for shift in range(3):
        x = rng_for("bool", shift).random(local_size(shift)) < 0.3
        whole, offset = gathered(x)
        got = gpuprim.distributed_sort(x, comm=WORLD)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, np.sort(whole)[offset:offset + x.size])
        total = gpuprim.distributed_reduce(x, comm=WORLD)
        assert total.dtype == np.int64 and total == np.count_nonzero(whole)
        low = gpuprim.distributed_reduce(x, "min", comm=WORLD)
        assert type(low) is np.bool_ and low == (whole.min() if whole.size else True)
        counts = gpuprim.distributed_scan(x, comm=WORLD)
        assert counts.dtype == np.int64
        np.testing.assert_array_equal(counts, np.cumsum(whole)[offset:offset + x.size])
        firsts = gpuprim.distributed_scan(x, "min", comm=WORLD, exclusive=True)
        assert firsts.dtype == np.bool_ and (firsts.view(np.uint8) <= 1).all()
        k = min(whole.size, 5)
        values, indices = gpuprim.distributed_topk(x, k, comm=WORLD)
        np.testing.assert_array_equal(indices, sort_permutation(whole, descending=True)[:k])
        assert values.dtype == np.bool_


@needs_mpi
def test_masked_arrays_are_refused_on_every_rank():
    x = np.ma.masked_array(np.arange(5, dtype=np.int32), mask=[0, 1, 0, 0, 0])
    errors = [raised(lambda: gpuprim.distributed_sort(x, comm=WORLD)),
              raised(lambda: gpuprim.distributed_reduce(x, comm=WORLD)),
              raised(lambda: gpuprim.distributed_topk(x.filled(0), 2, comm=WORLD)),
              raised(lambda: gpuprim.distributed_scan(x.filled(0), comm=WORLD, out=x))]
    assert errors[2] is None
    for error in errors[:2] + errors[3:]:
        assert isinstance(error, TypeError) and "masked arrays are not supported" in str(error), error
    assert gpuprim.distributed_reduce(x.filled(0), comm=WORLD) == 9 * RANKS  # the ranks line up


@needs_mpi
def test_arguments_that_differ_across_ranks_fail_everywhere():
    x = np.arange(local_size(0), dtype=np.int64)
    if RANKS == 1:
        pytest.skip("needs more than one rank (mpirun -np 2 or more)")
    errors = [raised(lambda: gpuprim.distributed_sort(x, comm=WORLD, descending=RANK == 1)),
              raised(lambda: gpuprim.distributed_topk(x, 1 if RANK == 0 else 0, comm=WORLD)),
              raised(lambda: gpuprim.distributed_sort(x.astype(np.int32) if RANK == 0 else x,
                                                      comm=WORLD))]
    for error in errors:
        assert isinstance(error, gpuprim.InvalidArgumentError), error


def test_nccl_communicator_objects_are_recognized():
    """CuPy's NcclCommunicator (its class lives in cupy_backends.cuda.libs.nccl,
    as a run on two GPUs showed) and nccl4py's Communicator give their
    ncclComm_t; no GPU needed to check it."""
    from gpuprim import _core, _lib

    def made_in(module, **attributes):
        cls = type("Communicator", (), dict(attributes))
        cls.__module__ = module
        return cls()

    cupy_comm = made_in("cupy_backends.cuda.libs.nccl", comm=0x1234)
    assert _core._communicator_handle(cupy_comm, None) == (_lib.COMM_NCCL, 0x1234)
    nccl4py_comm = made_in("nccl.core", ptr=0x5678)
    assert _core._communicator_handle(nccl4py_comm, None) == (_lib.COMM_NCCL, 0x5678)
    with pytest.raises(TypeError, match="comm must be"):
        _core._communicator_handle(made_in("somewhere.else"), None)
