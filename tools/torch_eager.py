#!/usr/bin/env python3
"""The PyTorch eager baseline of a cutegen task (used by `cutegen eval --torch`).

usage: torch_eager.py TASK.json OUT.json [--device N]

Builds the task's inputs as PyTorch tensors, runs the op the way KernelBench's reference
models do (TF32 off for strict fp32), and times it under the runner's protocol as far as Python
allows: inputs rotated over up to 3 sets and regenerated before every timed call in a
distribution drawn from the task's (the runner's laws: uniform, normal, large, branches, sparse),
a new output every call, L2 flushed, CUDA events around the call alone, the stream synchronized
after it, the time the largest of the per-distribution medians. Then, in the same process and
with the same protocol, the same op under torch.compile (mode "default"; "max-autotune" for a
GEMM with a bias or an activation), its compilation and warm-up outside the timing. Writes
{"ms": ..., "torch": version, "trials": n, "protocol": ..., "median_ms_by_dist": {...},
"input_sets": n, "compile_ms": ..., "compile_mode": ..., "compile_trials": n,
"compile_median_ms_by_dist": {...}} (or "compile_error" in place of compile_ms when
torch.compile fails: reported, never fatal; --no-compile skips it), or {"error": ...}. The
timing is tools/torch_timing.py's, shared with the module baselines of tools/reference.py.
"""
import json
import math
import os
import random
import sys

#@embed tools/torch_timing.py
if "cuda_timing" not in globals():  # run from the repository: the helper beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_timing import compile_mode, cuda_timing, l2_flush_buffer


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    task = json.load(open(sys.argv[1]))
    out_path = sys.argv[2]
    dev = int(sys.argv[sys.argv.index("--device") + 1]) if "--device" in sys.argv else 0
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # no torch here: say so, do not fail the evaluation
        json.dump({"error": "no torch: %s" % e}, open(out_path, "w"))
        return 0
    if not torch.cuda.is_available():
        json.dump({"error": "torch sees no CUDA device"}, open(out_path, "w"))
        return 0
    torch.cuda.set_device(dev)
    strict = task.get("precision") == "strict"
    torch.backends.cuda.matmul.allow_tf32 = not strict
    torch.backends.cudnn.allow_tf32 = not strict
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}.get(task["dtype"])
    if dt is None:
        json.dump({"error": "no eager baseline for dtype %s" % task["dtype"]}, open(out_path, "w"))
        return 0
    op = task["op"]
    d = "cuda"
    # The inputs: (name, shape) in the order fn takes them; each call gets them as arguments, so
    # the timed calls can rotate over input sets regenerated before every call.
    if op == "gemm":
        b, m, n, k = task.get("batch", 1), task["m"], task["n"], task["k"]
        mdims = task.get("m_dims") or [m]
        lead = [b] if b > 1 else []
        epi = task.get("epilogue", {})
        specs = [("A", lead + ([k, m] if task["a_layout"] == "col" else mdims + [k])),
                 ("B", lead + ([n, k] if task["b_layout"] == "col" else [k, n]))]
        if epi.get("bias"):
            specs.append(("bias", [n]))
        alpha = task.get("alpha", 1.0)
        act = epi.get("activation", "none")
        mask = task.get("mask", "none")

        def fn(A, B, bias=None):
            a = A.transpose(-1, -2) if task["a_layout"] == "col" else A
            bb = B.transpose(-1, -2) if task["b_layout"] == "col" else B
            c = torch.matmul(a, bb)
            if alpha != 1.0:
                c = c * alpha
            if bias is not None:
                c = c + bias
            if act == "relu":
                c = torch.relu(c)
            elif act == "gelu":
                c = F.gelu(c)
            elif act == "gelu_tanh":
                c = F.gelu(c, approximate="tanh")
            elif act == "silu":
                c = F.silu(c)
            if mask == "upper":
                c = torch.triu(c)
            elif mask == "lower":
                c = torch.tril(c)
            return c
    elif op == "matvec":
        specs = [("A", [task["m"], task["k"]]), ("x", [task["k"], 1])]
        fn = lambda A, x: torch.matmul(A, x)
    elif op == "scalar_mul":
        s = task["scalar"]
        specs = [("A", task["shape"])]
        fn = lambda A: A * s
    elif op == "diag_matmul":
        specs = [("a", [task["n"]]), ("B", [task["n"], task["m"]])]
        fn = lambda a, B: a.unsqueeze(1) * B
    elif op in ("softmax", "log_softmax"):
        specs = [("x", task["shape"])]
        fn = (lambda x: torch.softmax(x, dim=-1)) if op == "softmax" else (lambda x: torch.log_softmax(x, dim=-1))
    elif op == "elementwise":
        specs = [("x", task["shape"])]
        p = task.get("params", {})
        a = task["activation"]
        c = math.sqrt(2.0 / math.pi)
        fns = {
            "relu": lambda x: torch.relu(x),
            "leaky_relu": lambda x: F.leaky_relu(x, negative_slope=p.get("negative_slope", 0.01)),
            "sigmoid": lambda x: torch.sigmoid(x),
            "tanh": lambda x: torch.tanh(x),
            "swish": lambda x: x * torch.sigmoid(x),
            "silu": lambda x: F.silu(x),
            "gelu": lambda x: F.gelu(x),
            "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
            "selu": lambda x: torch.selu(x),
            "hardsigmoid": lambda x: F.hardsigmoid(x),
            "softplus": lambda x: F.softplus(x, beta=p.get("beta", 1.0), threshold=p.get("threshold", 20.0)),
            "softsign": lambda x: x / (1 + torch.abs(x)),
            "elu": lambda x: F.elu(x, alpha=p.get("alpha", 1.0)),
            "hardtanh": lambda x: F.hardtanh(x, min_val=p.get("min_val", -1.0), max_val=p.get("max_val", 1.0)),
            "mingpt_gelu": lambda x: 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3.0)))),
        }
        fn = fns[a]
    else:
        json.dump({"error": "no eager baseline for op %s" % op}, open(out_path, "w"))
        return 0

    # The runner's distributions (runner/protocol.c protocol_fill, runner/devkern.cu gen_value),
    # drawn by PyTorch's generator: the same laws, not the same values.
    dists = task.get("distributions") or ["uniform"]
    gemm_like = op in ("gemm", "matvec")
    rng = 1e5 if gemm_like and task.get("precision") == "tf32" else 100.0
    density = min(1.0, math.sqrt(8.0 / max(1, task.get("k", 1))))
    pa = task.get("params", {})
    act_fn = task.get("activation", "none")
    if act_fn == "hardtanh":
        points = [pa.get("min_val", -1.0), pa.get("max_val", 1.0)]
    elif act_fn == "hardsigmoid":
        points = [-3.0, 3.0, 0.0]
    elif act_fn == "softplus":
        points = [pa.get("threshold", 20.0) / pa.get("beta", 1.0), 0.0]
    else:
        points = [0.0]
    pts = torch.tensor(points, device=d, dtype=torch.float32)
    steps = torch.tensor([0.0, 1e-3, 1.0, 25.0], device=d, dtype=torch.float32)
    CHUNK = 1 << 26  # elements generated at once: bounded scratch for multi-GB tensors

    def values(n, dist):
        if dist == "uniform":
            return torch.rand(n, device=d)
        if dist == "normal":
            return torch.randn(n, device=d)
        if dist == "large":
            return torch.rand(n, device=d) * (2 * rng) - rng
        if dist == "sparse":
            return torch.randn(n, device=d) * (torch.rand(n, device=d) < density)
        # branches: at, near (1e-3), around (1) a branch point, or anywhere in (-25, 25)
        case = torch.randint(4, (n,), device=d)
        u = torch.rand(n, device=d) * 2 - 1
        at = pts[torch.randint(len(points), (n,), device=d)]
        return torch.where(case == 3, 0.0, at) + u * steps[case]

    def regenerate(ins, dist):
        for (name, _), t in zip(specs, ins):
            law = "normal" if dist == "sparse" and name == "bias" else dist
            flat = t.view(-1)
            for i in range(0, flat.numel(), CHUNK):
                part = flat[i:i + CHUNK]
                part.copy_(values(part.numel(), law))

    def new_set():
        return [torch.empty(*shape, device=d, dtype=dt) for _, shape in specs]

    # Up to 3 input sets while they take at most half the free memory, as the runner's.
    sets = [new_set()]
    in_bytes = sum(t.numel() * t.element_size() for t in sets[0])
    while len(sets) < 3:
        free, _ = torch.cuda.mem_get_info()
        if in_bytes * len(sets) > free // 2:
            break
        sets.append(new_set())
    for s_ in sets:
        regenerate(s_, "uniform")

    flush = l2_flush_buffer(torch, dev)

    def next_inputs(i):
        """The next input set regenerated in a distribution drawn from the task's."""
        dist = random.choice(dists)
        ins = sets[i % len(sets)]
        regenerate(ins, dist)
        return dist, ins

    def timed(f):
        """The runner's protocol (tools/torch_timing.py): (ms, p10, p90, n, by_dist)."""
        return cuda_timing(torch, f, flush, next_inputs, sets[0])

    ms, p10, p90, trials, by_dist = timed(fn)
    res = {"ms": ms, "p10_ms": p10, "p90_ms": p90, "trials": trials, "torch": torch.__version__,
           "protocol": "regenerated-v1", "median_ms_by_dist": by_dist, "input_sets": len(sets)}
    if "--no-compile" not in sys.argv:
        epi = task.get("epilogue", {}) if op == "gemm" else {}
        mode = compile_mode(op == "gemm", epi.get("bias") or epi.get("activation", "none") != "none")
        res["compile_mode"] = mode
        try:
            cfn = torch.compile(fn, mode=mode)
            cfn(*sets[0])  # compiles (and autotunes): outside the timing
            torch.cuda.synchronize()
            cms, cp10, cp90, ctrials, cby = timed(cfn)
            res.update({"compile_ms": cms, "compile_p10_ms": cp10, "compile_p90_ms": cp90,
                        "compile_trials": ctrials, "compile_median_ms_by_dist": cby})
        except Exception as e:  # reported, not fatal: the eager figure stands
            res["compile_error"] = ("%s: %s" % (type(e).__name__, e))[:500]
    json.dump(res, open(out_path, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
