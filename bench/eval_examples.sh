#!/usr/bin/env bash
# Benchmarks the example kernels (kernels/, generated from the builtin families) with `cutegen
# eval` on the KernelBench shapes (GPU machine). Ratios come from the same run: kernel vs
# cuBLASLt, vs the copy roofline, vs PyTorch eager. Also measures the evaluator's own overhead and the compile time of the GEMM.
# Writes $OUT/bench_examples.json (date, GPU, command, commit, results).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
CG="$PWD/build/cutegen"
mkdir -p "$OUT/raw"
cases=(
    "kernels/relu_fp32.cu kb1/19_relu"
    "kernels/softmax_fp32.cu kb1/23_softmax"
    "kernels/gemm_fp32_sm80.cu kb1/1_square_matmul"
    "kernels/gemm_fp32_sm80.cu kb1/8_matmul_irregular"
    "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096"
    "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_8192"
)
for c in "${cases[@]}"; do
    set -- $c
    [ -f "$1" ] || continue
    name="$(basename "$1" .cu)__${2//\//_}"
    echo "== $1 on $2"
    "$CG" eval "$1" --task "$2" --torch --json >"$OUT/raw/$name.json" 2>"$OUT/raw/$name.err"
    python3 - "$OUT/raw/$name.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("   no result:", e); sys.exit(0)
m = j.get("report", {}).get("metrics", {})
print("   verdict %s  %.4f ms  vs cuBLAS %s  vs torch %s  roofline %s" % (
    j.get("verdict"), m.get("ms", -1), m.get("speedup_vs_cublas", "-"),
    m.get("speedup_vs_torch", "-"), m.get("roofline_fraction", "-")))
if j.get("verdict") != "pass":
    print("   ", (j.get("message") or "")[:600])
PY
done

# evaluator overhead: a tiny task, no baselines: runner start to report
echo "== overhead"
for i in 1 2 3; do
    "$CG" eval kernels/relu_fp32.cu --task tests/redteam/tasks/relu_small.json --no-baseline --json \
        >"$OUT/raw/overhead_$i.json" 2>/dev/null
done
# compile time of the example GEMM: cold, then from the cache
echo "== compile"
/usr/bin/time -f "%e" -o "$OUT/raw/compile_cold.txt" "$CG" build kernels/gemm_fp32_sm80.cu --no-cache >/dev/null 2>&1
/usr/bin/time -f "%e" -o "$OUT/raw/compile_cached.txt" "$CG" build kernels/gemm_fp32_sm80.cu >/dev/null 2>&1

python3 - "$OUT" <<'PY'
import glob, json, os, subprocess, sys, datetime
out = sys.argv[1]
def load(p):
    try: return json.load(open(p))
    except Exception: return None
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
res = []
for p in sorted(glob.glob(out + "/raw/*__*.json")):
    j = load(p)
    if not j: continue
    r = j.get("report", {})
    res.append({"kernel": j.get("kernel"), "task": j.get("task"), "verdict": j.get("verdict"),
                "message": j.get("message"), "metrics": r.get("metrics"), "timing": r.get("timing"),
                "baseline": r.get("baseline"), "evaluator_s": j.get("evaluator_s"),
                "compile": j.get("build")})
ov = [load(p) for p in sorted(glob.glob(out + "/raw/overhead_*.json"))]
ov = [{"evaluator_s": o.get("evaluator_s"), "setup_s": o["report"].get("setup_s"),
       "check_s": o["report"].get("check_s"), "timing_s": o["report"].get("timing_s"),
       "runner_s": o["report"].get("runner_s")} for o in ov if o and "report" in o]
def num(p):
    try: return float(open(p).read().split()[-1])
    except Exception: return None
doc = {"date": datetime.datetime.utcnow().isoformat() + "Z", "gpu": gpu,
       "command": "bash bench/eval_examples.sh (via bench/gpu_session.sh bench)",
       "commit": os.environ.get("CUTEGEN_COMMIT", "unknown"),
       "results": res, "evaluator_overhead_small_task": ov,
       "compile_gemm_example_s": {"cold": num(out + "/raw/compile_cold.txt"),
                                  "cached": num(out + "/raw/compile_cached.txt"),
                                  "cores": os.cpu_count()}}
json.dump(doc, open(out + "/bench_examples.json", "w"), indent=1)
print("wrote", out + "/bench_examples.json")
PY
