#!/usr/bin/env bash
# Run ON THE GPU MACHINE (device tool), after bench/gpu_bundle.sh here, carrying
# .gpu/bundle.tar.gz (unpacked first). Sets up the carried libraries, prints the machine, then
# runs the steps asked for; everything lands in $OUT.
#   bash bench/gpu_session.sh [tests|tests-beside] [bench] [profile] [loop] [builtin]
# tests-beside runs the GPU tests in the background while the later steps run: the tests and
# the builtin suites take turns for the GPU through one lock file (linked into each suite's
# folder as its gpu0.lock), so no timing shares the GPU, and the session waits for them.
# SESSION_BUDGET (seconds, default 560): the steps share it, each under `timeout`, so a device
# command ends inside its limit; after every step the results so far are packed into
# $OUT/session.tgz, so a step cut short loses nothing that came before it. When the example
# kernels fail their GPU tests, the later steps are skipped (their numbers would mean nothing).
set -u
cd "$(dirname "$0")/.."
T0=$(date +%s)
BUDGET=${SESSION_BUDGET:-560}
[ -f .gpu/bundle.tar.gz ] && tar -xzf .gpu/bundle.tar.gz
export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$PWD/.gpu/xdg"
FINAL=${OUT:-$(mktemp -d)}
OUT=$(mktemp -d)   # everything goes here; $FINAL gets a tarball and the summaries (device limit: 8 files)
mkdir -p "$FINAL" "$XDG_CACHE_HOME/cutegen"
[ -d .gpu/cache ] && cp -r .gpu/cache "$XDG_CACHE_HOME/cutegen/build"
[ -f /usr/include/dlpack/dlpack.h ] || { mkdir -p /usr/include/dlpack && cp .gpu/include/dlpack/dlpack.h /usr/include/dlpack/; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -1; nproc; } 2>&1 | tee "$OUT/machine.txt"
build/cutegen doctor 2>&1 | tee "$OUT/doctor.txt"

pack() {
    tar -czf "$FINAL/session.tgz.part" -C "$OUT" . && mv "$FINAL/session.tgz.part" "$FINAL/session.tgz"
    for f in bench_examples.json bench_builtin.json gpu-tests.log doctor.txt profile.log loop.log builtin.log; do
        [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"
    done
}
left() { echo $(( BUDGET - ($(date +%s) - T0) - 15 )); }
step() { # NAME COMMAND...: under the time left; its output in $OUT/NAME.log
    local name=$1 t; shift
    t=$(left)
    if [ "$t" -lt 20 ]; then echo "== $name: skipped, $t s left of the budget" | tee -a "$OUT/skipped.log"; return 1; fi
    echo "== $name (up to $t s)"
    local s=$(date +%s)
    timeout -k 5 "$t" "$@" 2>&1 | tee "$OUT/$name.log"
    local rc=${PIPESTATUS[0]}
    echo "== $name: exit $rc after $(( $(date +%s) - s )) s" | tee -a "$OUT/steps.log"
    pack
    return "$rc"
}

BESIDE=
[ $# -gt 0 ] || set -- tests bench
for what in "$@"; do
    case "$what" in
    tests)
        GPU_TEST_OUT="$OUT/gpu-tests" step gpu-tests bash tests/gpu/run.sh
        if grep -q '^not ok - example ' "$OUT/gpu-tests.log"; then
            echo "== the example kernels fail on this GPU: the later steps are skipped" | tee -a "$OUT/steps.log"
            break
        fi ;;
    tests-beside)
        : >"$OUT/gpu0.lock"
        for s in ${BUILTIN_SUITES:-hopper kb1}; do
            mkdir -p "$OUT/suite-$(basename "$s" .txt)" && ln -f "$OUT/gpu0.lock" "$OUT/suite-$(basename "$s" .txt)/gpu0.lock"
        done
        ( s=$(date +%s)
          CUTEGEN_GPU_LOCK="$OUT/gpu0.lock" GPU_TEST_OUT="$OUT/gpu-tests" timeout -k 5 "$(left)" \
              bash tests/gpu/run.sh >"$OUT/gpu-tests.log" 2>&1
          echo "== gpu-tests (beside): exit $? after $(( $(date +%s) - s )) s" >>"$OUT/steps.log" ) &
        BESIDE=$! ;;
    bench) OUT="$OUT" step bench bash bench/eval_examples.sh ;;
    profile) step profile bash -c '
        # cutegen profile on the examples, keeping ncu'"'"'s CSV (test data for the parser)
        mkdir -p "$0/ncu"
        for pair in "kernels/relu_fp32.cu tests/redteam/tasks/relu_small.json" "kernels/gemm_fp32_sm80.cu kb1/1_square_matmul" \
                    "kernels/softmax_fp32.cu tests/redteam/tasks/softmax_long.json" "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096"; do
            set -- $pair
            name=$(basename "$1" .cu)
            mkdir -p "$0/ncu/tmp_$name"
            TMPDIR="$0/ncu/tmp_$name" build/cutegen profile "$1" --task "$2" --json --keep-scratch \
                >"$0/ncu/profile_$name.json" 2>"$0/ncu/profile_$name.err"
            TMPDIR="$0/ncu/tmp_$name" build/cutegen profile "$1" --task "$2" >"$0/ncu/profile_$name.txt" 2>&1
            find "$0/ncu/tmp_$name" -name "*.csv" -exec cp {} "$0/ncu/ncu_$name.csv" \; -quit
            echo "== $name"; cat "$0/ncu/profile_$name.txt"
        done' "$OUT" ;;
    loop) OUT="$OUT" step loop bash bench/loop_demo.sh ;;
    builtin) OUT="$OUT" step builtin bash bench/builtin_suite.sh ;;
    *) echo "gpu_session: unknown step '$what' (tests, tests-beside, bench, profile, loop, builtin)" ;;
    esac
done
[ -n "$BESIDE" ] && wait "$BESIDE"
pack
echo "session: $(( $(date +%s) - T0 )) s"
ls -la "$FINAL"
