#!/usr/bin/env bash
# The hand-written module kernels (tests/gpu/module_kernels/*.cu) judged on a GPU with real
# PyTorch (never in CI; the lead runs it on the H200):
#   1. `cutegen eval K.cu --task tasks/modules/levelN/STEM.py --json --torch` must give the
#      verdict pass; prints the speedup vs PyTorch eager and vs torch.compile when present;
#   2. `cutegen export --kernel K.cu --task M.py` writes a ModelNew, and
#      `python3 NAME_model.py --check` (Model vs ModelNew on get_inputs(), the float64 truth and
#      the evaluator's budget) must print ok.
# Closes with "N passed, N failed"; with OUT set, writes OUT/module_kernels.json and .md (one
# row a kernel: verdict, ms, speedups, the check) and each eval's JSON.
# usage: BUILD=build [PYTHON=python3] [OUT=dir] [NO_CHECK=1] [NO_TORCH=1] bash tests/gpu/module_kernels.sh [STEM...]
#   STEM...: only those kernels (e.g. 40_LayerNorm 94_MSELoss); all of them by default.
#   NO_TORCH=1: no eager/torch.compile baselines (no --torch: the verdicts alone, faster).
#   Takes about a minute a kernel (the eval's reference cases, torch.compile, nvcc).
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
CG="$PWD/${BUILD:-build}/cutegen"
PY=${PYTHON:-python3}
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
RES="${OUT:-$T}"
mkdir -p "$RES"
passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "not ok - $PY has no torch with CUDA: install it (pip install torch) or set PYTHON"
    echo "0 passed, 1 failed"; exit 1
fi
export CUTEGEN_PYTHON=$PY CUTEGEN_REFERENCE_TIMEOUT=${CUTEGEN_REFERENCE_TIMEOUT:-900}
KD="$REPO/tests/gpu/module_kernels"
if [ $# -gt 0 ]; then stems="$*"; else stems=$(cd "$KD" && ls *.cu | sed 's/\.cu$//'); fi
: >"$T/rows.jsonl"
for stem in $stems; do
    k="$KD/$stem.cu"
    mod=""
    for lv in level1 level2; do [ -f "$REPO/tasks/modules/$lv/$stem.py" ] && mod="$REPO/tasks/modules/$lv/$stem.py"; done
    if [ ! -f "$k" ] || [ -z "$mod" ]; then
        bad "$stem: no kernel $k or no module tasks/modules/level*/$stem.py"; continue
    fi
    # 1. the judge
    start=$(date +%s)
    "$CG" eval "$k" --task "$mod" --json $([ -n "${NO_TORCH:-}" ] || echo --torch) >"$RES/$stem.eval.json" 2>"$T/$stem.err"; rc=$?
    secs=$(( $(date +%s) - start ))
    line=$("$PY" - "$RES/$stem.eval.json" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no-json\t-\t-\t-\t-"); sys.exit(0)
ms = ((d.get("report") or {}).get("metrics") or {}).get("ms")  # the kernel's, not a baseline's
eager = d.get("speedup_vs_eager", d.get("speedup_vs_torch"))
comp = d.get("speedup_vs_torch_compile")
f = lambda v, fmt: fmt % v if isinstance(v, (int, float)) else "-"
msg = (d.get("message") or "").replace("\t", " ").replace("\n", " ")[:200]
print("\t".join([d.get("verdict", "?"), f(ms, "%.4g"), f(eager, "%.2fx"), f(comp, "%.2fx"), msg]))
PYEOF
)
    IFS=$'\t' read -r verdict ms eager comp msg <<<"$line"
    if [ "$verdict" = pass ]; then
        ok "$stem: eval pass, $ms ms, ${eager} vs eager, ${comp} vs torch.compile (${secs} s)"
    else
        bad "$stem: eval verdict '$verdict' (exit $rc): $msg"
        sed 's/^/#   /' "$T/$stem.err" | tail -5
    fi
    # 2. the drop-in
    chk="-"
    if [ -z "${NO_CHECK:-}" ]; then
        name="m$(echo "$stem" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '_')"
        if "$CG" export --kernel "$k" --task "$mod" --out "$T/exp/$stem" --name "$name" >"$T/$stem.exp" 2>&1 &&
            (cd "$T/exp/$stem" && "$PY" "${name}_model.py" --check) >"$T/$stem.check" 2>&1 &&
            grep -q "^ok" "$T/$stem.check"; then
            chk=ok
            ok "$stem: exported ModelNew --check: $(grep '^ok' "$T/$stem.check" | head -1 | cut -c1-100)"
        else
            chk=failed
            bad "$stem: exported ModelNew --check"
            cat "$T/$stem.exp" "$T/$stem.check" 2>/dev/null | sed 's/^/#   /' | tail -8
        fi
    fi
    "$PY" -c 'import json,sys; k=["kernel","module","verdict","ms","vs_eager","vs_compile","modelnew_check","message","seconds"]; print(json.dumps(dict(zip(k, sys.argv[1:8] + [sys.argv[8], int(sys.argv[9])]))))' \
        "$stem.cu" "${mod#$REPO/}" "$verdict" "$ms" "$eager" "$comp" "$chk" "$msg" "$secs" >>"$T/rows.jsonl"
done
"$PY" - "$T/rows.jsonl" "$RES" "$passed" "$failed" <<'PYEOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, p, f = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
json.dump({"passed": p, "failed": f, "kernels": rows}, open(os.path.join(out, "module_kernels.json"), "w"), indent=2)
with open(os.path.join(out, "module_kernels.md"), "w") as m:
    m.write("| kernel | module | verdict | ms | vs eager | vs torch.compile | ModelNew --check |\n")
    m.write("| --- | --- | --- | --- | --- | --- | --- |\n")
    for r in rows:
        m.write("| %s | %s | %s | %s | %s | %s | %s |\n" % (r["kernel"], r["module"], r["verdict"], r["ms"],
                r["vs_eager"], r["vs_compile"], r["modelnew_check"]))
    m.write("\n%d passed, %d failed\n" % (p, f))
PYEOF
[ -n "${OUT:-}" ] && echo "# summary: $RES/module_kernels.json, $RES/module_kernels.md"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
