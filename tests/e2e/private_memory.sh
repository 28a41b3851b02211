#!/usr/bin/env bash
# cutegen's memory is private to it (src/cmd/main.c, keep_memory_private; docs/containment.md):
# a child of cutegen running as the same ordinary user (a candidate in the runner, a module's
# reference process, an LLM command) cannot read it through /proc/PPID/mem, where the API keys
# and the prompts are. Checked with a real `cutegen llm --llm-cmd` whose command is the reader,
# run as an unprivileged user (root could read any process whatever it set); and with
# CUTEGEN_DUMPABLE=1, which keeps cutegen attachable, the same reader finds the secret, so the
# check can fail.
set -u
: "${CUTEGEN:?}"
T=$(mktemp -d)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "ok - skipped: needs root and setpriv to run cutegen as an unprivileged user"; exit 0
fi
cat >"$T/peek.py" <<'PY'
import os
ppid = os.getppid()
try:
    maps = open("/proc/%d/maps" % ppid).read().splitlines()
    found = False
    mem = open("/proc/%d/mem" % ppid, "rb")
    for line in maps:
        if "[heap]" not in line and "rw-p" not in line:
            continue
        lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
        try:
            mem.seek(lo)
            found = found or b"sk-private-memory-check" in mem.read(min(hi - lo, 1 << 24))
        except OSError:
            pass
    print("read: the secret was %s" % ("found" if found else "not found"))
except OSError as e:
    print("denied: %s" % e)
PY
chmod 644 "$T/peek.py"
as_nobody() {
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T" "$@" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$CUTEGEN" llm \
        "the secret sk-private-memory-check" --llm-cmd "exec python3 $T/peek.py" 2>"$T/err"
}
out=$(as_nobody)
case "$out" in
    denied:*) ok "a child of cutegen cannot read cutegen's memory ($out)" ;;
    *) bad "a child of cutegen read cutegen's memory: $out $(cat "$T/err")" ;;
esac
out=$(as_nobody CUTEGEN_DUMPABLE=1)
case "$out" in
    "read: the secret was found") ok "with CUTEGEN_DUMPABLE=1 the same reader finds the secret (the check can fail)" ;;
    *) bad "with CUTEGEN_DUMPABLE=1 the reader should find the secret: $out $(cat "$T/err")" ;;
esac
[ $fails -eq 0 ]
