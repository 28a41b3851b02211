#!/usr/bin/env bash
# Run ON THE GPU MACHINE: several bench/gpu_round.sh at once, one per line of a plan on stdin
# ("NAME VAR=VALUE ...": the round's settings, e.g. STEPS=classes ONLY='a b'), each into
# $OUT/NAME with its log in $OUT/NAME.log. They share one CUTEGEN_GPU_LOCK, so their nvcc
# compiles overlap on the machine's cores while their evaluations (timings, profiles, the
# reference process's prepare) take turns on the GPU. Lines starting with # are skipped; a line
# "after NAME VAR=VALUE ..." runs once NAME's round ends. Prints each round's tail, then packs
# the rounds' files into $OUT/all.tgz (no .so/.o), the one file in $OUT: a device call returns
# only a few files of a folder. The rounds work in $WORK (default /tmp/gpu_work), and the pack
# is also written at PACK_AT seconds (default 560), so a call that runs past its limit still
# brings back what was done by then.
#   OUT=DIR [PACK_AT=s] bash bench/gpu_parallel.sh <bench/plans/call1.txt
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT=dir}
WORK=${WORK:-/tmp/gpu_work}
mkdir -p "$OUT" "$WORK"
export CUTEGEN_GPU_LOCK=${CUTEGEN_GPU_LOCK:-$WORK/gpu.lock}
declare -A pid
round() { # NAME SETTINGS
    mkdir -p "$WORK/$1"
    eval "env OUT=\"$WORK/$1\" $2 bash bench/gpu_round.sh" >"$WORK/$1.log" 2>&1
}
pack() {
    tar -czf "$OUT/all.tgz.tmp" --exclude='*.so' --exclude='*.o' --exclude='*.a' -C "$WORK" . 2>/dev/null
    mv "$OUT/all.tgz.tmp" "$OUT/all.tgz"
}
( sleep "${PACK_AT:-560}"; pack ) >/dev/null 2>&1 &
packer=$!
while read -r name rest; do
    case "$name" in ''|'#'*) continue ;; esac
    if [ "$name" = after ]; then
        read -r first settings <<<"$rest"
        after=${pid[$first]:?"plan: 'after $first' names no round above"}
        name="$first+"
        ( while kill -0 "$after" 2>/dev/null; do sleep 2; done; round "$name" "$settings" ) &
    else
        round "$name" "$rest" &
    fi
    pid[$name]=$!
done
for p in "${pid[@]}"; do wait "$p"; done
pkill -P "$packer" 2>/dev/null; kill "$packer" 2>/dev/null
for f in "$WORK"/*.log; do echo "== $(basename "$f" .log)"; tail -15 "$f"; done
pack
