#!/usr/bin/env bash
# Run ON THE GPU MACHINE from an unpacked tree with build/ (bench/gpu_pack.sh): the GPU tests
# (tests/gpu/run.sh) and, beside them, the module-task checks of issue 18, in one device call
# (evaluations take the GPU in turns, so the timings of each stay their own):
#   modeval.log         tests/gpu/modules_prepare.py, tests/gpu/modules_eval.sh
#   module_kernels.log  every hand-written kernel of tests/gpu/module_kernels judged (verdicts,
#                       NO_TORCH), then MK_TORCH's kernels with eager/torch.compile and the
#                       ModelNew export check
#   gpu-tests.log       tests/gpu/run.sh
#   OUT=DIR [MK_TORCH="40_LayerNorm 94_MSELoss"] bash bench/gpu_modules_round.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT=dir}
export CUTLASS_DIR=${CUTLASS_DIR:-$PWD/third_party/cutlass}
git_commit=$(cat COMMIT 2>/dev/null || echo unknown)
{ echo "commit $git_commit"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/machine.txt"
T0=$(date +%s)
( GPU_TEST_OUT="$OUT/gt" timeout "${TESTS_LIMIT:-420}" bash tests/gpu/run.sh >"$OUT/gpu-tests.log" 2>&1
  tar -czf "$OUT/gt.tgz" -C "$OUT" gt && rm -rf "$OUT/gt" ) &
tests=$!
for k in tests/gpu/module_kernels/*.cu; do build/cutegen build "$k" --quiet >/dev/null 2>&1 & done
wait $(jobs -p | grep -v "^$tests\$") 2>/dev/null
echo "module kernels built at $(( $(date +%s) - T0 )) s"
: >"$OUT/modeval.log"
timeout 90 python3 tests/gpu/modules_prepare.py >>"$OUT/modeval.log" 2>&1
BUILD=build timeout 150 bash tests/gpu/modules_eval.sh >>"$OUT/modeval.log" 2>&1
grep '^not ok\|passed, ' "$OUT/modeval.log"
echo "modeval done at $(( $(date +%s) - T0 )) s"
mkdir -p "$OUT/mk" "$OUT/mk_torch"
NO_TORCH=1 NO_CHECK=1 OUT="$OUT/mk" BUILD=build timeout "${MK_LIMIT:-300}" bash tests/gpu/module_kernels.sh >"$OUT/module_kernels.log" 2>&1
OUT="$OUT/mk_torch" BUILD=build timeout 150 bash tests/gpu/module_kernels.sh ${MK_TORCH:-40_LayerNorm 94_MSELoss} >>"$OUT/module_kernels.log" 2>&1
grep '^ok\|^not ok\|passed, ' "$OUT/module_kernels.log"
echo "module kernels done at $(( $(date +%s) - T0 )) s"
wait $tests
tail -1 "$OUT/gpu-tests.log"; grep '^not ok' "$OUT/gpu-tests.log" | head -20
echo "all done at $(( $(date +%s) - T0 )) s"
