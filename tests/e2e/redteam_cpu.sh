#!/usr/bin/env bash
# The red-team kernels that can be caught without a GPU are caught here, in CI: every manifest
# entry expecting 'policy' gets that verdict from `cutegen eval` (exit 1, nvcc never run), and
# every other one passes the policy and compiles, so on a GPU the runner is what judges it.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CG=${CUTEGEN:-$REPO/build/cutegen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
python3 -c 'import json,sys; [print(e["file"], e["task"], e["expect"]) for e in json.load(open(sys.argv[1]))]' \
    "$REPO/tests/redteam/manifest.json" | sort -u -k1,1 > "$tmp/list"
while read -r file task expect; do
    k="$REPO/tests/redteam/$file"
    t="$REPO/$task"; [ -f "$t" ] || t=$task
    if [ "$expect" = policy ]; then
        "$CG" eval "$k" --task "$t" --json --cache-dir "$tmp/cache" >"$tmp/out.json" 2>"$tmp/err"
        rc=$?
        v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$tmp/out.json" 2>/dev/null)
        if [ "$rc" = 1 ] && [ "$v" = policy ] && ! grep -q '"build"' "$tmp/out.json"; then
            echo "ok - red team $file rejected by the policy before compiling"
        else
            echo "not ok - red team $file: exit $rc, verdict '$v' (want policy)"; fails=$((fails + 1))
        fi
    else
        if "$CG" build "$k" --cache-dir "$tmp/cache" >"$tmp/out" 2>&1; then
            echo "ok - red team $file passes the policy and compiles (the runner must judge it)"
        else
            echo "not ok - red team $file does not build: $(tail -3 "$tmp/out")"; fails=$((fails + 1))
        fi
    fi
done < "$tmp/list"
[ "$fails" -eq 0 ]
