#!/usr/bin/env bash
# The reference session kept across a run's candidates (issue 18), with no GPU: `cutegen run
# M.py` on a module that does not lower, a scripted model (tests/data/loop/model.py), the real
# nvcc, and the FAKE reference process and runner of tests/data/modeval/fake_env.sh (the fake
# reference logs one line per prepare to $T/prepares.log; the fake runner reports
# module.reference_intact true, or false for a library holding FAKE_SCRIBBLE, and crashes on
# FAKE_SEGV). A run of 3 candidates prepares once; a candidate that wrote the reference's
# tensors fails and the next one gets a fresh prepare; a crash drops the session; a report
# without reference_intact drops it; ^C (once or twice) leaves no reference process; `cutegen
# eval` alone prepares once and releases.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
cleanup() { [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"; }
trap cleanup EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
sql() { sqlite3 "$1/run.db" "$2"; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json" FAKE_REF_DIR="$T"
echo "{}" >"$CUTEGEN_CONFIG"
. "$REPO/tests/data/modeval/fake_env.sh" # sets $M, the fake python, runner and baseline
export CUTEGEN_NCU="$T/no-ncu"           # no profiling: it has a prepare of its own
D="$REPO/tests/data/loop"
echo pass >"$T/mode"; echo pass >"$T/runner.mode"

# the fake reference processes of this test still running, found by their command line and
# their FAKE_REF_DIR (other tests' fakes have another)
ref_left() {
    local p n=0
    for p in $(pgrep -f "tests/data/modeval/fake_reference.py"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "FAKE_REF_DIR=$T" && n=$((n + 1))
    done
    echo $n
}
# a process that runs (a zombie does not: killed, and here perhaps no init reaps it)
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"; }
prepares() { grep -c . "$T/prepares.log" 2>/dev/null || echo 0; }

# kernel MARKER: the scale-shift kernel as a whole reply, with a marker the fake runner reads
kernel() {
    cat <<CU
Change: kernel $1
\`\`\`cuda
#include <cutegen/kernel_abi.h>

extern "C" const char fake_marker[] = "$1";

__global__ void scale_shift(const float *x, const float *w, const float *b, float *y, long n,
			    long cols)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * w[i % cols] + b[i % cols];
}

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	if (num_inputs != 3 || num_outputs != 1)
		return 1;
	long n = inputs[0].shape[0] * inputs[0].shape[1], cols = inputs[0].shape[1];
	const int threads = $2;
	scale_shift<<<(unsigned)((n + threads - 1) / threads), threads, 0, stream>>>(
		(const float *)inputs[0].data, (const float *)inputs[1].data,
		(const float *)inputs[2].data, (float *)outputs[0].data, n, cols);
	return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
\`\`\`
CU
}
# loop NAME MARKER...: a run of one candidate per marker (--iters = their count)
loop() {
    local name=$1 i=0; shift
    P="$T/model-$name"; mkdir -p "$P"
    for mk in "$@"; do i=$((i + 1)); kernel "$mk" $((64 * i)) >"$P/reply-$i.txt"; done
    : >"$T/prepares.log"; : >"$T/runner.calls"; rm -f "$T/released"
    RUN="$T/run-$name"
    "$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P" --iters $i --fix-attempts 3 \
        --out "$RUN" >"$T/out-$name" 2>"$T/err-$name"; rc=$?
}
verdicts() { sql "$RUN" "select group_concat(verdict, ' ') from (select verdict from nodes order by id)"; }

# ---- three candidates, the reference intact after each: one prepare ----
loop keep FAKE_WRONG one two
check "a run of 3 candidates (incorrect, pass, pass): exit 0, each judged by the runner (rc $rc)" \
    '[ $rc = 0 ] && [ "$(grep -c . "$T/runner.calls")" = 3 ] && [ "$(verdicts)" = "incorrect pass pass" ]'
[ $rc = 0 ] || sed 's/^/# /' "$T/err-keep" | tail -10
check "... prepared once: the session served all three ($(prepares) prepares)" '[ "$(prepares)" = 1 ]'
check "... the last report says the session was reused" \
    'sql "$RUN" "select cast(b.content as text) from nodes n join blobs b on b.sha256 = n.report_sha where n.id = 3" | grep -q "\"reference_session\":{\"next\":\"kept\",\"prepares\":1,\"reuses\":2}"'
check "... released at the end and no reference process left" '[ -s "$T/released" ] && [ "$(ref_left)" = 0 ]'

# ---- a candidate that wrote the reference's tensors: it fails, the next prepares afresh ----
loop scribble one FAKE_SCRIBBLE three
check "a run whose 2nd candidate wrote the reference's tensors: 3 candidates judged (rc $rc)" \
    '[ $rc = 0 ] && [ "$(grep -c . "$T/runner.calls")" = 3 ]'
check "... its pass became inputs_modified, the message says it wrote the reference's tensors" \
    '[ "$(verdicts)" = "pass inputs_modified pass" ] && sql "$RUN" "select message from nodes where id=2" | grep -q "wrote the reference process.s tensors"'
check "... the next candidate got a fresh prepare (2 in all, got $(prepares))" '[ "$(prepares)" = 2 ]'
check "... no reference process left" '[ "$(ref_left)" = 0 ]'

# ---- a crashed runner drops the session ----
loop crash one FAKE_SEGV three
check "a run whose 2nd candidate crashes the runner: verdicts pass crash pass (rc $rc)" \
    '[ $rc = 0 ] && [ "$(verdicts)" = "pass crash pass" ]'
check "... the crash dropped the session: 2 prepares (got $(prepares))" '[ "$(prepares)" = 2 ]'
check "... no reference process left" '[ "$(ref_left)" = 0 ]'

# ---- a report without module.reference_intact drops the session ----
echo absent >"$T/runner.intact"
loop absent one two
rm -f "$T/runner.intact"
check "reports without reference_intact: every candidate prepares afresh (2 of 2, got $(prepares)) (rc $rc)" \
    '[ $rc = 0 ] && [ "$(prepares)" = 2 ] && [ "$(verdicts)" = "pass pass" ] && [ "$(ref_left)" = 0 ]'

# ---- ^C: once (the loop stops, the slot is released), twice (the reference is killed) ----
for n in 1 2; do
    P="$T/model-int$n"; mkdir -p "$P"
    kernel one 64 >"$P/reply-1.txt"; echo SLEEP >"$P/reply-2.txt"
    : >"$T/prepares.log"; rm -f "$T/released" "$T/worker.pid"
    # the second ^C comes while cutegen waits for a reference that answers release but does
    # not exit (10 s of grace): it ends cutegen at once, and must kill the reference on the way
    [ $n = 2 ] && echo ignore_release >"$T/mode"
    "$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P" --iters 3 --out "$T/run-int$n" \
        >"$T/out-int$n" 2>"$T/err-int$n" &
    cg=$!
    for _ in $(seq 300); do [ -s "$P/pid" ] && break; sleep 0.1; done
    check "^C x$n: the run reached the model's second call with the session kept (1 prepare, $(ref_left) alive)" \
        '[ -s "$P/pid" ] && [ "$(prepares)" = 1 ] && [ "$(ref_left)" = 1 ]'
    # ^C, then the model's command ends (the loop waits for its reply): the run stops and
    # releases its reference; a second ^C lands while that one lingers after release
    kill -INT "$cg"; sleep 0.2; kill "$(cat "$P/pid")" 2>/dev/null
    [ $n = 2 ] && { for _ in $(seq 50); do [ -s "$T/worker.pid" ] && break; sleep 0.1; done; kill -INT "$cg"; }
    for _ in $(seq 150); do kill -0 "$cg" 2>/dev/null || break; sleep 0.1; done
    wait "$cg"; rc=$?
    for _ in $(seq 50); do [ "$(ref_left)" = 0 ] && break; sleep 0.1; done
    check "^C x$n: cutegen ended (rc $rc) and no reference process is left" '[ "$(ref_left)" = 0 ]'
    [ $n = 2 ] && check "^C x2: the reference's process group went with it (its worker too)" \
        '[ -s "$T/worker.pid" ] && ! alive "$(cat "$T/worker.pid")"'
    [ -s "$T/worker.pid" ] && kill "$(cat "$T/worker.pid")" 2>/dev/null
done
echo pass >"$T/mode"

# ---- cutegen eval alone: one prepare, released ----
: >"$T/k.so"; : >"$T/prepares.log"; rm -f "$T/released"
"$CUTEGEN" eval "$T/k.cu" --task "$M" --so "$T/k.so" >"$T/out" 2>"$T/err"; rc=$?
check "cutegen eval on the module: pass, one prepare, released, no reference left (rc $rc)" \
    '[ $rc = 0 ] && [ "$(prepares)" = 1 ] && [ -s "$T/released" ] && [ "$(ref_left)" = 0 ]'

echo "$fails failed"
[ $fails = 0 ]
