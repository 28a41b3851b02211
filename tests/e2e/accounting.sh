#!/usr/bin/env bash
# Where a run's time goes, and a machine without a GPU. A fake nvcc (it sleeps, then writes an
# empty library) and a fake runner ($CUTEGEN_RUNNER: answers --devices as told, sleeps, then
# reports a pass) make the times known; the builtin agent compiles a stage's candidates ahead,
# in parallel. Checks: `run` says "no CUDA device" at once with nothing compiled and no run
# directory; the summary's parts (llm, compile, compile ahead, evaluate, profile, cutegen) add
# up to the total, piped and on a terminal alike, and cutegen's own share is small; work an
# environment error cut short is counted by the summary and by `show`.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do [ "$v" = CUTEGEN_RUNNER ] || unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
REAL_RUNNER=${CUTEGEN_RUNNER:-}

mkdir -p "$T/bin"
cat >"$T/bin/nvcc" <<SH
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.48 (fake)"; exit 0; }
echo "\$\$" >>"$T/nvcc.log"
sleep 0.6
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && { : >"\$2"; exit 0; }; shift; done
exit 1
SH
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
if [ "\$1" = --devices ]; then
    [ -e "$T/nogpu" ] && { echo '{"error":"no NVIDIA driver on this machine","devices":[]}'; exit 0; }
    echo '{"devices":[{"index":0,"name":"Fake GPU","cc":"9.0"}]}'; exit 0
fi
# the judge's report channel: a nonce on stdin, the report on the --report-fd pipe
fd=
while [ \$# -gt 0 ]; do [ "\$1" = --report-fd ] && fd=\$2; shift; done
read -r nonce
sleep 0.4
echo "phase report"
printf '{"verdict":"pass","message":"","nonce":"%s","metrics":{"ms":0.05,"speedup_vs_baseline":1.0,"roofline_fraction":0.6},"confined":true,"timing":{"trials":4,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":1}},"runner_s":0.4}\n' "\$nonce" >/dev/fd/\$fd
SH
chmod +x "$T/bin/nvcc" "$T/bin/cutegen-runner"
# The fake nvcc's object is empty: a fake objdump gives the object check a clean symbol table.
cat >"$T/bin/objdump" <<'SH'
#!/usr/bin/env bash
[ "$1" = -wtr ] && printf '\nSYMBOL TABLE:\n0000000000000000 g     F .text\t0000000000000010 cutegen_launch\n'
exit 0
SH
chmod +x "$T/bin/objdump"
export PATH="$T/bin:$PATH" CUTEGEN_RUNNER="$T/bin/cutegen-runner" NVCC="$T/bin/nvcc"
export CUTEGEN_BUILTIN_DIR="$REPO/tests/data/builtin" CUTEGEN_BUILD_JOBS=2
TASK="$REPO/tests/data/loop/relu_small.json"

# ---- no GPU: said at once, before any compile ----
touch "$T/nogpu"
s0=$(date +%s%N)
"$CUTEGEN" run "$TASK" --backend builtin --out "$T/nogpu_run" >"$T/ng.out" 2>"$T/ng.err"
rc=$?
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
check "no GPU: exit 4 with 'no CUDA device' and the runner's reason (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "no CUDA device (no NVIDIA driver on this machine)" "$T/ng.err"' || cat "$T/ng.err"
check "no GPU: nothing compiled ($(cat "$T/nvcc.log" 2>/dev/null | wc -l) nvcc calls), no run directory" \
    '[ ! -s "$T/nvcc.log" ] && [ ! -e "$T/nogpu_run" ]'
check "no GPU: said within 3 s (took ${ms} ms)" '[ $ms -lt 3000 ]'
"$CUTEGEN" resume "$T/nogpu_run" >/dev/null 2>&1
rm -f "$T/nogpu"
"$CUTEGEN" run "$TASK" --backend builtin --device 3 --out "$T/dev3" >/dev/null 2>"$T/d3.err"
rc=$?
check "--device beyond the machine's GPUs: exit 4, says how many there are (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "no CUDA device 3: this machine has 1" "$T/d3.err" && [ ! -e "$T/dev3" ]'
# the real runner on a machine without a GPU says the same
if [ -n "$REAL_RUNNER" ] && [ -x "$REAL_RUNNER" ] &&
    "$REAL_RUNNER" --devices 2>/dev/null | grep -q '"devices": *\[\]'; then
    : >"$T/nvcc.log"
    CUTEGEN_RUNNER="$REAL_RUNNER" "$CUTEGEN" run kb1/19_relu --out "$T/real" >/dev/null 2>"$T/real.err"
    rc=$?
    check "the real runner, no GPU here: exit 4 'no CUDA device', nothing compiled (rc $rc)" \
        '[ $rc -eq 4 ] && grep -q "no CUDA device" "$T/real.err" && [ ! -s "$T/nvcc.log" ] && [ ! -e "$T/real" ]'
fi

# ---- the time line adds up ----
# time_ok FILE NAME: the parts of the summary's time line sum to its total; cutegen's own share
# is under 1 s; compiles made ahead are charged; evaluate is about the runner's 0.4 s a node
time_ok() {
    python3 - "$1" <<'PY'
import re, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("time "))
total = float(re.match(r"time\s+([\d.]+) s:", line).group(1))
parts = dict((k, float(v)) for k, v in re.findall(r"(llm|compile \(ahead, parallel\)|compile|evaluate|profile|cutegen) ([\d.]+) s", line))
want = {"llm", "compile", "compile (ahead, parallel)", "evaluate", "profile", "cutegen"}
errs = []
if set(parts) != want:
    errs.append("parts %s" % sorted(parts))
s = sum(parts.values())
if abs(s - total) > 0.35:
    errs.append("parts sum to %.1f, total %.1f" % (s, total))
if not 0 <= parts.get("cutegen", -1) < 1.0:
    errs.append("cutegen %s s" % parts.get("cutegen"))
if parts.get("compile (ahead, parallel)", 0) < 1.0:
    errs.append("compile ahead %s s" % parts.get("compile (ahead, parallel)"))
if not 1.2 <= parts.get("evaluate", 0) < 4.0:
    errs.append("evaluate %s s for 4 evaluations of 0.4 s" % parts.get("evaluate"))
if re.search(r"\(9\d%\)", line.split("cutegen")[1]):
    errs.append("cutegen near 100%")
print("; ".join(errs) or "ok", "|", line.strip())
sys.exit(1 if errs else 0)
PY
}
"$CUTEGEN" run "$TASK" --backend builtin --iters 4 --cache-dir "$T/c1" --out "$T/piped" >"$T/piped.out" 2>"$T/piped.err"
rc=$?
msg=$(time_ok "$T/piped.out")
check "piped: the time parts add up, compiles ahead charged, cutegen small (rc $rc: $msg)" '[ $rc -eq 0 ] && time_ok "$T/piped.out" >/dev/null'
if command -v script >/dev/null; then
    script -qec "\"$CUTEGEN\" run \"$TASK\" --backend builtin --iters 4 --cache-dir \"$T/c2\" --out \"$T/tty\"" /dev/null >"$T/tty.out" 2>&1
    rc=$?
    tr -d '\r' <"$T/tty.out" >"$T/tty.txt"
    msg=$(time_ok "$T/tty.txt")
    check "on a terminal: the same parts, adding up the same way (rc $rc: $msg)" '[ $rc -eq 0 ] && time_ok "$T/tty.txt" >/dev/null'
fi
"$CUTEGEN" show "$T/piped" >"$T/show.txt"
total=$(sed -n 's/^time: \([0-9.]*\) s total.*/\1/p' "$T/show.txt")
sumt=$(sed -n 's/^time  *\([0-9.]*\) s:.*/\1/p' "$T/piped.out")
check "show: the same total as the run's summary ($total vs $sumt) and the compiles ahead" \
    '[ -n "$total" ] && python3 -c "import sys; sys.exit(abs($total - $sumt) > 0.15)" && grep -q "compile (ahead, parallel) [1-9]" "$T/show.txt"'

# ---- work an environment error cut short is still counted ----
mkdir -p "$T/empty"
"$CUTEGEN" run "$TASK" --backend builtin --iters 4 --recorded-evals "$T/empty" --cache-dir "$T/c3" \
    --out "$T/cut" >"$T/cut.out" 2>"$T/cut.err"
rc=$?
check "a missing recorded evaluation stops the run: exit 4 (rc $rc)" '[ $rc -eq 4 ]'
check "the summary counts the compile the cut node made, and its time" \
    'grep -q "^nodes *0 (1 compiles" "$T/cut.out" && grep -q "cut short" "$T/cut.out" && ! grep -q "^time *0.0 s" "$T/cut.out"' || cat "$T/cut.out"
"$CUTEGEN" show "$T/cut" >"$T/cutshow.txt"
check "show reports the time that work took, not 0.0 s" \
    'grep -q "^time: [0-9.]* s total" "$T/cutshow.txt" && ! grep -q "^time: 0.0 s" "$T/cutshow.txt" && grep -q "cut short" "$T/cutshow.txt"' || cat "$T/cutshow.txt"
[ $fails -eq 0 ]
