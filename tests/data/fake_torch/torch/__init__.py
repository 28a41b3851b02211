"""A stand-in for PyTorch in tests/e2e/torch_compile.sh: enough of torch's API for
tools/torch_eager.py, on a fake clock. An eager op costs 1 ms of the clock, an op under
torch.compile 0.5 ms (0.25 ms in max-autotune); FAKE_TORCH_COMPILE_FAIL=1 makes torch.compile
raise, as it does without a working Triton. Not PyTorch: no arithmetic is done."""
import os

__version__ = "0.0-fake"
float32, float16, bfloat16 = "float32", "float16", "bfloat16"
_clock = [0.0]
_cost = [1.0]
compiled_calls = [0]


def _size(shape):
    n = 1
    for x in shape:
        n *= x
    return n


class _T:
    def __init__(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        self.shape = shape

    def _op(self, *a, **k):
        _clock[0] += _cost[0]
        return _T(*self.shape)

    transpose = unsqueeze = __mul__ = __rmul__ = __add__ = __radd__ = __truediv__ = _op

    # what the input generator uses (outside the timed calls): free on the fake clock
    def _same(self, *a, **k):
        return _T(*self.shape)

    __sub__ = __rsub__ = __lt__ = __eq__ = _same
    __hash__ = object.__hash__

    def numel(self):
        return _size(self.shape)

    def element_size(self):
        return 4

    def view(self, *shape):
        return _T(self.numel()) if shape == (-1,) else _T(*shape)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return _T(len(range(*k.indices(self.numel()))))
        return _T(*k.shape)

    def copy_(self, other):
        return self

    def zero_(self):
        return self


def _op(*a, **k):
    _clock[0] += _cost[0]
    return _T()


matmul = relu = sigmoid = tanh = softmax = log_softmax = triu = tril = selu = abs = pow = _op


def empty(*shape, **k):
    return _T(*shape)


def randn(*shape, **k):
    return _T(*shape)


rand = randn


def randint(high, size, **k):
    return _T(*size)


def tensor(values, **k):
    return _T(len(values))


def where(cond, a, b):
    return _T(*cond.shape)


def compile(fn, mode="default"):
    if os.environ.get("FAKE_TORCH_COMPILE_FAIL"):
        raise RuntimeError("BackendCompilerFailed: fake torch has no Triton")
    cost = 0.25 if mode == "max-autotune" else 0.5

    def run(*a, **k):
        compiled_calls[0] += 1
        saved, _cost[0] = _cost[0], cost
        try:
            return fn(*a, **k)
        finally:
            _cost[0] = saved
    return run


class _Props:
    L2_cache_size = 1 << 20


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = _clock[0]

    def elapsed_time(self, end):
        return end.t - self.t


class cuda:
    Event = _Event

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def set_device(d):
        pass

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_properties(d):
        return _Props()

    @staticmethod
    def mem_get_info():
        return (1 << 40, 1 << 40)


class _Flags:
    allow_tf32 = False


class backends:
    class cuda:
        matmul = _Flags()
    cudnn = _Flags()


from . import nn  # noqa: E402
