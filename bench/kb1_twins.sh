#!/usr/bin/env bash
# Run ON THE GPU MACHINE (issue 18, "the kb1 JSON tasks and their module twins give the same
# verdicts and figures within noise"): for every task of kb1, the builtin family's start kernel
# (`cutegen builtin kb1/X --source`) judged twice in one session, against the JSON task and
# against its KernelBench-format twin tasks/kb1_modules/X_*.py (which lowers to the same op
# through the reference process), the two evaluations of a task back to back.
# Writes $OUT/kb1_twins.json (one row a task: both verdicts, both times, their ratio) and prints
# a table; closes with "N passed, N failed" (a task passes when both verdicts agree and the two
# times are within TOL, default 0.05, of each other).
#   OUT=DIR [TOL=0.05] [ONLY="19_relu 23_softmax"] [BUILD=build] bash bench/kb1_twins.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT=dir}
CG="$PWD/${BUILD:-build}/cutegen"
TOL=${TOL:-0.05}
mkdir -p "$OUT/kb1_twins"
D="$OUT/kb1_twins"
names=$(python3 -c 'import json; print(" ".join(t["name"].split("/")[1] for t in json.load(open("tasks/kb1.json"))["tasks"]))')
[ -z "${ONLY:-}" ] || names=$ONLY
# every start kernel built first, in parallel (the compile cache serves both evaluations)
for n in $names; do
    ( "$CG" builtin "kb1/$n" --source >"$D/$n.cu" 2>"$D/$n.src.err" &&
      "$CG" build "$D/$n.cu" --quiet >/dev/null 2>"$D/$n.build.err" ) &
done
wait
: >"$D/rows.jsonl"
for n in $names; do
    num=${n%%_*}
    mod=$(ls tasks/kb1_modules/"${num}"_*.py 2>/dev/null | head -1)
    for side in json module; do
        if [ "$side" = json ]; then t="kb1/$n"; else t=$mod; fi
        if [ -z "$t" ]; then echo '{"verdict":"no-module-twin"}' >"$D/$n.$side.json"; continue; fi
        "$CG" eval "$D/$n.cu" --task "$t" --json >"$D/$n.$side.json" 2>"$D/$n.$side.err"
    done
    python3 - "$n" "$D/$n.json.json" "$D/$n.module.json" "$mod" "$TOL" >>"$D/rows.jsonl" <<'PY'
import json, sys
n, a, b, mod, tol = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
def load(p):
    try:
        d = json.load(open(p))
    except Exception as e:
        return {"verdict": "no-json"}, None
    return d, ((d.get("report") or {}).get("metrics") or {}).get("ms")
da, ma = load(a)
db, mb = load(b)
ratio = mb / ma if ma and mb else None
same = da.get("verdict") == db.get("verdict")
ok = same and (ratio is None or abs(ratio - 1) <= tol)
print(json.dumps({"task": "kb1/" + n, "module": mod, "verdict_json": da.get("verdict"),
                  "verdict_module": db.get("verdict"), "ms_json": ma, "ms_module": mb,
                  "module_over_json": ratio, "agree": ok,
                  "module_task": db.get("task"), "message_module": (db.get("message") or "")[:200]}))
PY
    tail -1 "$D/rows.jsonl"
done
python3 - "$D/rows.jsonl" "$OUT/kb1_twins.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump({"rows": rows}, open(sys.argv[2], "w"), indent=1)
p = sum(1 for r in rows if r["agree"])
for r in rows:
    f = lambda v: "%.4g" % v if isinstance(v, (int, float)) else "-"
    print("%s %-34s %-8s %-8s %8s %8s %6s" % ("ok    " if r["agree"] else "not ok", r["task"], r["verdict_json"],
          r["verdict_module"], f(r["ms_json"]), f(r["ms_module"]), f(r["module_over_json"])))
print("%d passed, %d failed" % (p, len(rows) - p))
PY
