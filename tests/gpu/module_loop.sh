#!/usr/bin/env bash
# The agent loop on modules that do not lower, on a GPU with real PyTorch (never in CI; the lead
# runs it on the H200). For each STEM (a hand-written kernel of tests/gpu/module_kernels/ and its
# module tasks/modules/levelN/STEM.py), a scripted model (tests/data/loop/model.py, the cmd
# backend) answers: reply 1 the kernel as a whole file, reply 2 an edit adding a comment line,
# reply 3 (after resume) another. Checks:
#   1. `cutegen run M.py --iters 2 --profile-from-stage 1` exits 0, node 1 passes and is the best
#      (judged through the reference process), node 2 passes; stage 1 profiled the best kernel
#      with ncu on the module's prepared cases (or said once that profiling is unavailable);
#   2. `cutegen resume RUN --iters 3` describes the module again and judges node 3 (pass);
#   3. `cutegen export RUN` writes ModelNew; `python3 NAME_model.py --check` prints ok.
# Closes with "N passed, N failed".
# usage: BUILD=build [PYTHON=python3] bash tests/gpu/module_loop.sh [STEM...]
#   default STEMs: 40_LayerNorm 47_Sum_reduction_over_a_dimension 1_Gemm_Bias_GELU
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
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "not ok - $PY has no torch with CUDA: install it (pip install torch) or set PYTHON"
    echo "0 passed, 1 failed"; exit 1
fi
export CUTEGEN_PYTHON=$PY CUTEGEN_REFERENCE_TIMEOUT=${CUTEGEN_REFERENCE_TIMEOUT:-900}
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
KD="$REPO/tests/gpu/module_kernels"
stems=${*:-40_LayerNorm 47_Sum_reduction_over_a_dimension 1_Gemm_Bias_GELU}
for stem in $stems; do
    k="$KD/$stem.cu" mod=""
    for lv in level1 level2; do [ -f "$REPO/tasks/modules/$lv/$stem.py" ] && mod="$REPO/tasks/modules/$lv/$stem.py"; done
    if [ ! -f "$k" ] || [ -z "$mod" ]; then
        bad "$stem: no kernel $k or no module tasks/modules/level*/$stem.py"; continue
    fi
    P="$T/$stem.model"; RUN="$T/$stem.run"; mkdir -p "$P"
    { printf 'Change: the hand-written kernel\n```cuda\n'; cat "$k"; printf '```\n'; } >"$P/reply-1.txt"
    first=$(head -1 "$k")
    printf 'Change: a comment\n<<<<<<< SEARCH\n%s\n=======\n%s\n// loop test: node 2\n>>>>>>> REPLACE\n' "$first" "$first" >"$P/reply-2.txt"
    printf 'Change: another comment\n<<<<<<< SEARCH\n// loop test: node 2\n=======\n// loop test: node 3\n>>>>>>> REPLACE\n' >"$P/reply-3.txt"
    "$CG" run "$mod" --llm-cmd "python3 $REPO/tests/data/loop/model.py $P" --iters 2 \
        --profile-from-stage 1 --out "$RUN" --json >"$T/$stem.out" 2>"$T/$stem.err"; rc=$?
    v=$(sql "$RUN" "select group_concat(verdict, ' ') from nodes" 2>/dev/null)
    if [ $rc = 0 ] && [ "$v" = "pass pass" ] && [ "$(sql "$RUN" "select outcome from nodes where id=1")" = best ]; then
        ok "$stem: run M.py: node 1 the best, node 2 passes ($(sql "$RUN" "select printf('%.4f ms', ms) from nodes where id=1"))"
    else
        bad "$stem: run M.py: rc $rc, verdicts '$v'; $(tail -3 "$T/$stem.err" | tr '\n' ' ')"
    fi
    if [ "$(sql "$RUN" "select count(*) from nodes where profile_sha is not null" 2>/dev/null)" -ge 1 ] 2>/dev/null; then
        ok "$stem: stage 1 profiled the best kernel on the module's cases"
    elif grep -q "profil" "$T/$stem.err"; then
        ok "$stem: profiling unavailable here, said so: $(grep -m1 profil "$T/$stem.err")"
    else
        bad "$stem: no profile and no note about profiling"
    fi
    "$CG" resume "$RUN" --iters 3 --json >"$T/$stem.out2" 2>"$T/$stem.err2"; rc=$?
    if [ $rc = 0 ] && [ "$(sql "$RUN" "select verdict from nodes where id=3")" = pass ]; then
        ok "$stem: resume judged node 3 (pass)"
    else
        bad "$stem: resume: rc $rc; $(tail -3 "$T/$stem.err2" | tr '\n' ' ')"
    fi
    "$CG" export "$RUN" --out "$T/$stem.exp" >"$T/$stem.out3" 2>&1; rc=$?
    model=$(ls "$T/$stem.exp"/*_model.py 2>/dev/null | head -1)
    if [ $rc = 0 ] && [ -n "$model" ] && (cd "$T/$stem.exp" && "$PY" "$(basename "$model")" --check) >"$T/$stem.check" 2>&1 &&
       grep -q "^ok" "$T/$stem.check"; then
        ok "$stem: export of the run: ModelNew --check ok"
    else
        bad "$stem: export: rc $rc; $(tail -3 "$T/$stem.check" 2>/dev/null | tr '\n' ' ')"
    fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
