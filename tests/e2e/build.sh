#!/usr/bin/env bash
# End-to-end: `cutegen build` with the real nvcc on small kernels: a clean CuTe kernel (compiled,
# then a cache hit), a broken one, one that breaks the policy, a compile past its deadline, and
# the exit codes of bad usage. Needs nvcc (no GPU). Prints "ok - X" / "not ok - X".
set -u
: "${CUTEGEN:?set CUTEGEN to the cutegen binary}" "${REPO:?set REPO to the repository root}"
K=$REPO/tests/data/kernels
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$work/cache
export TMPDIR=$work   # --no-cache builds land here
fail=0
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; fail=1; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - build e2e skipped: no nvcc"
    exit 0
fi

# 1. the clean CuTe kernel compiles into a .so that exports the entry point
t0=$(date +%s.%N)
out=$("$CUTEGEN" build "$K/ok_relu_cute.cu" --cache-dir "$cache" 2>&1); rc=$?
t1=$(date +%s.%N)
so=$(printf '%s\n' "$out" | head -1)
if [ $rc -eq 0 ] && [ -f "$so" ] && printf '%s' "$out" | grep -q '^compiled in '; then
    ok "clean CuTe kernel compiles ($(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s)"
else
    nok "clean CuTe kernel compiles" "rc=$rc" "$out"
fi
if nm -D "$so" 2>/dev/null | grep -q ' T cutegen_launch$' &&
   nm -D "$so" | grep -q ' cutegen_abi_version$'; then
    ok "the .so exports cutegen_launch and cutegen_abi_version"
else
    nok "the .so exports cutegen_launch" "$(nm -D "$so" 2>&1 | grep cutegen)"
fi

# 2. the same again: a cache hit, the same .so, fast
t0=$(date +%s.%N)
out2=$("$CUTEGEN" build "$K/ok_relu_cute.cu" --cache-dir "$cache" 2>&1); rc=$?
t1=$(date +%s.%N)
secs=$(echo "$t1 - $t0" | bc)
if [ $rc -eq 0 ] && [ "$(printf '%s\n' "$out2" | head -1)" = "$so" ] &&
   printf '%s' "$out2" | grep -q '^cache hit' && [ "$(echo "$secs < 1.0" | bc)" = 1 ]; then
    ok "second build is a cache hit ($(printf '%.3f' "$secs") s)"
else
    nok "second build is a cache hit" "rc=$rc secs=$secs" "$out2"
fi
json=$("$CUTEGEN" build "$K/ok_relu_cute.cu" --cache-dir "$cache" --json); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$json" | grep -q '"cache_hit": true' &&
   printf '%s' "$json" | grep -q '"stage": "done"'; then
    ok "--json reports the hit"
else
    nok "--json reports the hit" "rc=$rc" "$json"
fi
# the cache key names what is compiled, not where: a cache filled in one folder (the bundle
# carried to the GPU machine) serves another copied there
cp -r "$cache" "$work/cache_moved"
json=$("$CUTEGEN" build "$K/ok_relu_cute.cu" --cache-dir "$work/cache_moved" --json); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$json" | grep -q '"cache_hit": true'; then
    ok "a cache copied to another folder still hits"
else
    nok "a cache copied to another folder still hits" "rc=$rc" "$json"
fi

# 3. a broken kernel: exit 1, the first error with its line and the source around it
out=$("$CUTEGEN" build "$K/err_undefined.cu" --cache-dir "$cache" 2>&1); rc=$?
if [ $rc -eq 1 ] &&
   printf '%s' "$out" | grep -q 'err_undefined.cu:10:[0-9]*: error: identifier "scale_factor" is undefined' &&
   printf '%s' "$out" | grep -q '^>    10 | 		x\[i\] = v \* scale_factor;' &&
   printf '%s' "$out" | grep -q '^      7 | 	if (i < n) {' &&
   printf '%s' "$out" | grep -q "does not compile (nvcc exit"; then
    ok "broken kernel: exit 1, error at line 10 with the source around it"
else
    nok "broken kernel: exit 1 with a parsed error" "rc=$rc" "$out"
fi
out=$("$CUTEGEN" build "$K/err_undefined.cu" --cache-dir "$cache" 2>&1); rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q 'cached):' &&
   printf '%s' "$out" | grep -q '/err_undefined.cu:10:'; then
    ok "the failure is cached too"
else
    nok "the failure is cached too" "rc=$rc" "$out"
fi

# 4. policy: exit 1, the rule and the line, and nvcc never runs (a fake one would leave a mark)
cat >"$work/nvcc" <<EOS
#!/bin/sh
touch "$work/nvcc-ran"
exec nvcc "\$@"
EOS
chmod +x "$work/nvcc"
out=$("$CUTEGEN" build "$K/bad_policy_sync.cu" --cache-dir "$cache" --nvcc "$work/nvcc" 2>&1); rc=$?
if [ $rc -eq 1 ] && [ ! -e "$work/nvcc-ran" ] &&
   printf '%s' "$out" | grep -q "^line 16: rule 'no-sync': cudaDeviceSynchronize is not allowed" &&
   printf '%s' "$out" | grep -q "^line 4: rule 'include-allowlist': #include <fstream>" &&
   ! printf '%s' "$out" | grep -q "^line 14:"; then
    ok "policy violation: exit 1, rule and line named, nvcc not run"
else
    nok "policy violation" "rc=$rc nvcc-ran=$([ -e "$work/nvcc-ran" ] && echo yes)" "$out"
fi

# 5. the deadline
out=$("$CUTEGEN" build "$K/ok_relu_cute.cu" --no-cache --deadline 0.01 2>&1); rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "compile exceeded its deadline of 0.01 s"; then
    ok "a compile past --deadline is stopped with a clear message"
else
    nok "deadline" "rc=$rc" "$out"
fi

# 6. exit codes of usage, input and environment errors
"$CUTEGEN" build "$K/ok_relu_cute.cu" --arch sm_9x >/dev/null 2>&1; a=$?
"$CUTEGEN" build --frobnicate >/dev/null 2>&1; b=$?
"$CUTEGEN" build "$work/missing.cu" >/dev/null 2>&1; c=$?
"$CUTEGEN" build "$K/ok_relu_cute.cu" --no-cache --nvcc "$work/no-nvcc" >/dev/null 2>&1; d=$?
if [ "$a$b$c$d" = 2234 ]; then
    ok "exit codes: bad arch 2, bad flag 2, unreadable file 3, no nvcc 4"
else
    nok "exit codes" "arch=$a flag=$b file=$c nvcc=$d (want 2 2 3 4)"
fi
# eval and profile of a kernel file that is not there: bad input (exit 3), never the policy's
# verdict (build_kernel_file once returned the read failure as a policy rejection)
for sub in eval profile; do
    "$CUTEGEN" $sub "$work/no-such-kernel.cu" --task kb1/19_relu >"$work/missing.out" 2>"$work/missing.err"
    mrc=$?
    if [ $mrc -eq 3 ] && grep -q "cannot read kernel" "$work/missing.err" && ! grep -qi policy "$work/missing.out" "$work/missing.err"; then
        ok "$sub of a missing kernel file: exit 3, 'cannot read kernel', no policy verdict"
    else
        nok "$sub of a missing kernel file" "rc=$mrc: $(cat "$work/missing.out" "$work/missing.err" | head -3)"
    fi
done
exit $fail
