#!/usr/bin/env python3
"""The module suites with real torch (never in CI; needs torch, a GPU for --full).

usage: python3 tests/gpu/module_suite_torch.py [--full] [FILE_OR_DIR...]

Without --full: every file runs on the CPU at tiny shapes (its size constants capped at 32),
twice under one seed; the outputs must be tensors, finite, and equal (what
tests/e2e/module_suite.sh does with --run when torch is installed).
With --full: every file runs once on cuda:0 at its own (KernelBench) shapes, in its own
dtype; the outputs must be finite. Prints one "ok - FILE ..." / "not ok - FILE: why" per file,
then "N passed, N failed", and exits 1 if any failed. Directories default to
tasks/modules/level1, tasks/modules/level2 and tasks/kb1_modules.
"""
import glob
import importlib.util
import os
import sys
import time

import torch

sys.dont_write_bytecode = True  # no __pycache__ beside the task files
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TINY = 32


def load(path, tiny):
    spec = importlib.util.spec_from_file_location("m_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if tiny:
        for k, v in list(vars(mod).items()):
            if isinstance(v, int) and not isinstance(v, bool) and v > TINY:
                setattr(mod, k, TINY)
            elif isinstance(v, tuple) and all(isinstance(e, int) for e in v):
                setattr(mod, k, tuple(min(e, TINY) for e in v))
    return mod


def outputs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def finite(t):
    return not t.is_floating_point() or bool(torch.isfinite(t).all())


def run_tiny(path):
    mod = load(path, tiny=True)
    got = []
    for _ in range(2):
        torch.manual_seed(0)
        m = mod.Model(*mod.get_init_inputs())
        with torch.no_grad():
            got.append(outputs(m(*mod.get_inputs())))
    a, b = got
    if not a or not all(isinstance(t, torch.Tensor) for t in a):
        return "forward does not return tensors"
    if not all(finite(t) for t in a):
        return "an output is not finite"
    if not all(torch.equal(x, y) for x, y in zip(a, b)):
        return "two runs under one seed differ"
    return ", ".join("x".join(map(str, t.shape)) + f" {t.dtype}" for t in a)


def run_full(path):
    mod = load(path, tiny=False)
    torch.manual_seed(0)
    with torch.device("cuda"):  # parameters and inputs made on the GPU: no host copies
        m = mod.Model(*mod.get_init_inputs())
        xs = mod.get_inputs()
    with torch.no_grad():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        ys = outputs(m(*xs))
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
    if not all(isinstance(t, torch.Tensor) for t in ys):
        return "forward does not return tensors"
    if not all(finite(t) for t in ys):
        return "an output is not finite"
    peak = torch.cuda.max_memory_allocated() / 2**30
    desc = ", ".join("x".join(map(str, t.shape)) + f" {t.dtype}" for t in ys)
    del m, xs, ys
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return f"{desc}; first call {ms:.1f} ms, peak {peak:.1f} GiB"


def main(argv):
    full = "--full" in argv
    args = [a for a in argv if a != "--full"] or [
        os.path.join(ROOT, d) for d in ("tasks/modules/level1", "tasks/modules/level2",
                                        "tasks/kb1_modules")]
    files = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "*.py"))) if os.path.isdir(a) else [a]
    passed = failed = 0
    for f in files:
        name = os.path.relpath(f, ROOT)
        try:
            r = run_full(f) if full else run_tiny(f)
            bad = r.startswith(("forward does", "an output", "two runs"))
        except Exception as e:  # the module's own error, whatever it is
            r, bad = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", True
            if full:
                torch.cuda.empty_cache()
        print(f"{'not ok' if bad else 'ok'} - {name}: {r}", flush=True)
        failed += bad
        passed += not bad
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
