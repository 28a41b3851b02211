#!/usr/bin/env bash
# The judge's CPU half (issue 16): the runner links no vendor library; its seccomp filters
# hold in a small process; and the evaluator accepts a report only from a runner that ends
# the way a runner ends, carrying the nonce it was given, with a time the GPU can reach. Fake
# runners ($CUTEGEN_RUNNER) forge reports in each way; a fake baseline program
# ($CUTEGEN_BASELINE) stands for the GPU's figures and shows that baselines are cached.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CG=${CUTEGEN:-$REPO/build/cutegen}
# the runner's build (a sanitizer build of the CLI uses the plain runner: tests/run.sh)
BUILD=$(dirname "${CUTEGEN_RUNNER:-$(dirname "$CG")/cutegen-runner}")
[ -x "$BUILD/cutegen-runner" ] || BUILD=$REPO/build
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # NAME COMMAND
    if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fails=$((fails + 1)); fi
}

# ---- no vendor library in the candidate's process ----
check "cutegen-runner is built" '[ -x "$BUILD/cutegen-runner" ] && [ -x "$BUILD/cutegen-baseline" ]'
check "cutegen-runner has no cuBLAS among its needed libraries" \
    '! readelf -d "$BUILD/cutegen-runner" | grep -i "NEEDED.*cublas"'
check "cutegen-runner loads no cuBLAS (ldd, transitively)" '! ldd "$BUILD/cutegen-runner" | grep -qi cublas'
check "the runner names no cuBLAS symbol" '! nm -D "$BUILD/cutegen-runner" | grep -qi cublas'
check "cutegen-baseline is where cuBLASLt went" 'readelf -d "$BUILD/cutegen-baseline" | grep -qi "NEEDED.*cublasLt"'

# ---- seccomp filters, in a small process without CUDA ----
if "$BUILD/confine-test" "$T" >"$T/confine.out" 2>&1; then
    echo "ok - seccomp filters: $(tail -1 "$T/confine.out")"
else
    echo "not ok - seccomp filters:"; grep -v '^ok' "$T/confine.out" | sed 's/^/#   /'
    fails=$((fails + 1))
fi

# ---- class 2 forgers, whose route no static check sees: only the confinement stops them ----
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    so_of() { "$CG" build "$REPO/tests/redteam/$1" --cache-dir "$T/kcache" --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("so_path") or "")'; }
    rso=$(so_of forge_libc_report_relu.cu); xso=$(so_of forge_libc_exec_relu.cu)
    check "the forgers pass the source scan and the object check (only the runner can stop them)" \
        '[ -n "$rso" ] && [ -n "$xso" ]'
    mkdir -p "$T/f1" "$T/f2" "$T/f3"
    (cd "$T/f1" && "$BUILD/forge-harness" "$rso" 3>"$T/f1.pipe" >/dev/null 2>&1)
    check "unconfined, the report forger writes report.json (its route is real)" '[ -s "$T/f1/report.json" ]'
    (cd "$T/f2" && "$BUILD/forge-harness" "$rso" --confine 3>"$T/f2.pipe" >"$T/f2.out" 2>&1)
    check "confined, it cannot create report.json" '[ ! -e "$T/f2/report.json" ]'
    check "confined, what it can write is a report without the nonce, on the pipe" \
        'grep -q "\"verdict\":\"pass\"" "$T/f2.pipe" && ! grep -q nonce "$T/f2.pipe"'
    # its parent is a throwaway shell: unconfined, the exec forger would SIGKILL it
    bash -c '"$1" "$2" --confine 3>/dev/null; echo "survived $?"' _ "$BUILD/forge-harness" "$xso" \
        >"$T/f3.out" 2>&1 </dev/null
    check "confined, the exec forger's fork, exec, socket, open and kill all fail" \
        'grep -q "returned 0" "$T/f3.out" && grep -q "survived 0" "$T/f3.out" && [ ! -e "$T/report.json" ]'
else
    echo "ok - # skipped the forgers: no nvcc here"
fi

# ---- the real runner's report channel (no GPU needed: it reports no_device) ----
rt="$REPO/tests/redteam/tasks/relu_small.json"
echo 0123456789abcdef0123456789abcdef | "$BUILD/cutegen-runner" --task "$rt" --kernel "$T/none.so" \
    --report-fd 3 3>"$T/real.json" >"$T/real.log" 2>&1
check "the runner's report goes to its pipe, with the nonce" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[\"nonce\"] == \"0123456789abcdef0123456789abcdef\"" "$T/real.json"'
check "the runner's last line is its final phase" '[ "$(tail -1 "$T/real.log")" = "phase report" ]'
echo | "$BUILD/cutegen-runner" --task "$rt" --kernel "$T/none.so" --report-fd 3 3>"$T/real.json" >/dev/null 2>&1
check "the runner refuses to work without a nonce" \
    'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[\"verdict\"] == \"runner_error\" and \"nonce\" not in r" "$T/real.json"'
check "the runner has no --out any more" \
    '! "$BUILD/cutegen-runner" --task "$rt" --kernel "$T/none.so" --out "$T/x.json" </dev/null >/dev/null 2>&1 && [ ! -e "$T/x.json" ]'
echo 0123456789abcdef0123456789abcdef | "$BUILD/cutegen-runner" --task "$rt" --kernel "$T/none.so" \
    --report-fd 3 --no-confine 3>"$T/real.json" >/dev/null 2>"$T/real.err"
check "the runner refuses --no-confine together with a report pipe" \
    '[ ! -s "$T/real.json" ] && grep -q "no-confine" "$T/real.err"'
check "the runner refuses a report fd that is not open" \
    '! "$BUILD/cutegen-runner" --task "$rt" --kernel "$T/none.so" --report-fd 7 </dev/null >/dev/null 2>&1'
if ! nvidia-smi >/dev/null 2>&1; then
    : >"$T/none.so"
    env -u CUTEGEN_BASELINE CUTEGEN_RUNNER="$BUILD/cutegen-runner" XDG_CACHE_HOME="$T/cache0" "$CG" eval x.cu --so "$T/none.so" --task "$rt" --json \
        >"$T/nodev.json" 2>/dev/null
    check "cutegen eval with the real runner and baseline, no GPU: no_device, the report accepted" \
        'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[\"verdict\"] == \"no_device\", r; assert \"error\" in r[\"report\"][\"baseline\"]" "$T/nodev.json"'
fi

# ---- the evaluator's acceptance of reports ----
mkdir -p "$T/bin"
# A fake baseline: --identify names a fake GPU; a measurement logs itself and gives figures
# (1000 GB/s copy and DRAM, 1 TFLOP/s peak: limits 1050 GB/s and 1.05 TFLOP/s)
cat >"$T/bin/cutegen-baseline" <<SH
#!/usr/bin/env bash
dev='{"name":"Fake GPU","uuid":"GPU-0000","driver":13000,"l2_bytes":0}'
if [ "\$1" = --identify ]; then echo identify >>"$T/baseline.log"; echo "{\"device\":\$dev}"; exit 0; fi
echo measure >>"$T/baseline.log"
echo "{\"device\":\$dev,\"copy_gbps\":1000,\"dram_gbps_theoretical\":1000,\"peak_limit_tflops\":1,\"peak_tflops\":0.9,\"cublaslt\":{\"median_ms\":2.0}}"
SH
# A fake runner: its mode (in $T/mode) says which report it writes, and it records its argv
# and what it read on stdin
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
echo "\$*" >"$T/argv"
ls /proc/\$\$/fd >"$T/fds"
fd=
while [ \$# -gt 0 ]; do [ "\$1" = --report-fd ] && fd=\$2; shift; done
read -r nonce
echo "\$nonce" >"$T/nonce"
ms=\$(cat "$T/ms" 2>/dev/null || echo 1000)
proto='"confined":true,"timing":{"trials":10,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":7}}'
[ "\$(cat "$T/mode")" = unchecked ] && proto='"confined":true,"timing":{"trials":10,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":0}}'
[ "\$(cat "$T/mode")" = unconfined ] && proto='"timing":{"trials":10,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":7}}'
rep() { printf '{"verdict":"pass","message":"","nonce":"%s","metrics":{"ms":%s},%s,"runner_s":0.1}' "\$1" "\$ms" "\$proto"; }
echo "phase check"
case "\$(cat "$T/mode")" in
good|unchecked|unconfined) echo "phase report"; rep "\$nonce" >/dev/fd/\$fd ;;
wrong_nonce) echo "phase report"; rep 0123456789abcdef0123456789abcdef >/dev/fd/\$fd ;;
no_nonce) echo "phase report"; printf '{"verdict":"pass","message":"","metrics":{"ms":1}}' >/dev/fd/\$fd ;;
two) echo "phase report"; { rep "\$nonce"; rep "\$nonce"; } >/dev/fd/\$fd ;;
killed) echo "phase report"; rep "\$nonce" >/dev/fd/\$fd; kill -9 \$\$ ;;
exit1) echo "phase report"; rep "\$nonce" >/dev/fd/\$fd; exit 1 ;;
no_phase) rep "\$nonce" >/dev/fd/\$fd ;;
other_fd) echo "phase report"; rep "\$nonce" >"$T/report.json"; rep "\$nonce" >&2 ;;
esac
exit 0
SH
chmod +x "$T/bin/cutegen-runner" "$T/bin/cutegen-baseline"
: >"$T/k.so"
export CUTEGEN_RUNNER="$T/bin/cutegen-runner" CUTEGEN_BASELINE="$T/bin/cutegen-baseline" \
    XDG_CACHE_HOME="$T/cache"

verdict() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict","?"))' "$1" 2>/dev/null || echo no-json; }
message() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("message",""))' "$1" 2>/dev/null; }
# ev MODE TASK [MS]: one evaluation; verdict in $v, message in $m
ev() {
    echo "$1" >"$T/mode"; echo "${3:-1000}" >"$T/ms"
    "$CG" eval x.cu --so "$T/k.so" --task "$2" --json >"$T/out.json" 2>"$T/err"
    v=$(verdict "$T/out.json"); m=$(message "$T/out.json")
}

ev good kb1/19_relu 7>"$T/leak"
check "a runner's own report is accepted (got $v: $m)" '[ "$v" = pass ]'
check "the runner inherits no descriptor of cutegen's but 0-3 ($(tr '\n' ' ' <"$T/fds"))" \
    '! grep -qvx "[0-3]\|255" "$T/fds"'
check "the runner gets its report pipe, and no --out" \
    'grep -q -- "--report-fd 3" "$T/argv" && ! grep -q -- "--out" "$T/argv"'
check "the runner gets a 128-bit nonce on stdin" 'grep -Eqx "[0-9a-f]{32}" "$T/nonce"'
check "the runner gets the evaluator's limits" \
    'grep -q -- "--limit-gbps 1050.0" "$T/argv" && grep -q -- "--limit-tflops 1.05" "$T/argv"'
check "the runner gets the limit of one call, 30 s unless \$CUTEGEN_CALL_LIMIT says" \
    'grep -q -- "--call-limit 30" "$T/argv"'
check "the report shows the baseline and its limits" \
    'python3 -c "import json,sys; b=json.load(open(sys.argv[1]))[\"report\"][\"baseline\"]; assert b[\"limits\"][\"gbps\"] == 1050 and b[\"copy_gbps\"] == 1000" "$T/out.json"'
check "the nonce is not kept in the report" '! grep -q nonce "$T/out.json"'
n1=$(grep -c measure "$T/baseline.log")
ev good kb1/19_relu
check "a second evaluation of the task reuses the cached baseline" \
    '[ "$n1" = 1 ] && [ "$(grep -c measure "$T/baseline.log")" = 1 ] && [ "$(grep -c identify "$T/baseline.log")" = 2 ]'
check "the report says the baseline came from the cache" \
    'python3 -c "import json,sys; assert json.load(open(sys.argv[1]))[\"report\"][\"baseline\"][\"cached\"] is True" "$T/out.json"'
CUTEGEN_CALL_LIMIT=2.5 ev good kb1/19_relu
check "\$CUTEGEN_CALL_LIMIT=2.5 reaches the runner" 'grep -q -- "--call-limit 2.5" "$T/argv"'
CUTEGEN_CALL_LIMIT=0 ev good kb1/19_relu
check "\$CUTEGEN_CALL_LIMIT=0: no limit" '[ "$v" = pass ] && ! grep -q -- "--call-limit" "$T/argv"'
CUTEGEN_CALL_LIMIT=soon ev good kb1/19_relu
check "a \$CUTEGEN_CALL_LIMIT that is no number is named, and 30 s used" \
    'grep -q "CUTEGEN_CALL_LIMIT=.soon. is not a number" "$T/err" && grep -q -- "--call-limit 30" "$T/argv"'
ev good kb1/20_leaky_relu
check "another task measures its own baseline" '[ "$(grep -c measure "$T/baseline.log")" = 2 ]'

ev wrong_nonce kb1/19_relu
check "a report with the wrong nonce is refused ($v)" '[ "$v" = untrusted_report ] && echo "$m" | grep -q "wrong nonce"'
ev no_nonce kb1/19_relu
check "a report without a nonce is refused ($v)" '[ "$v" = untrusted_report ] && echo "$m" | grep -q "no nonce"'
ev two kb1/19_relu
check "two reports are refused ($v)" '[ "$v" = untrusted_report ] && echo "$m" | grep -q "more than one report"'
ev killed kb1/19_relu
check "a report from a runner killed afterwards is refused ($v)" '[ "$v" = crash ]'
ev exit1 kb1/19_relu
check "a report from a runner that exits 1 is refused ($v)" '[ "$v" = untrusted_report ] && echo "$m" | grep -q "status 1"'
ev no_phase kb1/19_relu
check "a report without the final phase line is refused ($v)" \
    '[ "$v" = untrusted_report ] && echo "$m" | grep -q "last phase line"'
ev other_fd kb1/19_relu
check "a report written to a file or stderr is not a report ($v)" '[ "$v" = runner_error ]'

ev unchecked kb1/19_relu
check "a pass whose timed calls were not all checked is refused ($v)" \
    '[ "$v" = untrusted_report ] && echo "$m" | grep -q "10 trials but 3 checks"'
ev unconfined kb1/19_relu
check "a pass from a runner that was not confined is refused ($v)" \
    '[ "$v" = untrusted_report ] && echo "$m" | grep -q "confined"'

# kb1/19_relu moves 2 x 4096 x 393216 x 4 bytes = 12.9 GB: 1 ms would be 12900 GB/s
ev good kb1/19_relu 1
check "a time beyond the copy roofline is implausible ($v)" \
    '[ "$v" = implausible ] && echo "$m" | grep -q "GB/s, beyond this GPU.s limit of 1050 GB/s"'
ev good kb1/19_relu 20
check "a time within the roofline passes ($v)" '[ "$v" = pass ]'
# kb1/1 (4096^3) is 137 GFLOP: 10 ms would be 13.7 TFLOP/s against a limit of 1.05
ev good kb1/1 10
check "a time beyond the compute peak is implausible ($v)" \
    '[ "$v" = implausible ] && echo "$m" | grep -q "TFLOP/s of strict work, beyond"'
ev good kb1/1 1000
check "a GEMM time within the peak passes, with its speedup ($v)" \
    '[ "$v" = pass ] && python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[\"report\"]; assert abs(r[\"metrics\"][\"speedup_vs_baseline\"] - 0.002) < 1e-9" "$T/out.json"'
ev good kb1/1 0
check "a pass without a time is implausible ($v)" '[ "$v" = implausible ]'

[ "$fails" -eq 0 ]
