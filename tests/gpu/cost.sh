#!/usr/bin/env bash
# The cost of one evaluation on this GPU (issue 16's closing note): evaluator seconds and the
# runner's own, for ReLU kb1/19 and the fp32 GEMM kb1/1, three times each. Run it in a checkout
# of the protocol to measure (before and after): the first run of a task may measure its
# baselines; the later ones find them cached (issue 16 on). With BUILD=DIR, DIR's binaries.
#   bash tests/gpu/cost.sh            prints one line per evaluation and a summary
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CG="$PWD/$BUILD/cutegen"
OUT=$(mktemp -d)
for pair in "kernels/relu_fp32.cu kb1/19_relu" "kernels/gemm_fp32_sm80.cu kb1/1_square_matmul"; do
    set -- $pair
    "$CG" build "$1" >/dev/null 2>&1 # the compile is not the evaluation's cost
    for i in 1 2 3; do
        start=$(date +%s.%N)
        "$CG" eval "$1" --task "$2" --json >"$OUT/r.json" 2>"$OUT/r.err"
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        python3 - "$OUT/r.json" "$1" "$2" "$i" "$wall" <<'PY'
import json, sys
path, kernel, task, i, wall = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print("%s %s run %s: no JSON (%s)" % (task, kernel, i, e)); sys.exit(0)
rep = r.get("report") or {}
tc = (rep.get("timing") or {}).get("timed_calls") or {}
base = rep.get("baseline") or {}
print("%-20s run %s: %-5s %7.3f ms  evaluator_s %6.2f  runner %6.2f s  wall %6.2f s  baseline %s  trials %s  regen/trial %s ms  overhead/trial %s ms"
      % (task, i, r.get("verdict"), (rep.get("metrics") or {}).get("ms", -1), r.get("evaluator_s", -1),
         rep.get("runner_wall_s", rep.get("runner_s", -1)), float(wall),
         "cached" if base.get("cached") else ("measured" if base else "-"),
         (rep.get("timing") or {}).get("trials"), tc.get("regenerate_ms_per_trial", "-"),
         tc.get("overhead_ms_per_trial", "-")))
PY
    done
done
rm -rf "$OUT"
