# SPDX-License-Identifier: Apache-2.0
"""gpuprim in processes forked after the parent used it (multiprocessing's
"fork" start method, the default on Linux before Python 3.14): the header's
fork rules. The parent starts the CPU engine's threads first; each child runs
sort, cumsum, sum and a segmented sort on the context it inherited (the
module functions' per-thread one) and on new contexts, checked against numpy;
a hang (GNU libgomp's pool does not survive fork()) fails at a timeout
instead of hanging. Linux only (fork is unsafe or missing elsewhere)."""
import multiprocessing
import sys

import numpy as np
import pytest

import gpuprim

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods(),
                       reason="fork start method: Linux only"),
    # Python 3.12+ warns when forking a process with threads (the engine's).
    pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning"),
]

N = (1 << 20) + 3
TIMEOUT = 60


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1000, size=N, dtype=np.uint32)  # sums stay below 2^32
    offsets = np.array([0, 5, 5, 70000, 400001, N - 1, N], dtype=np.int64)
    return x, offsets


def _problems(seed, context=None):
    """Every call on one context (None: the module functions), against numpy;
    the list of what differed."""
    x, offsets = _inputs(seed)
    run = context if context is not None else gpuprim
    problems = []
    if not np.array_equal(run.sort(x), np.sort(x, kind="stable")):
        problems.append("sort")
    if not np.array_equal(run.cumsum(x), np.cumsum(x, dtype=np.uint32)):
        problems.append("cumsum")
    if int(run.sum(x)) != int(x.sum(dtype=np.uint64)):
        problems.append("sum")
    expected = np.concatenate([np.sort(x[offsets[s]:offsets[s + 1]]) for s in range(offsets.size - 1)])
    if not np.array_equal(run.segment_sort(x, offsets), expected):
        problems.append("segment_sort")
    return problems


def _child(seed):
    """In a forked child: the inherited context, then new ones."""
    problems = [f"inherited: {p}" for p in _problems(seed)]
    for threads in (0, 4):
        with gpuprim.Context("cpu", cpu_threads=threads) as context:
            problems += [f"new context, cpu_threads={threads}: {p}" for p in _problems(seed, context)]
    return problems


def _child_exit_code(seed):
    sys.exit(1 if _child(seed) else 0)


def _parent_uses_the_library():
    assert _problems(1) == []
    with gpuprim.Context("cpu") as context:  # a context of its own, kept over the fork below
        assert _problems(2, context) == []


def test_pool_children_after_parent_use():
    _parent_uses_the_library()
    fork = multiprocessing.get_context("fork")
    with fork.Pool(2) as pool:
        try:
            results = pool.map_async(_child, [3, 4, 5]).get(timeout=TIMEOUT)
        except multiprocessing.TimeoutError:
            pytest.fail(f"a forked worker did not finish within {TIMEOUT} s (hung)")
    assert results == [[], [], []]
    assert _problems(6) == []  # the parent's context after the fork


def test_process_child_and_parent_context_after_fork():
    with gpuprim.Context("cpu") as context:
        assert _problems(7, context) == []
        child = multiprocessing.get_context("fork").Process(target=_child_exit_code, args=(8,))
        child.start()
        child.join(TIMEOUT)
        if child.is_alive():
            child.kill()
            child.join()
            pytest.fail(f"the forked child did not finish within {TIMEOUT} s (hung)")
        assert child.exitcode == 0
        assert _problems(9, context) == []  # the parent's own context still works
