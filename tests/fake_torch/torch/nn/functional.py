"""torch.nn.functional of the numpy stand-in (tests/fake_torch/torch/__init__.py)."""
import math

import numpy as np

import torch as _t

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _f(fn):
    def g(x, *a, **k):
        return _t.Tensor(fn(x.a.astype(np.float64), *a, **k).astype(x.dtype.np), x.dtype)
    return g


relu = _f(lambda a: np.maximum(a, 0))
leaky_relu = _f(lambda a, negative_slope=0.01: np.where(a >= 0, a, a * negative_slope))
elu = _f(lambda a, alpha=1.0: np.where(a > 0, a, alpha * (np.exp(a) - 1)))
hardtanh = _f(lambda a, min_val=-1.0, max_val=1.0: np.clip(a, min_val, max_val))
hardsigmoid = _f(lambda a: np.clip(a / 6 + 0.5, 0, 1))
softsign = _f(lambda a: a / (1 + np.abs(a)))
softplus = _f(lambda a, beta=1.0, threshold=20.0: np.where(
    a * beta > threshold, a, np.log1p(np.exp(np.minimum(a * beta, threshold))) / beta))
silu = _f(lambda a: a / (1 + np.exp(-a)))


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    return 0.5 * a * (1 + _erf(a / math.sqrt(2)))


gelu = _f(_gelu)
softmax = lambda x, dim=-1: _t.softmax(x, dim)  # noqa: E731
log_softmax = lambda x, dim=-1: _t.log_softmax(x, dim)  # noqa: E731


def linear(x, w, b=None):
    y = _t.matmul(x, w.T)
    return y + b if b is not None else y
