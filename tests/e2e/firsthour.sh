#!/usr/bin/env bash
# The rough edges a new user hits in the first hour (issue 21), end to end against the real
# binary: `runs DIR` lists only DIR whatever ./runs holds, a kernel file that cannot be read is
# bad input (exit 3) and not a policy verdict, range errors name the flag, "did you mean" for
# tasks, commands and flags, and the small ones (stray characters, bad --status, --arch names,
# diagnostics naming the user's file, --quiet).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# cg ARGS...: runs cutegen, sets $rc, stdout in $T/out, stderr in $T/err
cg() { "$CUTEGEN" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
D="$REPO/tests/data/loop"

# ---- 1. `runs DIR` lists only DIR: a ./runs with a run in the working directory does not leak in
mkdir -p "$T/cwd/runs" "$T/mine"
cp -r "$REPO/tests/data/loop_h200_run" "$T/cwd/runs/stray"
cp -r "$T/cwd/runs/stray" "$T/mine/a"
check "a run exists in ./runs for the next checks" '[ -f "$T/cwd/runs/stray/run.db" ]'
(cd "$T/cwd" && "$CUTEGEN" runs "$T/mine" --json) >"$T/runs.json" 2>"$T/runs.err"
check "runs DIR lists only DIR, not ./runs" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==1 and \"mine\" in d[0][\"dir\"], d" "$T/runs.json"'
(cd "$T/cwd" && "$CUTEGEN" runs --json) >"$T/runs2.json" 2>/dev/null
check "runs with no DIR lists ./runs" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==1 and \"stray\" in d[0][\"dir\"], d" "$T/runs2.json"'
cg runs "$T/notarun"
check "runs NOTARUN: exit 3 with a message (rc $rc)" '[ $rc -eq 3 ] && grep -q "notarun" "$T/err" && ! grep -q "^RUN " "$T/out"'
mkdir -p "$T/emptydir"
cg runs "$T/emptydir"
check "runs EMPTYDIR: exit 3, holds no run (rc $rc)" '[ $rc -eq 3 ] && grep -q "holds no run" "$T/err"'
cg runs "$T/mine" --status bogus
check "runs --status bogus: exit 2 listing the statuses (rc $rc)" '[ $rc -eq 2 ] && grep -q "running, done, stopped, failed, interrupted" "$T/err"'


# ---- 4. a kernel file that cannot be read is bad input (exit 3, the reason), not a policy verdict
mkdir -p "$T/adir"
for cmd in eval profile build; do
    for k in "$T/nonexist.cu" "$T/adir"; do
        cg $cmd "$k" -t kb1/19_relu
        [ $cmd = build ] && cg build "$k"
        check "$cmd $(basename "$k"): exit 3 with the reason (rc $rc)" \
            '[ $rc -eq 3 ] && grep -q "cannot read kernel .*: \(No such file or directory\|it is a directory, not a regular file\)" "$T/err" && ! grep -q policy "$T/out" "$T/err"'
    done
done
cg eval "$T/nonexist.cu" -t kb1/19_relu --json
check "eval --json on a missing kernel says input_error, not policy (rc $rc)" \
    '[ $rc -eq 3 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"verdict\"]==\"input_error\" and d[\"stage\"]==\"input\" and \"No such file\" in d[\"message\"], d" "$T/out"'
cg build "$T/adir" --json
check "build --json on a directory says so (rc $rc)" \
    '[ $rc -eq 3 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"stage\"]==\"input\" and \"it is a directory\" in d[\"error\"], d" "$T/out"'
cg profile "$T/adir" -t kb1/19_relu --json
check "profile --json on a directory says input_error (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "\"status\": \"input_error\"" "$T/out"'
if [ "$(id -u)" != 0 ]; then
    echo 'int x;' >"$T/unreadable.cu"; chmod 000 "$T/unreadable.cu"
    cg eval "$T/unreadable.cu" -t kb1/19_relu
    check "eval of an unreadable kernel: exit 3, permission denied (rc $rc)" '[ $rc -eq 3 ] && grep -q "Permission denied" "$T/err"'
fi

# ---- 6. range errors name the flag and the value
cg run kb1/19_relu --deadline -5
check "run --deadline -5 names the flag and value (rc $rc)" '[ $rc -eq 2 ] && grep -q "^error: option .--deadline. must be 0 or more (got \"-5\")" "$T/err" && ! grep -q -- "--fix-attempts" "$T/err"'
cg run kb1/19_relu --iters 0
check "run --iters 0 names the flag (rc $rc)" '[ $rc -eq 2 ] && grep -q "option .--iters. must be at least 1 (got \"0\")" "$T/err"'
cg run kb1/19_relu --noise 2
check "run --noise 2 names the flag (rc $rc)" '[ $rc -eq 2 ] && grep -q "option .--noise. must be a fraction from 0 to 1.*(got 2)" "$T/err"'
cg eval x.cu -t kb1/19_relu --device -1
check "eval --device -1 names the flag (rc $rc)" '[ $rc -eq 2 ] && grep -q "option .--device. must be 0 or more (got \"-1\")" "$T/err"'
cg build x.cu --deadline -1
check "build --deadline -1 names the flag (rc $rc)" '[ $rc -eq 2 ] && grep -q "option .--deadline. must be 0 or more (got \"-1\")" "$T/err"'

# ---- 7. did you mean
cg task show kb1/19_rleu
check "a swapped task name suggests the task (rc $rc)" '[ $rc -eq 3 ] && grep -q "did you mean .kb1/19_relu.?" "$T/err"'
cg eval x.cu -t relu
check "a bare op name suggests the tasks of that op (rc $rc)" '[ $rc -eq 3 ] && grep -q "did you mean one of .kb1/19_relu., .kb1/20_leaky_relu." "$T/err"'
cg eval x.cu -t 19
check "a bare number suggests the task (rc $rc)" '[ $rc -eq 3 ] && grep -q "did you mean .kb1/19_relu.?" "$T/err"'
cg evl
check "a mistyped command suggests the command (rc $rc)" '[ $rc -eq 2 ] && grep -q "did you mean .eval.?" "$T/err"'
cg help evl
check "help of a mistyped command suggests the command (rc $rc)" '[ $rc -eq 2 ] && grep -q "did you mean .eval.?" "$T/err"'
cg run kb1/19_relu --iter 3
check "a mistyped flag suggests the flag (rc $rc)" '[ $rc -eq 2 ] && grep -q "unknown option .--iter. (did you mean .--iters.?)" "$T/err"'
cg task shwo kb1/19_relu
check "a mistyped task subcommand suggests show (rc $rc)" '[ $rc -eq 2 ] && grep -q "did you mean .show.?" "$T/err"'
cg docs serch x
check "a mistyped docs subcommand suggests search (rc $rc)" '[ $rc -eq 2 ] && grep -q "did you mean .search.?" "$T/err"'
cg xyzzy
check "nothing close: no suggestion (rc $rc)" '[ $rc -eq 2 ] && ! grep -q "did you mean" "$T/err"'

# ---- 11. the small ones
cg eval x.cu
check "eval without --task: no stray characters (rc $rc)" '[ $rc -eq 2 ] && grep -q "(see .cutegen tasks.)$" "$T/err"'
echo 'int x;' >"$T/x.cu"
cg build "$T/x.cu" --arch sm_999
check "build --arch sm_999 is a usage error listing the architectures (rc $rc)" '[ $rc -eq 2 ] && grep -q ".sm_999. is not a GPU architecture.*sm_90a" "$T/err"'
cg build "$T/x.cu" --arch sm_80a
check "build --arch sm_80a (no arch-specific sm_80a) is a usage error (rc $rc)" '[ $rc -eq 2 ]'
cg eval "$T/nonexist.cu" -t kb1/19_relu --arch sm_999
check "eval --arch sm_999 is a usage error too (rc $rc)" '[ $rc -eq 2 ] && grep -q "option .--arch.: .sm_999." "$T/err"'
cg run kb1/19_relu --arch sm_999 --out "$T/never"
check "run --arch sm_999 is a usage error, no run directory (rc $rc)" '[ $rc -eq 2 ] && [ ! -e "$T/never" ]'
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    printf '#include <cstdio>\nvoid f() { undefined_thing(); }\n' >"$T/my_bad.cu"
    cg build "$T/my_bad.cu" --no-policy
    check "compile errors name the user's file, not kernel.cu (rc $rc)" \
        '[ $rc -eq 1 ] && grep -q "^$T/my_bad.cu:2:12: error: identifier \"undefined_thing\" is undefined" "$T/err" && ! grep -q "kernel\.cu" "$T/err"'
    cg build "$T/my_bad.cu" --no-policy --json
    check "build --json diagnostics name the user's file (rc $rc)" \
        'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"diagnostics\"][0][\"file\"]==sys.argv[2], d; assert \"kernel.cu\" not in d[\"first_error\"]" "$T/out" "$T/my_bad.cu"'
    K="$REPO/tests/data/kernels/err_undefined.cu"
    cg eval "$K" -t kb1/19_relu
    check "eval's compile error names the user's file (rc $rc)" \
        '[ $rc -eq 1 ] && grep -q "^$K:10:14: error: identifier \"scale_factor\" is undefined" "$T/out" && ! grep -q "kernel\.cu" "$T/out"'
    cg eval "$K" -t kb1/19_relu --json
    check "eval --json's diagnostics name the user's file (rc $rc)" \
        'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"build\"][\"diagnostics\"][0][\"file\"]==sys.argv[2], d; assert \"kernel.cu\" not in d[\"message\"]" "$T/out" "$K"'
fi
"$CUTEGEN" doctor --json >"$T/doctor.json" 2>/dev/null
check "doctor --json: LLM backends as objects, and why gpus is empty" 'python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
b = {x[\"name\"]: x for x in d[\"llm\"][\"backends\"]}
assert set(b) >= {\"openai\", \"anthropic\", \"cmd\", \"replay\", \"builtin\"}, b
assert b[\"builtin\"][\"configured\"] is True and isinstance(b[\"openai\"][\"configured\"], bool)
assert b[\"cmd\"][\"configured\"] is False and \"CUTEGEN_LLM_CMD\" in b[\"cmd\"][\"detail\"]
assert \"default\" in d[\"llm\"] and \"default_configured\" in d[\"llm\"]
assert isinstance(d[\"gpus\"], list)
assert (d[\"gpu_error\"] is None) == (len(d[\"gpus\"]) > 0), d[\"gpu_error\"]
if not d[\"gpus\"]: assert d[\"gpu_error\"], d
" "$T/doctor.json"'
cg llm --llm-cmd "echo hi" --json hello
check "llm --json names the model, null when the backend has none (rc $rc)" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert \"model\" in d and d[\"model\"] is None and d[\"text\"]==\"hi\\n\", d" "$T/out"'
cg llm --llm-cmd "echo hi" --model my-model --json hello
check "llm --json gives --model when the backend does not say (rc $rc)" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"model\"]==\"my-model\", d" "$T/out"'

echo "# done"
[ $fails -eq 0 ]
