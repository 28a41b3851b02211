#!/usr/bin/env bash
# The reference session kept across a run's candidates (issue 18), on a GPU with real PyTorch
# (never in CI; the lead runs it on the H200). For each STEM (a hand-written kernel of
# tests/gpu/module_kernels/ and its module tasks/modules/levelN/STEM.py), a scripted model
# (tests/data/loop/model.py) answers: reply 1 the kernel as a whole file, replies 2 and 3 edits
# adding a comment line. `cutegen run M.py --iters 3` with profiling off (ncu's own prepare
# would let the session go) must show:
#   1. exit 0, three nodes, all pass;
#   2. one prepare for the run: node 3's stored report has reference_session {"next": "kept",
#      "prepares": 1, "reuses": 2}, and every node's report module.reference_intact true with
#      reference_hashes whose before equals after;
#   3. nodes 2 and 3 evaluated faster than node 1 (no python, torch import, model build and
#      float64 truth: the figures are printed);
#   4. no reference process left after the run (counted by command line).
# Closes with "N passed, N failed".
# usage: BUILD=build [PYTHON=python3] bash tests/gpu/module_refkeep.sh [STEM...]
#   default STEMs: 40_LayerNorm 1_Gemm_Bias_GELU
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
CG="$PWD/${BUILD:-build}/cutegen"
PY=${PYTHON:-python3}
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }
# the run's store, read with python3's sqlite3 (the GPU image has no sqlite3 program); rows as
# the sqlite3 program prints them, columns joined by '|'
sql() {
    python3 - "$1/run.db" "$2" <<'PY'
import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}
report() { sql "$1" "select cast(b.content as text) from nodes n join blobs b on b.sha256 = n.report_sha where n.id = $2"; }
refs() { pgrep -f "cutegen-reference" | grep -vx "$$" | wc -l; }
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "not ok - $PY has no torch with CUDA: install it (pip install torch) or set PYTHON"
    echo "0 passed, 1 failed"; exit 1
fi
export CUTEGEN_PYTHON=$PY CUTEGEN_REFERENCE_TIMEOUT=${CUTEGEN_REFERENCE_TIMEOUT:-900}
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
KD="$REPO/tests/gpu/module_kernels"
before=$(refs)
stems=${*:-40_LayerNorm 1_Gemm_Bias_GELU}
for stem in $stems; do
    k="$KD/$stem.cu" mod=""
    for lv in level1 level2; do [ -f "$REPO/tasks/modules/$lv/$stem.py" ] && mod="$REPO/tasks/modules/$lv/$stem.py"; done
    if [ ! -f "$k" ] || [ -z "$mod" ]; then
        bad "$stem: no kernel $k or no module tasks/modules/level*/$stem.py"; continue
    fi
    P="$T/$stem.model"; RUN="$T/$stem.run"; mkdir -p "$P"
    { printf 'Change: the hand-written kernel\n```cuda\n'; cat "$k"; printf '```\n'; } >"$P/reply-1.txt"
    first=$(head -1 "$k")
    printf 'Change: a comment\n<<<<<<< SEARCH\n%s\n=======\n%s\n// refkeep test: node 2\n>>>>>>> REPLACE\n' "$first" "$first" >"$P/reply-2.txt"
    printf 'Change: another comment\n<<<<<<< SEARCH\n// refkeep test: node 2\n=======\n// refkeep test: node 3\n>>>>>>> REPLACE\n' >"$P/reply-3.txt"
    "$CG" run "$mod" --llm-cmd "python3 $REPO/tests/data/loop/model.py $P" --iters 3 \
        --profile-from-stage 99 --out "$RUN" --json >"$T/$stem.out" 2>"$T/$stem.err"; rc=$?
    v=$(sql "$RUN" "select group_concat(verdict, ' ') from (select verdict from nodes order by id)" 2>/dev/null)
    if [ $rc = 0 ] && [ "$v" = "pass pass pass" ]; then
        ok "$stem: run M.py --iters 3: three candidates pass"
    else
        bad "$stem: run M.py: rc $rc, verdicts '$v'; $(tail -3 "$T/$stem.err" | tr '\n' ' ')"
    fi
    if report "$RUN" 3 | grep -q '"reference_session":{"next":"kept","prepares":1,"reuses":2}'; then
        ok "$stem: one prepare for the three candidates (node 3: prepares 1, reuses 2)"
    else
        bad "$stem: node 3's reference_session is $(report "$RUN" 3 | grep -o '"reference_session":{[^}]*}')"
    fi
    intact=0
    for n in 1 2 3; do
        report "$RUN" $n | "$PY" -c '
import json, sys
m = json.load(sys.stdin)["module"]
hs = m["reference_hashes"]
assert m["reference_intact"] is True and hs and all(h["before"] == h["after"] and h["bytes"] > 0 for h in hs), m
' 2>>"$T/$stem.intact" && intact=$((intact + 1))
    done
    if [ $intact = 3 ]; then
        ok "$stem: every node's report has reference_intact true and unchanged hashes"
    else
        bad "$stem: reference_intact/hashes wrong in $((3 - intact)) reports: $(tail -2 "$T/$stem.intact" | tr '\n' ' ')"
    fi
    # each node's evaluation less its wait for the GPU's turn (report.gpu_wait_s: beside other
    # rounds sharing $CUTEGEN_GPU_LOCK, node 2 waited 14 s for the lock on 2026-12-05)
    for n in 1 2 3; do
        w=$(report "$RUN" $n | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get("gpu_wait_s", 0))' 2>/dev/null)
        es[$n]=$(sql "$RUN" "select printf('%.1f', eval_s - ${w:-0}) from nodes where id = $n")
    done
    e="${es[1]} s, ${es[2]} s, ${es[3]}"
    if "$PY" -c "import sys; sys.exit(0 if ${es[1]} > max(${es[2]}, ${es[3]}) else 1)"; then
        ok "$stem: nodes 2 and 3 evaluated faster than node 1 (eval $e s)"
    else
        bad "$stem: the kept session saved no time (eval $e s)"
    fi
    if [ "$(refs)" -le "$before" ]; then
        ok "$stem: no reference process left after the run"
    else
        bad "$stem: $(( $(refs) - before )) reference process(es) left after the run"
    fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
