#!/usr/bin/env python3
"""The PyTorch eager baseline of a cutegen task (used by `cutegen eval --torch`).

usage: torch_eager.py TASK.json OUT.json [--device N]

Builds the task's inputs as PyTorch tensors, runs the op the way KernelBench's reference
models do (TF32 off for strict fp32), and times it with CUDA events, L2 flushed before each
trial, median of the trials. Then, in the same process and with the same protocol, the same op
under torch.compile (mode "default"; "max-autotune" for a GEMM with a bias or an activation),
its compilation and warm-up outside the timing. Writes {"ms": ..., "torch": version, "trials": n,
"compile_ms": ..., "compile_mode": ..., "compile_trials": n} (or "compile_error" in place of
compile_ms when torch.compile fails: reported, never fatal; --no-compile skips it), or
{"error": ...}.
"""
import json
import math
import sys


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

    def rnd(*shape):
        return torch.randn(*shape, device=d, dtype=dt)

    if op == "gemm":
        b, m, n, k = task.get("batch", 1), task["m"], task["n"], task["k"]
        mdims = task.get("m_dims") or [m]
        lead = [b] if b > 1 else []
        A = rnd(*(lead + ([k, m] if task["a_layout"] == "col" else mdims + [k])))
        B = rnd(*(lead + ([n, k] if task["b_layout"] == "col" else [k, n])))
        epi = task.get("epilogue", {})
        bias = rnd(n) if epi.get("bias") else None
        alpha = task.get("alpha", 1.0)
        act = epi.get("activation", "none")
        mask = task.get("mask", "none")

        def fn():
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
        A, x = rnd(task["m"], task["k"]), rnd(task["k"], 1)
        fn = lambda: torch.matmul(A, x)
    elif op == "scalar_mul":
        A, s = rnd(*task["shape"]), task["scalar"]
        fn = lambda: A * s
    elif op == "diag_matmul":
        a, B = rnd(task["n"]), rnd(task["n"], task["m"])
        fn = lambda: a.unsqueeze(1) * B
    elif op in ("softmax", "log_softmax"):
        x = rnd(*task["shape"])
        fn = (lambda: torch.softmax(x, dim=-1)) if op == "softmax" else (lambda: torch.log_softmax(x, dim=-1))
    elif op == "elementwise":
        x = rnd(*task["shape"])
        p = task.get("params", {})
        a = task["activation"]
        c = math.sqrt(2.0 / math.pi)
        fns = {
            "relu": lambda: torch.relu(x),
            "leaky_relu": lambda: F.leaky_relu(x, negative_slope=p.get("negative_slope", 0.01)),
            "sigmoid": lambda: torch.sigmoid(x),
            "tanh": lambda: torch.tanh(x),
            "swish": lambda: x * torch.sigmoid(x),
            "silu": lambda: F.silu(x),
            "gelu": lambda: F.gelu(x),
            "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
            "selu": lambda: torch.selu(x),
            "hardsigmoid": lambda: F.hardsigmoid(x),
            "softplus": lambda: F.softplus(x, beta=p.get("beta", 1.0), threshold=p.get("threshold", 20.0)),
            "softsign": lambda: x / (1 + torch.abs(x)),
            "elu": lambda: F.elu(x, alpha=p.get("alpha", 1.0)),
            "hardtanh": lambda: F.hardtanh(x, min_val=p.get("min_val", -1.0), max_val=p.get("max_val", 1.0)),
            "mingpt_gelu": lambda: 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3.0)))),
        }
        fn = fns[a]
    else:
        json.dump({"error": "no eager baseline for op %s" % op}, open(out_path, "w"))
        return 0

    flush = torch.empty(2 * torch.cuda.get_device_properties(dev).L2_cache_size // 4 + 1,
                        dtype=torch.float32, device=d)

    def timed(f):
        """CUDA events around each call, L2 flushed before each, median: (median, p10, p90, n)."""
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        torch.cuda.synchronize()
        est = e0.elapsed_time(e1)
        trials = int(max(5, min(100, 300.0 / (est + 0.05))))
        times = []
        for _ in range(trials):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            f()
            e.record()
            times.append((s, e))
        torch.cuda.synchronize()
        ms = sorted(s.elapsed_time(e) for s, e in times)
        return ms[len(ms) // 2], ms[len(ms) // 10], ms[-1 - len(ms) // 10], trials

    ms, p10, p90, trials = timed(fn)
    res = {"ms": ms, "p10_ms": p10, "p90_ms": p90, "trials": trials, "torch": torch.__version__}
    if "--no-compile" not in sys.argv:
        epi = task.get("epilogue", {}) if op == "gemm" else {}
        mode = "max-autotune" if epi.get("bias") or epi.get("activation", "none") != "none" else "default"
        res["compile_mode"] = mode
        try:
            cfn = torch.compile(fn, mode=mode)
            cfn()  # compiles (and autotunes): outside the timing
            torch.cuda.synchronize()
            cms, cp10, cp90, ctrials = timed(cfn)
            res.update({"compile_ms": cms, "compile_p10_ms": cp10, "compile_p90_ms": cp90,
                        "compile_trials": ctrials})
        except Exception as e:  # reported, not fatal: the eager figure stands
            res["compile_error"] = ("%s: %s" % (type(e).__name__, e))[:500]
    json.dump(res, open(out_path, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
