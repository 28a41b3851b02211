#!/usr/bin/env bash
# Issue 20, "no task without a correct kernel": a builtin run whose family refuses the task as
# unsupported (cutegen_launch returns 2 for every candidate) moves to the family that takes it
# (gemm_sm90 -> gemm_simt) instead of walking every candidate of the first and ending with
# "none was correct"; so does one whose whole walk gave no correct kernel. The real binary and nvcc; plain-CUDA stand-ins for both families
# (tests/data/builtin_fallback, CUTEGEN_BUILTIN_DIR); recorded runner reports for the GPU.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
D="$REPO/tests/data/builtin_fallback"
export CUTEGEN_BUILTIN_DIR="$D" CUTEGEN_BUILD_JOBS=2
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
sql() { sqlite3 "$1/run.db" "$2"; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
TASK="$D/bf16_gemm.json"

# recorded evaluations: every gemm_sm90 candidate refused (the runner's report of a nonzero
# cutegen_launch); gemm_simt's pass, 64x64 the faster. `builtin --arch sm_80` renders
# gemm_simt's candidates for this task (no TMA there), `--arch sm_90a` gemm_sm90's.
R="$T/evals"; mkdir -p "$R"
python3 - "$CUTEGEN" "$TASK" "$R" <<'PY'
import hashlib, itertools, json, subprocess, sys
cutegen, task, out = sys.argv[1:]
def record(arch, setting, rep):
    s = subprocess.run([cutegen, "builtin", task, "--arch", arch, "--source", "--set", setting],
                       check=True, capture_output=True).stdout
    json.dump(rep, open("%s/%s.json" % (out, hashlib.sha256(s).hexdigest()), "w"))
for bn, st in itertools.product(["128", "256"], ["2", "4"]):
    record("sm_90a", "CG_P_BN=%s CG_P_STAGES=%s" % (bn, st),
           {"verdict": "launch_error", "message": "cutegen_launch returned 2: the kernel rejected these arguments"})
for tile, split in itertools.product(["128x128", "64x64"], ["1", "2"]):
    ms = (1.0 if tile == "128x128" else 0.8) + (0.0 if split == "1" else 0.1)
    record("sm_80", "CG_P_TILE=%s CG_P_SPLIT_K=%s" % (tile, split),
           {"verdict": "pass", "message": "", "runner_s": 0.5,
            "metrics": {"ms": ms, "speedup_vs_baseline": 1.0 / ms, "roofline_fraction": 0.5 / ms}})
PY
check "recorded evaluations for both families (8)" '[ "$(ls "$R" | wc -l)" = 8 ]'

"$CUTEGEN" run "$TASK" --backend builtin --arch sm_90a --recorded-evals "$R" --out "$T/run" --json >"$T/out.json" 2>"$T/err"
rc=$?
check "the run ends with a correct kernel (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(jq_ "$T/out.json" "d[\"stop\"]")" = done ]' || { cat "$T/err"; sql "$T/run" "select id, verdict, change from nodes"; }
check "one refused gemm_sm90 candidate, then gemm_simt's walk (start, tile; split-K pruned at this size)" \
    '[ "$(sql "$T/run" "select group_concat(verdict, \" \") from (select verdict from nodes order by id)")" = "launch_error pass pass" ]' ||
    sql "$T/run" "select id, verdict, change from nodes"
check "the run says why it moved" 'grep -q "the builtin gemm_sm90 family refused this task as unsupported (1 candidates): moving to the gemm_simt family" "$T/err" "$T/out.json" 2>/dev/null'
check "the best is gemm_simt's fastest (64x64, 0.8 ms)" \
    '[ "$(jq_ "$T/out.json" "d[\"best\"][\"ms\"]")" = 0.8 ] && head -1 "$T/run/best.cu" | grep -q "family=gemm_simt CG_P_TILE=64x64 CG_P_SPLIT_K=1"'

# cut after the move (the refused candidate and gemm_simt's start), then resumed: the replay
# moves to gemm_simt again and its walk continues, repeating no candidate
"$CUTEGEN" run "$TASK" --backend builtin --arch sm_90a --recorded-evals "$R" --iters 2 --out "$T/cut" --json >"$T/cut.json" 2>"$T/cut.err"
"$CUTEGEN" resume "$T/cut" --iters 64 --json >"$T/cut2.json" 2>"$T/cut2.err"
rc=$?
check "resumed after the move: gemm_simt's walk goes on, no candidate twice (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(sql "$T/cut" "select group_concat(change, \"|\") from nodes")" = "$(sql "$T/run" "select group_concat(change, \"|\") from nodes")" ]' ||
    { cat "$T/cut2.err"; sql "$T/cut" "select id, verdict, change from nodes"; }

# a family whose whole walk gives no correct kernel (every gemm_sm90 candidate incorrect, as a
# family's bug on a shape would): the run moves to gemm_simt once the walk is over, and a
# resume cut after the move replays it
R3="$T/evals3"; mkdir -p "$R3"
python3 - "$CUTEGEN" "$TASK" "$R3" "$R" <<'PY'
import hashlib, itertools, json, shutil, subprocess, sys
cutegen, task, out, prev = sys.argv[1:]
shutil.copytree(prev, out, dirs_exist_ok=True)  # gemm_simt's passes
for bn, st in itertools.product(["128", "256"], ["2", "4"]):
    s = subprocess.run([cutegen, "builtin", task, "--arch", "sm_90a", "--source", "--set",
                        "CG_P_BN=%s CG_P_STAGES=%s" % (bn, st)], check=True, capture_output=True).stdout
    json.dump({"verdict": "incorrect", "message": "1024 of 4194304 elements beyond tolerance"},
              open("%s/%s.json" % (out, hashlib.sha256(s).hexdigest()), "w"))
PY
"$CUTEGEN" run "$TASK" --backend builtin --arch sm_90a --recorded-evals "$R3" --out "$T/run3" --json >"$T/out3.json" 2>"$T/err3"
rc=$?
check "a walk with no correct kernel: the run moves on and ends with gemm_simt's best (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(jq_ "$T/out3.json" "d[\"best\"][\"ms\"]")" = 0.8 ] && head -1 "$T/run3/best.cu" | grep -q "family=gemm_simt"' ||
    { cat "$T/err3"; sql "$T/run3" "select id, verdict, change from nodes"; }
n90=$(sql "$T/run3" "select count(*) from nodes where verdict = 'incorrect'")
check "every gemm_sm90 candidate of the walk was tried first ($n90), then it says why it moved" \
    '[ "$n90" -ge 2 ] && grep -q "the builtin gemm_sm90 family gave no correct kernel in its $n90 candidates: moving to the gemm_simt family" "$T/err3" "$T/out3.json" 2>/dev/null'
"$CUTEGEN" run "$TASK" --backend builtin --arch sm_90a --recorded-evals "$R3" --iters $((n90 + 1)) --out "$T/cut3" --json >/dev/null 2>"$T/cut3.err"
"$CUTEGEN" resume "$T/cut3" --iters 64 --json >"$T/cut3b.json" 2>"$T/cut3b.err"
rc=$?
check "resumed after that move: gemm_simt's walk goes on, no candidate twice (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(sql "$T/cut3" "select group_concat(change, \"|\") from nodes")" = "$(sql "$T/run3" "select group_concat(change, \"|\") from nodes")" ]' ||
    { cat "$T/cut3b.err"; sql "$T/cut3" "select id, verdict, change from nodes"; }

# without a fallback (a family that is the last): the run stops at once, saying so
mkdir -p "$T/only"
cp "$D/gemm_sm90.cu" "$T/only/gemm_simt.cu"
R2="$T/evals2"; mkdir -p "$R2"
python3 - "$CUTEGEN" "$TASK" "$R2" "$T/only" <<'PY'
import hashlib, json, os, subprocess, sys
cutegen, task, out, d = sys.argv[1:]
env = dict(os.environ, CUTEGEN_BUILTIN_DIR=d)
s = subprocess.run([cutegen, "builtin", task, "--arch", "sm_80", "--source", "--set",
                    "CG_P_BN=128 CG_P_STAGES=2"], check=True, capture_output=True, env=env).stdout
json.dump({"verdict": "launch_error", "message": "cutegen_launch returned 2"},
          open("%s/%s.json" % (out, hashlib.sha256(s).hexdigest()), "w"))
PY
CUTEGEN_BUILTIN_DIR="$T/only" "$CUTEGEN" run "$TASK" --backend builtin --arch sm_80 --recorded-evals "$R2" --out "$T/run2" --json >"$T/out2.json" 2>"$T/err2"
check "the last family refusing: stops after its first candidate, no correct kernel, says so" \
    '[ "$(sql "$T/run2" "select count(*) from nodes")" = 1 ] && grep -q "refused this task as unsupported (1 candidates) and no other family takes it" "$T/out2.json" "$T/err2" 2>/dev/null' ||
    { cat "$T/err2"; sql "$T/run2" "select id, verdict, change from nodes"; }
[ $fails -eq 0 ]
