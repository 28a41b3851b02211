#!/usr/bin/env bash
# The evaluation of a module that is not lowered, with no GPU: a FAKE reference process
# (tests/data/modeval/fake_reference.py, speaking the reference protocol with made-up CUDA IPC
# handles, as $CUTEGEN_PYTHON) and a FAKE runner (checks the RUN.json it is given while the
# reference still holds its tensors, then speaks the judge's report channel: nonce on stdin,
# report on --report-fd). Every path: pass (speedups vs eager and torch.compile, the roofline),
# the reference failing (each kind -> its message and exit code), hanging (killed at the
# deadline), dying, lying about its tensors, ignoring release; the runner crashing or hanging.
# Each time the reference process is released and gone when cutegen returns.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
cleanup() { [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"; }
trap cleanup EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json" FAKE_REF_DIR="$T"
echo "{}" >"$CUTEGEN_CONFIG"
. "$REPO/tests/data/modeval/fake_env.sh"
: >"$T/k.so"

# ev MODE RUNNER_MODE ARGS...: one evaluation; its exit code in $rc, stdout in $T/out,
# stderr in $T/err; the reference process must be gone afterwards
ev() {
    echo "$1" >"$T/mode"; echo "$2" >"$T/runner.mode"; shift 2
    rm -f "$T/released" "$T/prepare.json" "$T/ref.pid" "$T/runcheck"
    "$CUTEGEN" eval "$T/k.cu" --task "$M" --so "$T/k.so" "$@" >"$T/out" 2>"$T/err"; rc=$?
}
gone() { local p; p=$(cat "$T/ref.pid" 2>/dev/null) && [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null; }

ev pass pass --json --torch
check "a module that is not lowered is judged: pass, exit 0 (got $rc)" '[ $rc = 0 ] && grep -q "\"verdict\": \"pass\"" "$T/out"'
check "the runner got --module RUN.json and it holds the describe list, the scalars, the tolerance and the cases" 'grep -q "^ok 6" "$T/runcheck"'
[ -x "$REAL_RUNNER" ] || echo "ok - the real cutegen-runner: skipped, none built" >"$T/realrunner.skip"
[ -e "$T/realrunner.skip" ] && cat "$T/realrunner.skip" || \
check "the real cutegen-runner accepts the evaluator's run file (it stops at the GPU, not at the file)" \
    'grep -q "^phase module" "$T/realrunner.out" && grep -q "^phase device" "$T/realrunner.out" && { grep -q "\"verdict\":\"no_device\"" "$T/realrunner.out" || grep -q "cannot open the reference process.s tensor" "$T/realrunner.out"; }'
check "prepare asked for 6 cases, strict, with baselines, on device 0" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[\"op\"]==\"prepare\" and len(r[\"cases\"])==6 and r[\"precision\"]==\"strict\" and r[\"baselines\"] is True and r[\"device\"]==0 and 0<r[\"memory_fraction\"]<1 and r[\"file\"].endswith(\"scale_shift.py\")" "$T/prepare.json"'
check "eval --json carries the speedups vs eager (4x) and torch.compile (2x) and the roofline ratio" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert abs(r[\"speedup_vs_eager\"]-4)<1e-9 and abs(r[\"speedup_vs_torch_compile\"]-2)<1e-9 and r[\"roofline_fraction\"]>0 and r[\"lowered_to\"] is None and r[\"report\"][\"baseline\"][\"torch_eager\"][\"ms\"]==0.2" "$T/out"'
check "the baseline ran in its module mode (--precision strict, no task for cuBLASLt)" 'grep -q "^--precision strict --device 0" "$T/baseline.args"'
check "the reference was released after the runner and is gone" '[ -s "$T/released" ] && gone'
cp "$T/prepare.json" "$T/prepare1.json"

ev pass pass --torch
check "human output: pass, the module contract, the budget and the worst element, PyTorch eager and torch.compile" \
    '[ $rc = 0 ] && grep -q "^verdict   PASS" "$T/out" && grep -q "^contract  strict (module, truth fp64" "$T/out" && grep -q "^budget    8 x max" "$T/out" && grep -q "^worst     .out. \[1,2\]" "$T/out" && grep -q "^PyTorch   0.2000 ms eager" "$T/out" && grep -q "torch.compile (default): speedup 2.000x" "$T/out"'
check "human output: the timed calls on the cases held back from the checks" \
    'grep -q "^new cases 3 timed calls on cases held back from the checks: 0.0500 ms at best (all calls 0.0500 ms)\$" "$T/out"'
check "each session's case seeds are drawn anew: 6 distinct in 1 .. 2^31 - 1, none as the last session's" \
    'python3 -c "import json,sys; a,b=[[c[\"seed\"] for c in json.load(open(p))[\"cases\"]] for p in sys.argv[1:]]; assert len(set(a))==6==len(set(b)) and all(1<=x<2**31 for x in a+b) and not set(a)&set(b), (a,b)" "$T/prepare1.json" "$T/prepare.json"'
ev pass replay
check "a kernel faster on the cases it knew than on new ones is said to replay them (still a pass, timed on a new case)" \
    '[ $rc = 0 ] && grep -q "^new cases .*: faster on cases it knew, it replays stored results; timed on a new case" "$T/out"'
ev pass noheld --json
check "a pass whose report holds cases back but times none of them is refused (got $rc)" \
    'grep -q "\"verdict\": \"untrusted_report\"" "$T/out" && grep -q "holds cases back for timing but shows no timed call on one" "$T/out"'
ev pass pass --quick
check "--quick asks for 3 cases and no baselines without --torch" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r[\"cases\"])==3 and r[\"baselines\"] is False" "$T/prepare.json" && gone'

for k in init:3 forward:3 no_torch:4 gpu:4 memory:4 ipc:4; do
    kind=${k%:*} want=${k#*:}
    ev "kind:$kind" pass
    check "reference fails with kind '$kind': exit $want (got $rc), its message, no runner, the reference gone" \
        '[ $rc = $want ] && grep -q "fake failure of kind $kind: do the thing \[$kind\]" "$T/err" && [ ! -e "$T/runcheck" ] && gone'
done

ev kind:memory pass --json
check "--json says so too when the reference fails" 'grep -q "\"stage\": \"reference\"" "$T/out" && grep -q "\"verdict\": \"reference_error\"" "$T/out" && grep -q "fake failure of kind memory" "$T/out"'
ev kind:import pass --json
check "--json: a module that does not import is an input_error of stage reference" 'grep -q "\"verdict\": \"input_error\"" "$T/out" && grep -q "\"stage\": \"reference\"" "$T/out"'

start=$(date +%s)
CUTEGEN_REFERENCE_TIMEOUT=2 ev hang pass
took=$(( $(date +%s) - start ))
check "a hanging reference is killed at its deadline (exit 5, ${took}s) with a message saying so, and is gone" \
    '[ $rc = 5 ] && [ $took -lt 20 ] && grep -q "did not prepare its cases within 2 s and was killed" "$T/err" && grep -q "CUTEGEN_REFERENCE_TIMEOUT" "$T/err" && gone'

ev die pass
check "a reference that dies says why (its stderr), exit 5 (got $rc)" '[ $rc = 5 ] && grep -q "out of cheese" "$T/err" && gone'

ev badtensors pass
check "a reference that prepares other tensors than it described is refused before the runner" \
    '[ $rc = 5 ] && grep -q "prepared other tensors than it described (tensor 1 (.w.) differs)" "$T/err" && [ ! -e "$T/runcheck" ] && gone'

ev pass segv
check "the runner crashing is the verdict crash, the reference released and gone" \
    '[ $rc = 1 ] && grep -q "FAIL: crash" "$T/out" && [ -s "$T/released" ] && gone'

start=$(date +%s)
ev pass hang --deadline 3
took=$(( $(date +%s) - start ))
check "the runner hanging is the verdict timeout (${took}s), the reference released and gone" \
    '[ $rc = 1 ] && grep -q "FAIL: timeout" "$T/out" && [ -s "$T/released" ] && gone'

ev ignore_release pass
check "a reference that ignores release is killed; cutegen returns" '[ $rc = 0 ] && [ -s "$T/released" ] && gone'

touch "$T/nogpu"
ev pass pass
check "no GPU: the verdict no_device (exit 4, got $rc), no reference process started" \
    '[ $rc = 4 ] && grep -q "FAIL: no_device" "$T/out" && grep -q "the driver sees no GPU" "$T/out" && [ ! -e "$T/prepare.json" ]'
rm -f "$T/nogpu"

# profile: ncu runs the runner on the cases the reference prepared (the fake ncu of
# fake_env.sh checks the run file and that the reference holds its tensors meanwhile)
echo pass >"$T/mode"; rm -f "$T/released" "$T/prepare.json" "$T/ref.pid" "$T/runcheck" "$T/ncu.argv"
CUTEGEN_NCU="$T/bin/ncu" "$CUTEGEN" profile --so "$T/k.so" --task "$M" >"$T/out" 2>"$T/err"; rc=$?
check "profile of a module that is not lowered: ncu runs the runner on run.json while the reference holds the cases (rc $rc)" \
    '[ $rc = 0 ] && grep -q "^--module$" "$T/ncu.argv" && grep -q "run.json$" "$T/ncu.argv" && grep -q "^--profile$" "$T/ncu.argv" && grep -q "^ok 3" "$T/runcheck" && grep -q "bound      memory-bound" "$T/out"'
check "profile asked the reference for 3 cases, released it, and it is gone" \
    'python3 -c "import json,sys; assert len(json.load(open(sys.argv[1]))[\"cases\"])==3" "$T/prepare.json" && [ -s "$T/released" ] && gone'
rm -f "$T/prepare.json" "$T/ncu.argv"
CUTEGEN_NCU="$T/bin/ncu" "$CUTEGEN" profile --so "$T/k.so" --task "$M" --json >"$T/out" 2>"$T/err"; rc=$?
check "a second profile is a cache hit: no reference process, no ncu" \
    '[ $rc = 0 ] && grep -q "\"cache_hit\": true" "$T/out" && [ ! -e "$T/prepare.json" ] && [ ! -e "$T/ncu.argv" ]'
echo "kind:forward" >"$T/mode"; rm -f "$T/ncu.argv"
CUTEGEN_NCU="$T/bin/ncu" "$CUTEGEN" profile --so "$T/k.so" --task "$M" --no-cache >"$T/out" 2>"$T/err"; rc=$?
check "profile: a reference that fails says why, exit 3 (got $rc), no ncu" \
    '[ $rc = 3 ] && grep -q "fake failure of kind forward" "$T/err" && [ ! -e "$T/ncu.argv" ] && gone'

echo "$fails failed"
[ $fails = 0 ]
