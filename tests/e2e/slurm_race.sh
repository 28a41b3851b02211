#!/usr/bin/env bash
# `cutegen suite --slurm` against stand-in sbatch and sacct (on PATH) that fix the order of events
# a real cluster leaves to chance: the elements write their results while sacct still says
# RUNNING, and only the next poll says COMPLETED. A result merged at one poll must stay merged,
# not be taken for "ended without a result" at the next (a race seen on a real Slurm in CI).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d /tmp/cutegen-slurm-race.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
sql() { sqlite3 "$S/suite.db" "$1"; }
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "ok - skipped: no nvcc"; exit 0; }

mkdir -p "$T/bin"
cat >"$T/bin/sbatch" <<'SH'
#!/bin/sh
# records the submission; runs nothing (sacct runs the elements at its first call)
printf '%s\n' "$@" >"$FAKE_SLURM/sbatch.args"
echo 42
SH
cat >"$T/bin/sacct" <<'SH'
#!/bin/sh
# first call: runs every element to its end, then still reports them RUNNING; later: COMPLETED
n=$(sed -n 's/^--array=0-//p' "$FAKE_SLURM/sbatch.args")
script=$(tail -n 1 "$FAKE_SLURM/sbatch.args")
echo call >>"$FAKE_SLURM/calls"
state=COMPLETED
if [ ! -e "$FAKE_SLURM/ran" ]; then
    touch "$FAKE_SLURM/ran"
    for i in $(seq 0 "$n"); do
        SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=$i "$script" >"$FAKE_SLURM/el$i.out" 2>&1
    done
    state=RUNNING
fi
for i in $(seq 0 "$n"); do echo "42_$i|$state"; done
SH
chmod +x "$T/bin/sbatch" "$T/bin/sacct"
export PATH="$T/bin:$PATH" FAKE_SLURM="$T"
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
. "$REPO/tests/data/suite/make_tasks.sh"
D="$T/tasks"
make_tasks "$D" a:2.0 b:1.5
S="$T/suite"
timeout 300 "$CUTEGEN" suite "$D/list.txt" --out "$S" --slurm --gpus cpu:1 --attempts 1 --poll 0.1 \
    --wait-timeout 120 --llm-cmd "python3 $REPO/tests/data/suite/model.py $D" \
    --recorded-evals "$D/evals" --iters 1 >"$T/out" 2>"$T/err"
rc=$?
check "the suite completes (rc $rc)" '[ $rc -eq 0 ]' || { cat "$T/err"; cat "$T"/el*.out; }
check "sacct was asked again after the results were merged" '[ "$(wc -l <"$T/calls")" -ge 2 ]'
check "both tasks done with their results" \
    '[ "$(sql "select group_concat(status || \":\" || best_speedup) from (select * from tasks order by id)")" = "done:2.0,done:1.5" ]' ||
    sql "select * from tasks" | sed 's/^/# /'
check "the merged results are kept under the element's name" '[ -e "$S/results/0.42_0.json" ] && [ -e "$S/results/1.42_1.json" ]'
[ $fails -eq 0 ]
