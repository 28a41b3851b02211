#!/usr/bin/env bash
# Run ON THE GPU MACHINE: several bench/gpu_round.sh at once, one per line of a plan on stdin
# ("NAME VAR=VALUE ...": the round's settings, e.g. STEPS=classes ONLY='a b'), each into
# $OUT/NAME with its log in $OUT/NAME.log. They share one CUTEGEN_GPU_LOCK, so their nvcc
# compiles overlap on the machine's cores while their evaluations (timings, profiles, the
# reference process's prepare) take turns on the GPU. Lines starting with # are skipped; a line
# "after NAME VAR=VALUE ..." runs once NAME's round ends. Prints each round's tail, then packs
# $OUT into $OUT/all.tgz (no .so/.o) so the files come back as one.
#   OUT=DIR bash bench/gpu_parallel.sh <bench/plans/call1.txt
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT=dir}
export CUTEGEN_GPU_LOCK=${CUTEGEN_GPU_LOCK:-$OUT/gpu.lock}
declare -A pid
round() { # NAME SETTINGS
    mkdir -p "$OUT/$1"
    eval "env OUT=\"$OUT/$1\" $2 bash bench/gpu_round.sh" >"$OUT/$1.log" 2>&1
}
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
wait
for f in "$OUT"/*.log; do echo "== $(basename "$f" .log)"; tail -15 "$f"; done
tar -czf "$OUT/all.tgz" --exclude='*.so' --exclude='*.o' --exclude='*.a' --exclude=all.tgz -C "$OUT" . 2>/dev/null
