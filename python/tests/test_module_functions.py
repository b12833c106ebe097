# SPDX-License-Identifier: Apache-2.0
"""The module-level functions made from Context methods
(gpuprim._module_function): the method's parameters, defaults, kinds and
docstring without self, run on the context the first argument picks."""
import inspect

import numpy as np
import pytest

import gpuprim
from gpuprim import Context

# The module functions written out rather than made from their Context
# method: the common path of the compiled layer (sort, argsort, topk, sum,
# min, max, and cumsum, segment_cumsum through scan), and the distributed
# calls (a communicator, no context to pick).
WRITTEN_OUT = {"sort", "argsort", "topk", "cumsum", "sum", "min", "max", "segment_cumsum", "distributed_reduce",
               "distributed_scan", "distributed_sort", "distributed_argsort", "distributed_topk"}
# Every other public function named like a Context method is that method made
# a module function (so a new one needs no line here).
FORWARDED = sorted(name for name in gpuprim.__all__ if hasattr(Context, name) and name not in WRITTEN_OUT)


@pytest.mark.parametrize("name", FORWARDED)
def test_signature_and_docstring_are_the_methods(name):
    function, method = getattr(gpuprim, name), getattr(Context, name)
    assert function.__wrapped__ is method
    assert function.__name__ == name and function.__module__ == "gpuprim"
    assert function.__doc__ == method.__doc__ and function.__doc__
    method_parameters = list(inspect.signature(method).parameters.values())[1:]
    assert list(inspect.signature(function).parameters.values()) == method_parameters
    # The compiled function itself takes the same parameters (kinds and defaults), not *args.
    code = function.__code__
    assert code.co_argcount + code.co_kwonlyargcount == len(method_parameters)
    assert code.co_posonlyargcount == sum(p.kind is p.POSITIONAL_ONLY for p in method_parameters)
    assert name in gpuprim.__all__


def test_the_forwarded_list_is_complete():
    made = {name for name in gpuprim.__all__
            if getattr(getattr(gpuprim, name), "__wrapped__", None) is getattr(Context, name, object())}
    assert made == set(FORWARDED) and len(made) >= 20  # the discovery found them (24 in 0.3.0)
    for name in WRITTEN_OUT:  # written out, still public, and still Context methods
        assert name in gpuprim.__all__ and hasattr(Context, name)


def test_results_are_the_methods_on_the_picked_context():
    x = np.array([5.0, -1.0, 3.0, 3.0, 0.5], dtype=np.float32)
    offsets = np.array([0, 2, 5])
    with Context("cpu") as context:
        assert gpuprim.argmin(x) == context.argmin(x) == 1
        np.testing.assert_array_equal(gpuprim.segment_sum(x, offsets), context.segment_sum(x, offsets))
        np.testing.assert_array_equal(gpuprim.unique(x), context.unique(x))
        counts, edges = gpuprim.histogram(x)  # the defaults: bins=10, range=None
        assert counts.shape == (10,) and counts.sum() == x.size and edges[0] == -1.0 and edges[-1] == 5.0
        for got, want in zip(gpuprim.groupby_sum(np.array([3, 1, 3]), np.array([1, 2, 4]), return_counts=True),
                             context.groupby_sum(np.array([3, 1, 3]), np.array([1, 2, 4]), return_counts=True)):
            np.testing.assert_array_equal(got, want)


def test_argument_rules_are_pythons():
    x = np.arange(6.0)
    offsets = np.array([0, 2, 6])
    # A first parameter that is not positional-only may come by name.
    np.testing.assert_array_equal(gpuprim.segment_sum(x=x, offsets=offsets), [1.0, 14.0])
    with pytest.raises(TypeError, match="positional"):
        gpuprim.segment_sum(offsets=offsets)
    with pytest.raises(TypeError, match="positional-only"):
        gpuprim.unique(x=x)
    with pytest.raises(TypeError, match="positional-only"):
        Context.unique(Context("cpu"), x=x)
    with pytest.raises(TypeError, match="unexpected keyword"):
        gpuprim.segment_sum(x, offsets, bogus=1)
    with pytest.raises(TypeError):
        gpuprim.searchsorted(x)  # v missing
    # The first argument names itself in the error of a non-array.
    with pytest.raises(TypeError, match="gpuprim: a is a builtins.list"):
        gpuprim.searchsorted([1, 2], x)


def test_star_arguments_are_refused():
    class Widened(Context):
        def spread(self, x, *rest):
            return x

    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs are not forwarded"):
        gpuprim._module_function(Widened.spread)
