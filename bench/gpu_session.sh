#!/usr/bin/env bash
# Run ON THE GPU MACHINE (device tool), after bench/gpu_bundle.sh here, carrying build,
# third_party and .gpu. Sets up the carried libraries, prints the machine, then runs the GPU
# tests and the example benchmark; everything lands in $OUT.
#   bash bench/gpu_session.sh [tests] [bench] [profile]
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$PWD/.gpu/xdg"
FINAL=${OUT:-$(mktemp -d)}
OUT=$(mktemp -d)   # everything goes here; $FINAL gets a tarball and the summaries (device limit: 8 files)
mkdir -p "$FINAL" "$XDG_CACHE_HOME/cutegen"
[ -d .gpu/cache ] && cp -r .gpu/cache "$XDG_CACHE_HOME/cutegen/build"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -1; } 2>&1 | tee "$OUT/machine.txt"
build/cutegen doctor 2>&1 | tee "$OUT/doctor.txt"
for what in "${@:-tests bench}"; do
    case "$what" in
    tests) GPU_TEST_OUT="$OUT/gpu-tests" bash tests/gpu/run.sh 2>&1 | tee "$OUT/gpu-tests.log" ;;
    bench) OUT="$OUT" bash bench/eval_examples.sh 2>&1 | tee "$OUT/bench.log" ;;
    esac
done
tar -czf "$FINAL/session.tgz" -C "$OUT" .
for f in bench_examples.json gpu-tests.log doctor.txt; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
ls -la "$FINAL"
