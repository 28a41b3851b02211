#!/usr/bin/env bash
# `cutegen suite` on a local pool of compile-only workers (--gpus cpu:2): real nvcc compiles of
# tiny kernels, recorded evaluations standing in for the GPU, a scripted model
# (tests/data/suite/model.py) and one task whose run is killed (SIGKILL) mid-call.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
sql() { sqlite3 "$S/suite.db" "$1"; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
. "$REPO/tests/data/suite/make_tasks.sh"
D="$T/tasks"
make_tasks "$D" a:2.0 b:0.8 c:1.6 crash:1.0
touch "$D/crash-on"
S="$T/suite"
RUNFLAGS=(--llm-cmd "python3 $REPO/tests/data/suite/model.py $D" --recorded-evals "$D/evals" --iters 1)

# ---- 1. compile-only workers without recorded evaluations: refused ----
"$CUTEGEN" suite "$D/list.txt" --out "$T/s0" --gpus cpu:2 >/dev/null 2>"$T/err0"
rc=$?
check "cpu workers need --recorded-evals (rc $rc)" '[ $rc -eq 2 ] && grep -q "compile-only" "$T/err0"'
check "... and the usage error leaves no state behind (no suite.db, no directory)" '[ ! -e "$T/s0/suite.db" ] && [ ! -e "$T/s0" ]'
echo "nosuchtask_xyz" >"$T/badlist.txt"
"$CUTEGEN" suite "$T/badlist.txt" --out "$T/s0b" --gpus cpu:1 --recorded-evals "$D/evals" >/dev/null 2>"$T/err0b"
rc=$?
check "a bad task list: exit 3, nothing written (rc $rc)" '[ $rc -eq 3 ] && [ ! -e "$T/s0b" ]'
for g in "" "0,0" "cpu:0" "cpu:x" "0,-1"; do
    "$CUTEGEN" suite "$D/list.txt" --out "$T/s0d" --gpus "$g" --recorded-evals "$D/evals" >/dev/null 2>"$T/err0d"
    rc=$?
    check "--gpus '$g' is a usage error (exit 2) that says what --gpus takes, nothing written (rc $rc)" \
        '[ $rc -eq 2 ] && grep -q -- "--gpus" "$T/err0d" && [ ! -e "$T/s0d" ]'
done
mkdir -p "$T/lists" && echo "tasks/no_such_module.py" >"$T/lists/rel.txt"
"$CUTEGEN" suite "$T/lists/rel.txt" --out "$T/s0c" --gpus cpu:1 --recorded-evals "$D/evals" >/dev/null 2>"$T/err0c"
rc=$?
check "a relative path in a list that names nothing: exit 3, the error names the list's directory (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "read from the list.s directory: .$T/lists/tasks/no_such_module.py. does not exist" "$T/err0c"'
if ! "${CUTEGEN_RUNNER:-$(dirname "$CUTEGEN")/cutegen-runner}" --devices 2>/dev/null | grep -q '"name"'; then
    "$CUTEGEN" suite "$D/list.txt" --out "$T/s0g" --gpus all "${RUNFLAGS[@]}" >/dev/null 2>"$T/err0g"
    rc=$?
    check "no GPU: exit 4 and no suite.db left behind (rc $rc)" '[ $rc -eq 4 ] && grep -q "no CUDA device" "$T/err0g" && [ ! -e "$T/s0g/suite.db" ]'
fi

# ---- 1b. a failure a retry cannot change (no recorded evaluation: exit 4) is not retried ----
N="$T/norec"
make_tasks "$N" nr:1.0
rm -f "$N"/evals/*.json
"$CUTEGEN" suite "$N/list.txt" --out "$T/s1b" --gpus cpu:1 --attempts 3 \
    --llm-cmd "python3 $REPO/tests/data/suite/model.py $N" --recorded-evals "$N/evals" --iters 1 \
    >/dev/null 2>"$T/err1b"
rc=$?
check "the task without a recorded evaluation ran once, not 3 times (rc $rc)" \
    '[ $rc -eq 1 ] && [ "$(sqlite3 "$T/s1b/suite.db" "select status||\" \"||attempts||\" \"||exit_code from tasks")" = "failed 1 4" ] && [ ! -e "$T/s1b/runs/000-nr.attempt-1" ]' || cat "$T/err1b"
check "... and its message says why it was not retried" 'sqlite3 "$T/s1b/suite.db" "select message from tasks" | grep -q "not retried"'

# ---- 2. four tasks on two workers; the crash task is killed on both its attempts ----
"$CUTEGEN" suite "$D/list.txt" --out "$S" --gpus cpu:2 --attempts 2 --json "${RUNFLAGS[@]}" \
    >"$T/out1.json" 2>"$T/err1"
rc=$?
check "a failed task makes the suite exit 1 (rc $rc)" '[ $rc -eq 1 ]'
[ $rc -eq 1 ] || { cat "$T/err1"; cat "$T/out1.json"; }
check "the store has four tasks" '[ "$(sql "select count(*) from tasks")" = 4 ]'
check "three done, one failed" '[ "$(sql "select group_concat(status, \",\") from (select status from tasks order by id)")" = "done,done,done,failed" ]'
check "the killed run is failed with its signal" '[ "$(sql "select exit_code||\" \"||attempts from tasks where spec like \"%crash.json\"")" = "137 2" ] && sql "select message from tasks where id=3" | grep -q "killed by signal 9"'
check "the others finished once each" '[ "$(sql "select group_concat(attempts) from tasks where status=\"done\"")" = "1,1,1" ]'
check "speedups come from the runs' stores" '[ "$(sql "select group_concat(best_speedup) from tasks where status=\"done\"")" = "2.0,0.8,1.6" ]'
check "each task ran in its own run directory" '[ -f "$S/runs/000-a/run.db" ] && [ -f "$S/runs/001-b/run.db" ] && [ -f "$S/runs/002-c/best.cu" ]'
check "the first attempt of the killed task is kept aside" '[ -d "$S/runs/003-crash.attempt-1" ]'
check "both workers were used" '[ "$(sql "select count(distinct worker) from tasks")" = 2 ]'
check "json: counts" '[ "$(jq_ "$T/out1.json" "d[\"tasks\"], d[\"done\"], d[\"failed\"], d[\"correct\"]")" = "4 3 1 3" ]'
check "json: fast_p table" '[ "$(jq_ "$T/out1.json" "sorted(d[\"fast_p\"].items(), key=lambda kv: float(kv[0]))")" = "[('"'"'0'"'"', 0.75), ('"'"'0.5'"'"', 0.75), ('"'"'1'"'"', 0.5), ('"'"'1.5'"'"', 0.5), ('"'"'2'"'"', 0.0), ('"'"'3'"'"', 0.0)]" ]'
check "json: geometric means" '[ "$(jq_ "$T/out1.json" "round(d[\"geomean_speedup\"], 4), d[\"geomean_roofline_fraction\"]")" = "$(python3 -c "print(round((2.0*0.8*1.6)**(1/3), 4), 0.5)")" ]'
check "json: busy share per worker" '[ "$(jq_ "$T/out1.json" "len(d[\"workers\"]), all(0 < w[\"busy_share\"] <= 1 for w in d[\"workers\"])")" = "2 True" ]'
check "busy time is in the store" '[ "$(sql "select count(*) from workers where busy_s > 0")" = 2 ]'

# ---- 2b. report reads what suite wrote: each task once (the killed task by its final attempt),
# with why it failed ----
"$CUTEGEN" report "$S" --md "$T/s.md" --html "$T/s.html" >/dev/null 2>"$T/rep.err"
rc=$?
check "report SUITE_DIR reads the suite (rc $rc)" '[ $rc -eq 0 ] && grep -q "^4 tasks, each counted once" "$T/s.md"' || cat "$T/rep.err"
check "report SUITE_DIR: fast_p and geomean over the 4 tasks" 'grep -q "fast_0 0.75, fast_1 0.50, fast_2 0.00" "$T/s.md" && grep -q "data-p=\"0.0\" data-fast=\"0.75\"" "$T/s.html" && grep -q "geometric mean speedup: $(python3 -c "print(\"%.3fx\" % (2.0*0.8*1.6)**(1/3))")" "$T/s.md"'
check "report SUITE_DIR: the failed task says why (its signal) and its attempts" 'grep "crash" "$T/s.md" | grep -q "failed (2 attempts) .*killed by signal 9" && grep -q "class=\"why\">[^<]*killed by signal 9" "$T/s.html"'
"$CUTEGEN" report "$S/runs" --md "$T/r.md" >/dev/null 2>"$T/rep2.err"
rc=$?
check "report SUITE_DIR/runs counts the retried task once (rc $rc)" '[ $rc -eq 0 ] && grep -q "^4 tasks, each counted once" "$T/r.md" && [ "$(grep -c "^| .*crash" "$T/r.md")" = 1 ] && grep -q "fast_0 0.75, fast_1 0.50" "$T/r.md"' || cat "$T/rep2.err" "$T/r.md"

# ---- 3. resume: only the failed task runs again (the crash is over) ----
rm -f "$D/crash-on"
before=$(sql "select group_concat(finished) from tasks where status='done'")
"$CUTEGEN" suite "$D/list.txt" --out "$S" --gpus cpu:2 --attempts 3 --resume >"$T/out2" 2>"$T/err2"
rc=$?
check "resume completes the suite (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || cat "$T/err2" "$T/out2"
check "all four done" '[ "$(sql "select count(*) from tasks where status=\"done\"")" = 4 ]'
check "done tasks were not run again" '[ "$(sql "select group_concat(finished) from tasks where id < 3")" = "$before" ]'
check "the re-run task counts its third attempt" '[ "$(sql "select attempts from tasks where id=3")" = 3 ]'
check "the stored run flags were reused" '[ "$(sql "select best_speedup from tasks where id=3")" = 1.0 ]'
check "the plain summary has fast_p and the busy shares" 'grep -q "^fast_p    p=0 100%" "$T/out2" && grep -q "^busy " "$T/out2"'
"$CUTEGEN" suite "$D/list.txt" --out "$S" --gpus cpu:1 >"$T/out3" 2>"$T/err3"
rc=$?
check "a third run has nothing to do (rc $rc)" '[ $rc -eq 0 ] && grep -q "0 to run" "$T/err3"'
"$CUTEGEN" suite kb1 --out "$S" --gpus cpu:1 --recorded-evals "$D/evals" >/dev/null 2>"$T/err4"
check "another suite in the same directory is refused" '[ $? -eq 3 ] && grep -q "the suite changed" "$T/err4"'
[ $fails -eq 0 ]
