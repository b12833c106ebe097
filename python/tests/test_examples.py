# SPDX-License-Identifier: Apache-2.0
"""The examples in the docstrings of the package's public functions: every
function has at least one, and each runs as written and prints what its
docstring shows (doctest, numpy arrays on the CPU backend). The MPI ones
run with mpi4py and a library built with the distributed calls (on one
rank). The torch ones (CUDA tensors) run where torch has a CUDA device
(the GPU machine's python_package run); elsewhere they are shown, not
run."""
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


def torch_with_cuda():
    """torch where it is importable and has a CUDA device, else None."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch
    return torch if torch.cuda.is_available() else None


def examples_of(name):
    """The docstring's examples, and those of them that run here (the torch
    ones where torch has a CUDA device; the MPI ones where the distributed
    calls can run)."""
    docstring = getattr(gpuprim, name).__doc__ or ""
    examples = doctest.DocTestParser().get_examples(docstring)
    # One naming torch runs only on a CUDA device; one naming MPI (mpi4py,
    # or a comment saying it needs a library built with it) only where the
    # distributed calls can.
    cuda = torch_with_cuda() is not None
    distributed = distributed_available()
    kept = [e for e in examples
            if (cuda or "torch" not in e.source) and (distributed or "MPI" not in e.source)]
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
    names = {"gpuprim": gpuprim, "np": np}
    if torch_with_cuda() is not None:
        names["torch"] = torch_with_cuda()
    test = doctest.DocTest(kept, names, f"gpuprim.{name}", None, 0, None)
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def test_the_torch_examples_run_where_torch_has_a_cuda_device():
    if torch_with_cuda() is None:
        pytest.skip("torch with a CUDA device is not here: the torch examples are shown, not run")
    ran = [name for name in public_functions() if any("torch" in e.source for e in examples_of(name)[1])]
    assert ran, "no torch example ran"
