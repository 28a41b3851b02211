#!/usr/bin/env bash
# The loop on a GPU, driven by recorded model replies (bench/loop/transcript_*.jsonl, written by
# bench/loop/make_transcripts.py): an activation run (kb1/19_relu) and a GEMM run
# (kb1/1_square_matmul) that walk each path for real: a compile error fixed, a mismatch fixed, a
# speedup kept, a regression rolled back, an edit applied, profiling from its stage. Every runner
# report is recorded (--record-evals) so CI can replay the same runs without a GPU, and each
# run's best kernel is confirmed by a separate `cutegen eval`.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
CG="$PWD/build/cutegen"
REPO=$PWD
mkdir -p "$OUT/evals"
run() { # name task iters extra...
    local name=$1 task=$2 iters=$3; shift 3
    echo "== run $name on $task"
    "$CG" run "$task" --backend replay --replay "bench/loop/transcript_$name.jsonl" --iters "$iters" \
        --out "$OUT/run_$name" --record-evals "$OUT/evals" --json "$@" >"$OUT/run_$name.json" 2>"$OUT/run_$name.log"
    echo "   exit $?"; tail -n 25 "$OUT/run_$name.log"
    best=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1])).get("best") or {}; print(b.get("source") or "")' "$OUT/run_$name.json" 2>/dev/null)
    if [ -n "$best" ] && [ -f "$best" ]; then
        cp "$best" "$OUT/best_$name.cu"
        "$CG" eval "$OUT/best_$name.cu" --task "$task" --json >"$OUT/confirm_$name.json" 2>&1
        python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); m=j.get("report",{}).get("metrics",{}); print("   confirmed by cutegen eval:", j.get("verdict"), m.get("ms"), "ms, speedup", m.get("speedup_vs_baseline"))' "$OUT/confirm_$name.json"
    else
        echo "   no best kernel to confirm"
    fi
}
run relu kb1/19_relu 6
run gemm kb1/1_square_matmul 4 --profile-from-stage 1
# each run's best kernel exported and called through its PyTorch extension against torch
for name in relu gemm; do
    "$CG" export "$OUT/run_$name" --out "$OUT/export_$name" >/dev/null &&
        (cd "$OUT/export_$name" && CUTLASS_DIR="$REPO/third_party/cutlass" timeout 900 python3 example.py) \
        >"$OUT/export_$name.log" 2>&1
    echo "== export $name: example.py exit $? (0: matches torch)"; tail -n 4 "$OUT/export_$name.log"
done
(cd "$OUT" && tar -czf loop_evals.tgz evals run_relu run_gemm export_*.log)
