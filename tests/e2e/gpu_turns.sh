#!/usr/bin/env bash
# `cutegen suite --per-gpu K`: K workers share one GPU; their compiles overlap but their
# evaluations take turns (CUTEGEN_GPU_LOCK, a lock file per GPU in the suite directory). Real
# cutegen processes with a fake nvcc (an empty library) and a fake runner that lists one GPU
# and logs when each evaluation starts and ends: no two evaluations may overlap, and without
# the lock they do.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do [ "$v" = CUTEGEN ] || unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
mkdir -p "$T/bin"
cat >"$T/bin/nvcc" <<'SH'
#!/usr/bin/env bash
[ "$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.48 (fake)"; exit 0; }
sleep 0.2
while [ $# -gt 0 ]; do [ "$1" = -o ] && { : >"$2"; exit 0; }; shift; done
exit 1
SH
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
[ "\$1" = --devices ] && { echo '{"devices":[{"index":0,"name":"Fake GPU"}]}'; exit 0; }
fd=
while [ \$# -gt 0 ]; do [ "\$1" = --report-fd ] && fd=\$2; shift; done
read -r nonce
echo "S \$(date +%s%N)" >>"$T/evals.log"
sleep "\$(cat "$T/runner.sleep" 2>/dev/null || echo 0.3)"
echo "E \$(date +%s%N)" >>"$T/evals.log"
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
printf 'kb1/19_relu\nkb1/20_leaky_relu\nkb1/21_sigmoid\nkb1/22_tanh\n' >"$T/list.txt"

# the largest number of evaluations running at once, from the start/end log
most_at_once() { sort -k2,2n -k1,1r "$1" | awk '$1=="S"{n++; if(n>m)m=n} $1=="E"{n--} END{print m+0}'; }

suite() { # NAME EXTRA...
    local name=$1; shift
    : >"$T/evals.log"
    timeout 300 "$CUTEGEN" suite "$T/list.txt" --out "$T/$name" --gpus all --json \
        --backend builtin --iters 3 --no-memcheck "$@" >"$T/$name.json" 2>"$T/$name.err"
    rc=$?
}

suite turns --per-gpu 3
check "suite --per-gpu 3 finishes every task (rc $rc: $(tail -c 300 "$T/turns.err"))" '[ $rc -eq 0 ]'
workers=$(python3 -c 'import json,sys; print(" ".join(sorted(w["worker"] for w in json.load(open(sys.argv[1]))["workers"])))' "$T/turns.json")
check "three workers share GPU 0 ($workers)" '[ "$workers" = "gpu0.0 gpu0.1 gpu0.2" ]'
n=$(grep -c '^S' "$T/evals.log")
check "each task evaluated its candidates (got $n evaluations)" '[ "$n" -ge 12 ]'
m=$(most_at_once "$T/evals.log")
check "no two evaluations share the GPU (at most $m at once)" '[ "$m" -eq 1 ]'
check "the lock file is in the suite directory" '[ -f "$T/turns/gpu0.lock" ]'

# the same three runs at once without the suite's lock: evaluations overlap, so the check
# above can fail
: >"$T/evals.log"
for t in 19_relu 20_leaky_relu 21_sigmoid; do
    timeout 120 "$CUTEGEN" run "kb1/$t" --backend builtin --iters 3 --no-memcheck --out "$T/free-$t" \
        --quiet >/dev/null 2>&1 &
done
wait
m=$(most_at_once "$T/evals.log")
check "without the lock, evaluations of parallel runs overlap (at most $m at once)" '[ "$m" -ge 2 ]'

# and with it set by hand, as a user sharing a GPU between their own runs would
: >"$T/evals.log"
for t in 19_relu 20_leaky_relu 21_sigmoid; do
    CUTEGEN_GPU_LOCK="$T/my.lock" timeout 120 "$CUTEGEN" run "kb1/$t" --backend builtin --iters 3 \
        --no-memcheck --out "$T/own-$t" --quiet >/dev/null 2>&1 &
done
wait
m=$(most_at_once "$T/evals.log")
check "CUTEGEN_GPU_LOCK set by hand serializes them too (at most $m at once)" '[ "$m" -eq 1 ]'

# the wait for the GPU's turn is in the report (gpu_wait_s), apart from the evaluation's work
: >"$T/k.so"
flock "$T/held.lock" sleep 2 &
holder=$!
sleep 0.3
CUTEGEN_GPU_LOCK="$T/held.lock" timeout 60 "$CUTEGEN" eval x.cu --so "$T/k.so" --task kb1/19_relu \
    --json >"$T/waited.json" 2>"$T/waited.err"
wait $holder
check "an evaluation that waited for the lock reports the wait (gpu_wait_s)" \
    'python3 -c "import json,sys; w=json.load(open(sys.argv[1]))[\"report\"][\"gpu_wait_s\"]; assert 1.2 < w < 10, w" "$T/waited.json"'

# a suite given the user's lock keeps it: its workers take turns with a run beside it
: >"$T/evals.log"
CUTEGEN_GPU_LOCK="$T/shared.lock" timeout 120 "$CUTEGEN" run kb1/23_softmax --backend builtin --iters 3 \
    --no-memcheck --out "$T/beside" --quiet >/dev/null 2>&1 &
beside=$!
CUTEGEN_GPU_LOCK="$T/shared.lock" suite shared --per-gpu 2
wait $beside
check "suite --per-gpu 2 under CUTEGEN_GPU_LOCK finishes (rc $rc)" '[ $rc -eq 0 ]'
m=$(most_at_once "$T/evals.log")
check "the suite's workers and a run beside it take turns on the user's lock (at most $m at once)" '[ "$m" -eq 1 ]'
check "no lock of its own in the suite directory" '[ ! -f "$T/shared/gpu0.lock" ]'

# interrupts: ^C twice stops the running runs at once and still writes the summary; a suite
# killed outright takes its runs (and their evaluations) with it: nothing is left running
echo 60 >"$T/runner.sleep"
left_running() { pgrep -f "$T/bin/cutegen-runner" >/dev/null || pgrep -f "cutegen run kb1/.* --out $T/$1/" >/dev/null; }
"$CUTEGEN" suite "$T/list.txt" --out "$T/int2" --gpus all --per-gpu 2 --json --backend builtin \
    --iters 3 --no-memcheck >"$T/int2.json" 2>"$T/int2.err" &
pid=$!
for _ in $(seq 100); do pgrep -f "$T/bin/cutegen-runner" >/dev/null && break; sleep 0.1; done
kill -INT $pid; sleep 1; kill -INT $pid
t0=$(date +%s)
wait $pid; rc=$?
check "^C twice: the suite ends at once with 130 (rc $rc in $(( $(date +%s) - t0 )) s)" '[ $rc -eq 130 ] && [ $(( $(date +%s) - t0 )) -lt 20 ]'
check "... writes its summary, the stopped runs failed as interrupted" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[\"results\"]; assert any(\"interrupted twice\" in (x.get(\"message\") or \"\") for x in r), r" "$T/int2.json"'
sleep 0.5
check "... and leaves no run or evaluation running" '! left_running int2'
"$CUTEGEN" suite "$T/list.txt" --out "$T/kill9" --gpus all --per-gpu 2 --backend builtin \
    --iters 3 --no-memcheck >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do pgrep -f "$T/bin/cutegen-runner" >/dev/null && break; sleep 0.1; done
kill -KILL $pid
wait $pid 2>/dev/null
sleep 1
check "a suite killed with SIGKILL leaves no run or evaluation running" '! left_running kill9'
rm -f "$T/runner.sleep"

check "a bad --per-gpu is refused with a usage error" \
    '"$CUTEGEN" suite "$T/list.txt" --out "$T/bad" --per-gpu 0 >/dev/null 2>"$T/bad.err"; [ $? -eq 2 ] && grep -q per-gpu "$T/bad.err"'
[ "$fails" -eq 0 ]
