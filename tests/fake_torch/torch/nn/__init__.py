"""torch.nn of the numpy stand-in (tests/fake_torch/torch/__init__.py says what it is for)."""
import collections
import math

import torch as _t

from . import functional  # noqa: F401


class Parameter(_t.Tensor):
    def __init__(self, data, requires_grad=True):
        _t.Tensor.__init__(self, data.a, data.dtype)


class Module:
    def __init__(self):
        object.__setattr__(self, "_params", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, v):
        if "_params" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        if isinstance(v, Parameter):
            self._params[name] = v
        elif isinstance(v, Module):
            self._modules[name] = v
        object.__setattr__(self, name, v)

    def register_buffer(self, name, t, persistent=True):
        self._buffers[name] = t
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)
        object.__setattr__(self, name, t)

    def named_modules(self, prefix=""):
        yield prefix.rstrip("."), self
        for mn, m in self._modules.items():
            yield from m.named_modules(prefix + mn + ".")

    def __call__(self, *a, **k):
        return self.forward(*a, **k)

    def named_parameters(self, prefix=""):
        for n, p in self._params.items():
            yield prefix + n, p
        for mn, m in self._modules.items():
            yield from m.named_parameters(prefix + mn + ".")

    def named_buffers(self, prefix=""):
        for n, b in self._buffers.items():
            yield prefix + n, b
        for mn, m in self._modules.items():
            yield from m.named_buffers(prefix + mn + ".")

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def state_dict(self, prefix=""):
        d = collections.OrderedDict()
        for n, p in self._params.items():
            d[prefix + n] = p
        for n, b in self._buffers.items():
            if n not in self.__dict__.get("_non_persistent", ()):
                d[prefix + n] = b
        for mn, m in self._modules.items():
            d.update(m.state_dict(prefix + mn + "."))
        return d

    def load_state_dict(self, sd):
        mine = self.state_dict()
        if list(mine) != list(sd):
            raise RuntimeError("Error(s) in loading state_dict: keys %s, got %s" % (list(mine), list(sd)))
        for k, v in sd.items():
            mine[k].a[...] = v.a

    def _apply(self, fn):
        for d in (self._params, self._buffers):
            for n, v in list(d.items()):
                if v is None:
                    continue
                nv = fn(v)
                if isinstance(v, Parameter) and not isinstance(nv, Parameter):
                    nv = Parameter(nv)._on(nv.device)
                d[n] = nv
                object.__setattr__(self, n, nv)
        for m in self._modules.values():
            m._apply(fn)
        return self

    def to(self, *a, **k):
        for x in list(a) + list(k.values()):
            if str(x).startswith("cuda"):
                if not _t._fake_cuda():
                    _t._no_cuda()
                return self._apply(lambda v: v.to("cuda"))
        return self

    def double(self):
        return self._apply(lambda v: v.to(_t.float64) if v.is_floating_point() else v)

    def float(self):
        return self._apply(lambda v: v.to(_t.float32) if v.is_floating_point() else v)

    def cuda(self):
        _t._no_cuda()

    def train(self, mode=True):
        object.__setattr__(self, "training", bool(mode))
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        Module.__init__(self)
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter((_t.rand(out_features, in_features) * 2 - 1) * bound)
        self.bias = Parameter((_t.rand(out_features) * 2 - 1) * bound) if bias else None

    def forward(self, x):
        return functional.linear(x, self.weight, self.bias)


class ReLU(Module):
    def forward(self, x):
        return _t.relu(x)


class _DropoutNd(Module):
    def __init__(self, p=0.5):
        Module.__init__(self)
        object.__setattr__(self, "p", p)


class Dropout(_DropoutNd):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = _t.rand(*x.shape) > self.p
        return _t.where(keep, x * (1.0 / (1 - self.p)), _t.zeros_like(x))
