#!/usr/bin/env bash
# The agent loop on a module that does not lower, with no GPU: `cutegen run M.py` with a
# scripted model (the cmd backend, tests/data/loop/model.py), the real nvcc (a tiny plain-CUDA
# kernel), and the FAKE reference process and FAKE runner of tests/data/modeval/fake_env.sh:
# every candidate is judged through the module path (describe, prepare, RUN.json, the runner
# with --module, release). The prompt shows the module's source and its ABI list; a wrong
# candidate is fixed; the run ends with a best kernel; resume describes the module again and goes
# on; export writes the ModelNew drop-in; a module whose reference fails ends the run with its
# message; a suite of such modules runs them; builtin still says it needs a model.
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
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json" FAKE_REF_DIR="$T"
echo "{}" >"$CUTEGEN_CONFIG"
. "$REPO/tests/data/modeval/fake_env.sh" # sets $M, the fake python, runner and baseline
D="$REPO/tests/data/loop"
echo pass >"$T/mode"; echo pass >"$T/runner.mode"
: >"$T/runner.calls"

# y = x * w + b over [4, 8], w and b per column: wrong at first (a marker the fake runner
# judges incorrect), then fixed, then faster
cat >"$T/k_wrong.cu" <<'CU'
#include <cutegen/kernel_abi.h>

extern "C" const char fake_marker[] = "FAKE_WRONG";

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
	const int threads = 256;
	scale_shift<<<(unsigned)((n + threads - 1) / threads), threads, 0, stream>>>(
		(const float *)inputs[0].data, (const float *)inputs[1].data,
		(const float *)inputs[2].data, (float *)outputs[0].data, n, cols);
	return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
CU
edit() { printf 'Change: %s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n' "$1" "$2" "$3"; }
P="$T/model"; mkdir -p "$P"
{ printf 'Change: a first scale-shift kernel\n```cuda\n'; cat "$T/k_wrong.cu"; printf '```\n'; } >"$P/reply-1.txt"
edit "drop the stray term" 'extern "C" const char fake_marker[] = "FAKE_WRONG";' 'extern "C" const char fake_marker[] = "fixed";' >"$P/reply-2.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$P/reply-3.txt"
edit "fewer threads per block" $'\tconst int threads = 512;' $'\tconst int threads = 128;' >"$P/reply-4.txt"

RUN="$T/run1"
"$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P" --iters 2 --out "$RUN" --json \
    >"$T/out1.json" 2>"$T/err1"; rc=$?
check "run M.py with a model: exit 0 with a best kernel (rc $rc)" \
    '[ $rc = 0 ] && [ "$(jq_ "$T/out1.json" "d[\"best\"][\"node\"]")" = 2 ]'
[ $rc = 0 ] || { sed 's/^/# /' "$T/err1" | tail -20; }
check "the first prompt has the module's source" 'grep -q "^class Model(torch.nn.Module):" "$P/prompt-1.txt" && grep -q "task: module scale_shift" "$P/prompt-1.txt"'
check "the first prompt has the ABI list: inputs, parameters, outputs, the scalar" \
    'grep -q "inputs\[0\] input  *x  *fp32  *\[4, 8\]" "$P/prompt-1.txt" && grep -q "inputs\[1\] parameter  *w " "$P/prompt-1.txt" && grep -q "inputs\[2\] parameter  *b " "$P/prompt-1.txt" && grep -q "outputs\[0\] output  *out " "$P/prompt-1.txt" && grep -q "eps = 1.0000000000000001e-05" "$P/prompt-1.txt"'
check "each candidate was judged through the module path: the runner got --module RUN.json (2 calls)" \
    '[ "$(grep -c . "$T/runner.calls")" = 2 ] && grep -q "^ok [0-9]" "$T/runcheck"'
check "node 1 is incorrect, its message is the fix prompt's feedback" \
    '[ "$(sql "$RUN" "select verdict from nodes where id=1")" = incorrect ] && grep -q "12 of 32 elements of output out wrong" "$P/prompt-2.txt"'
check "node 2 (the fix) passes and is the best; best.cu is it" \
    '[ "$(sql "$RUN" "select verdict||\" \"||outcome from nodes where id=2")" = "pass best" ] && grep -q "fake_marker\[\] = \"fixed\"" "$RUN/best.cu"'
check "the store keeps the module: its file, lowered_to null, its description as the task" \
    '[ "$(sql "$RUN" "select task_name from runs")" = scale_shift ] && sql "$RUN" "select config_json from runs" | grep -q "\"lowered_to\":null,\"module\":\"$M\"" && sql "$RUN" "select task_json from runs" | grep -q "\"workload\": *\"memory-bound\""'
check "the reference was released and is gone" '[ -s "$T/released" ] && ! kill -0 "$(cat "$T/ref.pid")" 2>/dev/null'
check "the summary names the module and its contract" \
    '[ "$(jq_ "$T/out1.json" "d[\"task\"]")" = scale_shift ] && [ "$(jq_ "$T/out1.json" "d[\"precision\"]")" = strict ]'

# ---- resume: the module is described again, the loop goes on ----
rm -f "$T/released" "$T/ncu.argv"
CUTEGEN_NCU="$T/bin/ncu" "$CUTEGEN" resume "$RUN" --iters 3 --json >"$T/out2.json" 2>"$T/err2"; rc=$?
check "resume of a module run: exit 0, a third node judged through the module path (rc $rc)" \
    '[ $rc = 0 ] && [ "$(sql "$RUN" "select count(*) from nodes")" = 3 ] && [ "$(grep -c . "$T/runner.calls")" = 3 ] && [ -s "$T/released" ]'
[ $rc = 0 ] || { sed 's/^/# /' "$T/err2" | tail -20; }
check "resume: node 3 optimizes the best kernel with the module in its prompt" \
    '[ "$(sql "$RUN" "select kind||\" \"||verdict from nodes where id=3")" = "optimize pass" ] && grep -q "task: module scale_shift" "$P/prompt-3.txt" && grep -q "const int threads = 256;" "$P/prompt-3.txt"'
check "resume: stage 1 profiles the best kernel with ncu on the module's run file, its summary in the prompt" \
    'grep -q "^--module$" "$T/ncu.argv" && grep -q "^--profile$" "$T/ncu.argv" && grep -q "memory-bound" "$P/prompt-3.txt" && [ "$(sql "$RUN" "select count(*) from nodes where profile_sha is not null")" -ge 1 ]'
check "resume is counted" '[ "$(sql "$RUN" "select resumes from runs")" = 1 ]'
"$CUTEGEN" resume "$RUN" --iters 4 --backend builtin >"$T/out" 2>"$T/err"; rc=$?
check "resume of a module run with the builtin agent: exit 4, needs a model (rc $rc)" \
    '[ $rc = 4 ] && grep -q "goes on with a model only" "$T/err"'

mv "$M" "$M.away"
"$CUTEGEN" resume "$RUN" --iters 4 >"$T/out" 2>"$T/err_gone"; rc=$?
mv "$M.away" "$M"
check "resume when the module file is gone: says the run's module must be described again and why (rc $rc)" \
    '[ $rc != 0 ] && grep -q "is of module .*scale_shift.py., which must be described again to go on" "$T/err_gone" && [ "$(sql "$RUN" "select count(*) from nodes")" = 3 ]'

# ---- export: the ModelNew drop-in ----
"$CUTEGEN" export "$RUN" --out "$T/exp" >"$T/out" 2>"$T/err"; rc=$?
check "export of the module run writes the kernel, ModelNew and the reference copy (rc $rc)" \
    '[ $rc = 0 ] && [ -f "$T/exp/scale_shift.cu" ] && [ -f "$T/exp/scale_shift_model.py" ] && [ -f "$T/exp/scale_shift_reference.py" ] && cmp -s "$T/exp/scale_shift.cu" "$RUN/best.cu"'

# ---- a module whose reference fails ends the run with its message ----
echo "kind:forward" >"$T/mode"; rm -f "$P/count" "$T/ref.pid"
"$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P" --iters 2 --out "$T/run2" \
    >"$T/out" 2>"$T/err_ref"; rc=$?
check "a module whose forward fails in its reference: the run stops with its message, exit 3 as eval's (rc $rc)" \
    '[ $rc = 3 ] && grep -q "^error: cannot evaluate: module .*scale_shift.py.: fake failure of kind forward: do the thing \[forward\]" "$T/err_ref" && [ "$(sql "$T/run2" "select status from runs")" = failed ] && sql "$T/run2" "select stop_reason from runs" | grep -q "fake failure of kind forward"'
[ $rc = 3 ] || sed 's/^/# /' "$T/err_ref" | tail -5
echo "kind:memory" >"$T/mode"; rm -f "$P/count"
"$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P" --iters 2 --out "$T/run2m" \
    >"$T/out" 2>"$T/err_mem"; rc=$?
check "a reference out of GPU memory (the machine's): exit 4 with its message (rc $rc)" \
    '[ $rc = 4 ] && grep -q "fake failure of kind memory" "$T/err_mem"'
check "... and no reference process is left" '! kill -0 "$(cat "$T/ref.pid")" 2>/dev/null'
echo pass >"$T/mode"

# ---- a crash: memcheck is skipped for a module, with a note ----
echo segv >"$T/runner.mode"; P2="$T/model2"; mkdir -p "$P2"
{ printf 'Change: the kernel\n```cuda\n'; sed 's/"FAKE_WRONG"/"fixed"/' "$T/k_wrong.cu"; printf '```\n'; } >"$P2/reply-1.txt"
mkdir -p "$T/bin2"; printf '#!/bin/sh\necho "called" >>"%s/sanitizer.calls"\nexit 0\n' "$T" >"$T/bin2/compute-sanitizer"
chmod +x "$T/bin2/compute-sanitizer"
PATH="$T/bin2:$PATH" "$CUTEGEN" run "$M" --llm-cmd "python3 $D/model.py $P2" --iters 1 --fix-attempts 0 \
    --out "$T/run5" >"$T/out" 2>"$T/err_crash"; rc=$?
check "a crashing candidate on a module: verdict crash, memcheck skipped with a note, no sanitizer run (rc $rc)" \
    '[ "$(sql "$T/run5" "select verdict from nodes where id=1")" = crash ] && grep -q "memcheck skipped: a module that does not lower" "$T/err_crash" && [ ! -e "$T/sanitizer.calls" ]'
echo pass >"$T/runner.mode"

# ---- no model, a seed kernel: judged alone through the module path ----
sed 's/"FAKE_WRONG"/"seed"/' "$T/k_wrong.cu" >"$T/k_seed.cu"; : >"$T/runner.calls"
"$CUTEGEN" run "$M" --seed-kernel "$T/k_seed.cu" --out "$T/run6" >"$T/out" 2>"$T/err_seed"; rc=$?
check "no model and --seed-kernel: the seed is judged through the module path, the best (rc $rc)" \
    '[ $rc = 0 ] && [ "$(grep -c . "$T/runner.calls")" = 1 ] && [ "$(sql "$T/run6" "select verdict||\" \"||outcome from nodes")" = "pass best" ] && grep -q "judging the seed kernel only" "$T/err_seed"'

# ---- builtin: no kernel family for such a module ----
"$CUTEGEN" run "$M" --backend builtin --out "$T/run3" >"$T/out" 2>"$T/err"; rc=$?
check "run --backend builtin on it: exit 4, says it needs a model, no run made (rc $rc)" \
    '[ $rc = 4 ] && grep -q "so a run needs a model" "$T/err" && [ ! -e "$T/run3/run.db" ]'
"$CUTEGEN" builtin "$M" --plan >"$T/out" 2>"$T/err"; rc=$?
check "builtin M.py: exit 4, says the builtin agent has no family for it and a run needs a model (rc $rc)" \
    '[ $rc = 4 ] && grep -q "the builtin agent has no kernel family for it; .cutegen run .*scale_shift.py. with a model" "$T/err"'
"$CUTEGEN" run "$M" --seed builtin --llm-cmd "python3 $D/model.py $P" --out "$T/run4" >"$T/out" 2>"$T/err"; rc=$?
check "--seed builtin on it: a usage error that says to give --seed-kernel (rc $rc)" \
    '[ $rc = 2 ] && grep -q "give --seed-kernel FILE or none" "$T/err"'

# ---- a suite of such modules: each runs the loop ----
mkdir -p "$T/suite"; cp "$M" "$T/suite/scale_shift.py"
rm -f "$P/count"; : >"$T/runner.calls"
"$CUTEGEN" suite "$T/suite/" --out "$T/s1" --gpus 0 --iters 2 \
    --llm-cmd "python3 $D/model.py $P" >"$T/out" 2>&1; rc=$?
check "suite DIR/ of a module that does not lower: its run ends with a best kernel (rc $rc)" \
    '[ $rc = 0 ] && [ "$(grep -c . "$T/runner.calls")" = 2 ] && grep -q "1 done (1 with a correct kernel)" "$T/out" && ls "$T"/s1/runs/*/best.cu >/dev/null 2>&1'
[ $rc = 0 ] || sed 's/^/# /' "$T/out" | tail -15

echo "$fails failed"
[ $fails = 0 ]
