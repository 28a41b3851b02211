#!/usr/bin/env bash
# Runs every CPU test: the unit tests, then each end-to-end script under tests/e2e/.
# An e2e script prints "ok - WHAT" or "not ok - WHAT" per case and exits nonzero on failure.
# Closes with the standard line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
# The runner links CUDA and is not built under the sanitizers (build-asan/ has none): the
# sanitized CLI uses the plain one.
runner="$PWD/$BUILD/cutegen-runner"
[ -x "$runner" ] || runner="$PWD/build/cutegen-runner"
export CUTEGEN="$PWD/$BUILD/cutegen" CUTEGEN_RUNNER="$runner" REPO="$PWD"
passed=0 failed=0
log=$(mktemp)

"$BUILD/unit-tests" 2>&1 | tee "$log"
p=$(grep -c '^ok ' "$log"); f=$(grep -c '^FAIL ' "$log")
grep -q '^unit: ' "$log" || { echo "FAIL unit-tests did not finish"; f=$((f + 1)); }
passed=$((passed + p)); failed=$((failed + f))

for t in tests/e2e/*.sh; do
    [ -e "$t" ] || continue
    echo "== $t"
    start=$(date +%s)
    # each script runs in an empty directory of its own, so that what the checkout holds (a
    # ./runs left by `cutegen run`, a config) cannot change its result
    scratch=$(mktemp -d)
    (cd "$scratch" && timeout 1200 bash "$REPO/$t") >"$log" 2>&1
    rc=$?
    rm -rf "$scratch"
    cat "$log"
    p=$(grep -c '^ok - ' "$log"); f=$(grep -c '^not ok - ' "$log")
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $t exited with $rc"; f=1
    fi
    echo "   ($(( $(date +%s) - start )) s)"
    passed=$((passed + p)); failed=$((failed + f))
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
