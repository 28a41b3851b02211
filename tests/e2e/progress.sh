#!/usr/bin/env bash
# Long work says what it is doing on a terminal and nothing when piped. A terminal is made with
# script(1) (util-linux); a fake nvcc (it sleeps) and a fake runner ($CUTEGEN_RUNNER) make the
# work take known time. Checks: `build` draws "compiling FILE (nvcc, ARCH) ... N s" on a
# terminal, not when piped nor with --quiet; `run`'s status line counts nodes against the
# builtin walk's plan (10 candidates), not the 64-node budget; `suite`'s ETA says "estimating"
# until a task has finished and never "0s" or "?" while tasks still run.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
command -v script >/dev/null || { echo "ok - skipped: no script(1) (util-linux) to make a terminal"; exit 0; }
# tty CMD OUT: runs the shell command CMD on a terminal; everything it drew, \r kept, in OUT
tty() { script -qec "$1" /dev/null >"$2" 2>&1; }

mkdir -p "$T/bin"
cat >"$T/bin/nvcc" <<SH
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.48 (fake)"; exit 0; }
s=\$(date +%s.%N)
sleep "\$(cat "$T/nvcc.sleep" 2>/dev/null || echo 0.3)"
echo "nvcc \$s \$(date +%s.%N)" >>"$T/times"
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && { : >"\$2"; exit 0; }; shift; done
exit 1
SH
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
[ "\$1" = --devices ] && { echo '{"devices":[{"index":0,"name":"Fake GPU","cc":"9.0"}]}'; exit 0; }
# the judge's report channel: a nonce on stdin, the report on the --report-fd pipe
fd=
while [ \$# -gt 0 ]; do [ "\$1" = --report-fd ] && fd=\$2; shift; done
read -r nonce
echo "runner \$(date +%s.%N)" >>"$T/times"
sleep 0.3
echo "phase report"
printf '{"verdict":"pass","message":"","nonce":"%s","metrics":{"ms":0.05,"speedup_vs_baseline":1.0,"roofline_fraction":0.6},"confined":true,"timing":{"trials":4,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":3,"sampled_checks":1}},"runner_s":0.3}\n' "\$nonce" >/dev/fd/\$fd
SH
chmod +x "$T/bin/nvcc" "$T/bin/cutegen-runner"
# The fake nvcc's object is empty: a fake objdump gives the object check a clean symbol table.
cat >"$T/bin/objdump" <<'SH'
#!/usr/bin/env bash
[ "$1" = -wtr ] && printf '\nSYMBOL TABLE:\n0000000000000000 g     F .text\t0000000000000010 cutegen_launch\n'
exit 0
SH
chmod +x "$T/bin/objdump"
export PATH="$T/bin:$PATH" NVCC="$T/bin/nvcc" CUTEGEN_RUNNER="$T/bin/cutegen-runner"
export CUTEGEN_BUILTIN_DIR="$REPO/tests/data/builtin" CUTEGEN_BUILD_JOBS=2
K="$REPO/kernels/relu_fp32.cu"
TASK="$REPO/tests/data/loop/relu_small.json"
C="\"$CUTEGEN\""

# ---- build ----
echo 2.5 >"$T/nvcc.sleep"
tty "$C build \"$K\" --cache-dir \"$T/b1\"" "$T/b_tty"
check "build on a terminal: says what it compiles and for how long" \
    'grep -aq "compiling .*relu_fp32.cu (nvcc, sm_90a) \.\.\. [12] s" "$T/b_tty"' || cat -A "$T/b_tty" | head -5
check "... and erases that line when done (the path follows on a clean line)" \
    'tr "\r" "\n" <"$T/b_tty" | grep -aq "^\(.\[K\)\?/.*\.so"'
"$CUTEGEN" build "$K" --cache-dir "$T/b2" >"$T/b_pipe" 2>&1
check "build piped: no progress line" '! grep -aq "compiling" "$T/b_pipe" && grep -q "compiled in" "$T/b_pipe"'
tty "$C build \"$K\" --cache-dir \"$T/b3\" --quiet" "$T/b_quiet"
check "build --quiet on a terminal: no progress line" '! grep -aq "compiling" "$T/b_quiet" && grep -aq "compiled in" "$T/b_quiet"'

# ---- run: node k/N of the walk ----
echo 0.2 >"$T/nvcc.sleep"
: >"$T/times"
tty "$C run \"$TASK\" --backend builtin --cache-dir \"$T/r1\" --out \"$T/run\"" "$T/r_tty"
tr '\r' '\n' <"$T/r_tty" | grep -ao 'node [0-9]*/[0-9]*' | sort -u >"$T/r_nodes"
check "run status line: node k/10 (the walk's 10 candidates), never k/64 nor past 10 ($(tr '\n' ' ' <"$T/r_nodes"))" \
    'grep -q "node 1/10" "$T/r_nodes" && grep -q "node 10/10" "$T/r_nodes" && ! grep -q "/64" "$T/r_nodes" && ! grep -q "node 1[1-9]/" "$T/r_nodes"'
# the stage's candidates compile in the background while the first are evaluated (before
# 2026-12-05 a node waited for the whole stage's compiles)
check "run: evaluations start while the stage's other candidates still compile" \
    'python3 -c "
import sys
c = [tuple(map(float, l.split()[1:])) for l in open(sys.argv[1]) if l.startswith(\"nvcc\")]
r = [float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith(\"runner\")]
sys.exit(0 if any(s < t < e for t in r for s, e in c) else 1)" "$T/times"'
check "run status line: says when a node waits for its candidate's compile (the stage's compiled in the background)" \
    'grep -aq "waiting for this candidate.s compile (8 of the stage.s 8 not yet built)" "$T/r_tty"'

# ---- suite: an honest ETA ----
printf '%s\n' "$TASK" "$TASK" "$TASK" >"$T/list.txt"
tty "$C suite \"$T/list.txt\" --gpus all --backend builtin --iters 3 --out \"$T/suite\"" "$T/s_tty"
tr '\r' '\n' <"$T/s_tty" | grep -a '^.*\[suite\]' >"$T/s_lines"
first=$(head -1 "$T/s_lines")
check "suite ETA: 'estimating' before any task finished ($first)" \
    'grep -q "0/3 done.*ETA estimating" "$T/s_lines"'
check "suite ETA: never '?', never '0s' while tasks still run" \
    '! grep -q "ETA ?" "$T/s_lines" && ! grep -q "[1-9] running.*ETA 0s" "$T/s_lines"' || grep "ETA" "$T/s_lines" | sort | uniq -c
check "suite ETA: a time once a task has finished" 'grep -q "[12]/3 done.*ETA [0-9]" "$T/s_lines"'
[ $fails -eq 0 ]
