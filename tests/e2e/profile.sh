#!/usr/bin/env bash
# `cutegen profile --so` end to end against a fake ncu (tests/data/fake-ncu) that prints a
# captured-style CSV: argv, parsing, summary, JSON, cache, and the failure paths. No GPU needed.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; echo "# output:"; sed 's/^/# /' "$tmp/out" | head -30; fi; }

# cutegen runs ncu with a scrubbed environment, so each fake is a wrapper with its settings
# baked in: fake NAME 'VAR=value'... makes $tmp/NAME
fake() {
    local f="$tmp/$1"; shift
    { echo '#!/usr/bin/env bash'; for kv in "$@"; do printf 'export %q\n' "$kv"; done
      echo "export FAKE_NCU_ARGV='$tmp/argv'"; echo "exec '$REPO/tests/data/fake-ncu' \"\$@\""; } > "$f"
    chmod +x "$f"
    echo "$f"
}
export CUTEGEN_RUNNER=/bin/true XDG_CACHE_HOME="$tmp/cache"
printf 'not really a library' > "$tmp/k.so"

CUTEGEN_NCU=$(fake raw "FAKE_NCU_CSV=$REPO/tests/data/ncu/raw-synthetic-two-kernels.csv") \
    "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu >"$tmp/out" 2>&1; rc=$?
check "profile exits 0 on a parsed profile" '[ $rc -eq 0 ]'
check "summary classifies memory-bound" 'grep -q "bound      memory-bound: DRAM at 60% of peak, compute 12%" "$tmp/out"'
check "summary names the register limit" 'grep -q "limited by registers: 128/thread" "$tmp/out"'
check "summary lists top stalls" 'grep -q "stalls     top: long scoreboard" "$tmp/out"'
check "summary reports store bank conflicts" 'grep -q "4.0-way bank conflicts on stores" "$tmp/out"'
check "summary says tensor pipes idle" 'grep -q "tensor pipes idle (FMA pipe 35%" "$tmp/out"'
check "two launches aggregated" 'grep -q "in 2 kernel launches" "$tmp/out" && grep -q "kernels    2 launches" "$tmp/out"'
check "ncu argv profiles only the runner's profile window" \
    'tr "\n" " " < "$tmp/argv" | grep -q -- "--clock-control none --profile-from-start off --csv --print-units base --log-file .*ncu.csv --page raw --metrics gpu__time_duration.sum,.* /bin/true --task .*task.json --kernel .*k.so --device 0 --profile --no-confine"'

rm -f "$tmp/argv"
CUTEGEN_NCU=$(fake none "FAKE_NCU_CSV=/nonexistent") "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu --json >"$tmp/out" 2>&1; rc=$?
check "second run is a cache hit (ncu not run)" '[ $rc -eq 0 ] && [ ! -e "$tmp/argv" ] && grep -q "\"cache_hit\": true" "$tmp/out"'
check "--json carries raw metrics" 'grep -q "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\"" "$tmp/out" && grep -q "\"bound\": \"memory-bound\"" "$tmp/out"'

CUTEGEN_NCU=$(fake details "FAKE_NCU_CSV=$REPO/tests/data/ncu/details-synthetic-relu.csv") \
    "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu --no-cache >"$tmp/out" 2>&1; rc=$?
check "details page parses too" '[ $rc -eq 0 ] && grep -q "memory-bound: DRAM at 92% of peak" "$tmp/out"'

CUTEGEN_NCU=$(fake perm 'FAKE_NCU_STDERR===ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.' FAKE_NCU_STATUS=1) \
    "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu --no-cache >"$tmp/out" 2>&1; rc=$?
check "counter permission is 'profiling unavailable' (exit 4)" '[ $rc -eq 4 ] && grep -q "profiling unavailable: .*ERR_NVGPUCTRPERM" "$tmp/out"'

CUTEGEN_NCU=$(fake nok 'FAKE_NCU_STDERR===WARNING== No kernels were profiled.') \
    "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu --no-cache >"$tmp/out" 2>&1; rc=$?
check "no kernels profiled is its own failure (exit 5)" '[ $rc -eq 5 ] && grep -q "profiled no kernel" "$tmp/out"'

CUTEGEN_NCU=/nonexistent/ncu "$CUTEGEN" profile --so "$tmp/k.so" --task kb1/19_relu --json >"$tmp/out" 2>&1; rc=$?
check "missing ncu is unavailable (exit 4, JSON says so)" '[ $rc -eq 4 ] && grep -q "\"status\": \"missing\"" "$tmp/out" && grep -q "\"unavailable\": true" "$tmp/out"'

"$CUTEGEN" profile --task kb1/19_relu >"$tmp/out" 2>&1; rc=$?
check "profile without a kernel is a usage error" '[ $rc -eq 2 ]'
exit $fail
