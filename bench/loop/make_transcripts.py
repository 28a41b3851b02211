#!/usr/bin/env python3
"""Writes the replay transcripts of the loop demo (bench/loop_demo.sh): scripted model replies
that walk each path of the loop for real on a GPU: a compile error fixed, a mismatch fixed, a
speedup kept, a regression rolled back, an edit applied."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
def src(p): return open(os.path.join(root, p)).read()
def whole(change, path):
    return "Change: %s\n\n```cuda\n%s```\n" % (change, src(path))
fast_relu = src("kernels/relu_fp32.cu")
first = fast_relu.splitlines()[1]
edit = ("Change: reword the header comment (no code change)\n\n<<<<<<< SEARCH\n%s\n=======\n%s (tuned by the demo)\n>>>>>>> REPLACE\n"
        % (first, first))
relu = [
    whole("first version: one thread per element", "bench/loop/relu_typo.cu"),
    whole("fix the typo in make_tensor", "bench/loop/relu_offbyone.cu"),
    whole("fix the bound: the last element was skipped", "bench/loop/relu_naive.cu"),
    whole("128-bit vectorized TiledCopy, 4 vectors per thread", "kernels/relu_fp32.cu"),
    whole("one small block per SM with a grid-stride loop", "bench/loop/relu_fewblocks.cu"),
    edit,
]
gemm = [
    whole("first version: one thread per output", "bench/loop/gemm_typo.cu"),
    whole("fix the missing semicolon", "bench/loop/gemm_naive.cu"),
    whole("128x128 CTA tiles, cp.async 3-stage pipeline, FMA TiledMMA", "kernels/gemm_fp32_sm80.cu"),
    whole("tall thread blocks", "bench/loop/gemm_slow.cu"),
]
for name, replies in (("relu", relu), ("gemm", gemm)):
    with open(os.path.join(here, "transcript_%s.jsonl" % name), "w") as f:
        for r in replies:
            f.write(json.dumps({"reply": r, "stop": "end", "usage": {"in": 0, "out": 0}}) + "\n")
print("wrote", len(relu), "and", len(gemm), "replies")
