#!/usr/bin/env bash
# Module tasks that do not lower, judged on the GPU with real PyTorch (never in CI; the lead
# runs it on the H200): the reference process prepares the cases (float64 truth, CUDA IPC),
# the runner judges kernels of tests/gpu/modules_eval/ against them.
#   scale_shift.py (y = x*w + alpha*b: parameters and a scalar) and layernorm.py (LayerNorm
#   with weight and bias) and max_dim.py (torch.max over a dim: fp32 values and int64
#   indices, two outputs): the right kernels pass, with speedups vs eager and torch.compile
#   (eval --torch, on scale_shift: torch.compile takes a while) and the budget in the report; a wrong kernel (b forgotten) gets incorrect;
#   one that caches by input pointer (right on the first case only) fails; one that replays
#   what it stored for the cases it knows is timed on a case it has not seen; one that writes its
#   input gets inputs_modified; one that rounds through fp16 gets precision; `profile` runs
#   ncu on the reference's cases (when ncu is here); no reference process outlives any of it.
# usage: BUILD=build bash tests/gpu/modules_eval.sh     (PYTHON=... names a python with torch)
set -u
cd "$(dirname "$0")/../.."
CG="$PWD/${BUILD:-build}/cutegen"
PY=${PYTHON:-python3}
D="$PWD/tests/gpu/modules_eval"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "not ok - $PY has no torch with CUDA: install it (pip install torch) or set PYTHON"
    echo "0 passed, 1 failed"; exit 1
fi
export CUTEGEN_PYTHON=$PY CUTEGEN_REFERENCE_TIMEOUT=900 XDG_CACHE_HOME="$T/cache"
field() { "$PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1" "$2" 2>/dev/null; }
# reference processes alive (python -c with the embedded tools/reference.py: its text holds
# "cutegen-reference"); the grep counts itself, before and after alike
refs() { grep -l -a "cutegen-reference" /proc/[0-9]*/cmdline 2>/dev/null | wc -l; }
variant() { # NAME MACROS: the scale_shift kernel with each of MACROS defined
    { for m in $2; do echo "#define $m"; done; cat "$D/scale_shift.cu"; } >"$T/$1.cu"
}
# ev KERNEL MODULE [ARGS]: eval --json into $T/NAME.json, its exit code in $rc
ev() {
    local name; name=$(basename "$1" .cu)
    "$CG" eval "$1" --task "$2" --json "${@:3}" >"$T/$name.json" 2>"$T/$name.err"; rc=$?
    out="$T/$name.json"
}
before=$(refs)

variant ss_ok ""
ev "$T/ss_ok.cu" "$D/scale_shift.py" --torch
v=$(field "$out" verdict)
[ $rc = 0 ] && [ "$v" = pass ] && ok "scale_shift: the right kernel passes" \
    || bad "scale_shift: the right kernel: rc $rc verdict '$v' $(field "$out" message | head -c 600) $(head -c 600 "$T/ss_ok.err")"
se=$(field "$out" speedup_vs_eager) sc=$(field "$out" speedup_vs_torch_compile)
ce=$(field "$out" report.baseline.torch_eager.compile_error)
[ -n "$se" ] && { [ -n "$sc" ] || [ -n "$ce" ]; } && ok "scale_shift: speedup vs eager ${se}x, vs torch.compile ${sc:-failed: $ce}" \
    || bad "scale_shift: no speedups vs eager/torch.compile in eval --json"
m=$(field "$out" report.module.truth) mul=$(field "$out" report.module.tolerance.multiple)
[ "$m" = fp64 ] && [ -n "$mul" ] && ok "scale_shift: judged against a float64 truth, budget multiple $mul" \
    || bad "scale_shift: the report lacks the truth/budget (truth '$m')"
"$CG" eval "$T/ss_ok.cu" --task "$D/scale_shift.py" --quick >"$T/human" 2>&1
grep -q "^budget " "$T/human" && grep -q "^worst " "$T/human" && ok "scale_shift: the human output prints the budget and the worst element" \
    || bad "scale_shift: human output: $(head -c 800 "$T/human")"

variant ss_forget_b FORGET_B
ev "$T/ss_forget_b.cu" "$D/scale_shift.py" --quick
v=$(field "$out" verdict)
[ $rc = 1 ] && [ "$v" = incorrect ] && ok "scale_shift: a kernel that forgets b gets incorrect" \
    || bad "scale_shift: forget b: rc $rc verdict '$v'"

variant ss_cache CACHE_BY_POINTER
ev "$T/ss_cache.cu" "$D/scale_shift.py" --quick
v=$(field "$out" verdict)
case "$v" in incorrect|stale_output|timing_mismatch) ok "scale_shift: a kernel caching by input pointer fails ($v)" ;;
*) bad "scale_shift: cache by pointer: rc $rc verdict '$v'" ;; esac

# replaying stored results: timed on a case held back from the checks, so no faster than the
# same kernel without the replay (before, timed on replays: several times faster)
variant ss_slow SLOW
ev "$T/ss_slow.cu" "$D/scale_shift.py"
v=$(field "$out" verdict) slow_ms=$(field "$out" report.metrics.ms)
variant ss_replay "SLOW REPLAY"
ev "$T/ss_replay.cu" "$D/scale_shift.py"
v2=$(field "$out" verdict) rep_ms=$(field "$out" report.metrics.ms) rp=$(field "$out" report.timing.first_sight.replay)
if [ "$v" = pass ] && [ "$v2" = pass ] && [ "$rp" = True ] && [ -n "$slow_ms" ] && [ -n "$rep_ms" ] &&
    python3 -c "import sys; sys.exit(0 if $rep_ms >= 0.8 * $slow_ms else 1)"; then
    ok "scale_shift: a kernel replaying stored results is timed on a new case ($rep_ms ms, the same kernel without replay $slow_ms ms)"
else
    bad "scale_shift: replay: verdicts '$v' '$v2', first_sight.replay '$rp', $rep_ms ms against $slow_ms ms without replay $(field "$out" report.timing.first_sight)"
fi

variant ss_mutate MUTATE
ev "$T/ss_mutate.cu" "$D/scale_shift.py" --quick
v=$(field "$out" verdict)
[ "$v" = inputs_modified ] && ok "scale_shift: a kernel writing its input gets inputs_modified" \
    || bad "scale_shift: mutate: rc $rc verdict '$v'"

variant ss_fp16 ROUND_FP16
ev "$T/ss_fp16.cu" "$D/scale_shift.py" --quick
v=$(field "$out" verdict)
[ "$v" = precision ] && ok "scale_shift: a kernel rounding through fp16 gets precision" \
    || bad "scale_shift: fp16 rounding: rc $rc verdict '$v' $(field "$out" message | head -c 400)"

ev "$D/layernorm.cu" "$D/layernorm.py"
v=$(field "$out" verdict)
[ $rc = 0 ] && [ "$v" = pass ] && ok "layernorm: the right kernel passes ($(field "$out" speedup_vs_baseline)x the copy roofline)" \
    || bad "layernorm: rc $rc verdict '$v' $(field "$out" message | head -c 600) $(head -c 600 "$T/layernorm.err")"

ev "$D/max_dim.cu" "$D/max_dim.py"
v=$(field "$out" verdict)
[ $rc = 0 ] && [ "$v" = pass ] && ok "max_dim: two outputs, fp32 values and int64 indices, pass" \
    || bad "max_dim: rc $rc verdict '$v' $(field "$out" message | head -c 600) $(head -c 600 "$T/max_dim.err")"
{ echo "#define WRONG_INDEX"; cat "$D/max_dim.cu"; } >"$T/max_wrong.cu"
ev "$T/max_wrong.cu" "$D/max_dim.py" --quick
v=$(field "$out" verdict)
[ "$v" = incorrect ] && field "$out" message | grep -q "output 'out1'" && ok "max_dim: indices off by one get incorrect, on output 'out1'" \
    || bad "max_dim wrong index: rc $rc verdict '$v' $(field "$out" message | head -c 400)"

if command -v ncu >/dev/null || [ -x /usr/local/cuda/bin/ncu ]; then
    "$CG" profile "$T/ss_ok.cu" --task "$D/scale_shift.py" --json >"$T/prof.json" 2>"$T/prof.err"; rc=$?
    st=$(field "$T/prof.json" status)
    case "$st" in
    ok) ok "profile of scale_shift: ncu profiled the kernel on the reference's cases" ;;
    permission|unsupported) ok "profile of scale_shift: ncu unavailable here ($st), not the module's fault" ;;
    *) bad "profile of scale_shift: rc $rc status '$st' $(head -c 400 "$T/prof.err")" ;;
    esac
fi

sleep 1
after=$(refs)
[ "$after" -le "$before" ] && ok "no reference process outlives the evaluations" || bad "$((after - before)) reference processes left"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
