#!/usr/bin/env bash
# The loop with real nvcc and runner reports recorded on the H200 (tests/data/loop_h200/, keyed by
# the sha256 of the kernel source; recorded by bench/eval_examples.sh on 2026-12-02): a reply
# that does not compile comes back as a parsed error, the fixed reply (the CuTe kernel the H200
# judged then, kept beside its reports: kernels/ has since been regenerated from the families)
# is judged by the H200's report, and the run's best carries the H200's measured speed.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CG=${CUTEGEN:-$REPO/build/cutegen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

python3 - "$REPO" "$tmp" <<'PY'
import json, sys
repo, tmp = sys.argv[1], sys.argv[2]
def whole(change, path):
    return {"reply": "Change: %s\n\n```cuda\n%s```\n" % (change, open(repo + "/" + path).read()), "stop": "end",
            "usage": {"in": 1000, "out": 500}}
with open(tmp + "/relu.jsonl", "w") as f:
    for r in (whole("first version", "bench/loop/relu_typo.cu"), whole("vectorized TiledCopy", "tests/data/loop_h200/relu_fp32.cu")):
        f.write(json.dumps(r) + "\n")
with open(tmp + "/gemm.jsonl", "w") as f:
    for r in (whole("first version", "bench/loop/gemm_typo.cu"), whole("cp.async pipeline, FMA TiledMMA", "tests/data/loop_h200/gemm_fp32_sm80.cu")):
        f.write(json.dumps(r) + "\n")
PY

run() { # name task
    "$CG" run "$2" --backend replay --replay "$tmp/$1.jsonl" --iters 2 --out "$tmp/run_$1" \
        --recorded-evals "$REPO/tests/data/loop_h200" --cache-dir "$tmp/cache" --json \
        >"$tmp/$1.json" 2>"$tmp/$1.log"
}
for pair in "relu kb1/19_relu" "gemm kb1/1_square_matmul"; do
    set -- $pair
    run "$1" "$2"; rc=$?
    summary=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); b = j.get("best") or {}
print(j.get("nodes"), b.get("node"), b.get("speedup"), b.get("roofline_fraction"))' "$tmp/$1.json" 2>/dev/null)
    read -r nodes best speedup roof <<<"$summary"
    if [ "$rc" = 0 ] && [ "$nodes" = 2 ] && [ "$best" = 2 ]; then ok "$1: compile error, then the H200-judged kernel is the best (node 2)"
    else bad "$1: exit $rc, summary '$summary': $(tail -5 "$tmp/$1.log")"; fi
    want=$(python3 -c 'import json,glob,sys
for p in glob.glob(sys.argv[1] + "/*.json"):
    r = json.load(open(p))
    if r["task"] == sys.argv[2]: print(r["metrics"]["speedup_vs_baseline"])' "$REPO/tests/data/loop_h200" "$2")
    if python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-9 else 1)' "$speedup" "$want" 2>/dev/null; then
        ok "$1: the best speedup is the H200's measured $want"
    else bad "$1: best speedup '$speedup', the H200 measured '$want'"; fi
    db="$tmp/run_$1/run.db"
    prompt=$(python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select request_json from llm_calls order by id").fetchall()
print(rows[1][0] if len(rows) > 1 else "")' "$db" 2>/dev/null)
    if printf '%s' "$prompt" | grep -q 'error' && printf '%s' "$prompt" | grep -q 'kernel.cu:[0-9]*'; then
        ok "$1: the second prompt carries the parsed compile error with its location"
    else bad "$1: the second prompt lacks the compile error"; fi
    if printf '%s' "$prompt" | grep -q 'CuTe reference material'; then
        ok "$1: the fix prompt carries retrieved CuTe documentation"
    else bad "$1: the fix prompt has no retrieved documentation"; fi
done
[ "$fails" -eq 0 ]
