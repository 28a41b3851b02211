#!/usr/bin/env bash
# Fault injection with real processes on loopback: the model server drops, stalls, sends
# garbage or cuts its stream (tests/llm_server.py); nvcc hangs or is killed (a fake nvcc first
# in PATH); the runner segfaults, hangs or prints garbage (a fake runner through
# $CUTEGEN_RUNNER); the disk fills during a run (a tiny tmpfs, when we may mount one); cutegen
# is killed with SIGKILL mid-run. Each time: cutegen says what happened (exit code and
# message), keeps every node it completed in run.db, and `cutegen resume` carries on.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
spid= cpid= mnt=
cleanup() {
    [ -n "$cpid" ] && kill -9 "$cpid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
nodes() { sqlite3 "$1/run.db" "select count(*) from nodes" 2>/dev/null || echo -1; }
shas() { sqlite3 "$1/run.db" "select id||' '||source_sha||' '||verdict from nodes where id <= $2 order by id"; }

for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL
command -v sqlite3 >/dev/null || { echo "not ok - the sqlite3 program is missing (scripts/deps.sh installs it)"; exit 1; }
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json" NO_PROXY=127.0.0.1
echo "{}" >"$CUTEGEN_CONFIG"
export CUTEGEN_LLM_BACKOFF=0.05
KEY=sk-test-SECRET-0123456789
TASK="$REPO/tests/data/loop/relu_small.json"

# A fake nvcc (mode in $T/nvcc.mode): ok writes an empty "library", hang never returns, die is
# killed by SIGKILL. The runner below never loads the library.
mkdir -p "$T/bin"
cat >"$T/bin/nvcc" <<SH
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo "Cuda compilation tools, release 12.8, V12.8.93 (fake)"; exit 0; }
case "\$(cat "$T/nvcc.mode" 2>/dev/null)" in
hang) exec sleep 600 ;;
die) kill -9 \$\$ ;;
esac
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && { : >"\$2"; exit 0; }; shift; done
exit 1
SH
# A fake runner (mode in $T/runner.mode): pass, segv, hang, garbage, noreport, passhang (the
# first evaluation passes, the later ones hang).
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
[ "\$1" = --devices ] && { echo '{"devices":[{"index":0,"name":"Fake GPU"}]}'; exit 0; }
fd=
while [ \$# -gt 0 ]; do [ "\$1" = --report-fd ] && fd=\$2; shift; done
read -r nonce
echo "phase start"
case "\$(cat "$T/runner.mode" 2>/dev/null)" in
segv) echo "phase check uniform seed 0"; kill -SEGV \$\$ ;;
hang) echo "phase timing"; exec sleep 600 ;;
garbage) head -c 3000 /dev/urandom; echo; echo "phase report"; printf '{"verdict": "pass", "metrics": [1,2' >/dev/fd/\$fd; exit 0 ;;
noreport) echo "runner: cannot load the kernel"; exit 3 ;;
passhang) [ -e "$T/runner.passed" ] && { echo "phase timing"; exec sleep 600; }; : >"$T/runner.passed" ;;
esac
echo "phase report"
printf '{"verdict":"pass","message":"","nonce":"%s","metrics":{"ms":0.05,"speedup_vs_baseline":1.0,"roofline_fraction":0.6},"confined":true,"timing":{"trials":4,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":1}},"runner_s":0.1}\n' "\$nonce" >/dev/fd/\$fd
SH
chmod +x "$T/bin/nvcc" "$T/bin/cutegen-runner"
# The fake nvcc's object is empty: a fake objdump gives the object check a clean symbol table.
cat >"$T/bin/objdump" <<'SH'
#!/usr/bin/env bash
[ "$1" = -wtr ] && printf '\nSYMBOL TABLE:\n0000000000000000 g     F .text\t0000000000000010 cutegen_launch\n'
exit 0
SH
chmod +x "$T/bin/objdump"
export PATH="$T/bin:$PATH" CUTEGEN_RUNNER="$T/bin/cutegen-runner"
echo ok >"$T/nvcc.mode"; echo pass >"$T/runner.mode"

export FAKE_KERNEL="$REPO/tests/data/loop/k_bad.cu" LLM_SERVER_LIFETIME=600
python3 "$REPO/tests/llm_server.py" "$T/port" "$T/log" "$KEY" &
spid=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
[ -s "$T/port" ] || { echo "not ok - the test server did not start"; exit 1; }
URL="http://127.0.0.1:$(cat "$T/port")/v1"

# run NAME MODEL ARGS...: a run into $T/NAME; rc in $rc, stderr in $T/NAME.err
run() {
    local name=$1 model=$2
    shift 2
    OPENAI_API_KEY=$KEY timeout 120 "$CUTEGEN" run "$TASK" --backend openai --base-url "$URL" \
        --model "$model" --retries 1 --timeout 3 --no-memcheck --deadline 3 --compile-deadline 3 \
        --fix-attempts 20 --cache-dir "$T/cache-${CACHE:-$name}" --out "$T/$name" --json "$@" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
}
resume() {
    local name=$1 model=$2
    shift 2
    OPENAI_API_KEY=$KEY timeout 120 "$CUTEGEN" resume "$T/$name" --backend openai --base-url "$URL" \
        --model "$model" --json "$@" >"$T/$name.rout" 2>"$T/$name.rerr"
    rc=$?
}
# model_fault NAME SCENARIO MESSAGE_ERE: two good replies, then the fault; then resume
model_fault() {
    local name=$1 scen=$2 msg=$3
    run "$name" "after2-$scen:$name" --iters 5
    check "$name: exit 5, an outside service failed (rc $rc)" '[ $rc -eq 5 ]'
    check "$name: the message says what happened" 'grep -Eq "$msg" "$T/$name.err"'
    [ $rc -eq 5 ] && grep -Eq "$msg" "$T/$name.err" || cat "$T/$name.err"
    check "$name: the two completed nodes are kept" '[ "$(nodes "$T/$name")" = 2 ]'
    check "$name: the run is marked stopped by the model error" \
        '[ "$(sqlite3 "$T/$name/run.db" "select status from runs")" != running ]'
    shas "$T/$name" 2 >"$T/$name.before"
    resume "$name" "kernel:$name-r"
    check "$name: resume finishes (rc $rc)" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || cat "$T/$name.rerr"
    check "$name: resume adds nodes after the kept ones" '[ "$(nodes "$T/$name")" -gt 2 ]'
    check "$name: the kept nodes are unchanged" '[ "$(shas "$T/$name" 2)" = "$(cat "$T/$name.before")" ]'
}

# ---- the model server ----
model_fault drop drop "dropped mid-reply"
model_fault stall stall "timed out|deadline|timeout"
model_fault garbage malformed "malformed|not JSON|not json"
model_fault trunc trunc "cut off|ended before|without its end|truncated|incomplete"

# ---- nvcc ----
echo hang >"$T/nvcc.mode"
run nvcc_hang kernel:nh --iters 2
check "nvcc hangs: the run goes on and ends (rc $rc)" '[ $rc -eq 0 ] || [ $rc -eq 1 ]'
check "nvcc hangs: each node is a compile error naming the deadline" \
    '[ "$(sqlite3 "$T/nvcc_hang/run.db" "select count(*) from nodes where verdict = '\''compile_error'\'' and message like '\''%deadline%'\''")" = 2 ]'
echo die >"$T/nvcc.mode"
run nvcc_die kernel:nd --iters 2
check "nvcc killed: the run goes on and ends (rc $rc)" '[ $rc -eq 0 ] || [ $rc -eq 1 ]'
check "nvcc killed: two compile-error nodes" \
    '[ "$(sqlite3 "$T/nvcc_die/run.db" "select count(*) from nodes where verdict = '\''compile_error'\''")" = 2 ]'
echo ok >"$T/nvcc.mode"
# the same kernels again, nvcc now working: a killed compile was not cached as a failure
CACHE=nvcc_die run nvcc_again kernel:nd --iters 2
check "after nvcc was killed, the same kernel compiles (nothing bad cached)" \
    '[ "$(sqlite3 "$T/nvcc_again/run.db" "select count(*) from nodes where verdict = '\''pass'\''")" -ge 1 ]'

# ---- the runner ----
rfault() {
    local mode=$1 verdict=$2 msg=$3
    echo "$mode" >"$T/runner.mode"
    run "runner_$mode" "kernel:r$mode" --iters 2
    check "runner $mode: the run goes on and ends (rc $rc)" '[ $rc -eq 0 ] || [ $rc -eq 1 ]'
    check "runner $mode: both nodes have verdict $verdict" \
        '[ "$(sqlite3 "$T/runner_$mode/run.db" "select count(*) from nodes where verdict = '\''$verdict'\''")" = 2 ]'
    check "runner $mode: the node says why" \
        'sqlite3 "$T/runner_$mode/run.db" "select message from nodes where id = 1" | grep -Eq "$msg"'
}
rfault segv crash "SIGSEGV"
rfault hang timeout "deadline of 3 s.*at: timing"
rfault garbage runner_error "not a JSON object"
rfault noreport runner_error "exited with status 3 and wrote no report"
# Without --deadline, a candidate after the first gets 4x the longest evaluation so far, at
# least $CUTEGEN_EVAL_HANG_FLOOR s (120 by default): a hang costs that, not the evaluator's 600 s
echo passhang >"$T/runner.mode"
CUTEGEN_EVAL_HANG_FLOOR=2 run runner_passhang kernel:rph --iters 2 --deadline 0
check "runner hangs after a pass: node 1 passes, node 2 times out at the derived deadline" \
    '[ "$(sqlite3 "$T/runner_passhang/run.db" "select verdict from nodes order by id" | tr "\n" " ")" = "pass timeout " ] &&
     sqlite3 "$T/runner_passhang/run.db" "select message from nodes where id = 2" | grep -q "deadline of 2 s"'
echo pass >"$T/runner.mode"
check "no scratch directories are left behind" '! ls "${TMPDIR:-/tmp}" | grep -q "^cutegen-eval-.*$$"'

# ---- killed mid-run (SIGKILL), then resume ----
# wait_nodes DIR N: until run.db holds N nodes (30 s at most)
wait_nodes() { for _ in $(seq 300); do [ "$(nodes "$1")" -ge "$2" ] 2>/dev/null && return 0; sleep 0.1; done; return 1; }
OPENAI_API_KEY=$KEY "$CUTEGEN" run "$TASK" --backend openai --base-url "$URL" --model after2-slow:k9 \
    --timeout 30 --iters 6 --no-memcheck --out "$T/k9" --json >"$T/k9.out" 2>"$T/k9.err" &
cpid=$!
wait_nodes "$T/k9" 2; sleep 0.5
kill -9 "$cpid"; wait "$cpid" 2>/dev/null; cpid=
check "killed: the two completed nodes are in run.db" '[ "$(nodes "$T/k9")" = 2 ]'
check "killed: the database is intact" '[ "$(sqlite3 "$T/k9/run.db" "pragma integrity_check")" = ok ]'
shas "$T/k9" 2 >"$T/k9.before"
resume k9 kernel:k9-r
check "killed: resume finishes (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || cat "$T/k9.rerr"
check "killed: resume continues to the budget" '[ "$(nodes "$T/k9")" = 6 ]'
check "killed: the kept nodes are unchanged" '[ "$(shas "$T/k9" 2)" = "$(cat "$T/k9.before")" ]'

# ---- the disk fills during a run ----
mnt="$T/small"; mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
    OPENAI_API_KEY=$KEY "$CUTEGEN" run "$TASK" --backend openai --base-url "$URL" --model after2-slow:full \
        --timeout 30 --iters 6 --no-memcheck --out "$mnt/run" --json >"$T/full.out" 2>"$T/full.err" &
    cpid=$!
    wait_nodes "$mnt/run" 2
    dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null  # fills the rest
    wait "$cpid"; rc=$?; cpid=
    check "disk full: the run fails (rc $rc)" '[ $rc -ne 0 ] && [ $rc -lt 128 ]'
    check "disk full: exit 4, something the machine lacks" '[ $rc -eq 4 ]'
    check "disk full: the message says so" 'grep -Eiq "disk is full|no space|full" "$T/full.err"'
    cat "$T/full.err"
    rm -f "$mnt/filler"
    check "disk full: the completed nodes are kept" '[ "$(nodes "$mnt/run")" -ge 2 ]'
    check "disk full: the database is intact" '[ "$(sqlite3 "$mnt/run/run.db" "pragma integrity_check")" = ok ]'
    n0=$(nodes "$mnt/run")
    OPENAI_API_KEY=$KEY timeout 120 "$CUTEGEN" resume "$mnt/run" --backend openai --base-url "$URL" \
        --model "kernel:full-r" --json >"$T/full.rout" 2>"$T/full.rerr"
    rc=$?
    check "disk full: resume after space is freed finishes (rc $rc)" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || cat "$T/full.rerr"
    check "disk full: resume continues past the kept nodes" '[ "$(nodes "$mnt/run")" -gt "$n0" ]'
    umount "$mnt"; mnt=
else
    mnt=
    ok "disk full: skipped (cannot mount a tmpfs here)"
fi
exit $((fails > 0))
