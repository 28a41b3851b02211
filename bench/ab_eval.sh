#!/usr/bin/env bash
# Run ON THE GPU MACHINE: an A/B (or A/B/C...) of kernels on one task. `cutegen eval` runs the
# kernels in turn, ROUNDS times each (A B A B ...), so drift in clocks or temperature falls on
# all; each evaluation times its kernel and the task's baseline (cuBLASLt, or the copy
# roofline) in the same process. Prints one JSON line per evaluation, then a summary line with
# each kernel's best and median speedup over the baseline.
#   bash bench/ab_eval.sh A.cu B.cu [C.cu ...] TASK [ROUNDS]     (ROUNDS default 3)
set -u
cd "$(dirname "$0")/.."
usage() { echo "usage: bench/ab_eval.sh A.cu B.cu [C.cu ...] TASK [ROUNDS]" >&2; exit 2; }
KERNELS=()
while [ $# -gt 0 ] && [[ $1 == *.cu ]]; do KERNELS+=("$1"); shift; done
[ ${#KERNELS[@]} -ge 2 ] && [ $# -ge 1 ] && [ $# -le 2 ] || usage
TASK=$1 ROUNDS=${2:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ab_eval: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
CUTEGEN=${CUTEGEN:-build/cutegen}
for f in "${KERNELS[@]}"; do [ -f "$f" ] || { echo "ab_eval: no such kernel '$f'" >&2; exit 2; }; done
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq "$ROUNDS"); do
    for f in "${KERNELS[@]}"; do
        "$CUTEGEN" eval "$f" --task "$TASK" --json 2>/dev/null |
            python3 -c '
import json, sys
d = json.load(sys.stdin); r = d.get("report", d); m = r.get("metrics") or {}
print(json.dumps({"kernel": sys.argv[1], "task": sys.argv[2], "round": int(sys.argv[3]),
                  "verdict": r.get("verdict"), "message": r.get("message") if r.get("verdict") != "pass" else None,
                  "ms": m.get("ms"), "speedup": m.get("speedup_vs_baseline")}))' "$f" "$TASK" "$r" ||
            echo "{\"kernel\": \"$f\", \"task\": \"$TASK\", \"round\": $r, \"verdict\": null, \"message\": \"cutegen eval gave no report\"}"
    done
done >"$rows"
cat "$rows"
python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
out = {}
for k in dict.fromkeys(r["kernel"] for r in rows):
    sp = [r["speedup"] for r in rows if r["kernel"] == k and r["verdict"] == "pass" and r["speedup"]]
    out[k] = {"passed": len(sp), "evals": sum(r["kernel"] == k for r in rows),
              "best_speedup": max(sp) if sp else None, "median_speedup": statistics.median(sp) if sp else None}
print(json.dumps({"summary": out}))' <"$rows"
