# SPDX-License-Identifier: Apache-2.0
"""The examples in the docstrings of the package's public functions: every
function has at least one, and each runs as written and prints what its
docstring shows (doctest, numpy arrays on the CPU backend). The MPI ones
run with mpi4py and a library built with the distributed calls (on one
rank). The torch ones (CUDA tensors) are shown, not run: they have not yet
run on a GPU machine."""
import doctest
import importlib.util
import inspect

import numpy as np
import pytest

import gpuprim


def public_functions():
    return [name for name in gpuprim.__all__
            if callable(getattr(gpuprim, name)) and not inspect.isclass(getattr(gpuprim, name))]


def distributed_available():
    return gpuprim.has_distributed() and importlib.util.find_spec("mpi4py") is not None


def examples_of(name):
    """The docstring's examples, and those of them that run here (not the
    torch ones; the MPI ones where the distributed calls can run)."""
    docstring = getattr(gpuprim, name).__doc__ or ""
    examples = doctest.DocTestParser().get_examples(docstring)
    # One naming torch does not run (see above); one naming MPI (mpi4py, or
    # a comment saying it needs a library built with it) runs only where
    # the distributed calls can.
    distributed = distributed_available()
    kept = [e for e in examples if "torch" not in e.source and (distributed or "MPI" not in e.source)]
    return examples, kept


@pytest.mark.parametrize("name", public_functions())
def test_every_public_function_has_an_example(name):
    examples, _ = examples_of(name)
    assert examples, f"gpuprim.{name}'s docstring has no '>>>' example"


@pytest.mark.parametrize("name", public_functions())
def test_the_examples_print_what_they_show(name):
    _, kept = examples_of(name)
    if not kept:
        pytest.skip(f"gpuprim.{name}'s examples need the distributed calls")
    test = doctest.DocTest(kept, {"gpuprim": gpuprim, "np": np}, f"gpuprim.{name}", None, 0, None)
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
