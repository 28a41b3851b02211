#!/usr/bin/env bash
# Run ON THE GPU MACHINE: an A/B of two kernels on one task. `cutegen eval` runs A and B in
# turn, ROUNDS times each (A B A B ...), so drift in clocks or temperature falls on both;
# each evaluation times its kernel and the task's baseline (cuBLASLt, or the copy roofline)
# in the same process. Prints one JSON line per evaluation, then a summary line with each
# kernel's best and median speedup over the baseline.
#   bash bench/ab_eval.sh A.cu B.cu TASK [ROUNDS]     (ROUNDS default 3)
set -u
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: bench/ab_eval.sh A.cu B.cu TASK [ROUNDS]" >&2; exit 2; }
A=$1 B=$2 TASK=$3 ROUNDS=${4:-3}
CUTEGEN=${CUTEGEN:-build/cutegen}
for f in "$A" "$B"; do [ -f "$f" ] || { echo "ab_eval: no such kernel '$f'" >&2; exit 2; }; done
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq "$ROUNDS"); do
    for f in "$A" "$B"; do
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
