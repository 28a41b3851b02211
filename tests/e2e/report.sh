#!/usr/bin/env bash
# Inspection, reports and export end to end: real runs made as tests/e2e/loop.sh makes them
# (scripted model, recorded evaluations, real nvcc), then `cutegen runs/show/report/export`
# on them, on a suite of them, and on broken run directories. The HTML checks compare every
# plotted point with `cutegen show --json`; the export checks compile the .cu with real nvcc,
# the .h with gcc as C, and the Python with py_compile.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
D="$REPO/tests/data/loop"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
# work in the temp directory: a ./runs in the checkout (left by `cutegen run`) is not ours
cd "$T" || exit 1
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_INC=$(dirname "$(dirname "$NVCC")")/include

cp "$D/k_bad.cu" "$T/k_bad.cu"
sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/' "$T/k_bad.cu" >"$T/k_good.cu"
sed 's/const int threads = 256;/const int threads = 512;/' "$T/k_good.cu" >"$T/k_fast.cu"
sha() { sha256sum "$1" | cut -d' ' -f1; }
R="$T/evals"; mkdir -p "$R"
pass() { printf '{"verdict":"pass","message":"","metrics":{"ms":%s,"speedup_vs_baseline":%s,"roofline_fraction":%s,"speedup_vs_torch":%s},"runner_s":1.5}\n' "$2" "$3" "$4" "$5" >"$R/$(sha "$1").json"; }
pass "$T/k_good.cu" 0.050 1.00 0.60 1.5
pass "$T/k_fast.cu" 0.040 1.25 0.75 1.9
fence() { printf 'Change: %s\n```cuda\n' "$1"; cat "$2"; printf '```\n'; }
edit() { printf 'Change: %s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n' "$1" "$2" "$3"; }
M="$T/m1"; mkdir -p "$M"
fence "a first relu <b>&\"x\"</b>" "$T/k_bad.cu" >"$M/reply-1.txt"
edit "define the clamp inline" $'\t\ty[i] = clamp_positive(x[i]);' $'\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;' >"$M/reply-2.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M/reply-3.txt"
S="$T/suite"; mkdir -p "$S"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M" --recorded-evals "$R" \
    --iters 3 --out "$S/a" --quiet >/dev/null 2>"$T/err1" || { bad "making run a"; cat "$T/err1"; }
M2="$T/m2"; mkdir -p "$M2"
fence "a first relu" "$T/k_bad.cu" >"$M2/reply-1.txt"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M2" --recorded-evals "$R" \
    --iters 1 --fix-attempts 0 --out "$S/nocorrect" --quiet >/dev/null 2>&1

# ---- runs and show ----
"$CUTEGEN" runs "$S" >"$T/runs.txt" 2>&1
check "runs lists both runs" 'grep -q "suite/a .*relu_small .*3 .*1.25x" "$T/runs.txt" && grep -q "nocorrect" "$T/runs.txt"'
"$CUTEGEN" runs "$S" --status stopped --json >"$T/runs.json"
"$CUTEGEN" runs "$S" --status failed --json >"$T/runs2.json"
check "runs --status filters" 'python3 -c "import json; d=json.load(open(\"$T/runs.json\")); assert [r[\"nodes\"] for r in d]==[3, 1], d; assert json.load(open(\"$T/runs2.json\"))==[]"'
"$CUTEGEN" show "$S/a" >"$T/show.txt"
check "show prints the history with the change lines" 'grep -q "more threads per block" "$T/show.txt" && grep -q "^3 nodes, 2 passed; best: node 3, speedup 1.25x" "$T/show.txt"'
"$CUTEGEN" show "$S/a" --json >"$T/show.json"

# ---- the HTML page matches the store ----
"$CUTEGEN" report "$S/a" --html "$T/a.html" --md "$T/a.md"
rc=$?
check "report writes the page (rc $rc)" '[ $rc -eq 0 ] && [ -s "$T/a.html" ] && [ -s "$T/a.md" ]'
python3 "$REPO/tests/e2e/report_page_check.py" "$T/a.html" "$T/show.json" --scripted-run >"$T/html_check" 2>&1
check "the page has both charts, and every plotted value is the store's" 'grep -q "html ok" "$T/html_check"' || cat "$T/html_check"
check "the markdown summary names the best" 'grep -q "best: node 3, speedup 1.250x over the baseline (cuBLAS -, PyTorch 1.900x)" "$T/a.md"'
"$CUTEGEN" report "$S/nocorrect" --html "$T/n.html" >/dev/null
check "a run with no correct kernel gets an honest page" 'grep -q "id=\"no-correct\"" "$T/n.html" && ! grep -q "best-source" "$T/n.html"'
# ---- a real H200 run's page, rendered by headless Chromium: what the browser built from it has
# both charts, and every plotted value is the store's ----
# (a copy: opening a store of an older schema migrates it, and test data stays as committed)
cp -r "$REPO/tests/data/loop_h200_run" "$T/loop_h200_run"
H="$T/loop_h200_run"
"$CUTEGEN" show "$H" --json >"$T/h200_show.json"
"$CUTEGEN" report "$H" --html "$T/h200.html"
rc=$?
check "report of the H200 run (rc $rc)" '[ $rc -eq 0 ] && [ -s "$T/h200.html" ]'
# ---- output paths that are not plain files are written, never replaced (red team 1: as root,
# `--md /dev/stdout` and `--html /dev/full` became regular files, a symlink was replaced by one).
# /proc/self/fd/1 is /dev/stdout one link on, where a regression cannot replace anything.
O="$T/outs"; mkdir -p "$O"
"$CUTEGEN" report "$H" --md /proc/self/fd/1 >"$O/stdout.md" 2>"$O/err"; rc=$?
check "report --md /dev/stdout writes to standard output (rc $rc)" '[ $rc -eq 0 ] && grep -q "^### cutegen run: .kb1/19_relu." "$O/stdout.md"'
echo "earlier log line" >"$O/log.md"
"$CUTEGEN" report "$H" --md /proc/self/fd/1 >>"$O/log.md" 2>"$O/err"; rc=$?
check "report --md /dev/stdout >> log appends, the log kept (rc $rc)" '[ $rc -eq 0 ] && [ "$(head -1 "$O/log.md")" = "earlier log line" ] && grep -q "^### cutegen run" "$O/log.md"'
mkdir -p "$O/real"; echo old >"$O/real/target.md"; ln -s real/target.md "$O/link.md"
"$CUTEGEN" report "$H" --md "$O/link.md" 2>"$O/err"; rc=$?
check "report --md SYMLINK writes the target, the link stays (rc $rc)" '[ $rc -eq 0 ] && [ -L "$O/link.md" ] && grep -q "^### cutegen run" "$O/real/target.md" && ! ls -a "$O" "$O/real" | grep -q "\.tmp\."'
mkfifo "$O/fifo"
timeout 20 cat "$O/fifo" >"$O/from_fifo.html" &
reader=$!
timeout 20 "$CUTEGEN" report "$H" --html "$O/fifo" 2>"$O/err"; rc=$?
wait $reader
check "report --html FIFO writes into it, the FIFO stays (rc $rc)" '[ $rc -eq 0 ] && [ -p "$O/fifo" ] && grep -q "</html>" "$O/from_fifo.html"'
if [ "$(id -u)" = 0 ]; then full="$O/full"; mknod "$full" c 1 7; else full=/dev/full; fi
"$CUTEGEN" report "$H" --html "$full" 2>"$O/err"; rc=$?
check "report --html /dev/full: exit 4, no space left, the device stays (rc $rc)" '[ $rc -eq 4 ] && grep -q "^error: cannot write .*full.: No space left on device" "$O/err" && [ -c "$full" ]'
"$CUTEGEN" report "$H" --md "$O/real" 2>"$O/err"; rc=$?
check "report --md DIRECTORY says so (rc $rc)" '[ $rc -eq 4 ] && grep -q "^error: cannot write .*real.: Is a directory" "$O/err"'
if command -v chromium >/dev/null; then
    timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$T/h200.html" \
        >"$T/h200_dom.html" 2>/dev/null
    python3 "$REPO/tests/e2e/report_page_check.py" "$T/h200_dom.html" "$T/h200_show.json" >"$T/h200_check" 2>&1
    check "chromium renders the H200 run's page: both charts, every plotted value the store's" \
        'grep -q "html ok" "$T/h200_check"' || cat "$T/h200_check"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --screenshot="$T/a.png" \
        --window-size=1200,1600 "file://$T/h200.html" >/dev/null 2>&1
    check "chromium draws the page to a PNG" '[ -s "$T/a.png" ] && [ "$(head -c 4 "$T/a.png" | tail -c 3)" = PNG ]'
else
    bad "chromium is missing (scripts/deps-test.sh installs it)"
fi

# ---- suites ----
mkdir -p "$S/broken"; echo "not a database" >"$S/broken/run.db"
"$CUTEGEN" report "$S" --html "$T/s.html" --md "$T/s.md" 2>"$T/s.err"
rc=$?
check "suite report (rc $rc) has the fast_p chart and a row per run" '[ $rc -eq 0 ] && grep -q "id=\"chart-fastp\"" "$T/s.html" && [ "$(grep -o "class=\"task\"" "$T/s.html" | wc -l)" = 2 ] && grep -q "class=\"unreadable\"" "$T/s.html"'
check "fast_0 is the share correct (1 of 3), fast_1 the share faster" 'grep -q "data-p=\"0.0\" data-fast=\"0.333333\"" "$T/s.html" && grep -q "data-p=\"1.0\" data-fast=\"0.333333\"" "$T/s.html" && grep -q "data-p=\"1.3\" data-fast=\"0\"" "$T/s.html"'

# ---- broken run directories ----
mkdir -p "$T/empty"
"$CUTEGEN" show "$T/empty" >/dev/null 2>"$T/e1"; rc=$?
check "no run.db: exit 3 and says so (rc $rc)" '[ $rc -eq 3 ] && grep -q "holds no run (no run.db)" "$T/e1"'
"$CUTEGEN" report "$S/broken" --html "$T/b.html" >/dev/null 2>"$T/e2"; rc=$?
check "corrupted run.db: exit 3, a clear error (rc $rc)" '[ $rc -eq 3 ] && grep -q "not a database" "$T/e2"'
"$CUTEGEN" export "$S/nocorrect" --out "$T/x" >/dev/null 2>"$T/e3"; rc=$?
check "export of a run with no correct kernel: exit 1 (rc $rc)" '[ $rc -eq 1 ] && grep -q "has no correct kernel to export" "$T/e3"'

# ---- export ----
"$CUTEGEN" export "$S/a" --out "$T/exp" >"$T/exp.out" 2>&1; rc=$?
check "export writes the files (rc $rc)" '[ $rc -eq 0 ] && for f in relu_small.cu relu_small.h relu_small_torch.cpp CMakeLists.txt setup.py example.py include/cutegen/kernel_abi.h; do [ -s "$T/exp/$f" ] || exit 1; done'
check "the exported kernel is the best node's source" 'head -c "$(wc -c <"$T/k_fast.cu")" "$T/exp/relu_small.cu" | cmp -s - "$T/k_fast.cu"'
printf '#include "relu_small.h"\nint main(void)\n{\n\tint (*f)(const float *, float *, int64_t, int64_t, cudaStream_t) = relu_small_launch;\n\treturn f == 0;\n}\n' >"$T/exp/use.c"
check "the .h is valid C with the documented signature (gcc -std=c11 -pedantic)" 'gcc -std=c11 -Wall -Werror -pedantic -I"$CUDA_INC" -I"$T/exp" -fsyntax-only "$T/exp/use.c"'
check "the exported .cu compiles with nvcc and exports the C API" '"$NVCC" -std=c++17 -O1 -shared -Xcompiler -fPIC -gencode arch=compute_90a,code=sm_90a -I"$T/exp" -I"$T/exp/include" -I"$REPO/third_party/cutlass/include" -o "$T/exp/k.so" "$T/exp/relu_small.cu" 2>"$T/nvcc.log" && nm -D "$T/exp/k.so" | grep -q " T relu_small_launch"' || cat "$T/nvcc.log"
check "the Python files parse" 'python3 -m py_compile "$T/exp/setup.py" "$T/exp/example.py"'
check "the CMake snippet builds a shared library with the verified gencode" 'grep -q "add_library(relu_small SHARED relu_small.cu)" "$T/exp/CMakeLists.txt" && grep -q "gencode=arch=compute_90a,code=sm_90a" "$T/exp/CMakeLists.txt" && grep -q "CUTLASS_INCLUDE_DIR .* CACHE PATH" "$T/exp/CMakeLists.txt"'
check "the torch wrapper calls the kernel on the current stream" 'grep -q "getCurrentCUDAStream" "$T/exp/relu_small_torch.cpp" && grep -q "#include <torch/extension.h>" "$T/exp/relu_small_torch.cpp"'

[ $fails -eq 0 ]
