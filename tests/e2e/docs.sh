#!/usr/bin/env bash
# `cutegen docs` over the real CUTLASS headers in third_party/: index time, search ranking for a
# topic, and retrieval for recorded CuTe compile errors.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; echo "# output:"; sed 's/^/# /' "$tmp/out" | head -30; fi; }

if [ ! -f "$REPO/third_party/cutlass/include/cute/tensor.hpp" ]; then
    echo "not ok - docs: no CUTLASS headers in third_party (run make deps)"; exit 1
fi
db="$tmp/docs.db"
start=$(date +%s.%N)
"$CUTEGEN" docs index --out "$db" >"$tmp/out" 2>&1; rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "# index: $(cat "$tmp/out") ($secs s)"
check "docs index builds" '[ $rc -eq 0 ] && [ -s "$db" ]'
check "docs index takes under 20 s" '[ "$(echo "$secs < 20" | bc)" = 1 ]'
# the index is renamed into place: onto a symlink's target, never over a device or a FIFO
# (red team 1: `docs index --out DEVICE` as root replaced the device by the database)
mkdir -p "$tmp/real"; ln -s real/linked.db "$tmp/link.db"
"$CUTEGEN" docs index --out "$tmp/link.db" >"$tmp/out" 2>&1; rc=$?
check "docs index --out SYMLINK fills the target, the link stays" '[ $rc -eq 0 ] && [ -L "$tmp/link.db" ] && [ -s "$tmp/real/linked.db" ]'
mkfifo "$tmp/fifo.db"
timeout 60 "$CUTEGEN" docs index --out "$tmp/fifo.db" >"$tmp/out" 2>&1; rc=$?
check "docs index --out FIFO: exit 4, the FIFO stays (rc $rc)" '[ $rc -eq 4 ] && [ -p "$tmp/fifo.db" ] && grep -q "^error: cannot write the index to .*fifo.db.: it is a FIFO, not a regular file" "$tmp/out"'
if [ "$(id -u)" = 0 ]; then
    mknod "$tmp/dev.db" c 1 3
    "$CUTEGEN" docs index --out "$tmp/dev.db" >"$tmp/out" 2>&1; rc=$?
    check "docs index --out DEVICE: exit 4, the device stays (rc $rc)" '[ $rc -eq 4 ] && [ -c "$tmp/dev.db" ] && grep -q "it is a character device, not a regular file" "$tmp/out"'
fi

"$CUTEGEN" docs search --db "$db" "tiled copy predication" -n 8 >"$tmp/out" 2>&1; rc=$?
check "search finds the predication note" '[ $rc -eq 0 ] && head -40 "$tmp/out" | grep -q "^[1-5]\. docs/cute/03-tiled-copy.md:[0-9-]*  Predication"'
check "search finds the copy_if example" 'grep -q "^[1-8]\. examples/cute/tutorial/tiled_copy_if.cu" "$tmp/out"'
check "search finds cute/algorithm/copy.hpp" 'grep -q "^[1-8]\. cute/algorithm/copy.hpp" "$tmp/out"'

"$CUTEGEN" docs search --db "$db" make_tiled_copy -n 3 --json >"$tmp/out" 2>&1
check "an identifier ranks its declarations first" 'python3 -c "import json,sys; h=json.load(open(sys.argv[1])); sys.exit(0 if all(x[\"title\"]==\"make_tiled_copy\" for x in h[:2]) else 1)" "$tmp/out"'

"$CUTEGEN" docs search --db "$db" --error "$REPO/tests/data/errors/make_tiled_copy.txt" -n 3 >"$tmp/out" 2>&1
check "error retrieval: query starts with make_tiled_copy" 'grep -q "^query: make_tiled_copy " "$tmp/out"'
check "error retrieval: top chunk declares make_tiled_copy" 'grep -m1 "^1\. " "$tmp/out" | grep -q "  make_tiled_copy  "'

"$CUTEGEN" docs search --db "$db" --error "$REPO/tests/data/errors/partition_S.txt" -n 3 >"$tmp/out" 2>&1
check "error retrieval: top chunk declares partition_S (ThrCopy)" 'grep -m1 "^1\. " "$tmp/out" | grep -q "cute/atom/copy_atom.hpp:[0-9-]*  ThrCopy"'

XDG_CACHE_HOME="$tmp/cache" "$CUTEGEN" docs search "swizzle bank conflicts" -n 3 >"$tmp/out" 2>"$tmp/err"; rc=$?
check "search builds the default index on first use" '[ $rc -eq 0 ] && [ -s "$tmp/cache/cutegen/docs.db" ] && grep -q "built the docs index" "$tmp/err"'
XDG_CACHE_HOME="$tmp/cache" "$CUTEGEN" docs search "swizzle bank conflicts" -n 3 >"$tmp/out" 2>"$tmp/err"
check "a fresh default index is reused" '! grep -q "built the docs index" "$tmp/err" && grep -q "05-swizzle.md" "$tmp/out"'

"$CUTEGEN" docs search --db "$tmp/none.db" anything >"$tmp/out" 2>&1; rc=$?
check "a missing index is an environment error" '[ $rc -eq 4 ] && grep -q "cutegen docs index" "$tmp/out"'
exit $fail
