#!/usr/bin/env bash
# The run store as the commands share it (docs/store.md, "Who writes"): one writer per run
# (run and resume take RUN_DIR/run.lock, a second one is refused at once), errors of the store
# that end run and resume with a nonzero status (and a --json object), inspecting commands
# (show, runs, report, export) that open run.db read-only and change nothing, a run that will
# not write among a user's files, and stores that are empty or were emptied. Real processes: the
# cutegen binary, a scripted model (--backend cmd), recorded evaluations for the GPU, sqlite3
# and python3 holding locks. Every command has a timeout, so nothing can hang.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
D="$REPO/tests/data/loop"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
sql() { sqlite3 "$1/run.db" "$2"; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }
# what a reader must leave as it was: run.db's content and mtime, and the directory's names
print_of() { echo "$(sha256sum <"$1/run.db") $(stat -c %Y.%y "$1/run.db") $(ls -A "$1" | tr '\n' ' ')"; }
cg() { timeout 60 "$CUTEGEN" "$@"; }

# ---- stores that need no compiler: a committed run (schema 2), copied ----
H="$T/h200"
cp -r "$REPO/tests/data/loop_h200_run" "$H"
chmod -R u+w "$H"

# inspecting commands never write: run.db (an older schema, which a writer would migrate)
# keeps its bytes and mtime, and nothing appears beside it (no -wal, -shm or lock)
before=$(print_of "$H")
cg show "$H" >"$T/show.txt" 2>&1; r1=$?
cg show "$H" --json >"$T/show.json" 2>&1; r2=$?
cg runs "$H" >"$T/runs.txt" 2>&1; r3=$?
cg report "$H" --md "$T/h.md" >/dev/null 2>&1; r4=$?
cg export "$H" --out "$T/exp" >/dev/null 2>&1; r5=$?
check "show, show --json, runs, report and export read the run (rc $r1 $r2 $r3 $r4 $r5)" \
    '[ "$r1$r2$r3$r4$r5" = 00000 ] && [ "$(jq_ "$T/show.json" "len(d[\"nodes\"])")" = 6 ]'
check "they leave run.db and its directory exactly as they were" '[ "$(print_of "$H")" = "$before" ]'
check "the old schema is still the file's (read through a copy in memory)" \
    '[ "$(sql "$H" "select value from meta where key=\"schema_version\"")" = 2 ]'

# a run the user may not write: as another user where we are root, else read-only modes
RO="$T/ro"
cp -r "$H" "$RO"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$T" "$RO"; chmod 644 "$RO/run.db"
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    if as_nobody test -x "$CUTEGEN" && as_nobody test -r "$RO/run.db"; then
        as_nobody timeout 60 "$CUTEGEN" show "$RO" >"$T/ro.txt" 2>&1; rc=$?
        check "another user shows a run in a directory it may not write (rc $rc)" \
            '[ $rc -eq 0 ] && grep -q "best" "$T/ro.txt" && ! grep -q readonly "$T/ro.txt"'
        as_nobody timeout 60 "$CUTEGEN" runs "$RO" >"$T/ro_runs.txt" 2>&1; rc=$?
        check "and lists it (rc $rc)" '[ $rc -eq 0 ] && grep -q "kb1/19_relu" "$T/ro_runs.txt"'
    else
        ok "skipped: user nobody cannot reach $CUTEGEN or the scratch directory"
    fi
else
    chmod 444 "$RO/run.db"; chmod 555 "$RO"
    cg show "$RO" >"$T/ro.txt" 2>&1; rc=$?
    check "show reads a run in a read-only directory (rc $rc)" '[ $rc -eq 0 ] && ! grep -q readonly "$T/ro.txt"'
    chmod 755 "$RO"; chmod 644 "$RO/run.db"
fi

# an empty run.db is no run, and stays empty
E="$T/empty"; mkdir -p "$E"; : >"$E/run.db"
cg show "$E" >"$T/e.out" 2>"$T/e.err"; rc=$?
check "show of a 0-byte run.db: exit 3, 'holds no run' (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "holds no run: its run.db is an empty database" "$T/e.err"'
cg report "$E" >/dev/null 2>&1; cg runs "$E" >/dev/null 2>&1; cg export "$E" --out "$T/e_exp" >/dev/null 2>&1
cg resume "$E" --backend builtin >/dev/null 2>&1; rc=$?
check "nothing wrote a schema into it, resume neither (rc $rc)" '[ $rc -eq 3 ] && [ ! -s "$E/run.db" ]'

# a store whose rows were all deleted: a clear message from every command, and no write
X="$T/emptied"
cp -r "$H" "$X"
sql "$X" "delete from llm_calls; delete from nodes; delete from blobs; delete from runs; delete from meta;"
before=$(print_of "$X")
sha_before=$(sha256sum <"$X/run.db")
for c in show report runs export resume; do
    case $c in
    export) cg export "$X" --out "$T/x_exp" >"$T/x.out" 2>"$T/x.err" ;;
    resume) cg resume "$X" --backend builtin >"$T/x.out" 2>"$T/x.err" ;;
    *) cg "$c" "$X" >"$T/x.out" 2>"$T/x.err" ;;
    esac
    rc=$?
    check "$c of an emptied store: exit 3, 'is damaged', no SQLite internals (rc $rc)" \
        '[ $rc -eq 3 ] && grep -q "is damaged: it has tables but no schema version" "$T/x.err" && ! grep -q "already exists" "$T/x.err"'
    [ $c = export ] && { check "the inspecting commands changed nothing there" '[ "$(print_of "$X")" = "$before" ]'; }
done
check "resume (a writer: it took the run's lock) did not write run.db" '[ "$(sha256sum <"$X/run.db")" = "$sha_before" ]'

# ---- runs: these need nvcc for the compiles (the GPU is recorded evaluations) ----
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped the runs: no nvcc"; exit $((fails > 0))
fi
cp "$D/k_bad.cu" "$T/k_bad.cu"
sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/' "$T/k_bad.cu" >"$T/k_good.cu"
R="$T/evals"; mkdir -p "$R"
printf '{"verdict":"pass","message":"","metrics":{"ms":0.05,"speedup_vs_baseline":1.0,"roofline_fraction":0.5},"runner_s":1.5}\n' \
    >"$R/$(sha256sum "$T/k_good.cu" | cut -d' ' -f1).json"
{ printf 'Change: a relu\n```cuda\n'; cat "$T/k_good.cu"; printf '```\n'; } >"$T/reply.txt"
printf '#!/bin/sh\ncat >/dev/null\ncat "%s"\n' "$T/reply.txt" >"$T/reply.sh"; chmod +x "$T/reply.sh"
TASK="$D/relu_small.json"

# run --out into a directory of the user's files: refused before anything is written
M="$T/mine"; mkdir -p "$M"; echo '// my kernel' >"$M/best.cu"
cg run "$TASK" --llm-cmd "$T/reply.sh" --recorded-evals "$R" --iters 1 --out "$M" >"$T/m.out" 2>"$T/m.err"; rc=$?
check "run --out a non-empty directory that is no run: exit 3 (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "'"'"'$M'"'"' exists and holds files that are not a cutegen run" "$T/m.err"'
check "the user's file is untouched and nothing was added" \
    '[ "$(cat "$M/best.cu")" = "// my kernel" ] && [ "$(ls -A "$M")" = best.cu ]'
mkdir -p "$T/emptydir"
cg run "$TASK" --llm-cmd "$T/reply.sh" --recorded-evals "$R" --iters 1 --out "$T/emptydir" >/dev/null 2>"$T/ed.err"; rc=$?
check "run --out an existing empty directory works (rc $rc)" '[ $rc -eq 0 ] && [ "$(sql "$T/emptydir" "select count(*) from nodes")" = 1 ]'

# one writer per run: a resume (or a second run) while a run is writing is refused at once
C="$T/conc"
cg run "$TASK" --llm-cmd "sleep 3; $T/reply.sh" --recorded-evals "$R" --iters 3 --out "$C" \
    >"$T/c1.out" 2>"$T/c1.err" &
first=$!
for _ in $(seq 100); do [ "$(sql "$C" "select count(*) from runs" 2>/dev/null)" = 1 ] && break; sleep 0.1; done
holder_pid=$(cat "$C/run.lock" 2>/dev/null)
t0=$(date +%s)
cg resume "$C" --llm-cmd "$T/reply.sh" --recorded-evals "$R" --json >"$T/c2.out" 2>"$T/c2.err"; rc=$?
t1=$(date +%s)
check "resume of a run being written: exit 3 within 2 s (rc $rc, $((t1 - t0)) s)" '[ $rc -eq 3 ] && [ $((t1 - t0)) -le 2 ]'
check "it says another cutegen (with its pid) writes the run, and what to do" \
    'grep -q "'"'"'$C'"'"' is in use: another cutegen process (pid $holder_pid) is writing it" "$T/c2.err" && [ "$(cat /proc/$holder_pid/comm)" = cutegen ] && grep -q "wait for it to end, then \`cutegen resume" "$T/c2.err"'
check "resume --json says so on stdout too" \
    '[ "$(jq_ "$T/c2.out" "d[\"status\"], d[\"exit_code\"]")" = "error 3" ] && grep -q "is in use" "$T/c2.out"'
cg run "$TASK" --llm-cmd "$T/reply.sh" --recorded-evals "$R" --iters 3 --out "$C" >/dev/null 2>"$T/c3.err"; rc=$?
check "a second run into it is refused the same way (rc $rc)" '[ $rc -eq 3 ] && grep -q "is in use" "$T/c3.err"'
wait $first; rc=$?
check "the first run ends as if alone (rc $rc): iterations 1,2,3" \
    '[ $rc -eq 0 ] && [ "$(sql "$C" "select group_concat(iteration) from nodes")" = 1,2,3 ] && grep -q "^nodes     3 " "$T/c1.out" && grep -q "^best      node 1," "$T/c1.out"'
cg resume "$C" --llm-cmd "$T/reply.sh" --recorded-evals "$R" --iters 4 >/dev/null 2>"$T/c4.err"; rc=$?
check "once it has ended, resume takes the lock and goes on (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(sql "$C" "select group_concat(iteration) from nodes")" = 1,2,3,4 ]'

# killed with SIGKILL: the kernel drops the lock, and resume goes on
K="$T/killed"
# (no timeout wrapper: $! is cutegen itself, killed below once its model command is running)
"$CUTEGEN" run "$TASK" --llm-cmd "sleep 30; $T/reply.sh" --recorded-evals "$R" --iters 2 --out "$K" >/dev/null 2>&1 &
kp=$!
model=""
for _ in $(seq 100); do
    model=$(ps -o pid= --ppid "$kp" | tr -d ' ')
    [ -n "$model" ] && break
    sleep 0.1
done
kill -9 "$kp" 2>/dev/null
wait $kp 2>/dev/null
[ -n "$model" ] && kill -9 -- "-$model" 2>/dev/null # the model command's own process group
cg resume "$K" --llm-cmd "$T/reply.sh" --recorded-evals "$R" >/dev/null 2>"$T/k.err"; rc=$?
check "a run killed with SIGKILL leaves no lock behind: resume goes on (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(sql "$K" "select count(*) from nodes")" = 2 ]'

# run.db locked by another program: resume fails with exit 4, a hint, and a --json object
L="$T/lk"
cp -r "$C" "$L"
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(60)' "$L/run.db" >"$T/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q locked "$T/holder.out" 2>/dev/null && break; sleep 0.1; done
cg resume "$L" --iters 6 --recorded-evals "$R" --json >"$T/l.out" 2>"$T/l.err"; rc=$?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
check "resume of a run.db another program holds locked: exit 4, not 0 (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "database is locked" "$T/l.err" && grep -q "hint: another program holds" "$T/l.err"'
check "with --json, stdout says why" \
    '[ "$(jq_ "$T/l.out" "d[\"status\"], d[\"exit_code\"]")" = "error 4" ] && grep -q "database is locked" "$T/l.out"'
check "and the run is as it was: no resume counted, no node added" \
    '[ "$(sql "$L" "select resumes||\" \"||nodes from runs")" = "1 4" ]'

exit $((fails > 0))
