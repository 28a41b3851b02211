"""A stand-in for PyTorch, in numpy, for CI machines without torch (tests/e2e/modules.sh puts
tests/fake_torch on PYTHONPATH). It implements only what tools/reference.py and the test modules
under tests/data/modules/ use, with PyTorch's names and semantics; it is not PyTorch. CPU only:
torch.cuda.is_available() is False and .cuda() fails like a CPU-only build of torch does.

For the reference process's prepare op (tests/e2e/module_prepare.sh), FAKE_TORCH_CUDA=FREE_MIB
pretends one CUDA device with that much free memory: tensors move "to the GPU" (they stay numpy
arrays; results of operations do not track the device), storages share themselves with a made-up 64-byte handle in torch's versioned form
(FAKE_TORCH_IPC=raw: the bare 64 bytes; =expandable: an expandable segment's; =fail: sharing
raises as where CUDA IPC is unsupported), and with FAKE_TORCH_IPC_DIR each shared array is
saved there as HANDLEHEX.npy so that a test can read what a runner would. CUDA events time with
the host clock; torch.compile returns the module (FAKE_TORCH_COMPILE_FAIL=1: it raises)."""
import builtins as _b
import math as _math
import os as _os
import time as _time

import numpy as _np

__version__ = "0.0+cutegen-fake-numpy"


class dtype:
    def __init__(self, name, np_type, size, floating):
        self.name, self.np, self.itemsize, self.is_floating_point = name, np_type, size, floating

    def __repr__(self):
        return "torch." + self.name


float32 = dtype("float32", _np.float32, 4, True)
float16 = dtype("float16", _np.float16, 2, True)
float64 = dtype("float64", _np.float64, 8, True)
bfloat16 = dtype("bfloat16", _np.float32, 2, True)  # stored as float32: no bf16 in numpy
int64 = dtype("int64", _np.int64, 8, False)
int32 = dtype("int32", _np.int32, 4, False)
bool = dtype("bool", _np.bool_, 1, False)  # noqa: A001
complex64 = dtype("complex64", _np.complex64, 8, False)
float = float32  # noqa: A001
double = float64
half = float16
_BY_NP = {_np.dtype(_np.float32): float32, _np.dtype(_np.float16): float16,
          _np.dtype(_np.float64): float64, _np.dtype(_np.int64): int64,
          _np.dtype(_np.int32): int32, _np.dtype(_np.bool_): bool,
          _np.dtype(_np.complex64): complex64}


class Size(tuple):
    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def _arr(x):
    return x.a if isinstance(x, Tensor) else x


def _fake_cuda():
    return _b.bool(_os.environ.get("FAKE_TORCH_CUDA"))


class _Storage:
    def __init__(self, t):
        self.t = t

    def data_ptr(self):
        return self.t.a.__array_interface__["data"][0] if self.t.a.size else 0

    def _share_cuda_(self):
        mode = _os.environ.get("FAKE_TORCH_IPC", "")
        if mode == "fail":
            raise RuntimeError("CUDA error: operation not supported (fake torch: no CUDA IPC)")
        base = self.t.a.base if self.t.a.base is not None else self.t.a
        key = "%016x" % (id(base) & 0xFFFFFFFFFFFFFFFF)
        raw = bytes.fromhex(key * 8)
        d = _os.environ.get("FAKE_TORCH_IPC_DIR")
        if d:
            _np.save(_os.path.join(d, raw.hex() + ".npy"), _np.ascontiguousarray(self.t.a))
        h = {"raw": raw, "expandable": b"\x02e" + raw}.get(mode, b"\x02c" + raw)
        return (0, h, self.t.a.nbytes, 0, b"/fake_ref_counter", 0, b"\0" * 64, False)


class Tensor:
    def __init__(self, a, dt=None):
        a = _np.asarray(a)
        self.dtype = dt or _BY_NP.get(a.dtype, float32)
        self.a = a.astype(self.dtype.np, copy=False)
        self.device = "cpu"
        self._version = 0

    def _on(self, device):
        self.device = device
        return self

    def is_contiguous(self):
        return _b.bool(self.a.flags.c_contiguous)

    def data_ptr(self):
        return self.a.__array_interface__["data"][0] if self.a.size else 0

    def storage_offset(self):
        return 0

    def untyped_storage(self):
        return _Storage(self)

    def detach(self):
        return self

    def clone(self):
        return Tensor(self.a.copy(), self.dtype)._on(self.device)

    def copy_(self, src):
        self.a[...] = src.a
        self._version += 1
        return self

    def mul_(self, s):
        self.a *= _arr(s)
        self._version += 1
        return self

    def zero_(self):
        self.a[...] = 0
        self._version += 1
        return self

    shape = property(lambda self: Size(self.a.shape))
    ndim = property(lambda self: self.a.ndim)
    T = property(lambda self: Tensor(self.a.T, self.dtype))

    def size(self, d=None):
        return self.shape if d is None else self.a.shape[d]

    def dim(self):
        return self.a.ndim

    def numel(self):
        return int(self.a.size)

    def element_size(self):
        return self.dtype.itemsize

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def to(self, *args, **kw):
        t = self
        for x in list(args) + [v for k, v in kw.items() if k != "copy"]:
            if isinstance(x, dtype):
                if x is not t.dtype or kw.get("copy"):
                    t = Tensor(t.a.astype(x.np), x)._on(self.device)
            elif str(x).startswith("cuda"):
                if not _fake_cuda():
                    _no_cuda()
                if t.device != "cuda":
                    t = Tensor(t.a.copy(), t.dtype)._on("cuda")
        return t

    def cuda(self, *a, **k):
        _no_cuda()

    def cpu(self):
        return self

    def float(self):
        return self.to(float32)

    def double(self):
        return self.to(float64)

    def item(self):
        return self.a.item()

    def tolist(self):
        return self.a.tolist()

    def numpy(self):
        return self.a

    def abs(self):
        return Tensor(_np.abs(self.a), self.dtype)

    def max(self):
        return Tensor(self.a.max())

    def any(self):
        return Tensor(self.a.any())

    __and__ = lambda s, o: Tensor(s.a & _arr(o))

    def sum(self, dim=None):
        return Tensor(self.a.sum(axis=dim), self.dtype if dim is not None else None)

    def mean(self, dim=None):
        return Tensor(self.a.mean(axis=dim), self.dtype)

    def transpose(self, d0, d1):
        return Tensor(_np.swapaxes(self.a, d0, d1), self.dtype)

    def t(self):
        return self.T

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(_np.ascontiguousarray(self.a), self.dtype)._on(self.device)

    def view(self, *shape):
        return Tensor(self.a.reshape(*shape), self.dtype)

    reshape = view

    def unsqueeze(self, d):
        return Tensor(_np.expand_dims(self.a, d), self.dtype)

    def __getitem__(self, i):
        return Tensor(self.a[i], self.dtype)

    def _bin(self, o, f):
        r = f(self.a, _arr(o))
        if self.dtype.is_floating_point or not isinstance(o, _b.float):
            return Tensor(r, self.dtype)
        return Tensor(r, float32)

    __add__ = lambda s, o: s._bin(o, _np.add)
    __radd__ = __add__
    __sub__ = lambda s, o: s._bin(o, _np.subtract)
    __rsub__ = lambda s, o: s._bin(o, lambda a, b: b - a)
    __mul__ = lambda s, o: s._bin(o, _np.multiply)
    __rmul__ = __mul__
    __truediv__ = lambda s, o: s._bin(o, _np.true_divide)
    __rtruediv__ = lambda s, o: s._bin(o, lambda a, b: b / a)
    __pow__ = lambda s, o: s._bin(o, _np.power)
    __matmul__ = lambda s, o: matmul(s, o)
    __neg__ = lambda s: Tensor(-s.a, s.dtype)
    __ne__ = lambda s, o: Tensor(s.a != _arr(o))
    __eq__ = lambda s, o: Tensor(s.a == _arr(o))
    __gt__ = lambda s, o: Tensor(s.a > _arr(o))
    __lt__ = lambda s, o: Tensor(s.a < _arr(o))
    __hash__ = object.__hash__

    def __repr__(self):
        return "tensor(%r, dtype=%r)" % (self.a, self.dtype)


def _no_cuda():
    raise AssertionError("Torch not compiled with CUDA enabled")


class _Props:
    L2_cache_size = 1 << 16


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = _time.perf_counter()

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


class _Memory:
    @staticmethod
    def _set_allocator_settings(s):
        pass


class _Cuda:
    Event = _Event
    memory = _Memory()

    class OutOfMemoryError(RuntimeError):
        pass

    @staticmethod
    def is_available():
        return _fake_cuda()

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def device_count():
        return 1 if _fake_cuda() else 0

    @staticmethod
    def set_device(d):
        pass

    @staticmethod
    def empty_cache():
        pass

    @staticmethod
    def mem_get_info():
        free = int(_b.float(_os.environ.get("FAKE_TORCH_CUDA", "0")) * (1 << 20))
        return free, 80 << 30

    @staticmethod
    def get_device_properties(d):
        return _Props()


cuda = _Cuda()


class _Flags:
    allow_tf32 = True


class backends:
    class cuda:
        matmul = _Flags()
    cudnn = _Flags()


class Generator:
    def __init__(self, device="cpu"):
        self.rng = _np.random.default_rng(0)

    def manual_seed(self, s):
        self.rng = _np.random.default_rng(int(s))
        return self


def compile(model, mode="default"):  # noqa: A001
    if _os.environ.get("FAKE_TORCH_COMPILE_FAIL"):
        raise RuntimeError("BackendCompilerFailed: fake torch has no Triton")
    return model
_rng = [_np.random.default_rng(0)]


def manual_seed(s):
    _rng[0] = _np.random.default_rng(int(s))


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def randn(*shape, dtype=None, device=None, generator=None):
    if device and str(device).startswith("cuda") and not _fake_cuda():
        _no_cuda()
    d = dtype or float32
    rng = generator.rng if generator is not None else _rng[0]
    return Tensor(rng.standard_normal(_shape(shape)).astype(d.np), d)._on(str(device or "cpu"))


def empty(*shape, dtype=None, device=None):
    d = dtype or float32
    return Tensor(_np.zeros(_shape(shape), d.np), d)._on(str(device or "cpu"))


def rand(*shape, dtype=None, device=None):
    if device and str(device).startswith("cuda"):
        _no_cuda()
    d = dtype or float32
    return Tensor(_rng[0].random(_shape(shape)).astype(d.np), d)


def randint(low, high, size, dtype=None):
    return Tensor(_rng[0].integers(low, high, size), int64)


def zeros(*shape, dtype=None, device=None):
    d = dtype or float32
    return Tensor(_np.zeros(_shape(shape), d.np), d)


def ones(*shape, dtype=None, device=None):
    d = dtype or float32
    return Tensor(_np.ones(_shape(shape), d.np), d)


def tensor(x, dtype=None):
    return Tensor(_np.asarray(x), dtype)


def _u(f):
    return lambda x, *a, **k: Tensor(f(x.a, *a, **k), x.dtype)


def matmul(a, b):
    return Tensor(_np.matmul(a.a, b.a), a.dtype)


bmm = mm = matmul


def einsum(eq, *ts):
    return Tensor(_np.einsum(eq, *[t.a for t in ts]), ts[0].dtype)


def diag(x):
    return Tensor(_np.diag(x.a), x.dtype)


def triu(x, diagonal=0):
    return Tensor(_np.triu(x.a, diagonal), x.dtype)


def tril(x, diagonal=0):
    return Tensor(_np.tril(x.a, diagonal), x.dtype)


def _softmax(a, dim=-1):
    e = _np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(a, dim=-1):
    m = a.max(axis=dim, keepdims=True)
    return a - m - _np.log(_np.exp(a - m).sum(axis=dim, keepdims=True))


softmax = _u(_softmax)
log_softmax = _u(_log_softmax)
relu = _u(lambda a: _np.maximum(a, 0))
sigmoid = _u(lambda a: 1 / (1 + _np.exp(-a)))
tanh = _u(_np.tanh)
exp = _u(_np.exp)
log = _u(_np.log)
abs = _u(_np.abs)  # noqa: A001
sqrt = _u(_np.sqrt)
selu = _u(lambda a: 1.0507009873554804934193349852946 * _np.where(
    a > 0, a, 1.6732632423543772848170429916717 * (_np.exp(a) - 1)))


def equal(a, b):
    return _b.bool(a.a.shape == b.a.shape and _np.array_equal(a.a, b.a))


def isnan(x):
    return Tensor(_np.isnan(x.a))


def isfinite(x):
    return Tensor(_np.isfinite(x.a))


def where(c, a, b):
    return Tensor(_np.where(c.a, _arr(a), _arr(b)), a.dtype)


def zeros_like(x):
    return Tensor(_np.zeros_like(x.a), x.dtype)


def randn_like(x):
    return randn(*x.a.shape, dtype=x.dtype)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return Tensor(_np.nan_to_num(x.a, nan=nan, posinf=posinf, neginf=neginf), x.dtype)


def pow(x, p):  # noqa: A001
    return Tensor(_np.power(x.a, p), x.dtype)


def sum(x, dim=None):  # noqa: A001
    return x.sum(dim)


def cat(ts, dim=0):
    return Tensor(_np.concatenate([t.a for t in ts], axis=dim), ts[0].dtype)


class no_grad:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __call__(self, f):
        return f


from . import nn  # noqa: E402,F401
