#!/usr/bin/env bash
# GPU checks of issue 21's items 2, 3, 10 and 12 (never in CI; the CPU tests are
# tests/e2e/accounting.sh, progress.sh, export.sh, report.sh): on a machine with a GPU, run
# tests/gpu/first_hour.sh from the checkout after `make`. Prints "N passed, N failed".
#  - `cutegen-runner --devices --brief` lists the GPUs (names, no free memory: no context made);
#    `run --device 99` stops at once with "no CUDA device 99";
#  - a builtin run's time line adds up, compiles made ahead are charged, cutegen's own share is
#    small; `show` gives the same total;
#  - the report page passes report_page_check.py in headless Chromium (when it is here);
#  - `export --kernel-only` and `show --kernel` give a kernel that `cutegen eval` passes again.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CG="$PWD/$BUILD/cutegen"
RUNNER="$PWD/$BUILD/cutegen-runner"
OUT=${GPU_TEST_OUT:-$(mktemp -d)}
mkdir -p "$OUT"
passed=0 failed=0
ok()  { echo "ok - $*"; passed=$((passed + 1)); }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }
TASK=tests/redteam/tasks/relu_small.json

"$RUNNER" --devices --brief >"$OUT/devices.json" 2>&1
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"]; sys.exit(not d or not all(x.get("name") and "free_gb" not in x for x in d))' "$OUT/devices.json"; then
    ok "runner --devices --brief lists $(grep -c '"index"' "$OUT/devices.json") GPU(s) by name, without making contexts"
else
    bad "runner --devices --brief: $(head -c 400 "$OUT/devices.json")"
fi
s0=$(date +%s%N)
"$CG" run "$TASK" --backend builtin --device 99 --out "$OUT/dev99" >/dev/null 2>"$OUT/dev99.err"
rc=$? ms=$(( ($(date +%s%N) - s0) / 1000000 ))
if [ $rc -eq 4 ] && grep -q "no CUDA device 99" "$OUT/dev99.err" && [ ! -e "$OUT/dev99" ]; then
    ok "run --device 99: exit 4 in ${ms} ms, nothing made"
else
    bad "run --device 99: rc $rc, $(cat "$OUT/dev99.err")"
fi

"$CG" run "$TASK" --backend builtin --out "$OUT/run" >"$OUT/run.out" 2>"$OUT/run.err"
rc=$?
[ $rc -eq 0 ] && ok "a builtin run on $TASK (rc 0)" || bad "the builtin run: rc $rc, $(tail -c 600 "$OUT/run.err")"
if python3 - "$OUT/run.out" <<'PY'
import re, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("time "))
total = float(re.match(r"time\s+([\d.]+) s:", line).group(1))
parts = dict((k, float(v)) for k, v in re.findall(r"(llm|compile \(ahead, parallel\)|compile|evaluate|profile|cutegen) ([\d.]+) s", line))
ok = abs(sum(parts.values()) - total) <= 0.35 and parts.get("cutegen", 99) <= max(1.0, 0.05 * total)
print(line.strip())
sys.exit(0 if ok else 1)
PY
then
    ok "the time line adds up and cutegen's own share is small: $(grep '^time' "$OUT/run.out")"
else
    bad "the time line: $(grep '^time' "$OUT/run.out")"
fi
sum_t=$(sed -n 's/^time  *\([0-9.]*\) s:.*/\1/p' "$OUT/run.out")
show_t=$("$CG" show "$OUT/run" | sed -n 's/^time: \([0-9.]*\) s total.*/\1/p')
if [ -n "$show_t" ] && python3 -c "import sys; sys.exit(abs($show_t - $sum_t) > 0.15)"; then
    ok "show gives the summary's total ($show_t s)"
else
    bad "show's total $show_t s, the summary's $sum_t s"
fi

"$CG" report "$OUT/run" --html "$OUT/page.html" && "$CG" show "$OUT/run" --json >"$OUT/show.json"
if command -v chromium >/dev/null; then
    timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$OUT/page.html" \
        >"$OUT/dom.html" 2>/dev/null
    timeout 120 chromium --headless --no-sandbox --disable-gpu --screenshot="$OUT/page.png" \
        --window-size=1400,2000 "file://$OUT/page.html" >/dev/null 2>&1
    if python3 tests/e2e/report_page_check.py "$OUT/dom.html" "$OUT/show.json" >"$OUT/check" 2>&1; then
        ok "the report page passes report_page_check.py (screenshot: $OUT/page.png)"
    else
        bad "the report page: $(tail -3 "$OUT/check")"
    fi
fi

"$CG" export "$OUT/run" --out "$OUT/ko" --kernel-only >/dev/null 2>"$OUT/ko.err"
"$CG" show "$OUT/run" --kernel >"$OUT/shown.cu"
k=$(ls "$OUT/ko"/*.cu 2>/dev/null | head -1)
if [ -n "$k" ] && cmp -s "$k" "$OUT/shown.cu" && cmp -s "$k" "$OUT/run/best.cu"; then
    ok "export --kernel-only and show --kernel give best.cu"
else
    bad "export --kernel-only / show --kernel: $(cat "$OUT/ko.err")"
fi
"$CG" eval "$OUT/shown.cu" --task "$TASK" --json >"$OUT/again.json" 2>"$OUT/again.err"
v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$OUT/again.json" 2>/dev/null)
[ "$v" = pass ] && ok "cutegen eval passes the plain kernel again" || bad "eval of the plain kernel: verdict $v, $(tail -c 400 "$OUT/again.err")"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
