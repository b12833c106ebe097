# SPDX-License-Identifier: Apache-2.0
"""A numpy stand-in for the little of PyTorch that test_gpu.py's checks use,
and for gpuprim on its tensors (the calls go to gpuprim on numpy arrays, CPU
backend): runs those tests' own code (shapes, references) where there is no
CUDA device or no torch, so a bug in a test shows before the GPU run."""
import types

import numpy as np

import gpuprim as _gpuprim
from reference import DTYPES

_rng = np.random.default_rng(11)


def _unwrap(value):
    return value.a if isinstance(value, Tensor) else value


def _wrap(value):
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return Tensor(np.asarray(value))


class Tensor:
    """A "CUDA tensor" over a numpy array; dtypes are numpy dtypes."""

    device = "cuda:0"
    is_cuda = True

    def __init__(self, array):
        self.a = array

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)

    def dim(self):
        return self.a.ndim

    def cuda(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a

    def view(self, dtype):
        return Tensor(self.a.view(dtype))

    def reshape(self, *shape):
        return Tensor(self.a.reshape(*shape))

    def to(self, dtype):
        return Tensor(self.a.astype(dtype))

    def double(self):
        return self.to(np.float64)

    def abs(self):
        return Tensor(np.abs(self.a))

    def sum(self, dim=None):
        return Tensor(np.asarray(self.a.sum(axis=dim)))

    def all(self):
        return Tensor(np.asarray(self.a.all()))

    def __bool__(self):
        return bool(self.a)

    def __int__(self):
        return int(self.a)

    def __float__(self):
        return float(self.a)

    def _binary(op):
        return lambda self, other: Tensor(np.asarray(op(self.a, _unwrap(other))))

    __add__ = __radd__ = _binary(lambda a, b: a + b)
    __mul__ = __rmul__ = _binary(lambda a, b: a * b)
    __sub__ = _binary(lambda a, b: a - b)
    __le__ = _binary(lambda a, b: a <= b)
    del _binary


torch = types.SimpleNamespace(
    Tensor=Tensor,
    from_numpy=Tensor,
    randn=lambda shape, device=None: Tensor(_rng.standard_normal(shape).astype(np.float32)),
    **{name: np.dtype(name) for name in DTYPES})


def _on_numpy(function):
    def call(*args, **kwargs):
        return _wrap(function(*[_unwrap(a) for a in args],
                              **{k: _unwrap(v) for k, v in kwargs.items()}))
    return call


gpuprim = types.SimpleNamespace(**{name: _on_numpy(getattr(_gpuprim, name))
                                   for name in _gpuprim.__all__ if name.islower()
                                   and callable(getattr(_gpuprim, name))})
