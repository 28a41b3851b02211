#!/usr/bin/env bash
# GPU tests (never in CI): each example kernel passes `cutegen eval`, and each red-team kernel
# in tests/redteam/manifest.json gets the verdict it deserves. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CG="$PWD/$BUILD/cutegen"
OUT=${GPU_TEST_OUT:-$(mktemp -d)}
mkdir -p "$OUT"
passed=0 failed=0
ok()  { echo "ok - $*"; passed=$((passed + 1)); }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }

verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict","?"))' "$1" 2>/dev/null || echo "no-json"; }

# expected verdict classes of the manifest -> verdicts that satisfy them
matches() {
    case "$1:$2" in
        incorrect:incorrect|incorrect:stale_output|incorrect:precision|incorrect:inputs_modified) return 0 ;;
        policy:policy) return 0 ;;
        precision:precision) return 0 ;;
        timeout:timeout) return 0 ;;
        crash:cuda_error|crash:crash) return 0 ;;
        timing:timing_escape|timing:stale_output|timing:incorrect) return 0 ;;
        stale_output:stale_output|stale:stale_output) return 0 ;;
        inputs_modified:inputs_modified) return 0 ;;
        pass:pass) return 0 ;;
    esac
    [ "$1" = "$2" ]
}

# 1. example kernels: must pass
while read -r kernel task; do
    [ -n "$kernel" ] || continue
    [ -f "$kernel" ] || { bad "example $kernel missing"; continue; }
    name=$(basename "$kernel" .cu)
    "$CG" eval "$kernel" --task "$task" --json >"$OUT/example_$name.json" 2>"$OUT/example_$name.err"
    v=$(verdict_of "$OUT/example_$name.json")
    if [ "$v" = pass ]; then ok "example $kernel on $task passes"; else bad "example $kernel on $task: verdict $v ($(tail -c 600 "$OUT/example_$name.err"))"; fi
done <<'LIST'
kernels/relu_fp32.cu tests/redteam/tasks/relu_small.json
kernels/softmax_fp32.cu tests/redteam/tasks/softmax_small.json
kernels/gemm_fp32_sm80.cu tests/redteam/tasks/gemm_512.json
kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096
LIST

# 2. red team: each cheat caught with the right verdict
if [ -f tests/redteam/manifest.json ]; then
    python3 -c 'import json; [print(e["file"], e["task"], e["expect"]) for e in json.load(open("tests/redteam/manifest.json"))]' |
    while read -r file task expect; do
        name=$(basename "$file" .cu)
        case "$task" in kb1/*|hopper/*) t=$task ;; *) t="tests/redteam/$task"; [ -f "$t" ] || t=$task ;; esac
        "$CG" eval "tests/redteam/$file" --task "$t" --json --deadline 20 >"$OUT/rt_$name.json" 2>"$OUT/rt_$name.err"
        v=$(verdict_of "$OUT/rt_$name.json")
        if matches "$expect" "$v"; then echo "ok - red team $file: $v"; else echo "not ok - red team $file: expected $expect, got $v"; fi
    done >"$OUT/redteam.log"
    cat "$OUT/redteam.log"
    passed=$((passed + $(grep -c '^ok - ' "$OUT/redteam.log")))
    failed=$((failed + $(grep -c '^not ok - ' "$OUT/redteam.log")))
fi
# 3. the builtin families (builtin/*.cu) on odd sizes (tests/gpu/tasks/): the start candidate
#    must pass, and with GPU_FAMILY_STAGE1=1 every candidate of the first stage too (each
#    declines or passes); compiled ahead, 16 at a time
BT="$OUT/builtin"; mkdir -p "$BT"
for task in tests/gpu/tasks/*.json; do
    name=$(basename "$task" .json)
    "$CG" builtin "$task" --source >"$BT/$name-start.cu" 2>"$BT/$name.err" || { bad "builtin $name: no candidate ($(cat "$BT/$name.err"))"; continue; }
    [ "${GPU_FAMILY_STAGE1:-0}" = 1 ] || continue
    python3 - "$CG" "$task" "$BT/$name" <<'PY'
import itertools, json, subprocess, sys
cg, task, prefix = sys.argv[1:]
sp = json.loads(subprocess.run([cg, "builtin", task, "--json"], capture_output=True, text=True, check=True).stdout)
params = {p["name"]: p for p in sp["params"]}
stage = sp["stages"][0]["params"]
for i, vals in enumerate(itertools.product(*[params[n]["values"] for n in stage])):
    setting = " ".join("%s=%s" % (n, v) for n, v in zip(stage, vals))
    src = subprocess.run([cg, "builtin", task, "--source", "--set", setting], capture_output=True)
    if src.returncode == 0:
        open("%s-s1_%02d.cu" % (prefix, i), "wb").write(src.stdout)
PY
done
ls "$BT"/*.cu | xargs -P 16 -n 1 "$CG" build >/dev/null 2>&1
for k in "$BT"/*.cu; do
    name=$(basename "$k" .cu); task="tests/gpu/tasks/${name%-*}.json"
    "$CG" eval "$k" --task "$task" --json >"$BT/$name.json" 2>"$BT/$name.eval.err"
    v=$(verdict_of "$BT/$name.json")
    setting=$(head -1 "$k" | sed 's/.*family=//')
    case "$v" in
        pass) ok "builtin $name ($setting) passes" ;;
        unsupported) case "$name" in
                         *-start) bad "builtin $name ($setting): the start candidate declines the task" ;;
                         *) ok "builtin $name ($setting): unsupported (declined, not wrong)" ;;
                     esac ;;
        *) bad "builtin $name ($setting): verdict $v ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("message","")[:300])' "$BT/$name.json" 2>/dev/null))" ;;
    esac
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
