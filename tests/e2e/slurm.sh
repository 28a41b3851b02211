#!/usr/bin/env bash
# `cutegen suite --slurm` against a REAL single-node Slurm started here: slurmctld and slurmd
# from Debian's slurm-wlm (scripts/deps-test.sh), auth/none, everything under a temp dir. Runs a
# suite of compile-only tasks (recorded evaluations) as a job array, one of whose elements fails
# (its run is killed); checks the merge into the suite store; stops the daemons (trap).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d /tmp/cutegen-slurm.XXXXXX)
chmod 755 "$T"
CTLD_PID= SLURMD_PID=
cleanup() {
    [ -n "$SLURMD_PID" ] && kill "$SLURMD_PID" 2>/dev/null
    [ -n "$CTLD_PID" ] && kill "$CTLD_PID" 2>/dev/null
    sleep 1
    [ -n "$SLURMD_PID" ] && kill -9 "$SLURMD_PID" 2>/dev/null
    [ -n "$CTLD_PID" ] && kill -9 "$CTLD_PID" 2>/dev/null
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
sql() { sqlite3 "$S/suite.db" "$1"; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

[ -z "${CUTEGEN_SKIP_SLURM:-}" ] || { echo "ok - skipped: CUTEGEN_SKIP_SLURM is set"; exit 0; }
for p in slurmctld slurmd sbatch squeue nvcc; do
    command -v $p >/dev/null || [ $p = nvcc -a -x /usr/local/cuda/bin/nvcc ] ||
        { echo "ok - skipped: no $p (scripts/deps-test.sh installs Slurm)"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "ok - skipped: starting slurmd needs root"; exit 0; }

# ---- the cluster: one node, auth/none, state under $T ----
PORT_C=$((16800 + RANDOM % 500)); PORT_D=$((PORT_C + 1))
mkdir -p "$T/state" "$T/spool" "$T/log"
export SLURM_CONF="$T/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=cutegen-test
SlurmctldHost=localhost
SlurmctldPort=$PORT_C
SlurmdPort=$PORT_D
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=600
MpiDefault=none
NodeName=localhost CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i -f "$SLURM_CONF" >"$T/log/ctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -f "$SLURM_CONF" -N localhost >"$T/log/slurmd.out" 2>&1 &
SLURMD_PID=$!
up=0
for i in $(seq 1 60); do
    if sinfo -h -o "%t" 2>/dev/null | grep -qE "^(idle|mix|alloc)"; then up=1; break; fi
    sleep 0.5
done
if [ $up -ne 1 ]; then
    bad "single-node Slurm came up (sinfo: $(sinfo -h 2>&1 | head -1))"
    tail -5 "$T/log/slurmctld.log" "$T/log/slurmd.log" "$T/log/ctld.out" "$T/log/slurmd.out" 2>/dev/null
    exit 1
fi
ok "single-node Slurm is up ($(sinfo -h -o '%P %t %c CPUs'))"

# ---- the suite: three tasks, the crash task's run is killed on its only attempt ----
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
. "$REPO/tests/data/suite/make_tasks.sh"
D="$T/tasks"
make_tasks "$D" a:2.0 b:1.2 crash:1.0
touch "$D/crash-on"
S="$T/suite"
timeout 300 "$CUTEGEN" suite "$D/list.txt" --out "$S" --slurm --gpus cpu:1 --attempts 1 --poll 1 \
    --wait-timeout 240 --time 00:05:00 --json \
    --llm-cmd "python3 $REPO/tests/data/suite/model.py $D" --recorded-evals "$D/evals" --iters 1 \
    >"$T/out.json" 2>"$T/err"
rc=$?
check "the suite ran as a job array and reports the failure (rc $rc)" '[ $rc -eq 1 ]'
[ $rc -eq 1 ] || { cat "$T/err"; cat "$T/out.json"; tail -20 "$T/log/slurmctld.log"; cat "$S"/slurm/*.out; }
check "Slurm ran an array of three elements" '[ "$(squeue -h -r --states=all -o "%i %T" | grep -c "_[0-2] ")" = 3 ]'
check "two tasks done, one failed" '[ "$(sql "select group_concat(status) from (select status from tasks order by id)")" = "done,done,failed" ]' ||
    { echo "# tasks:"; sql "select * from tasks" | sed 's/^/# /'; sed 's/^/# /' "$T/err" | tail -30
      for f in "$S"/slurm/*.out; do echo "# $f"; tail -15 "$f" | sed 's/^/# /'; done; }
check "the failed element is reported with its cause" 'sql "select message from tasks where status=\"failed\"" | grep -q "killed by signal 9"' ||
    { echo "# tasks:"; sql "select * from tasks" | sed 's/^/# /'; sed 's/^/# /' "$T/err" | tail -30
      for f in "$S"/slurm/*.out; do echo "# $f"; tail -15 "$f" | sed 's/^/# /'; done
      for f in "$S"/runs/*/worker.log; do echo "# $f"; tail -15 "$f" | sed 's/^/# /'; done; }
check "results were merged from the elements" '[ "$(sql "select group_concat(best_speedup) from tasks where status=\"done\"")" = "2.0,1.2" ]'
check "each task names its array element" '[ "$(sql "select count(*) from tasks where worker like \"slurm:%\"")" = 3 ]'
check "json: fast_p and geomean" '[ "$(jq_ "$T/out.json" "d[\"fast_p\"][\"0\"], d[\"fast_p\"][\"1.5\"], round(d[\"geomean_speedup\"], 4)")" = "0.6666666666666666 0.3333333333333333 $(python3 -c "print(round((2.0*1.2)**0.5, 4))")" ]'
check "the job script is written in the suite directory" 'grep -q "suite-worker" "$S"/slurm/submit-*.sh'

# ---- resume: the failed task is submitted again and completes ----
rm -f "$D/crash-on"
timeout 300 "$CUTEGEN" suite "$D/list.txt" --out "$S" --slurm --gpus cpu:1 --attempts 2 --poll 1 \
    --wait-timeout 240 --resume >"$T/out2" 2>"$T/err2"
rc=$?
check "resume submits only the failed task and completes (rc $rc)" '[ $rc -eq 0 ] && grep -q "submitted 1 tasks" "$T/err2"'
check "all done" '[ "$(sql "select count(*) from tasks where status=\"done\"")" = 3 ]' ||
    { echo "# tasks:"; sql "select * from tasks" | sed 's/^/# /'; sed 's/^/# /' "$T/err2" | tail -30
      for f in "$S"/slurm/*.out; do echo "# $f"; tail -15 "$f" | sed 's/^/# /'; done
      for f in "$S"/runs/*/worker.log; do echo "# $f"; tail -15 "$f" | sed 's/^/# /'; done; }
[ $fails -eq 0 ]
