#!/usr/bin/env bash
# Run ON THE GPU MACHINE (device tool), after bench/gpu_bundle.sh here, carrying build,
# .gpu/bundle.tar.gz (unpacked first). Sets up the carried libraries, prints the machine, then runs the GPU
# tests and the example benchmark; everything lands in $OUT.
#   bash bench/gpu_session.sh [tests] [bench] [profile] [loop] [builtin]
set -u
cd "$(dirname "$0")/.."
[ -f .gpu/bundle.tar.gz ] && tar -xzf .gpu/bundle.tar.gz
export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$PWD/.gpu/xdg"
FINAL=${OUT:-$(mktemp -d)}
OUT=$(mktemp -d)   # everything goes here; $FINAL gets a tarball and the summaries (device limit: 8 files)
mkdir -p "$FINAL" "$XDG_CACHE_HOME/cutegen"
[ -d .gpu/cache ] && cp -r .gpu/cache "$XDG_CACHE_HOME/cutegen/build"
[ -f /usr/include/dlpack/dlpack.h ] || { mkdir -p /usr/include/dlpack && cp .gpu/include/dlpack/dlpack.h /usr/include/dlpack/; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -1; } 2>&1 | tee "$OUT/machine.txt"
build/cutegen doctor 2>&1 | tee "$OUT/doctor.txt"
[ $# -gt 0 ] || set -- tests bench
for what in "$@"; do
    case "$what" in
    tests) GPU_TEST_OUT="$OUT/gpu-tests" bash tests/gpu/run.sh 2>&1 | tee "$OUT/gpu-tests.log"; cp "$OUT/gpu-tests.log" "$FINAL/" ;;
    bench) OUT="$OUT" bash bench/eval_examples.sh 2>&1 | tee "$OUT/bench.log"; cp "$OUT/bench_examples.json" "$FINAL/" ;;
    profile)
        # cutegen profile on the examples, keeping ncu's CSV (test data for the parser)
        mkdir -p "$OUT/ncu"
        for pair in "kernels/relu_fp32.cu tests/redteam/tasks/relu_small.json" "kernels/gemm_fp32_sm80.cu kb1/1_square_matmul" \
                    "kernels/softmax_fp32.cu tests/redteam/tasks/softmax_long.json" "kernels/gemm_bf16_sm90.cu hopper/gemm_bf16_4096"; do
            set -- $pair
            name=$(basename "$1" .cu)
            mkdir -p "$OUT/ncu/tmp_$name"
            TMPDIR="$OUT/ncu/tmp_$name" build/cutegen profile "$1" --task "$2" --json --keep-scratch \
                >"$OUT/ncu/profile_$name.json" 2>"$OUT/ncu/profile_$name.err"
            TMPDIR="$OUT/ncu/tmp_$name" build/cutegen profile "$1" --task "$2" >"$OUT/ncu/profile_$name.txt" 2>&1
            find "$OUT/ncu/tmp_$name" -name '*.csv' -exec cp {} "$OUT/ncu/ncu_$name.csv" \; -quit
            echo "== $name"; cat "$OUT/ncu/profile_$name.txt"
        done 2>&1 | tee "$OUT/profile.log" ;;
    loop) OUT="$OUT" bash bench/loop_demo.sh 2>&1 | tee "$OUT/loop.log" ;;
    builtin) OUT="$OUT" bash bench/builtin_suite.sh 2>&1 | tee "$OUT/builtin.log"; cp "$OUT/bench_builtin.json" "$FINAL/" ;;
    esac
done
tar -czf "$FINAL/session.tgz" -C "$OUT" .
for f in bench_examples.json gpu-tests.log doctor.txt profile.log loop.log; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
ls -la "$FINAL"
