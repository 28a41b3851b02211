#!/usr/bin/env bash
# Run ON THE GPU MACHINE from an unpacked tree with build/ (bench/gpu_pack.sh made it here): one
# round of GPU checks after a merge, each step under its own time limit, results in $OUT:
#   gpu-tests.log      tests/gpu/run.sh (examples, every red-team kernel, builtin start kernels)
#   judge_ab.json      bench/judge_ab.sh: OLD_CUTEGEN (the build before the judge change) vs build/
#   modules.log        tests/gpu/module_suite_torch.py (every module of tasks/ runs under torch)
#   torch.log          cutegen eval --torch on a few tasks (eager and torch.compile baselines)
#   builtin.log        the builtin agent over BUILTIN_SUITE (default bench/llm_subset.txt; `llm`
#                      for the whole suite), then suite_torch.py (fast_p vs eager, torch.compile);
#                      BUILTIN_LIMIT seconds (default 240) for the suite: at the limit ^C (no new
#                      tasks), 20 s later ^C again (running tasks stopped, the summary written)
#   suites/            bench/builtin_suite.sh over $SUITES (default "llm hopper kb1"), one deadline per
#                      suite in SUITE_DEADLINES (seconds), then suite_torch.py on each (suites.log)
#   modeval.log        the evaluation of modules that do not lower: tests/gpu/modules_prepare.py
#                      (its default modules, or MODEVAL_PREPARE's files),
#                      modules_eval.sh, module_kernels.sh (those present in the tree;
#                      MODEVAL_SCRIPTS names others)
#   classes/           bench/class_table.sh (issue 20's workload classes: builtin vs cuBLASLt, eager,
#                      torch.compile) under CLASSES_BUDGET seconds
#   mkernels/          tests/gpu/module_kernels.sh: every hand-written module kernel's verdict (NO_TORCH),
#                      then MK_TORCH's (default "40_LayerNorm 94_MSELoss") with eager, torch.compile
#                      and the exported ModelNew's check (mkernels.log)
#   twins.log          bench/kb1_twins.sh: each kb1 start kernel on its JSON task and its module twin
#   module_*.log       step mtests: tests/gpu/module_describe_torch.sh, module_refkeep.sh, module_loop.sh
#   famab.jsonl        bench/family_ab.sh: a builtin family with and without FAMAB_PATCH on FAMAB_TASK
#   sweep.jsonl        bench/set_ab.sh: a task's builtin candidates at the settings of each SWEEP line
#   tsuite-NAME.*      `cutegen suite $SUITE --backend builtin --torch` (a suite, task list or module
#                      directory) stopped by ^C twice at TSUITE_LIMIT (default 540): its --json
#                      summary, log, `cutegen report` and the suite directory as a .tgz (with
#                      gpu.txt); RESUME=that .tgz continues it in a later call on the same GPU
#   STEPS="tests ab modules torch" OLD_CUTEGEN=.gpu/old/cutegen OUT=DIR bash bench/gpu_round.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT=dir}
export CUTLASS_DIR=${CUTLASS_DIR:-$PWD/third_party/cutlass}
T0=$(date +%s)
BUDGET=${BUDGET:-560}
left() { echo $(( BUDGET - ($(date +%s) - T0) - 10 )); }
# a step's timeout: $1, or what is left of the budget (at least 1 s: timeout takes no negatives)
lim() { local l; l=$(left); [ "$l" -lt 1 ] && l=1; [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
# COMMAND... stopped as `cutegen suite` wants: ^C at $1 seconds, ^C again 20 s later (its
# running tasks killed, the summary written), SIGKILL 20 s after that
interrupted_at() {
    local t=$1 pid watch rc; shift
    [ "$t" -gt 5 ] || t=5
    "$@" &
    pid=$!
    ( sleep "$t"; kill -INT $pid; sleep 20; kill -INT $pid; sleep 20; kill -KILL $pid ) 2>/dev/null &
    watch=$!
    wait $pid; rc=$?
    kill $watch 2>/dev/null
    return $rc
}
git_commit=$(cat COMMIT 2>/dev/null || echo unknown)
{ echo "commit $git_commit"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/machine.txt"
for s in ${STEPS:-tests ab modules torch}; do
    t=$(left); [ "$t" -gt 20 ] || { echo "== $s skipped ($t s left)"; continue; }
    echo "== $s (up to $t s)"; start=$(date +%s)
    case $s in
    tests)   GPU_TEST_OUT="$OUT/gt" timeout "$(lim 300)" bash tests/gpu/run.sh >"$OUT/gpu-tests.log" 2>&1
             tail -1 "$OUT/gpu-tests.log"; grep '^not ok' "$OUT/gpu-tests.log" | head -20
             tar -czf "$OUT/gt.tgz" -C "$OUT" gt && rm -rf "$OUT/gt" ;;
    ab)      A=${OLD_CUTEGEN:?} B=build/cutegen OUT="$OUT" ROUNDS=${AB_ROUNDS:-2} timeout "$(lim 300)" \
                 bash bench/judge_ab.sh >"$OUT/ab.log" 2>&1; tail -20 "$OUT/ab.log"; rm -rf "$OUT/ab" ;;
    modules) BUILD=build timeout "$(lim 200)" bash tests/gpu/modules.sh >"$OUT/modules.log" 2>&1
             tail -3 "$OUT/modules.log"; grep '^not ok' "$OUT/modules.log" | head -10
             timeout "$(lim 150)" python3 tests/gpu/module_suite_torch.py --full >"$OUT/module_suite.log" 2>&1
             tail -3 "$OUT/module_suite.log"; grep -i 'not ok\|FAIL' "$OUT/module_suite.log" | head -10 ;;
    builtin) interrupted_at "$(( $(lim "${BUILTIN_LIMIT:-240}") - 45 ))" build/cutegen suite "${BUILTIN_SUITE:-bench/llm_subset.txt}" \
                 --backend builtin --gpus all --per-gpu 4 \
                 --iters "${BUILTIN_ITERS:-8}" --out "$OUT/llmsub" >"$OUT/builtin.log" 2>&1
             tail -15 "$OUT/builtin.log"
             tl=$(lim "${SUITE_TORCH_LIMIT:-150}")
             timeout "$tl" python3 bench/suite_torch.py "$OUT/llmsub" --cutegen build/cutegen --json "$OUT/llmsub_torch.json" --deadline $(( tl - 60 )) \
                 >"$OUT/suite_torch.log" 2>&1; tail -15 "$OUT/suite_torch.log"
             tar -czf "$OUT/llmsub.tgz" -C "$OUT" llmsub && rm -rf "$OUT/llmsub" ;;
    suites)  mkdir -p "$OUT/suites"
             # without SUITE_DEADLINES, each suite a share of the step's time, so it is
             # interrupted (^C twice: summary written) before the step's timeout kills it
             ns=$(wc -w <<<"${SUITES:-llm hopper kb1}"); share=$(( ($(lim 590) - 90) / ns )); [ "$share" -gt 60 ] || share=60
             OUT="$OUT/suites" BUILTIN_SUITES="${SUITES:-llm hopper kb1}" BUILTIN_DEADLINE="${SUITE_DEADLINES:-$share}" \
                 BUILTIN_TIMEOUT=${SUITE_TASK_TIMEOUT:-240} timeout "$(lim 590)" bash bench/builtin_suite.sh >"$OUT/suites.log" 2>&1
             tail -25 "$OUT/suites.log"
             for d in "$OUT"/suites/suite-*/; do
                 [ -f "$d/suite.db" ] || continue
                 n=$(basename "$d")
                 timeout "$(lim 120)" python3 bench/suite_torch.py "$d" --cutegen build/cutegen --json "$OUT/suites/$n-torch.json" \
                     >"$OUT/suites/$n-torch.log" 2>&1; tail -12 "$OUT/suites/$n-torch.log"
             done
             rm -rf "$OUT/suites/evals"; tar -czf "$OUT/suites.tgz" --exclude="*.so" --exclude="*.o" -C "$OUT" suites && rm -rf "$OUT/suites" ;;
    modeval) : >"$OUT/modeval.log"
             [ -f tests/gpu/modules_prepare.py ] && timeout "$(lim 120)" python3 tests/gpu/modules_prepare.py ${MODEVAL_PREPARE:-} >>"$OUT/modeval.log" 2>&1
             for sc in ${MODEVAL_SCRIPTS:-tests/gpu/modules_eval.sh tests/gpu/module_kernels.sh}; do
                 [ -f "$sc" ] && BUILD=build OUT="$OUT" timeout "$(lim 240)" bash "$sc" >>"$OUT/modeval.log" 2>&1
             done
             grep -c '^ok' "$OUT/modeval.log"; grep '^not ok\|passed, ' "$OUT/modeval.log" | head -30 ;;
    mkernels) for k in tests/gpu/module_kernels/*.cu; do build/cutegen build "$k" --quiet >/dev/null 2>&1 & done; wait
             NO_TORCH=1 NO_CHECK=1 OUT="$OUT/mkernels" BUILD=build timeout "$(lim "${MK_LIMIT:-420}")" \
                 bash tests/gpu/module_kernels.sh >"$OUT/mkernels.log" 2>&1
             OUT="$OUT/mkernels_torch" BUILD=build timeout "$(lim 200)" \
                 bash tests/gpu/module_kernels.sh ${MK_TORCH:-40_LayerNorm 94_MSELoss} >>"$OUT/mkernels.log" 2>&1
             grep '^ok\|^not ok\|passed, ' "$OUT/mkernels.log" ;;
    twins)   OUT="$OUT" timeout "$(lim "${TWINS_LIMIT:-400}")" bash bench/kb1_twins.sh >"$OUT/twins.log" 2>&1; tail -36 "$OUT/twins.log"
             rm -f "$OUT"/kb1_twins/*.so ;;
    classes) mkdir -p "$OUT/classes"
             OUT="$OUT/classes" BUDGET=$(lim "${CLASSES_BUDGET:-400}") timeout "$(lim 590)" bash bench/class_table.sh \
                 >"$OUT/classes.log" 2>&1; tail -30 "$OUT/classes.log" ;;
    mtests)  # the module tests a GPU needs: descriptions of hostile modules, the kept reference
             # session, the loop on modules
             for sc in tests/gpu/module_describe_torch.sh tests/gpu/module_refkeep.sh tests/gpu/module_loop.sh; do
                 BUILD=build timeout "$(lim 240)" bash "$sc" >"$OUT/$(basename "$sc" .sh).log" 2>&1
                 echo "$sc: $(tail -1 "$OUT/$(basename "$sc" .sh).log")"; grep '^not ok' "$OUT/$(basename "$sc" .sh).log" | head -5
             done ;;
    tsuite)  # one suite (SUITE: a suite name, task list or module directory) with --torch: the
             # builtin agent's best kernel per task against cuBLASLt, eager and torch.compile.
             # RESUME=tsuite-NAME.tgz (an earlier call's, carried here): continue that suite (its
             # done tasks kept, the rest run) if it was measured on a GPU of this name
             n=$(basename "${SUITE:?SUITE=suite}" .txt); n=${n%/}
             gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
             if [ -n "${RESUME:-}" ]; then
                 tar -xzf "$RESUME" -C "$OUT" 2>/dev/null || echo "RESUME=$RESUME: cannot unpack it; a new suite"
                 if [ "$(cat "$OUT/tsuite-$n/gpu.txt" 2>/dev/null)" != "$gpu" ]; then
                     echo "RESUME=$RESUME: measured on '$(cat "$OUT/tsuite-$n/gpu.txt" 2>/dev/null)', this is '$gpu'; a new suite"
                     rm -rf "$OUT/tsuite-$n"
                 fi
             fi
             mkdir -p "$OUT/tsuite-$n" && echo "$gpu" >"$OUT/tsuite-$n/gpu.txt"
             interrupted_at "$(( $(lim "${TSUITE_LIMIT:-540}") - 45 ))" build/cutegen suite "$SUITE" \
                 --backend builtin --torch --gpus all --per-gpu "${PER_GPU:-4}" ${ITERS:+--iters "$ITERS"} \
                 --out "$OUT/tsuite-$n" --json >"$OUT/tsuite-$n.json" 2>"$OUT/tsuite-$n.log"
             tail -5 "$OUT/tsuite-$n.log"
             build/cutegen report "$OUT/tsuite-$n" >"$OUT/tsuite-$n.md" 2>&1
             tar -czf "$OUT/tsuite-$n.tgz" --exclude="*.so" --exclude="*.o" -C "$OUT" "tsuite-$n" && rm -rf "$OUT/tsuite-$n" ;;
    famab)   # an A/B of builtin family changes in one run (bench/family_ab.sh): FAMAB_PATCH,
             # comma-separated patches (default: the GEMM epilogue of 2026-12-05 against the
             # per-pair one before it) on FAMAB_TASK
             # (comma-separated too: each in turn)
             IFS=, read -ra famab_tasks <<<"${FAMAB_TASK:-bench/tasks/bf16_bias_gelu_k768.json}"
             for tk in "${famab_tasks[@]}"; do
                 timeout "$(lim 300)" bash bench/family_ab.sh \
                     "${FAMAB_PATCH:-bench/patches/sm90_epilogue_per_pair.patch}" \
                     "$tk" "${FAMAB_ROUNDS:-3}" >>"$OUT/famab.jsonl" 2>>"$OUT/famab.log"
                 tail -1 "$OUT/famab.jsonl"
             done ;;
    sweep)   # builtin settings side by side (bench/set_ab.sh), one line of SWEEP (a file) each:
             # TASK|ROUNDS|SETTING|SETTING|... (TASK a task file, or class:NAME for a task of
             # bench/classes.json)
             while IFS='|' read -r tk rounds sets; do
                 case "$tk" in ''|'#'*) continue ;; esac
                 if [[ $tk == class:* ]]; then
                     python3 -c 'import json, sys
for c in json.load(open("bench/classes.json"))["classes"]:
    if c["task"]["name"] == "classes/" + sys.argv[1]:
        json.dump(c["task"], open(sys.argv[2], "w")); break
else:
    sys.exit("no class task " + sys.argv[1])' "${tk#class:}" "$OUT/${tk#class:}.json" || continue
                     tk=$OUT/${tk#class:}.json
                 fi
                 [ "$(left)" -ge 60 ] || { echo "sweep: under 60 s left, $tk and the rest not run"; break; }
                 IFS='|' read -ra setl <<<"$sets"
                 if timeout "$(lim 240)" bash bench/set_ab.sh "$tk" "$rounds" "${setl[@]}" \
                     >>"$OUT/sweep.jsonl" 2>>"$OUT/sweep.log"; then
                     tail -1 "$OUT/sweep.jsonl"
                 else
                     echo "sweep: $tk stopped at its limit or failed (sweep.log), no summary"
                 fi
             done <"${SWEEP:?SWEEP=file}" ;;
    torch)   for tk in "kernels/relu_fp32.cu kb1/19_relu" "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096"; do
                 set -- $tk
                 timeout "$(lim 90)" build/cutegen eval "$1" --task "$2" --torch --json >"$OUT/torch_$(basename "$1" .cu).json" 2>&1
                 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=(d.get("report") or {}).get("metrics") or {}; print(sys.argv[1], d.get("verdict"), {k: v for k, v in m.items() if "speedup" in k or "roofline" in k})' \
                     "$OUT/torch_$(basename "$1" .cu).json" 2>&1 | tee -a "$OUT/torch.log"
             done ;;
    esac
    echo "== $s: $(( $(date +%s) - start )) s"
done
