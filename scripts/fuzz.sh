#!/usr/bin/env bash
# Runs every fuzz target in build-fuzz/ (built by `make fuzz`) for SECONDS each (default 20),
# starting from its seed corpus tests/fuzz/corpus/NAME/ and what earlier runs found in
# build-fuzz/corpus/NAME/. Prints one line per target with the executions it made; a crash,
# leak or sanitizer report fails the run and leaves the input in build-fuzz/artifacts/NAME/.
# Usage: scripts/fuzz.sh [SECONDS] [NAME...]
set -u
cd "$(dirname "$0")/.."
secs=${1:-20}; shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for b in build-fuzz/fuzz_*; do [ -x "$b" ] && names+=("${b#build-fuzz/fuzz_}"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "fuzz: no targets in build-fuzz/ (run make fuzz)" >&2; exit 1; }
failed=0
for n in "${names[@]}"; do
    bin=build-fuzz/fuzz_$n
    work=build-fuzz/corpus/$n art=build-fuzz/artifacts/$n
    mkdir -p "$work" "$art"
    seeds=tests/fuzz/corpus/$n
    [ -d "$seeds" ] || seeds=
    log=build-fuzz/fuzz_$n.log
    TMPDIR=${TMPDIR:-/tmp} ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$art/" "$work" $seeds >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "fuzz: $n: FAILED after ${execs:-?} executions (rc $rc); see $log and $art/"
        grep -m3 -E 'ERROR|runtime error|BUG' "$log"
        failed=$((failed + 1))
    else
        echo "fuzz: $n: ${execs:-?} executions in ${secs} s, no findings"
    fi
done
[ $failed -eq 0 ]
