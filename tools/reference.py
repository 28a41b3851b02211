#!/usr/bin/env python3
"""cutegen's reference process for module tasks (KernelBench format).

usage: reference.py        (cutegen runs it; requests on stdin, replies on stdout)

It never sees a candidate kernel: it imports the user's module file, builds the module and its
inputs with PyTorch, and answers requests about it. The protocol (docs/tasks.md, "The reference
process") is JSON lines:

  on start  -> {"hello": "cutegen-reference", "protocol": 1, "python": "3.11.7",
                "torch": "2.5.1" | null, "torch_error": "..." (when torch does not import)}
  {"op": "describe", "file": PATH, "seed": 42}
            -> {"ok": true, "describe": {...}}  or  {"ok": false, "kind": K, "message": M}
  {"op": "prepare", "file": PATH, "seed": 42, "device": 0, "cases": [{"seed", "dist"}, ...],
   "precision": P, "baselines": BOOL, "memory_fraction": 0.35}
            -> {"ok": true, "prepare": {"tensors", "truth", "cases": [{"inputs", "ref", "truth"}
                ...: CUDA IPC handles], "baselines", "notes"}}; the tensors stay alive until
  {"op": "release"} -> {"ok": true}, then exits 0
  {"op": "quit"} or end of input -> exits 0

The error kinds K: no_torch, import, no_model, no_get_inputs, no_get_init_inputs, init,
inputs, forward, output, gpu, request, and for prepare memory and ipc (docs/tasks.md, "The
reference process", says what each field means). The module's own prints go to stderr, never into the
replies (the reply channel is a private copy of stdout taken before anything is imported),
and the module reads an empty stdin (the requests come on a private copy of it).

prepare makes the judge's cases (inputs per seed and distribution, the reference in the
task's dtype, the float64 truth) and exports them over CUDA IPC to the runner; with baselines
it also times eager PyTorch and torch.compile (tools/torch_timing.py, pasted in below).
"""
import importlib.util
import inspect
import json
import math
import os
import sys
import traceback

#@embed tools/torch_timing.py
if "cuda_timing" not in globals():  # run from the repository: the helper beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_timing import compile_mode, cuda_timing, l2_flush_buffer

PROTOCOL = 1
DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
          "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
          "bool": "bool", "float8_e4m3fn": "fp8_e4m3"}
PRECISION_OF = {"fp32": "strict", "fp16": "fp16", "bf16": "bf16"}
# the activations of tasks/kb1.json with PyTorch's defaults, in the order they are tried
ACTS = ["relu", "leaky_relu", "sigmoid", "tanh", "swish", "gelu", "mingpt_gelu", "gelu_tanh",
        "selu", "hardsigmoid", "softplus", "softsign", "elu", "hardtanh"]
PROBE_NUMEL_MAX = 1 << 20   # probe with the real shapes up to this many elements per input
SMALL_DIMS = [5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43]


class Fail(Exception):
    def __init__(self, kind, message):
        Exception.__init__(self, message)
        self.kind = kind
        self.message = message


def dtype_name(dt):
    s = str(dt).replace("torch.", "")
    return DTYPES.get(s, s)


def is_tensor(torch, v):
    return isinstance(v, torch.Tensor)


def is_number(v):
    return isinstance(v, (int, float, bool)) and not isinstance(v, type(None))


def gpu_error(e):
    s = str(e)
    keys = ("CUDA", "cuda", "no kernel image", "not compiled with", "sm_", "compute capability",
            "not supported on this", "NCCL", "cudnn", "CUDNN")
    return any(k in s for k in keys)


def load_module(path):
    name = "cutegen_module_%d" % (abs(hash(path)) % 100000)
    try:
        d = os.path.dirname(os.path.abspath(path))
        if d not in sys.path:
            sys.path.insert(0, d)  # helpers beside the module file import as they would there
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise Fail("import", "'%s' is not a Python file python can import; a module task "
                       "is a .py file in KernelBench's format" % path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    except Fail:
        raise
    except SystemExit as e:
        raise Fail("import", "importing '%s' called exit(%s); a module file must only define "
                   "Model, get_inputs and get_init_inputs" % (path, e.code))
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        where = ""
        for fr in tb:
            if os.path.abspath(fr.filename) == os.path.abspath(path):
                where = " (line %d)" % fr.lineno
        raise Fail("gpu" if gpu_error(e) else "import",
                   "'%s' does not import%s: %s: %s; fix the file (python3 %s shows the full "
                   "traceback)" % (path, where, type(e).__name__, e, path))
    return mod


def call_user(kind, what, fn, *args):
    try:
        return fn(*args)
    except Fail:
        raise
    except BaseException as e:
        k = "gpu" if gpu_error(e) else kind
        hint = ("this machine lacks what it needs (a CUDA GPU, or a feature of one): run it "
                "where PyTorch sees such a GPU" if k == "gpu" else "fix the module file")
        raise Fail(k, "%s failed: %s: %s; %s" % (what, type(e).__name__, e, hint))


def tensor_info(torch, name, t, role=None, kind="inputs"):
    """name, shape and dtype of a tensor of the ABI; a dtype no kernel takes fails with kind."""
    dt = dtype_name(t.dtype)
    if dt not in DTYPES.values():
        raise Fail(kind,
                   "tensor '%s' is %s, which no kernel here takes (tensors are %s): convert it "
                   "in get_inputs() or in the module" % (name, dt, ", ".join(DTYPES.values())))
    if role is None and numel(t) == 0:  # forward's tensors and its outputs, not an empty buffer
        raise Fail(kind,
                   "tensor '%s' has no elements (shape %s): there is no work to time; give "
                   "get_inputs() tensors with elements" % (name, list(t.shape)))
    d = {"name": name, "shape": [int(s) for s in t.shape], "dtype": dt}
    if role:
        d["role"] = role
    return d


def forward_arg_names(model, n):
    try:
        sig = inspect.signature(model.forward)
        names = [p.name for p in sig.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        varargs = [p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL]
    except (TypeError, ValueError):
        names, varargs = [], []
    out = []
    for i in range(n):
        if i < len(names):
            out.append(names[i])
        elif varargs:
            out.append("%s%d" % (varargs[0], i - len(names)))
        else:
            out.append("in%d" % i)
    return out


def task_name(stem):
    """A built-in task's name for a module file's stem ("my model" -> "my_model"): 1-128 of
    letters, digits and _ - . + (src/common/task.c), not starting with '.'."""
    n = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-.+") else "_" for ch in stem)
    n = n.lstrip(".")[:128]
    return n or "module"


def abi_names(in_names, state_names, nout):
    """The labels of forward's tensors and of its outputs in the ABI's list, after the state's
    (state_dict names, kept: the exported ModelNew loads by them): forward's parameter names and
    out / out0, out1..., each made unique with a suffix (_1, _2...) where it would repeat a
    label before it (forward(self, x, out) of a module with a parameter x)."""
    taken = set(state_names)

    def unique(n):
        u, k = n, 1
        while u in taken:
            u, k = "%s_%d" % (n, k), k + 1
        taken.add(u)
        return u
    ins = [unique(n) for n in in_names]
    return ins, [unique("out" if nout == 1 else "out%d" % k) for k in range(nout)]


# what a module task's description may hold (the runner and the evaluator's checks of it,
# src/common/task_module.h): beyond them the module is refused here, saying which limit
MAX_TENSORS, MAX_SCALARS, MAX_DIMS = 256, 64, 8


def check_limits(tensors, scalars):
    if len(tensors) > MAX_TENSORS:
        raise Fail("inputs", "the kernel would receive %d tensors (forward's, the module's "
                   "parameters and buffers, and its outputs); a kernel takes at most %d: pass "
                   "fewer, larger tensors (torch.stack them in get_inputs())"
                   % (len(tensors), MAX_TENSORS))
    if len(scalars) > MAX_SCALARS:
        raise Fail("inputs", "the kernel would receive %d scalars (numbers among forward's and "
                   "__init__'s arguments); a kernel takes at most %d: pass them as a tensor"
                   % (len(scalars), MAX_SCALARS))
    for t in tensors:
        if len(t["shape"]) > MAX_DIMS:
            raise Fail("inputs", "tensor '%s' has %d dimensions (shape %s); a kernel takes at "
                       "most %d: reshape it" % (t["name"], len(t["shape"]), t["shape"], MAX_DIMS))
    for t in tensors + scalars:
        if any(ord(ch) < 0x20 for ch in t["name"]):
            raise Fail("inputs", "the name %r has a control character; rename the argument, "
                       "parameter or buffer" % t["name"])


def check_input_tensor(torch, i, name, v):
    """A tensor of get_inputs() a kernel can receive: dense, with data."""
    if getattr(v, "is_meta", False):
        raise Fail("inputs", "get_inputs() item %d ('%s') is a meta tensor (a shape without "
                   "data); return real tensors (torch.randn, torch.rand...)" % (i, name))
    layout = getattr(v, "layout", None)
    if layout is not None and layout != getattr(torch, "strided", layout):
        raise Fail("inputs", "get_inputs() item %d ('%s') is a %s tensor; kernels take dense "
                   "tensors: return it .to_dense()" % (i, name, str(layout).replace("torch.", "")))


def scalar_value(kind, where, i, name, v):
    """A number of forward's or __init__'s arguments as the float the kernel receives."""
    try:
        f = float(v)
    except OverflowError:
        raise Fail(kind, "%s item %d ('%s') is %s, too large for a scalar (a double); pass a "
                   "smaller number" % (where, i, name, str(v)[:40] + ("..." if len(str(v)) > 40 else "")))
    return f


def init_arg_names(cls, n):
    try:
        sig = inspect.signature(cls.__init__)
        names = [p.name for p in sig.parameters.values() if p.name != "self"
                 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else "init%d" % i for i in range(n)]


def numel(t):
    n = 1
    for s in t.shape:
        n *= int(s)
    return n


def element_size(t):
    return int(t.element_size())


# ---- lowering: is the whole forward one op of the built-in task model? ----

def small_shapes(shapes):
    """Maps each distinct dim size to a small distinct one, keeping equal sizes equal (so a
    matmul's K still matches) and 1 as 1."""
    sizes = sorted({d for s in shapes for d in s if d != 1})
    m = {d: SMALL_DIMS[i % len(SMALL_DIMS)] + 2 * (i // len(SMALL_DIMS)) for i, d in enumerate(sizes)}
    m[1] = 1
    return [[m[d] for d in s] for s in shapes], m


def derived_constants(torch, x, y):
    """Constants a one-input forward may hold in its code (x * 0.5, F.hardtanh(x, -2.0, 2.0),
    F.leaky_relu(x, 0.2)), estimated from its output y on its input x (a sample of 2^20
    elements): {"scale": c, "slope": s, "clamp": (lo, hi)}, each only where it can be
    estimated. They are candidates only: the probes decide, as for every other op."""
    out = {}
    try:
        xs = x.reshape(-1)[:1 << 20].double()
        ys = y.reshape(-1)[:1 << 20].double()
        ok = torch.isfinite(xs) & torch.isfinite(ys)
        xs, ys = xs[ok], ys[ok]
        if numel(xs) < 2:
            return out
        f32 = lambda v: float(torch.tensor(v, dtype=torch.float32).item())
        xx = (xs * xs).sum().item()
        if xx > 0:
            out["scale"] = f32((xs * ys).sum().item() / xx)
        neg = xs < 0
        nn_ = (xs[neg] * xs[neg]).sum().item()
        if nn_ > 0:
            out["slope"] = f32((xs[neg] * ys[neg]).sum().item() / nn_)
        lo, hi = ys.min().item(), ys.max().item()
        if lo < hi:
            out["clamp"] = (f32(lo), f32(hi))
    except Exception:  # a torch without these (the CPU stand-in): no derived candidates
        return {}
    return out


def candidates(torch, F, ins, init_scalars, fwd_scalars, out_shape, derived=None):
    """(task fields, fn(*tensors) -> tensor) pairs whose shapes fit; fields use the real sizes.
    derived: derived_constants() of the module's own output, for constants in its code."""
    shp = [list(t.shape) for t in ins]
    derived = derived or {}
    c = []
    if len(ins) == 1:
        x = shp[0]
        if out_shape != x or not 1 <= len(x) <= 4:
            return c
        for s in fwd_scalars + init_scalars + ([derived["scale"]] if "scale" in derived else []):
            c.append(({"op": "scalar_mul", "shape": x, "scalar": s},
                      (lambda s: lambda a: a * s)(s)))
        params = {
            "leaky_relu": [{"negative_slope": v} for v in init_scalars[:1]] + [{"negative_slope": 0.01}]
                          + ([{"negative_slope": derived["slope"]}] if "slope" in derived else []),
            "elu": [{"alpha": v} for v in init_scalars[:1]] + [{"alpha": 1.0}],
            "hardtanh": ([{"min_val": init_scalars[0], "max_val": init_scalars[1]}]
                         if len(init_scalars) >= 2 else []) + [{"min_val": -1.0, "max_val": 1.0}]
                        + ([{"min_val": derived["clamp"][0], "max_val": derived["clamp"][1]}]
                           if "clamp" in derived else []),
            "softplus": ([{"beta": init_scalars[0], "threshold": init_scalars[1]}]
                         if len(init_scalars) >= 2 else [])
                        + [{"beta": v, "threshold": 20.0} for v in init_scalars[:1]]
                        + [{"beta": 1.0, "threshold": 20.0}],
        }
        fns = {
            "relu": lambda a, p: torch.relu(a),
            "leaky_relu": lambda a, p: F.leaky_relu(a, negative_slope=p["negative_slope"]),
            "sigmoid": lambda a, p: torch.sigmoid(a),
            "tanh": lambda a, p: torch.tanh(a),
            "swish": lambda a, p: a * torch.sigmoid(a),
            "gelu": lambda a, p: F.gelu(a),
            "gelu_tanh": lambda a, p: F.gelu(a, approximate="tanh"),
            "mingpt_gelu": lambda a, p: 0.5 * a * (1.0 + torch.tanh(
                math.sqrt(2.0 / math.pi) * (a + 0.044715 * torch.pow(a, 3.0)))),
            "selu": lambda a, p: torch.selu(a),
            "hardsigmoid": lambda a, p: F.hardsigmoid(a),
            "softplus": lambda a, p: F.softplus(a, beta=p["beta"], threshold=p["threshold"]),
            "softsign": lambda a, p: F.softsign(a),
            "elu": lambda a, p: F.elu(a, alpha=p["alpha"]),
            "hardtanh": lambda a, p: F.hardtanh(a, min_val=p["min_val"], max_val=p["max_val"]),
        }
        for act in ACTS:
            for p in params.get(act, [None]):
                f = {"op": "elementwise", "shape": x, "activation": act}
                if p:
                    f["params"] = p
                c.append((f, (lambda act, p: lambda a: fns[act](a, p))(act, p)))
        c.append(({"op": "softmax", "shape": x}, lambda a: torch.softmax(a, dim=-1)))
        c.append(({"op": "log_softmax", "shape": x}, lambda a: torch.log_softmax(a, dim=-1)))
        return c
    if len(ins) != 2 or fwd_scalars:
        return c
    a, b = shp
    if len(a) == 2 and len(b) == 2 and b[1] == 1 and a[1] == b[0] and out_shape == [a[0], 1]:
        c.append(({"op": "matvec", "m": a[0], "k": a[1]}, lambda A, B: torch.matmul(A, B)))
    if len(a) == 1 and len(b) == 2 and a[0] == b[0] and out_shape == b:
        c.append(({"op": "diag_matmul", "n": b[0], "m": b[1]},
                  lambda A, B: torch.diag(A) @ B))
    if len(a) == 2 and len(b) == 2:
        for la in ("row", "col"):
            for lb in ("row", "col"):
                M, K = (a[0], a[1]) if la == "row" else (a[1], a[0])
                K2, N = (b[0], b[1]) if lb == "row" else (b[1], b[0])
                if K != K2 or out_shape != [M, N]:
                    continue
                for mask in ("none", "upper", "lower"):
                    f = {"op": "gemm", "m": M, "n": N, "k": K}
                    if la == "col":
                        f["a_layout"] = "col"
                    if lb == "col":
                        f["b_layout"] = "col"
                    if mask != "none":
                        f["mask"] = mask

                    def g(A, B, la=la, lb=lb, mask=mask):
                        C = torch.matmul(A.T if la == "col" else A, B.T if lb == "col" else B)
                        return torch.triu(C) if mask == "upper" else torch.tril(C) if mask == "lower" else C
                    c.append((f, g))
    if len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[2] == b[1] and out_shape == [a[0], a[1], b[2]]:
        c.append(({"op": "gemm", "batch": a[0], "m": a[1], "n": b[2], "k": a[2]},
                  lambda A, B: torch.matmul(A, B)))
    if 3 <= len(a) <= 4 and len(b) == 2 and a[-1] == b[0] and out_shape == a[:-1] + [b[1]]:
        mdims = a[:-1]
        c.append(({"op": "gemm", "m_dims": mdims, "m": int(math.prod(mdims)), "n": b[1], "k": b[0]},
                  lambda A, B: torch.matmul(A, B)))
    return c


def close(torch, got, want, scale_ref, dt):
    if list(got.shape) != list(want.shape):
        return False
    g = got.double()
    w = want.double()
    bad = (g != g).sum().item() + (w != w).sum().item()
    if bad:
        return False
    err = (g - w).abs().max().item() if numel(g) else 0.0
    scale = scale_ref.double().abs().max().item() if numel(scale_ref) else 0.0
    tol = {"fp32": 2e-5, "fp16": 4e-3, "bf16": 3e-2}.get(dt, 2e-5)
    return err <= tol * max(scale, 1e-30)


def structure_of(torch, t):
    """symmetric, upper, lower or general, of a 2D input as get_inputs made it."""
    if len(t.shape) != 2 or t.shape[0] != t.shape[1]:
        return "general"
    if (t - t.T).abs().max().item() == 0:
        return "symmetric"
    if (torch.tril(t, -1)).abs().max().item() == 0:
        return "upper"
    if (torch.triu(t, 1)).abs().max().item() == 0:
        return "lower"
    return "general"


def lower(torch, F, model, args, ins, fwd_scalars, init_scalars, out, dtype, device, seed,
          has_state):
    """The built-in task fields equal to the module, or (None, why). args: forward's arguments
    as get_inputs() gave them (a probe replaces the tensors, in order, and keeps the numbers as
    they are: an int stays an int)."""
    if has_state:
        return None, ("the module has parameters or buffers; the built-in ops take none (the "
                      "reference-process evaluation judges it)")
    if not isinstance(out, torch.Tensor):
        return None, "the module returns more than one tensor"
    kinds = sorted({dtype_name(t.dtype) for t in ins})
    if dtype not in ("fp32", "fp16", "bf16") or kinds != [dtype]:
        # every tensor of forward's: an integer index or mask beside fp32 data is no GEMM's B
        return None, ("the inputs are not all fp32, fp16 or bf16 of one dtype (they are %s%s)"
                      % (", ".join(kinds), "; CUTEGEN sets dtype %s" % dtype
                         if len(kinds) == 1 and kinds != [dtype] else ""))
    odt = dtype_name(out.dtype)
    if odt != dtype and (odt not in ("fp32", "fp16", "bf16") or dtype == "fp32"):
        return None, ("the module turns %s inputs into %s outputs; the built-in ops write fp32 "
                      "from fp32, and fp32, fp16 or bf16 from 16-bit inputs" % (dtype, odt))
    real = [list(t.shape) for t in ins]
    if all(numel(t) <= PROBE_NUMEL_MAX for t in ins):
        probe_shapes = real
    else:
        probe_shapes, _ = small_shapes(real)
    dt = ins[0].dtype
    gen_seed = seed + 1
    out_shape = [int(s) for s in out.shape]
    if not candidates(torch, F, ins, init_scalars, fwd_scalars, out_shape):
        return None, "no built-in op has this signature of shapes"
    probes = []
    for scale in (1.0, 8.0):
        torch.manual_seed(gen_seed)
        gen_seed += 1
        xs = [(torch.randn(*s, dtype=torch.float32) * scale).to(dt).to(device) for s in probe_shapes]
        it = iter(xs)  # forward gets copies: one that writes into its inputs (x.relu_()) leaves
        call = [next(it).clone() if is_tensor(torch, a) else a for a in args]  # xs as drawn
        try:
            with torch.no_grad():
                y = model(*call)
        except Exception as e:
            return None, ("the probe (forward on small random inputs of the same rank) failed: "
                          "%s: %s" % (type(e).__name__, e))
        if not isinstance(y, torch.Tensor):
            return None, "the probe's forward did not return one tensor"
        probes.append((xs, y))
    derived = {}
    if len(ins) == 1:
        # constants in forward's code, from its output on the wide probe (N(0, 64): a clamp
        # at +-5 is reached); on an fp32 copy of it where forward takes one (a 16-bit output
        # would blur them)
        x, y = probes[-1][0][0], probes[-1][1]
        if dtype != "fp32":
            try:
                x32 = x.float()
                with torch.no_grad():
                    y32 = model(*[x32.clone() if is_tensor(torch, a) else a for a in args])
                if is_tensor(torch, y32) and y32.dtype == torch.float32 and y32.shape == x32.shape:
                    x, y = x32, y32
            except Exception:
                pass
        derived = derived_constants(torch, x, y)
    cands = candidates(torch, F, ins, init_scalars, fwd_scalars, out_shape, derived)
    for fields, fn in cands:
        ok = True
        for xs, y in probes:
            try:
                with torch.no_grad():
                    want = fn(*xs)
            except Exception:
                ok = False
                break
            ref = want
            if fields["op"] in ("gemm", "matvec", "diag_matmul"):
                ref = fn(*[x.abs() for x in xs])
            if not close(torch, y, want, ref, dtype):
                ok = False
                break
        if not ok:
            continue
        if fields["op"] == "gemm" and "batch" not in fields and "m_dims" not in fields:
            sa, sb = structure_of(torch, ins[0]), structure_of(torch, ins[1])
            if sa != "general":
                fields["a_structure"] = sa
            if sb != "general":
                fields["b_structure"] = sb
        if fields["op"] == "gemm" and "m_dims" in fields:
            del fields["m"]
        if odt != dtype:
            fields["out_dtype"] = odt  # softmax(x, dtype=torch.float32), relu(x).float()
        return fields, "forward equals this built-in op on %d random probes" % len(probes)
    return None, "no built-in op gives the module's outputs on random probes"


# ---- the workload class ----

def eager_kernels(torch, model, args):
    try:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with torch.no_grad():
                model(*args)
            torch.cuda.synchronize()
        names = []
        for e in prof.events():
            dev = str(getattr(e, "device_type", ""))
            if "CUDA" in dev and e.name not in names:
                names.append(e.name)
        return names[:32]
    except Exception:
        return None


def classify(flops, nbytes, kernels, in_numel, out_numel, lowered):
    if lowered:
        op = lowered["op"]
        if op == "gemm":
            return "gemm-like", "lowered to the built-in gemm"
        if op in ("softmax", "log_softmax"):
            return "reduction", "lowered to the built-in %s (a row-wise reduction)" % op
        return "memory-bound", "lowered to the built-in %s" % op
    ks = " ".join(kernels or []).lower()
    if kernels:
        if "conv" in ks or "implicit_gemm" in ks or "winograd" in ks:
            return "convolution", "eager launches convolution kernels"
        if "flash" in ks or "fmha" in ks or "attention" in ks or "sdpa" in ks:
            return "attention", "eager launches attention kernels"
    inten = flops / nbytes if flops and nbytes else 0.0
    if inten >= 16:
        return "gemm-like", "%.1f FLOP per byte of inputs and outputs" % inten
    if kernels and ("gemm" in ks or "matmul" in ks or "cutlass" in ks or "xmma" in ks):
        return "gemm-like", "eager launches GEMM kernels"
    if out_numel * 4 <= in_numel:
        return "reduction", "the outputs are %d elements for %d input elements" % (out_numel, in_numel)
    if flops is None:
        return "memory-bound", "no FLOP count (torch.utils.flop_counter missing); outputs as large as inputs"
    return "memory-bound", "%.2f FLOP per byte of inputs and outputs" % inten


def count_flops(torch, model, args):
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except Exception:
        return None
    try:
        with FlopCounterMode(display=False) as fc:
            with torch.no_grad():
                model(*args)
        return float(fc.get_total_flops())
    except Exception:
        return None


# ---- describe ----

def load_task(torch, path):
    """Imports a module file and checks KernelBench's names: (module, CUTEGEN dict, Model)."""
    if not os.path.isfile(path):
        raise Fail("import", "no module file '%s'" % path)
    mod = load_module(path)
    meta = getattr(mod, "CUTEGEN", {})
    if not isinstance(meta, dict):
        raise Fail("import", "CUTEGEN in '%s' must be a dict like {\"inputs\": {\"x\": "
                   "\"positive\"}} (got %s)" % (path, type(meta).__name__))
    check_meta(meta, path)
    cls = getattr(mod, "Model", None)
    if cls is None or not isinstance(cls, type):
        raise Fail("no_model", "'%s' defines no class Model; a module task is a KernelBench "
                   "file: class Model(nn.Module), get_inputs() and get_init_inputs()" % path)
    if not issubclass(cls, torch.nn.Module):
        raise Fail("no_model", "Model in '%s' is not a torch.nn.Module subclass" % path)
    for fn in ("get_inputs", "get_init_inputs"):
        if not callable(getattr(mod, fn, None)):
            raise Fail("no_" + fn, "'%s' has no function %s(); KernelBench files define "
                       "get_inputs() (forward's arguments) and get_init_inputs() (Model's)"
                       % (path, fn))
    return mod, meta, cls


MODES = ("eval", "train")
META_KEYS = ("inputs", "dtype", "precision", "requires", "mode")


def check_meta(meta, path):
    """CUTEGEN's keys and values (docs/tasks.md, "Metadata"): a typo is an error, not a key
    quietly ignored. Its input names are checked against forward's in check_meta_inputs."""
    def bad(what):
        raise Fail("import", "CUTEGEN in '%s': %s" % (path, what))
    for k in meta:
        if k not in META_KEYS:
            bad("unknown key %r (the keys: %s)" % (k, ", ".join(META_KEYS)))
    own = meta.get("inputs")
    if own is not None:
        if not isinstance(own, dict):
            bad("\"inputs\" must be a dict of forward's argument names to distributions, like "
                "{\"x\": \"positive\"} (got %s)" % type(own).__name__)
        for n, d in own.items():
            if not isinstance(n, str) or d not in OWN_DISTS:
                bad("\"inputs\" gives %r the distribution %r (the distributions: %s)"
                    % (n, d, ", ".join(OWN_DISTS)))
    floats = [v for v in DTYPES.values() if v.startswith(("fp", "bf"))]
    if "dtype" in meta and meta["dtype"] not in floats:
        bad("\"dtype\" must be one of %s (got %r)" % (", ".join(floats), meta["dtype"]))
    if "precision" in meta and meta["precision"] not in PRECISIONS[:4]:
        bad("\"precision\" must be one of %s (got %r)" % (", ".join(PRECISIONS[:4]),
                                                             meta["precision"]))
    if "requires" in meta and meta["requires"] != "cuda":
        bad("\"requires\" can only be \"cuda\" (got %r)" % (meta["requires"],))


def check_meta_inputs(meta, names):
    """CUTEGEN's "inputs" name arguments of forward."""
    for n in meta.get("inputs") or {}:
        if n not in names:
            raise Fail("inputs", "CUTEGEN's \"inputs\" names %r, which is not an argument of "
                       "forward (its arguments: %s)" % (n, ", ".join(names) or "none"))


def mode_of(meta, path):
    """The mode forward runs in: CUTEGEN's "mode", else eval."""
    mode = meta.get("mode", "eval")
    if mode not in MODES:
        raise Fail("import", "CUTEGEN's \"mode\" in '%s' must be \"eval\" (Model().eval(), the "
                   "default) or \"train\" (training mode, as KernelBench runs Model()); got %r"
                   % (path, mode))
    return mode


def build_model(torch, mod, cls, seed, device, mode="eval"):
    """Model(*get_init_inputs()) under torch.manual_seed(seed), its tensor attributes adopted
    as buffers, on device, in mode ("eval" or "train"). Tensors among get_init_inputs() go to
    device first, as KernelBench's harness moves them."""
    torch.manual_seed(seed)
    init = call_user("init", "get_init_inputs()", mod.get_init_inputs)
    if not isinstance(init, (list, tuple)):
        raise Fail("init", "get_init_inputs() must return a list (got %s)" % type(init).__name__)
    init = [call_user("gpu", "moving an init input to %s" % device, v.to, device)
            if is_tensor(torch, v) else v for v in init]
    model = call_user("init", "Model(*get_init_inputs())", cls, *init)
    adopt_tensor_attributes(torch, model)
    model = call_user("gpu", "moving the model to %s" % device, model.to, device)
    model.train(mode == "train")
    return model, init


def adopt_tensor_attributes(torch, model):
    """Tensors a module keeps as plain attributes (self.h0 = torch.randn(...), as KernelBench's
    level 3 RNNs keep their initial state; a tensor from get_init_inputs()) become its
    non-persistent buffers: .to() and .double() convert them, the kernel receives them
    (state_tensors), and state_dict() stays what the module's own is."""
    if not hasattr(model, "named_modules"):
        return
    P = getattr(getattr(torch, "nn", None), "Parameter", ())
    for _, m in list(model.named_modules()):
        bufs = getattr(m, "_buffers", {})
        for k, v in list(vars(m).items()):
            if k.startswith("_") or k in bufs or not is_tensor(torch, v) or isinstance(v, P):
                continue
            del m.__dict__[k]
            m.register_buffer(k, v, persistent=False)


def state_tensors(torch, model):
    """The module's tensors as the kernel receives them, after forward's: state_dict() in its
    order, then the buffers it leaves out (non-persistent ones, adopted attributes); a list of
    (name, tensor, role)."""
    state = call_user("init", "state_dict()", model.state_dict)
    items = [(n, t) for n, t in state.items() if is_tensor(torch, t)]
    bufs = list(model.named_buffers()) if hasattr(model, "named_buffers") else []
    seen = {n for n, _ in items}
    items += [(n, b.detach()) for n, b in bufs if n not in seen and is_tensor(torch, b)]
    bufnames = {n for n, _ in bufs}
    return [(n, t, "buffer" if n in bufnames else "parameter") for n, t in items]


def mode_modules(torch, model):
    """The submodules that compute otherwise in training than in eval mode: batch norms
    (batch statistics vs running ones), dropouts with p > 0, instance norms that track running
    statistics, RNNs and attention with dropout; "Class name" strings."""
    if not hasattr(model, "named_modules"):
        return []
    out = []
    for name, m in model.named_modules():
        kinds = {k.__name__ for k in type(m).__mro__}
        p = getattr(m, "p", getattr(m, "dropout", 0))
        p = p if isinstance(p, (int, float)) else 0
        if ("_BatchNorm" in kinds and getattr(m, "track_running_stats", True)) or \
                ("_InstanceNorm" in kinds and getattr(m, "track_running_stats", False)) or \
                (kinds & {"_DropoutNd", "RNNBase", "MultiheadAttention"} and p > 0):
            out.append("%s %s" % (type(m).__name__, name or "(the model)"))
    return out


def on_device(torch, device):
    """torch's default-device context for device ("cuda"), or None where there is none."""
    if device != "cuda":
        return None
    try:
        ctx = torch.device(device)
        return ctx if hasattr(ctx, "__enter__") else None
    except Exception:
        return None


def draw_inputs(torch, mod, seed, device=None):
    """get_inputs() under torch.manual_seed(seed), as a list. With device "cuda" its factory
    calls (torch.rand, torch.randn...) make the tensors on the GPU (`with torch.device`):
    KernelBench's get_inputs() draws gigabytes, which takes seconds on the CPU. A get_inputs()
    that fails there (one that needs CPU tensors) is called again on the CPU."""
    ctx = on_device(torch, device)
    if ctx is not None:
        torch.manual_seed(seed)
        try:
            with ctx:
                raw = mod.get_inputs()
        except Exception:
            raw = None
            if hasattr(torch, "cuda") and hasattr(torch.cuda, "empty_cache"):
                torch.cuda.empty_cache()
        if raw is not None:
            return check_inputs_list(raw)
    torch.manual_seed(seed)
    return check_inputs_list(call_user("inputs", "get_inputs()", mod.get_inputs))


def check_inputs_list(raw):
    if not isinstance(raw, (list, tuple)):
        raise Fail("inputs", "get_inputs() must return a list of forward's arguments (got %s)"
                   % type(raw).__name__)
    return list(raw)


def describe(torch, path, seed):
    import torch.nn.functional as F
    mod, meta, cls = load_task(torch, path)
    need = meta.get("requires")
    cuda = bool(torch.cuda.is_available())
    if need == "cuda" and not cuda:
        raise Fail("gpu", "'%s' says it requires CUDA (CUTEGEN requires) and PyTorch sees no "
                   "CUDA device here; run it on a machine with one" % path)
    device = "cuda" if cuda else "cpu"

    mode = mode_of(meta, path)
    model, init = build_model(torch, mod, cls, seed, device, mode)
    raw = draw_inputs(torch, mod, seed, device)
    names = forward_arg_names(model, len(raw))
    check_meta_inputs(meta, names)
    args, ins, inputs, fwd_scalars, scalars = [], [], [], [], []
    for i, v in enumerate(raw):
        if is_tensor(torch, v):
            check_input_tensor(torch, i, names[i], v)
            t = call_user("gpu", "moving input '%s' to %s" % (names[i], device), v.to, device)
            args.append(t)
            ins.append(t)
            inputs.append(tensor_info(torch, names[i], t))
        elif is_number(v):
            args.append(v)
            fwd_scalars.append(scalar_value("inputs", "get_inputs()", i, names[i], v))
            scalars.append({"name": names[i], "value": fwd_scalars[-1], "from": "get_inputs"})
        else:
            raise Fail("inputs", "get_inputs() item %d ('%s') is a %s; forward's arguments must "
                       "be tensors (or numbers, passed as scalars)" % (i, names[i], type(v).__name__))
    if not ins:
        raise Fail("inputs", "get_inputs() returned no tensor; a kernel needs at least one input tensor")
    inames = init_arg_names(cls, len(init))
    init_scalars = []
    for i, v in enumerate(init):
        if is_number(v):
            init_scalars.append(scalar_value("init", "get_init_inputs()", i, inames[i], v))
            scalars.append({"name": inames[i], "value": init_scalars[-1], "from": "get_init_inputs"})
    state = state_tensors(torch, model)
    params = [tensor_info(torch, n, t, role) for n, t, role in state]
    versions = [t._version for t in ins]
    with torch.no_grad():
        out = call_user("forward", "forward", model, *args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]  # torch.return_types are tuples
    if not outs or not all(is_tensor(torch, o) for o in outs):
        bad = [(i, type(o).__name__) for i, o in enumerate(outs) if not is_tensor(torch, o)]
        what = ("an empty %s" % type(out).__name__ if not outs else
                "a %s whose item %d is a %s" % (type(out).__name__, bad[0][0], bad[0][1])
                if isinstance(out, (tuple, list)) else type(out).__name__)
        raise Fail("output", "forward returned %s, not a tensor or a flat tuple of tensors; a "
                   "kernel's outputs are tensors (return them side by side: a, b, c)" % what)
    if [t._version for t in ins] != versions:  # it wrote into them: the same draw again
        args = [a if not is_tensor(torch, a) else a.to(device)
                for a in draw_inputs(torch, mod, seed, device)]
        ins = [a for a in args if is_tensor(torch, a)]
    # forward must be deterministic: a second call (another random state) on the same inputs,
    # whose outputs are the ones described (the first call's are let go: outputs can be as
    # large as memory)
    first = fingerprint(torch, outs)
    del out, outs
    torch.manual_seed(another_seed(seed))
    with torch.no_grad():
        out = call_user("forward", "forward, again", model, *args)
    outs = outputs_of(torch, out)
    check_deterministic(torch, first, fingerprint(torch, outs))
    in_labels, out_labels = abi_names([n for n, v in zip(names, raw) if is_tensor(torch, v)],
                                      [n for n, _, _ in state], len(outs))
    for d, n in zip(inputs, in_labels):
        d["name"] = n
    outputs = [tensor_info(torch, out_labels[i], o, kind="output") for i, o in enumerate(outs)]
    check_limits(inputs + params + outputs, scalars)
    fl = [t.dtype for t in ins if t.is_floating_point()]
    dts = {dtype_name(d) for d in fl}
    dtype = meta.get("dtype") or (dts.pop() if len(dts) == 1 else ("mixed" if dts else "none"))
    precision = meta.get("precision") or PRECISION_OF.get(dtype, "none")
    nbytes = sum(numel(t) * element_size(t) for t in ins + outs)
    nbytes += sum(numel(t) * element_size(t) for _, t, _ in state)
    has_state = bool(params)
    lowered, why = lower(torch, F, model, args, ins, fwd_scalars, init_scalars,
                         out if len(outs) == 1 and not isinstance(out, (tuple, list)) else None,
                         dtype, device, seed, has_state)
    if lowered is not None and meta.get("inputs"):
        # "module" (only get_inputs()'s own draws) is what the built-in twin does for structured
        # GEMM inputs (symmetric, triangular: kb1 #13-15); any other named distribution differs
        own = meta["inputs"] if isinstance(meta["inputs"], dict) else {"?": "?"}
        structured = {n["name"]: lowered.get(("a_structure", "b_structure")[i], "general") != "general"
                      for i, n in enumerate(inputs[:2])} if lowered.get("op") == "gemm" else {}
        if not all(v == "module" and structured.get(k) for k, v in own.items()):
            lowered, why = None, ("CUTEGEN names its own input distributions (%s); the built-in "
                                  "twin would draw its own" % ", ".join(
                                      "%s: %s" % kv for kv in sorted(own.items())))
    if lowered is not None and precision != PRECISION_OF.get(dtype):
        lowered, why = None, "CUTEGEN sets precision '%s'; the built-in twin's would differ" % precision
    flops = count_flops(torch, model, args)
    kernels = eager_kernels(torch, model, args) if cuda else None
    in_numel = sum(numel(t) for t in ins)
    out_numel = sum(numel(o) for o in outs)
    workload, wwhy = classify(flops, nbytes, kernels, in_numel, out_numel, lowered)
    stem = os.path.splitext(os.path.basename(path))[0]
    low = None
    if lowered is not None:
        low = {"name": task_name(stem), "description": "module %s, lowered to the built-in %s" % (path, lowered["op"]),
               "dtype": dtype, "precision": precision}
        low.update(lowered)
    return {
        "file": os.path.abspath(path), "name": stem, "device": device,
        "torch": getattr(torch, "__version__", "unknown"), "seed": seed,
        "meta": meta, "mode": mode, "mode_modules": mode_modules(torch, model),
        "dtype": dtype, "precision": precision,
        "inputs": inputs, "params": params, "scalars": scalars, "outputs": outputs,
        "flops": flops, "bytes": nbytes, "workload": workload, "workload_why": wwhy,
        "kernels": kernels, "lowered": low, "lowered_why": why,
    }


# ---- prepare: the judge's cases, exported over CUDA IPC (docs/tasks.md, "prepare") ----

DISTS = ("module", "normal", "large")
OWN_DISTS = ("positive", "probabilities", "indices", "module")
PRECISIONS = ("strict", "tf32", "fp16", "bf16", "none")
CASES_MAX = 64
IPC_HANDLE_SIZE = 64  # sizeof(cudaIpcMemHandle_t)
MIB = float(1 << 20)


class TF32:
    """TF32 for matmul and cuDNN on or off inside the block, set back after."""
    def __init__(self, torch, on):
        self.torch, self.on = torch, bool(on)

    def __enter__(self):
        b = self.torch.backends
        self.saved = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
        b.cuda.matmul.allow_tf32 = self.on
        b.cudnn.allow_tf32 = self.on
        return self

    def __exit__(self, *a):
        b = self.torch.backends
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = self.saved
        return False


def memory_fail(torch, what, need=None, fraction=None, free0=None):
    """free0: the free memory the cases' budget was taken from (after the module was built);
    without it, what is free now."""
    free, total = torch.cuda.mem_get_info()
    msg = "not enough GPU memory %s" % what
    if need is not None:
        msg += ": %.0f MiB needed" % (need / MIB)
    if free0 is not None and fraction is not None:
        msg += "; the cases may take memory_fraction %.2f of the %.0f MiB that was free once " \
               "the module was built: %.0f MiB (the candidate needs the rest; the GPU has " \
               "%.0f MiB)" % (fraction, free0 / MIB, fraction * free0 / MIB, total / MIB)
    else:
        msg += "; %.0f MiB free of %.0f MiB" % (free / MIB, total / MIB)
        if fraction is not None:
            msg += " (memory_fraction %.2f: %.0f MiB)" % (fraction, fraction * free / MIB)
    return Fail("memory", msg + "; free GPU memory (other processes), use a GPU with more "
                "memory, or make the module's get_inputs() smaller")


def ipc_handle(torch, raw):
    """The 64 bytes of cudaIpcMemHandle_t in what storage._share_cuda_() returns: the raw
    handle (older torch), or torch's versioned shareable handle: a version byte, 'c' (a
    cudaMalloc block) and the handle; 'e' (an expandable segment) is no cudaIpcMemHandle_t."""
    h = bytes(raw)
    if len(h) == IPC_HANDLE_SIZE:
        return h
    if len(h) >= 2 + IPC_HANDLE_SIZE and h[1:2] == b"c":
        return h[2:2 + IPC_HANDLE_SIZE]
    if len(h) >= 2 and h[1:2] == b"e":
        raise Fail("ipc", "PyTorch allocated the tensors in expandable segments, which CUDA IPC "
                   "(cudaIpcOpenMemHandle) cannot open: unset expandable_segments in "
                   "$PYTORCH_CUDA_ALLOC_CONF")
    raise Fail("ipc", "torch %s's storage handle has a form cutegen does not know (%d bytes, "
               "type byte %r); use a PyTorch whose _share_cuda_ gives a cudaIpcMemHandle_t"
               % (getattr(torch, "__version__", "?"), len(h), h[1:2]))


class Exporter:
    """Exports contiguous CUDA tensors by CUDA IPC and keeps a reference to each until
    release (the runner reads them while this process waits)."""
    def __init__(self, torch):
        self.torch = torch
        self.keep = []
        self.shared = {}   # data_ptr -> H, so a tensor shared twice (tied weights) is one handle
        self.counters = []

    def export(self, t):
        torch = self.torch
        if not t.is_contiguous():
            t = t.contiguous()
        key = (t.data_ptr(), tuple(t.shape), str(t.dtype))
        if key in self.shared:
            return self.shared[key]
        self.keep.append(t)
        if numel(t) == 0:  # no allocation to share: an all-zero handle, 0 bytes
            return {"ipc": "0" * (2 * IPC_HANDLE_SIZE), "offset": 0, "bytes": 0,
                    "dtype": dtype_name(t.dtype), "shape": [int(s) for s in t.shape]}
        try:
            sh = t.untyped_storage()._share_cuda_()
        except Fail:
            raise
        except Exception as e:
            raise Fail("ipc", "CUDA IPC is not available here (sharing a tensor failed: %s: %s); "
                       "the judge reads the reference's tensors from another process: run it "
                       "on a Linux machine whose driver supports CUDA IPC (not under WSL or MPS "
                       "restrictions)" % (type(e).__name__, e))
        h = ipc_handle(torch, sh[1])
        if len(sh) >= 6 and isinstance(sh[4], bytes):
            self.counters.append((sh[4], sh[5]))
        off = int(sh[3]) + int(t.storage_offset()) * element_size(t)
        H = {"ipc": h.hex(), "offset": off, "bytes": numel(t) * element_size(t),
             "dtype": dtype_name(t.dtype), "shape": [int(s) for s in t.shape]}
        self.shared[key] = H
        return H

    def release(self):
        """Gives the tensors back: the consumer (the runner, C) never decrements torch's IPC
        reference counters, so do it here, then free."""
        st = getattr(self.torch, "UntypedStorage", None)
        for handle, offset in self.counters:
            try:
                st._release_ipc_counter_cuda(handle, offset)
            except Exception:
                pass
        self.counters, self.keep, self.shared = [], [], {}


def check_prepare_request(req):
    cases = req.get("cases")
    if not isinstance(cases, list) or not 2 <= len(cases) <= CASES_MAX:
        raise Fail("request", "prepare needs \"cases\": a list of 2 to %d {\"seed\", \"dist\"}"
                   % CASES_MAX)
    out = []
    for c in cases:
        if (not isinstance(c, dict) or not isinstance(c.get("seed"), int)
                or isinstance(c.get("seed"), bool) or c.get("dist") not in DISTS):
            raise Fail("request", "a case of prepare is {\"seed\": INTEGER, \"dist\": one of %s}"
                       " (got %s)" % (", ".join(DISTS), json.dumps(c)[:200]))
        out.append({"seed": c["seed"], "dist": c["dist"]})
    prec = req.get("precision")
    if prec is not None and prec not in PRECISIONS:
        raise Fail("request", "prepare's precision must be one of %s (got %r)"
                   % (", ".join(PRECISIONS), prec))
    frac = req.get("memory_fraction", 0.35)
    if not isinstance(frac, (int, float)) or isinstance(frac, bool) or not 0 < frac <= 1:
        raise Fail("request", "prepare's memory_fraction must be a number in (0, 1] (got %r)" % frac)
    dev = req.get("device", 0)
    if not isinstance(dev, int) or isinstance(dev, bool) or dev < 0:
        raise Fail("request", "prepare's device must be a GPU index (got %r)" % dev)
    return out, prec, float(frac), dev


def keep_order(cases):
    """The order in which cases are kept when memory allows only some: the first case of each
    distribution, then the second of each, ... (so two cases cover two distributions)."""
    seen, order = {}, []
    for i, c in enumerate(cases):
        order.append((seen.get(c["dist"], 0), i))
        seen[c["dist"]] = seen.get(c["dist"], 0) + 1
    return [i for _, i in sorted(order)]


def outputs_of(torch, out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(is_tensor(torch, o) for o in outs):
        raise Fail("output", "forward returned something that is not a tensor or a tuple of "
                   "tensors; a kernel's outputs are tensors")
    return outs


def float_dtypes(torch):
    return {torch.float32, torch.float16, torch.bfloat16, torch.float64}


def case_inputs(torch, mod, model, c, meta_inputs, like=None):
    """The forward arguments of one case: get_inputs() under the case's seed, its floating
    tensors replaced by N(0,1) (dist normal) or 64 N(0,1) (large; fp8: 16) unless CUTEGEN names
    their own distribution; every tensor on the GPU and contiguous. When every tensor would be
    replaced, get_inputs() is not called: the shapes and dtypes are those of like (the first
    case's arguments; KernelBench's get_inputs() takes seconds at full size)."""
    lnames = forward_arg_names(model, len(like)) if like is not None else []
    if (like is not None and c["dist"] != "module"
            and all(t.is_floating_point() and meta_inputs.get(lnames[i]) not in OWN_DISTS
                    for i, t in enumerate(like) if is_tensor(torch, t))):
        raw = like
    else:
        raw = draw_inputs(torch, mod, c["seed"], "cuda")
    if like is not None and len(raw) != len(like):
        raise Fail("inputs", "get_inputs() gave %d arguments for seed %d and %d for the first "
                   "case; it must give the same arguments for every seed"
                   % (len(raw), c["seed"], len(like)))
    names = forward_arg_names(model, len(raw))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(c["seed"] * 1000003 + 7)
    args = []
    for i, v in enumerate(raw):
        if not is_tensor(torch, v):
            args.append(v)
            continue
        t = call_user("gpu", "moving input '%s' to the GPU" % names[i], v.to, "cuda")
        own = meta_inputs.get(names[i]) in OWN_DISTS
        if c["dist"] != "module" and t.is_floating_point() and not own:
            fp8 = "float8" in str(t.dtype)
            scale = 1.0 if c["dist"] == "normal" else (16.0 if fp8 else 64.0)
            if t.dtype in float_dtypes(torch):
                x = torch.randn(tuple(t.shape), generator=gen, device="cuda", dtype=t.dtype)
                if scale != 1.0:
                    x.mul_(scale)
            else:
                x = (torch.randn(tuple(t.shape), generator=gen, device="cuda",
                                 dtype=torch.float32) * scale).to(t.dtype)
            t = x
        args.append(t.contiguous())
    return args


def prepare(torch, req, exporter):
    cases, prec_req, fraction, dev = check_prepare_request(req)
    path = str(req.get("file", ""))
    seed = req.get("seed", 42)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise Fail("request", "prepare's seed must be an integer (got %r)" % seed)
    if not torch.cuda.is_available():
        raise Fail("gpu", "prepare needs a CUDA GPU: run it where PyTorch sees one (%s's torch "
                   "%s sees no CUDA device)" % (sys.executable, getattr(torch, "__version__", "?")))
    if dev >= torch.cuda.device_count():
        raise Fail("gpu", "GPU %d does not exist (PyTorch sees %d); pick one with --device"
                   % (dev, torch.cuda.device_count()))
    torch.cuda.set_device(dev)
    try:  # CUDA IPC cannot open expandable segments: plain cudaMalloc blocks only (and none
        # cached from before, which new tensors could reuse)
        torch.cuda.memory._set_allocator_settings("expandable_segments:False")
        torch.cuda.empty_cache()
    except Exception:
        pass
    import copy
    mod, meta, cls = load_task(torch, path)
    meta_inputs = meta.get("inputs") if isinstance(meta.get("inputs"), dict) else {}
    notes = []
    try:
        return prepare_cases(torch, copy, mod, meta, cls, meta_inputs, cases, prec_req, fraction,
                             seed, dev, req, exporter, notes)
    except oom_error(torch):
        exporter.release()
        torch.cuda.empty_cache()
        raise memory_fail(torch, "to prepare the cases of '%s'" % path, fraction=fraction)
    except BaseException:
        exporter.release()
        torch.cuda.empty_cache()
        raise


def oom_error(torch):
    return getattr(torch.cuda, "OutOfMemoryError", MemoryError)


def prepare_cases(torch, copy, mod, meta, cls, meta_inputs, cases, prec_req, fraction, seed,
                  dev, req, exporter, notes):
    model, _ = build_model(torch, mod, cls, seed, "cuda", mode_of(meta, req.get("file")))
    names, tidx = None, None
    state = state_tensors(torch, model)
    params = [(n, t) for n, t, _ in state]
    param_h = [exporter.export(t.detach()) for _, t in params]
    torch.cuda.synchronize()
    free0, _ = torch.cuda.mem_get_info()
    budget = fraction * free0

    order = keep_order(cases)
    kept, srcs, template = {}, {}, None
    truth_kind, truth_why, model_t = None, None, None
    tensors = None
    precision = prec_req
    case_bytes = None
    for n_done, ci in enumerate(order):
        c = cases[ci]
        if case_bytes is not None and (n_done + 1) * case_bytes > budget:
            notes.append("kept %d of %d cases: each takes %.1f MiB (inputs, reference and truth "
                         "outputs), memory_fraction %.2f of %.0f MiB free is %.0f MiB"
                         % (n_done, len(cases), case_bytes / MIB, fraction, free0 / MIB, budget / MIB))
            break
        args = case_inputs(torch, mod, model, c, meta_inputs, template)
        if tidx is None:
            names = forward_arg_names(model, len(args))
            tidx = [i for i, v in enumerate(args) if is_tensor(torch, v)]
            if not tidx:
                raise Fail("inputs", "get_inputs() returned no tensor; a kernel needs at least "
                           "one input tensor")
        ins = [args[i] for i in tidx]
        if tensors is None:
            fdt = {dtype_name(t.dtype) for t in ins if t.is_floating_point()}
            dtype = meta.get("dtype") or (fdt.pop() if len(fdt) == 1 else ("mixed" if fdt else "none"))
            if precision is None:
                precision = meta.get("precision") or PRECISION_OF.get(dtype, "none")
        # the truth first, from the inputs as drawn (a forward that writes into its inputs runs
        # after it): float64 (the model deep-copied, .double(), floating inputs in float64)
        if truth_kind is None:
            try:
                model_t = copy.deepcopy(model).double()
                truth = truth_forward(torch, model_t, args, tidx, torch.float64)
                truth_kind = "fp64"
            except oom_error(torch):
                raise
            except Exception as e:
                truth_why = ("the module does not run in float64 (%s: %s); the truth is float32 "
                             "with TF32 off" % (type(e).__name__, str(e)[:300]))
                model_t = None
                torch.cuda.empty_cache()
                try:
                    model_t = copy.deepcopy(model).float()
                except Exception:  # cannot be copied: fp32 already, or no truth
                    if any(p.is_floating_point() and p.dtype != torch.float32 for _, p in params):
                        raise Fail("forward", "the truth cannot be computed: the module does not "
                                   "run in float64 and cannot be copied to float32 (%s)" % truth_why)
                    model_t = model
                truth = call_user("forward", "forward in float32 for the truth",
                                  truth_forward, torch, model_t, args, tidx, torch.float32)
                truth_kind = "fp32"
        else:
            truth = call_user("forward", "forward in %s for the truth (seed %d)" % (
                truth_kind, c["seed"]), truth_forward, torch, model_t, args, tidx,
                torch.float64 if truth_kind == "fp64" else torch.float32)
        ref, wrote = reference_forward(torch, model, args, ins, params, precision,
                                       "forward (seed %d, %s)" % (c["seed"], c["dist"]))
        if wrote:
            # forward wrote into its inputs: export them as get_inputs() made them (the draw
            # is seeded, so it is the same), as the judge gives them to the candidate
            if not any("in place" in n for n in notes):
                notes.append("forward modifies its inputs in place; the exported inputs are "
                             "drawn again before it ran")
            args = case_inputs(torch, mod, model, c, meta_inputs, template)
            ins = [args[i] for i in tidx]
        if tensors is None:
            # the first case: forward must give the same outputs again (another random state)
            torch.manual_seed(another_seed(seed))
            again, wrote = reference_forward(torch, model, args, ins, params, precision,
                                             "forward (seed %d, %s) again" % (c["seed"], c["dist"]))
            check_deterministic(torch, fingerprint(torch, ref), fingerprint(torch, again))
            del again
            if wrote:
                args = case_inputs(torch, mod, model, c, meta_inputs, template)
                ins = [args[i] for i in tidx]
            tensors = ([{"name": names[i], "role": "input", "dtype": dtype_name(args[i].dtype),
                         "shape": [int(s) for s in args[i].shape]} for i in tidx]
                       + [{"name": n, "role": role, "dtype": dtype_name(t.dtype),
                           "shape": [int(s) for s in t.shape]} for n, t, role in state]
                       + [{"name": None, "role": "output", "dtype": dtype_name(o.dtype),
                           "shape": [int(s) for s in o.shape]} for k, o in enumerate(ref)])
            in_labels, out_labels = abi_names([names[i] for i in tidx], [n for n, _, _ in state], len(ref))
            for d, n in zip(tensors, in_labels + [n for n, _, _ in state] + out_labels):
                d["name"] = n
        check_shapes(tensors, ins, ref, c)
        H = {"seed": c["seed"], "dist": c["dist"],
             "inputs": [exporter.export(t) for t in ins] + param_h,
             "ref": [exporter.export(o) for o in ref],
             "truth": [exporter.export(t) for t in truth]}
        kept[ci] = H
        srcs[ci] = (c["dist"], ins)
        if template is None:
            template = args
        if case_bytes is None:
            case_bytes = sum(h["bytes"] for h in H["inputs"][:len(ins)] + H["ref"] + H["truth"])
            if 2 * case_bytes > budget:
                exporter.release()
                raise memory_fail(torch, "for 2 cases of '%s' (each %.1f MiB: inputs, reference "
                                  "and truth outputs)" % (req.get("file"), case_bytes / MIB),
                                  need=2 * case_bytes, fraction=fraction, free0=free0)
        del args, ins, ref, truth
    if len(kept) < 2:
        exporter.release()
        raise memory_fail(torch, "for 2 cases of '%s'" % req.get("file"), fraction=fraction,
                          free0=free0)
    del model_t
    torch.cuda.synchronize()  # every exported tensor is written before another process reads it
    torch.cuda.empty_cache()  # what the truth and the forwards left cached is the runner's
    reply = {"tensors": tensors, "truth": truth_kind,
             "cases": [kept[i] for i in sorted(kept)], "notes": notes}
    if truth_why:
        reply["truth_why"] = truth_why
    if req.get("baselines"):
        reply["baselines"] = baselines(torch, model, template, tidx, [srcs[i] for i in sorted(srcs)],
                                       precision, params, dev)
    torch.cuda.synchronize()
    return reply


def reference_forward(torch, model, args, ins, params, precision, what):
    """forward on args in the task's dtypes (TF32 as the precision says): (its outputs, each
    detached, contiguous and not sharing storage with an input or parameter; whether forward
    wrote into an input)."""
    versions = [t._version for t in ins]
    with TF32(torch, precision == "tf32"), torch.no_grad():
        out = call_user("forward", what, model, *args)
    outs = outputs_of(torch, out)
    ptrs = {t.untyped_storage().data_ptr() for t in ins}
    ptrs |= {t.untyped_storage().data_ptr() for _, t in params}
    ref = []
    for o in outs:
        o = o.detach().contiguous()
        if o.untyped_storage().data_ptr() in ptrs:
            o = o.clone()
        ref.append(o)
    return ref, [t._version for t in ins] != versions


def another_seed(seed):
    """The random state of forward's second call: not the first call's."""
    return seed * 7919 + 104729


def check_deterministic(torch, first, second):
    why = nondeterminism(torch, first, second)
    if why:
        raise Fail("forward", "forward is not deterministic: called twice on the same inputs, "
                   "%s. A kernel cannot be judged against a reference that changes: draw no "
                   "random numbers in forward (torch.rand*, dropout in training mode), change "
                   "no state of the module in it (a call counter, a running average) and "
                   "avoid nondeterministic operations" % why)


def fingerprint(torch, outs):
    """What check_deterministic compares of forward's outputs, small whatever their size: per
    output its dtype and shape, a sample of about 4096 elements at a fixed stride (on the CPU;
    floating ones in float64) and, for floating outputs, the float64 sums of the elements and
    of their magnitudes (in chunks: outputs can be gigabytes)."""
    fp = []
    for o in outs:
        flat = o.reshape(-1)
        n = numel(o)
        sample = flat[::max(1, n // 4096)]
        total = mag = 0.0
        if o.is_floating_point():
            sample = sample.double()
            for i in range(0, n, 1 << 24):
                c = flat[i:i + (1 << 24)].double()
                total += float(c.sum().item())
                mag += float(c.abs().sum().item())
        fp.append((dtype_name(o.dtype), [int(d) for d in o.shape], sample.cpu(), total, mag))
    return fp


# the unit roundoff of each floating dtype (8 of them are what an atomic reduction's order can
# move a 16-bit or fp8 output by)
EPS = {"fp64": 2.0 ** -53, "fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8,
       "fp8_e4m3": 2.0 ** -4}


def nondeterminism(torch, first, second):
    """Where two fingerprints of forward on the same inputs disagree beyond what a reduction's
    order changes (floating: a sampled element by more than tol of the sample's largest
    magnitude, NaNs in other places, or a sum by more than tol of the sum of magnitudes, tol
    1e-5 or 8 units of the dtype's roundoff where that is more (16-bit, fp8); others: any
    sampled element): a phrase saying where, else None. Not looser: the judge's budget is a
    multiple of the reference's own error, which a random reference would widen (at 1e-4 of
    noise, a strict fp32 task would pass fp16 arithmetic)."""
    for k, (f, g) in enumerate(zip(first, second)):
        name = "'out'" if len(first) == 1 else "'out%d'" % k
        if f[:2] != g[:2]:
            return "output %s came back as %s %s, then %s %s" % (name, f[0], f[1], g[0], g[1])
        a, b = f[2], g[2]
        if torch.equal(a, b) and f[3:] == g[3:]:
            continue
        if not a.is_floating_point():
            return "output %s differs in %d of %d sampled elements" % (
                name, int((a != b).sum().item()), numel(a))
        if bool((torch.isnan(a) != torch.isnan(b)).any().item()):
            return "output %s has NaNs in different places" % name
        tol = max(1e-5, 8 * EPS.get(f[0], 0.0))
        big = float(torch.where(torch.isfinite(a), a.abs(), torch.zeros_like(a)).max().item()) if numel(a) else 0.0
        d = torch.where(a == b, torch.zeros_like(a), (a - b).abs())
        worst = float(torch.nan_to_num(d, nan=0.0, posinf=float("inf")).max().item()) if numel(a) else 0.0
        if worst > tol * max(big, 1e-30):
            return "output %s differs by up to %.4g (its largest magnitude is %.4g)" % (name, worst, big)
        if abs(f[3] - g[3]) > tol * max(f[4], 1e-30):
            return "the sum of output %s differs: %.6g, then %.6g" % (name, f[3], g[3])
    return None


def truth_forward(torch, model_t, args, tidx, dt):
    """forward of the truth's model on the case's arguments, floating tensors in dt (copies:
    the exported inputs stay as they are); floating outputs in dt, contiguous."""
    targs = list(args)
    for i in tidx:
        t = args[i]
        targs[i] = t.to(dt, copy=True) if t.is_floating_point() else t.clone()
    with TF32(torch, False), torch.no_grad():
        out = model_t(*targs)
    del targs
    return [(o.detach().to(dt) if o.is_floating_point() else o.detach()).contiguous()
            for o in outputs_of(torch, out)]


def check_shapes(tensors, ins, ref, c):
    want = [t for t in tensors if t["role"] == "input"] + [t for t in tensors if t["role"] == "output"]
    got = list(ins) + list(ref)
    for w, g in zip(want, got):
        if w["shape"] != [int(s) for s in g.shape] or w["dtype"] != dtype_name(g.dtype):
            raise Fail("inputs", "seed %d (%s): %s '%s' is %s %s, the first case's is %s %s; "
                       "get_inputs() must give the same shapes and dtypes for every seed"
                       % (c["seed"], c["dist"], w["role"], w["name"], dtype_name(g.dtype),
                          [int(s) for s in g.shape], w["dtype"], w["shape"]))
    if len(want) != len(got):
        raise Fail("output", "seed %d: forward gave %d outputs, the first case %d"
                   % (c["seed"], len(ref), len([t for t in tensors if t["role"] == "output"])))


def baselines(torch, model, template, tidx, srcs, precision, params, dev):
    """PyTorch eager and torch.compile of the module, timed by the candidate's protocol
    (tools/torch_timing.py: a kept case drawn at random per call, its inputs copied into the
    call's own input tensors outside the timed interval, L2 flushed, CUDA events around the
    call alone, the stream synchronized after it, the largest per-dist median). torch.compile
    failing is reported as compile_error, never a failure of prepare."""
    import random
    pick = random.SystemRandom()
    call_ins = [t.clone() for t in srcs[0][1]]
    call_args = list(template)
    for j, i in enumerate(tidx):
        call_args[i] = call_ins[j]

    def before(i):
        dist, ins = srcs[pick.randrange(len(srcs))]
        for d, s in zip(call_ins, ins):
            d.copy_(s)
        return dist, ()

    def run():
        return model(*call_args)

    flush = l2_flush_buffer(torch, dev)
    res = {"torch": getattr(torch, "__version__", "unknown")}
    with TF32(torch, precision == "tf32"), torch.no_grad():
        before(0)
        ms, p10, p90, trials, by = cuda_timing(torch, run, flush, before, ())
        res.update({"eager_ms": ms, "eager_p10_ms": p10, "eager_p90_ms": p90, "trials": trials,
                    "median_ms_by_dist": {"eager": by}})
        outs = outputs_of(torch, run())
        nbytes = sum(numel(t) * element_size(t) for t in call_ins + outs)
        nbytes += sum(numel(t) * element_size(t) for _, t in params)
        flops = count_flops(torch, model, call_args)
        kernels = eager_kernels(torch, model, call_args)
        workload, _ = classify(flops, nbytes, kernels, sum(numel(t) for t in call_ins),
                               sum(numel(o) for o in outs), None)
        del outs
        # an epilogue: eager launches more than the product, or the module has a bias
        epilogue = bool(kernels and len(kernels) > 1) or any(n.endswith("bias") for n, _ in params)
        mode = compile_mode(workload == "gemm-like", epilogue)
        res["compile_mode"] = mode
        try:
            cm = torch.compile(model, mode=mode)

            def crun():
                return cm(*call_args)
            before(0)
            crun()  # compiles (and autotunes): outside the timing
            torch.cuda.synchronize()
            cms, cp10, cp90, cn, cby = cuda_timing(torch, crun, flush, before, ())
            res.update({"compile_ms": cms, "compile_p10_ms": cp10, "compile_p90_ms": cp90,
                        "compile_trials": cn})
            res["median_ms_by_dist"]["compile"] = cby
        except Exception as ex:  # reported, not fatal: the eager figure stands
            res["compile_error"] = ("%s: %s" % (type(ex).__name__, ex))[:500]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return res


# the exit status when a reply cannot be written (REFERENCE_EXIT_CHANNEL, src/eval/reference.h)
EXIT_CHANNEL = 74


def main():
    # the reply channel: a private copy of stdout; fd 1 becomes stderr so that prints of the
    # user's module never mix with the replies
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # and the requests: a private copy of stdin; the module reads an empty stdin
    requests = os.fdopen(os.dup(0), "r")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)

    def send(obj):
        try:
            line = json.dumps(obj, allow_nan=False, default=str)
        except ValueError as e:  # NaN or infinity: JSON cannot carry it, the C side would refuse it
            line = json.dumps({"ok": False, "kind": "init", "message": "the description holds a "
                               "value JSON cannot carry (%s); a scalar of get_inputs() or "
                               "get_init_inputs() that is NaN or infinite?" % e})
        try:
            reply.write(line + "\n")
            reply.flush()
        except OSError as e:  # the channel is gone: nothing can be answered any more
            sys.stderr.write("cutegen-reference: cannot write a reply (%s): %s\n" % (
                e, "cutegen stopped reading" if isinstance(e, BrokenPipeError) else
                "the module closed the reply channel, a file descriptor it did not open"))
            sys.stderr.flush()
            os._exit(EXIT_CHANNEL)

    torch, terr = None, None
    # torch.compile (the baselines) compiles in this process: no pool of compile workers that
    # outlives it; read when torch._inductor's config is imported, so set before torch is
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    try:
        import torch
        import torch.nn  # noqa: F401
    except Exception as e:
        torch, terr = None, "%s: %s" % (type(e).__name__, e)
    hello = {"hello": "cutegen-reference", "protocol": PROTOCOL,
             "python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
             "torch": getattr(torch, "__version__", None) if torch else None}
    if terr:
        hello["torch_error"] = terr
    send(hello)
    exporter = Exporter(torch)
    for line in requests:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("not an object")
        except ValueError as e:
            send({"ok": False, "kind": "request", "message": "request is not a JSON object: %s" % e})
            continue
        op = req.get("op")
        if op == "quit":
            break
        if op == "release":
            exporter.release()
            send({"ok": True})
            break
        if op not in ("describe", "prepare"):
            send({"ok": False, "kind": "request",
                  "message": "unknown op %r (describe, prepare, release, quit)" % op})
            continue
        if torch is None:
            send({"ok": False, "kind": "no_torch",
                  "message": "%s cannot import torch (%s); install PyTorch for it (pip install "
                             "torch) or point cutegen at a python that has it (--python or "
                             "$CUTEGEN_PYTHON)" % (sys.executable, terr)})
            continue
        try:
            if op == "describe":
                d = describe(torch, str(req.get("file", "")), int(req.get("seed", 42)))
                send({"ok": True, "describe": d})
            else:
                send({"ok": True, "prepare": prepare(torch, req, exporter)})
        except Fail as f:
            send({"ok": False, "kind": f.kind, "message": f.message})
        except Exception as e:
            send({"ok": False, "kind": "forward",
                  "message": "%s the module failed: %s: %s" % (
                      "describing" if op == "describe" else "preparing the cases of",
                      type(e).__name__, e)})
    # end of input or release: the exported tensors go with the process
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except BaseException:  # shown as python would; the exit is still the one below
        traceback.print_exc()
    finally:
        # the last reply is out: a module's threads (not daemons) and atexit handlers must not
        # keep the process alive (describe's caller would wait for it until its deadline)
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)
