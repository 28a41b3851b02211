#!/usr/bin/env bash
# How `task show MODULE.py` ends when the reference process misbehaves as a process, not in its
# protocol: with the FAKE reference of tests/data/modeval (as $CUTEGEN_PYTHON; its describe
# modes) a helper that escaped its process group (setsid) holding the pipes, one left in its
# group, a reply followed by no exit, 100 KB on stderr, death by SIGSEGV / SIGABRT, os._exit(0);
# and with the REAL reference (tools/reference.py over tests/fake_torch, numpy's torch) modules
# that keep python alive after the reply (a thread, an atexit handler), close the reply channel,
# print 100 KB, or crash in forward. Each time cutegen returns, within the deadline, with the
# description or a message that says what happened and what to do, and the exit status of the
# module's fault (3). Needs python3 with numpy (scripts/deps-test.sh installs it).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
cleanup() {
    local p
    for p in $(cat "$T/killme" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; echo "# output:"; sed 's/^/# /' "$T/out" | head -20; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json" FAKE_REF_DIR="$T"
echo "{}" >"$CUTEGEN_CONFIG"
. "$REPO/tests/data/modeval/fake_env.sh" # the fake python ($CUTEGEN_PYTHON) and $M

# show MODE [TIMEOUT]: `task show $M` with the fake reference in describe mode MODE; exit code
# in $rc, seconds in $took, output in $T/out. A hang fails the test at 60 s, not the suite.
show() {
    echo "$1" >"$T/describe.mode"
    rm -f "$T/escaped.pid"
    local t0; t0=$(date +%s)
    CUTEGEN_REFERENCE_TIMEOUT=${2:-30} timeout 60 "$CUTEGEN" task show "$M" >"$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - t0 ))
    [ -s "$T/escaped.pid" ] && echo "$(cat "$T/escaped.pid")" >>"$T/killme"
}
described() { [ $rc = 0 ] && grep -q "scale_shift" "$T/out"; }

show escape
check "a helper that left the process group holding the pipes: described, exit 0, in ${took}s (rc $rc)" \
    'described && [ $took -lt 15 ]'
show escape_hang 2
check "... and one whose reference never answers: killed at the deadline, exit 5 in ${took}s (rc $rc)" \
    '[ $rc = 5 ] && [ $took -lt 15 ] && grep -q "did not answer within 2 s and was killed" "$T/out"'
show helper
check "a helper left in the group holding the pipes: described in ${took}s, not a timeout (rc $rc)" \
    'described && [ $took -lt 15 ]'
show linger 3
check "a reply that arrived is used though the process never exits (rc $rc, ${took}s)" \
    'described && [ $took -lt 15 ]'
show flood
check "100 KB on stderr is no reply too large: described (rc $rc)" 'described'
show flood_fail
check "a failure after 100 KB on stderr quotes the end of stderr, exit 3 (rc $rc)" \
    '[ $rc = 3 ] && grep -q "FAKE LAST LINE" "$T/out"'
show segv
check "death by SIGSEGV: named, said to be a crash in the module or a library, exit 3 (rc $rc)" \
    '[ $rc = 3 ] && grep -q "died from SIGSEGV (signal 11) while describing it" "$T/out" && grep -q "a crash in the module.s own code or in a library it calls" "$T/out" && grep -q "run the module alone with .python3" "$T/out"'
show abort
check "death by SIGABRT: named, exit 3 (rc $rc)" '[ $rc = 3 ] && grep -q "died from SIGABRT (signal 6)" "$T/out"'
show exit0
check "exit 0 before replying: the module ended the process, exit 3 (rc $rc)" \
    '[ $rc = 3 ] && grep -q "exited with status 0 while describing it, before replying: the module, or a library it calls, ended the process" "$T/out"'

# ---- the real reference process over tests/fake_torch ----
if ! python3 -c "import numpy" 2>/dev/null; then
    echo "not ok - module_procs: python3 has no numpy (scripts/deps-test.sh installs it)"; exit 1
fi
unset CUTEGEN_PYTHON
export PYTHONPATH=$REPO/tests/fake_torch
# real MODULE_LINES FORWARD_LINE [TIMEOUT]: `task show` of a module x * 2 with these lines at
# import and this one first in forward
real() {
    { echo "import os, signal, sys, threading, time, atexit"; echo "import torch"
      echo "import torch.nn as nn"; echo "$1"
      printf 'class Model(nn.Module):\n    def forward(self, x):\n        %s\n        return x * 2\n' "$2"
      printf 'def get_inputs():\n    return [torch.randn(8, 8)]\ndef get_init_inputs():\n    return []\n'
    } >"$T/mod.py"
    local t0; t0=$(date +%s)
    CUTEGEN_REFERENCE_TIMEOUT=${3:-10} timeout 60 "$CUTEGEN" task show "$T/mod.py" >"$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - t0 ))
}
real "threading.Thread(target=lambda: time.sleep(30)).start()" "pass"
check "a module's thread that never ends does not keep the reference alive: described in ${took}s (rc $rc)" \
    '[ $rc = 0 ] && [ $took -lt 8 ]'
real "atexit.register(time.sleep, 30)" "pass"
check "nor does an atexit handler that sleeps: described in ${took}s (rc $rc)" '[ $rc = 0 ] && [ $took -lt 8 ]'
real "os.closerange(3, 1024)" "pass"
check "a module that closes the reply channel is told so, exit 3 (rc $rc)" \
    '[ $rc = 3 ] && grep -q "the module closed the reference process.s reply channel, a file descriptor it did not open" "$T/out"'
real "for i in range(1300): print('loading shard %04d ' % i + '.' * 60)" "pass"
check "a module that prints 100 KB at import is described (rc $rc)" '[ $rc = 0 ]'
real "import resource; resource.setrlimit(resource.RLIMIT_CORE, (0, 0))" "os.kill(os.getpid(), signal.SIGSEGV)"
check "a module that segfaults in forward: SIGSEGV named, exit 3 (rc $rc)" \
    '[ $rc = 3 ] && grep -q "died from SIGSEGV (signal 11) while describing it" "$T/out"'

[ $fails -eq 0 ]
