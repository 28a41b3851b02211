#!/usr/bin/env bash
# Run ON THE GPU MACHINE: the same kernels judged by two builds of cutegen, A (before a change of
# the evaluator) and B (after), in turn (A B A B ...), so clock drift falls on both. For each
# (kernel, task) it records each build's verdict, kernel time, speedup over the task's baseline
# (cuBLASLt, or the copy roofline) measured in the same evaluation, and the evaluator's own wall
# time (process start to report), with the cuBLASLt time and the protocol that timed it (issue 16:
# "regenerated-v1", as the candidate; "fixed" before) and the timed calls' overhead per trial. The
# kernels: the examples under kernels/ (generated from the
# families) and the builtin agent's start kernel for a set of tasks (as B's `cutegen builtin
# TASK --source` gives).
#   A=old/cutegen B=build/cutegen OUT=DIR [ROUNDS=2] bash bench/judge_ab.sh
# Writes $OUT/judge_ab.json (date, GPU, command, both commits, rows, summary).
set -u
cd "$(dirname "$0")/.."
A=${A:?A=path to the old cutegen} B=${B:-build/cutegen} OUT=${OUT:?OUT=dir} ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT/ab"
cases=(
    "kernels/relu_fp32.cu kb1/19_relu"
    "kernels/softmax_fp32.cu kb1/23_softmax"
    "kernels/gemm_fp32_sm80.cu kb1/1_square_matmul"
    "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096"
)
for t in ${AB_BUILTIN_TASKS:-kb1/19_relu kb1/23_softmax kb1/1_square_matmul kb1/4_matvec kb1/12_diag_matmul \
         kb1/14_upper_triangular_matmul hopper/gemm_bf16_4096 hopper/gemm_fp8_8192 hopper/gemm_bf16_4096_bias_relu}; do
    src="$OUT/ab/builtin_${t//\//_}.cu"
    if "$B" builtin "$t" --source >"$src" 2>"$src.err"; then cases+=("$src $t"); else echo "judge_ab: no builtin kernel for $t: $(cat "$src.err")"; fi
done
# compile everything first, both builds, in parallel (the GPU machine has 16 cores)
for c in "${cases[@]}"; do
    set -- $c
    "$A" build "$1" >/dev/null 2>&1 &
    "$B" build "$1" >/dev/null 2>&1 &
done
wait
rows="$OUT/ab/rows.jsonl"; : >"$rows"
for r in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
        set -- $c
        for side in A B; do
            cg=${!side}
            "$cg" eval "$1" --task "$2" --json >"$OUT/ab/last.json" 2>"$OUT/ab/last.err"
            python3 - "$OUT/ab/last.json" "$side" "$1" "$2" "$r" >>"$rows" <<'PY'
import json, sys
path, side, kernel, task, rnd = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    d = {"verdict": None, "message": "no JSON: %s" % e}
rep = d.get("report") or {}
m = rep.get("metrics") or {}
print(json.dumps({"side": side, "kernel": kernel, "task": task, "round": int(rnd),
                  "verdict": d.get("verdict"), "message": (d.get("message") or "")[:300] if d.get("verdict") != "pass" else None,
                  "ms": m.get("ms"), "speedup": m.get("speedup_vs_baseline"),
                  "roofline_fraction": m.get("roofline_fraction"), "evaluator_s": d.get("evaluator_s"),
                  "baseline_ms": ((rep.get("baseline") or {}).get("cublaslt") or {}).get("median_ms"),
                  "baseline_protocol": ((rep.get("baseline") or {}).get("cublaslt") or {}).get("protocol", "fixed"),
                  "overhead_ms_per_trial": ((rep.get("timing") or {}).get("timed_calls") or {}).get("overhead_ms_per_trial")}))
PY
        done
    done
done
python3 - "$rows" "$OUT/judge_ab.json" "$A" "$B" <<'PY'
import json, statistics, subprocess, sys, datetime
rows = [json.loads(l) for l in open(sys.argv[1])]
def ver(cg):
    try: return subprocess.run([cg, "version"], capture_output=True, text=True).stdout.strip()
    except Exception: return None
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
summary = []
for key in dict.fromkeys((r["kernel"], r["task"]) for r in rows):
    e = {"kernel": key[0], "task": key[1]}
    for side in "AB":
        rs = [r for r in rows if (r["kernel"], r["task"]) == key and r["side"] == side]
        sp = [r["speedup"] for r in rs if r["verdict"] == "pass" and r["speedup"]]
        ev = [r["evaluator_s"] for r in rs if r["evaluator_s"]]
        e[side] = {"verdicts": [r["verdict"] for r in rs],
                   "median_speedup": statistics.median(sp) if sp else None,
                   "median_evaluator_s": statistics.median(ev) if ev else None}
    summary.append(e)
    print("%-40s %-32s A %s %s %ss | B %s %s %ss" % (key[0][-40:], key[1], e["A"]["verdicts"], e["A"]["median_speedup"],
          e["A"]["median_evaluator_s"], e["B"]["verdicts"], e["B"]["median_speedup"], e["B"]["median_evaluator_s"]))
json.dump({"date": datetime.date.today().isoformat(), "gpu": gpu, "command": "bench/judge_ab.sh",
           "A": {"path": sys.argv[3], "version": ver(sys.argv[3])}, "B": {"path": sys.argv[4], "version": ver(sys.argv[4])},
           "summary": summary, "rows": rows}, open(sys.argv[2], "w"), indent=1)
PY
