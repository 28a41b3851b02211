#!/usr/bin/env bash
# End-to-end tests of the CLI's task commands against the real binary ($CUTEGEN):
# listing suites, showing and checking tasks, and the exit codes and messages of bad input.
set -u
CUTEGEN=${CUTEGEN:-$(cd "$(dirname "$0")/../.." && pwd)/build/cutegen}
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=1; }
# check WHAT CONDITION...: runs the condition, prints ok/not ok
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# run ARGS...: sets $out, $err, $rc
run() { "$CUTEGEN" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }

# --- listing
run tasks
check "tasks exits 0" test "$rc" -eq 0
n_kb1=$(grep -c '^kb1/' "$tmp/out")
n_hop=$(grep -c '^hopper/' "$tmp/out")
check "tasks lists 33 kb1 tasks (got $n_kb1)" test "$n_kb1" -eq 33
check "tasks lists 12 hopper tasks (got $n_hop)" test "$n_hop" -eq 12
n_llm=$(grep -c '^llm/' "$tmp/out")
check "tasks lists the 54 llm tasks (got $n_llm)" test "$n_llm" -eq 54
check "tasks shows an llm decode GEMM with B as nn.Linear holds it" grep -q '^llm/llama8b_qkv_m1  *gemm  *bf16  *bf16  *M=1 N=6144 K=4096 B^T$' "$tmp/out"
check "tasks has a header" grep -q '^NAME  *OP  *DTYPE  *PRECISION  *SHAPE' "$tmp/out"
check "tasks names the module suites beside it (tasks/modules/level1, level2, kb1_modules)" \
    sh -c "grep -q '^Module suites' '$tmp/out' && grep -q 'tasks/modules/level1 .* [0-9][0-9]* modules\$' '$tmp/out' && grep -q 'tasks/kb1_modules .* 33 modules\$' '$tmp/out'"
check "tasks shows relu's shape" grep -q '^kb1/19_relu  *elementwise:relu  *fp32  *strict  *4096x393216$' "$tmp/out"
for id in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 88; do
    grep -q "^kb1/${id}_" "$tmp/out" || bad "kb1 task $id listed"
done

run tasks --suite hopper
check "tasks --suite hopper lists only hopper" test "$rc" -eq 0 -a "$(grep -c '^hopper/' "$tmp/out")" -eq 12 -a "$(grep -c '^kb1/' "$tmp/out")" -eq 0

run tasks --suite llm
check "tasks --suite llm lists only llm" test "$rc" -eq 0 -a "$(grep -c '^llm/' "$tmp/out")" -eq 54 -a "$(grep -c '^kb1/\|^hopper/' "$tmp/out")" -eq 0

run tasks --json
check "tasks --json is a JSON array of 99" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert isinstance(a, list) and len(a) == 99, len(a)
assert all(set(["name", "op", "dtype", "precision", "shape"]) <= set(t) for t in a)
assert a[0]["name"] == "kb1/1_square_matmul" and a[0]["flops"] == 2 * 4096**3
' "$tmp/out"

run tasks --suite kb2
check "unknown suite exits 2 naming the suites" test "$rc" -eq 2
check "unknown suite message" grep -q "^error: no suite 'kb2' (suites: kb1, hopper, llm, or a directory of module files)" "$tmp/err"

run tasks --jsn
check "bad flag exits 2" test "$rc" -eq 2
check "bad flag message" grep -q "^error: unknown option '--jsn'" "$tmp/err"

run tasks --suite
check "flag without value exits 2" test "$rc" -eq 2 -a -n "$err"

# --- task show
run task show kb1/23_softmax --json
check "task show --json exits 0" test "$rc" -eq 0
check "task show --json is the softmax spec" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert t["name"] == "kb1/23_softmax", t["name"]
assert t["op"] == "softmax" and t["shape"] == [4096, 393216], t
assert t["dtype"] == "fp32" and t["precision"] == "strict"
assert t["distributions"] == ["uniform", "normal", "large"] and t["seeds"] == 2
' "$tmp/out"

run task show kb1/16
check "task show by number" test "$rc" -eq 0
check "task show lists A transposed in ABI order" grep -Eq '^  in   A +fp32 +\[8192, 2048\]' "$tmp/out"
check "task show lists the output" grep -Eq '^  out  C +fp32 +\[2048, 4096\]' "$tmp/out"
check "task show prints the work" grep -q '^work *137.4 GFLOP' "$tmp/out"

run task show hopper/gemm_bf16_4096_bias_relu
check "task show lists the bias" grep -Eq '^  in   bias +bf16 +\[4096\]' "$tmp/out"

# the canonical JSON round-trips through a file
"$CUTEGEN" task show kb1/20_leaky_relu --json >"$tmp/leaky.json"
run task show "$tmp/leaky.json" --json
check "canonical JSON reads back to itself" cmp -s "$tmp/out" "$tmp/leaky.json"

run task show kb1/999
check "unknown built-in exits 3" test "$rc" -eq 3
check "unknown built-in message" grep -q "^error: no built-in task 'kb1/999'" "$tmp/err"

run task show
check "task show without a name exits 2" test "$rc" -eq 2

run task frob
check "unknown task subcommand exits 2" test "$rc" -eq 2 -a -n "$err"

# --- task check
cat >"$tmp/good.json" <<'J'
{"name": "my/gemm", "op": "gemm", "dtype": "bf16", "m": 100, "n": 200, "k": 64,
 "epilogue": {"bias": true, "activation": "relu"}}
J
cat >"$tmp/broken.json" <<'J'
{"name": "my/broken", "op": "gemm", "m": -3, "n": 4, "k": 4}
J
cat >"$tmp/typo.json" <<'J'
{"op": "elementwise", "shape": [8, 8], "activaton": "relu"}
J
printf '{\n  "op": "gemm",\n  "m": 4\n' >"$tmp/trunc.json"

run task check "$tmp/good.json"
check "good file checks ok" test "$rc" -eq 0
check "good file prints ok" grep -q "^ok .*good.json (task 'my/gemm', gemm)" "$tmp/out"

run task check "$tmp/broken.json"
check "broken file exits 3" test "$rc" -eq 3
check "broken file: one line naming the field" test "$(wc -l <"$tmp/err")" -eq 1
check "broken file message" grep -qx "error: task 'my/broken': field 'm' must be a positive integer (got -3)" "$tmp/err"

run task check "$tmp/typo.json"
check "typo names the unknown field" grep -q "^error: task 'typo': unknown field 'activaton'; did you mean 'activation'?" "$tmp/err"

run task check "$tmp/trunc.json"
check "bad JSON exits 3 with a position" test "$rc" -eq 3
check "bad JSON message" grep -q "^error: task file '.*trunc.json': invalid JSON at line 4" "$tmp/err"

run task check "$tmp/good.json" "$tmp/broken.json" "$tmp/missing.json"
check "mixed files exit 3" test "$rc" -eq 3
check "mixed files: one ok, two errors" test "$(grep -c '^ok ' "$tmp/out")" -eq 1 -a "$(grep -c '^error: ' "$tmp/err")" -eq 2
check "missing file message" grep -q "^error: cannot read task file '.*missing.json': No such file or directory" "$tmp/err"

run task show "$tmp/broken.json"
check "task show of a broken file exits 3" test "$rc" -eq 3

# --- input paths that are no file: refused at once, never waited on (red team 6: `task check
# FIFO` hung in open() for a writer); a pipe something writes to is read (/dev/stdin, <(...))
# trun ARGS...: run under a deadline, so that a regression fails instead of hanging
trun() { timeout 20 "$CUTEGEN" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
mkfifo "$tmp/fifo"
for c in "task check" "task show" "eval k.cu --task" "run" "build"; do
    trun $c "$tmp/fifo"
    check "$c FIFO: exit 3 at once, saying it is a FIFO (rc $rc)" sh -c "[ $rc -eq 3 ] && grep -q \
        \"^error: cannot read .*fifo': it is a FIFO with no process writing to it, not a regular file\" '$tmp/err'"
done
trun suite "$tmp/fifo" --out "$tmp/suite_out"
check "suite FIFO: exit 3 at once (rc $rc)" test "$rc" -eq 3
trun llm --backend replay --replay "$tmp/fifo" hello
check "llm --replay FIFO: exit 3 at once (rc $rc)" test "$rc" -eq 3
check "the FIFO is still one" test -p "$tmp/fifo"
trun task check "$tmp"
check "task check DIRECTORY says so (rc $rc)" grep -q "^error: cannot read task file '.*': it is a directory, not a regular file" "$tmp/err"
trun task check /dev/zero
check "task check /dev/zero: exit 3, a device (rc $rc)" sh -c "[ $rc -eq 3 ] && grep -q \"it is a character device, not a regular file\" '$tmp/err'"
timeout 20 "$CUTEGEN" task check /dev/stdin <"$tmp/good.json" >"$tmp/out" 2>&1; rc=$?
check "task check /dev/stdin of a file (rc $rc)" test "$rc" -eq 0
cat "$tmp/good.json" | timeout 20 "$CUTEGEN" task check /dev/stdin >"$tmp/out" 2>&1; rc=$?
check "task check /dev/stdin of a pipe (rc $rc)" test "$rc" -eq 0
trun task check <(cat "$tmp/good.json")
check "task check <(...) (rc $rc)" test "$rc" -eq 0

# --- encodings (red team 14): a UTF-8 byte order mark is skipped; UTF-16 and NULs are named
printf '\xef\xbb\xbf' | cat - "$tmp/good.json" >"$tmp/bom.json"
run task check "$tmp/bom.json"
check "a UTF-8 BOM is accepted (rc $rc)" grep -q "^ok .*bom.json (task 'my/gemm', gemm)" "$tmp/out"
python3 -c 'import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "wb").write(t.encode("utf-16"))' "$tmp/good.json" "$tmp/u16.json"
run task check "$tmp/u16.json"
check "UTF-16 is named (rc $rc)" grep -qx "error: task file '.*u16.json' is UTF-16 (little-endian); save it as UTF-8" "$tmp/err"
{ head -c 20 "$tmp/good.json"; printf '\0'; tail -c +21 "$tmp/good.json"; } >"$tmp/nul.json"
run task check "$tmp/nul.json"
check "a NUL byte is named with its offset (rc $rc)" grep -qx "error: task file '.*nul.json' has a NUL byte at offset 20; save it as UTF-8 text" "$tmp/err"

# --- help and dispatch
run help tasks
check "help tasks" test "$rc" -eq 0 -a -n "$out"
check "help tasks shows usage" grep -q '^usage: cutegen tasks' "$tmp/out"
run tasks --help
check "tasks --help shows usage" grep -q '^usage: cutegen tasks' "$tmp/out"
run help task
check "help task shows usage" grep -q '^usage: cutegen task show' "$tmp/out"

run frobnicate
check "unknown command exits 2" test "$rc" -eq 2
check "unknown command message" grep -q "^error: 'frobnicate' is not a cutegen command" "$tmp/err"

exit $failed
