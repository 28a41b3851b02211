#!/usr/bin/env bash
# Run ON THE GPU MACHINE (issue 20's "table per class"): for each class of bench/classes.json
# (one task of our own choosing per workload class of the issue's table), the builtin agent's
# walk (`cutegen run TASK --backend builtin`), then its best kernel judged once more with the
# PyTorch baselines (`cutegen eval BEST --task TASK --torch --json`): builtin vs cuBLASLt (GEMMs)
# or the copy roofline (memory-bound ops), vs PyTorch eager and vs torch.compile, in one session.
# A class short of its target (GEMMs 1.0x the better of cuBLASLt and torch.compile, memory-bound
# 0.9 of the roofline) is profiled (`cutegen profile BEST --task TASK --json`; PROFILE=0: not):
# the row's "ncu" holds the bound and the summary.
# Writes $OUT/class_table.json and $OUT/class_table.md (and $OUT/classes/NAME/: task file, run,
# eval JSON, profile JSON).
#   OUT=DIR [BUDGET=seconds (default 1500)] [PER_TASK=seconds (default 240)] [ITERS=N]
#   [CLASSES=bench/classes.json] [ONLY="name1 name2" (in this order)] bash bench/class_table.sh
# BUDGET: no task is started once it is spent (those are marked "not run"); each task's walk
# gets at most PER_TASK seconds of nodes (--max-wall) and is killed 120 s after that.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT}
CUTEGEN=${CUTEGEN:-build/cutegen}
CLASSES=${CLASSES:-bench/classes.json}
BUDGET=${BUDGET:-1500}
PER_TASK=${PER_TASK:-240}
T0=$(date +%s)
mkdir -p "$OUT/classes"
: >"$OUT/class_rows.jsonl"
names=$(python3 - "$CLASSES" "$OUT/classes" <<'PY'
import json, os, sys
for c in json.load(open(sys.argv[1]))["classes"]:
    t = c["task"]
    name = t["name"].split("/")[-1]
    os.makedirs(os.path.join(sys.argv[2], name), exist_ok=True)
    json.dump(t, open(os.path.join(sys.argv[2], name, "task.json"), "w"), indent=1)
    json.dump(c["class"], open(os.path.join(sys.argv[2], name, "class.json"), "w"))
    print(name)
PY
) || { echo "error: cannot read $CLASSES" >&2; exit 2; }
# ONLY: those classes, in its order (the first ones run before a budget runs out)
for name in ${ONLY:-$names}; do
    d="$OUT/classes/$name"
    grep -qxF "$name" <<<"$names" || { echo "error: ONLY names '$name', no class of $CLASSES" >&2; continue; }
    left=$(( BUDGET - ($(date +%s) - T0) ))
    if [ "$left" -lt 60 ]; then
        python3 -c 'import json, sys; d = sys.argv[1]; print(json.dumps({"name": sys.argv[2], "class": json.load(open(d + "/class.json")), "task": json.load(open(d + "/task.json")), "status": "not run", "why": "time budget spent"}))' \
            "$d" "$name" >>"$OUT/class_rows.jsonl"
        echo "== $name: not run (budget spent)"; continue
    fi
    wall=$(( left - 60 < PER_TASK ? left - 60 : PER_TASK ))
    [ "$wall" -gt 10 ] || wall=10
    echo "== $name: builtin walk (up to $wall s of nodes)"
    s=$(date +%s)
    timeout -k 10 $(( wall + 120 )) "$CUTEGEN" run "$d/task.json" --backend builtin --max-wall "$wall" \
        ${ITERS:+--iters "$ITERS"} --out "$d/run" --json >"$d/run.json" 2>"$d/run.log"
    rc=$?
    walk_s=$(( $(date +%s) - s ))
    if [ -f "$d/run/best.cu" ]; then
        timeout -k 10 600 "$CUTEGEN" eval "$d/run/best.cu" --task "$d/task.json" --torch --json \
            >"$d/eval.json" 2>"$d/eval.log"
        # a class short of its target (GEMMs: 1.0x the better of cuBLASLt and torch.compile;
        # memory-bound: 0.9 of the copy roofline) gets Nsight Compute's view of the kernel
        if [ "${PROFILE:-1}" = 1 ] && python3 - "$d/eval.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1])).get("report") or {}
m = rep.get("metrics") or {}
if rep.get("verdict") != "pass":
    sys.exit(1)
if m.get("speedup_vs_cublas") is not None:
    worst = min(v for v in (m.get("speedup_vs_cublas"), m.get("speedup_vs_torch_compile")) if v is not None)
    sys.exit(0 if worst < 1.0 else 1)
sys.exit(0 if (m.get("roofline_fraction") or 0) < 0.9 else 1)
PY
        then
            timeout -k 10 300 "$CUTEGEN" profile "$d/run/best.cu" --task "$d/task.json" --json \
                >"$d/profile.json" 2>"$d/profile.log"
        fi
    fi
    python3 - "$d" "$name" "$rc" "$walk_s" >>"$OUT/class_rows.jsonl" <<'PY'
import json, os, sys
d, name, rc, walk_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
row = {"name": name, "class": json.load(open(os.path.join(d, "class.json"))),
       "task": json.load(open(os.path.join(d, "task.json"))), "run_rc": rc, "walk_s": walk_s}
try:
    run = json.load(open(os.path.join(d, "run.json")))
    best = run.get("best") or {}
    row["best_config"] = (best.get("source") or "").split("\n")[0][:200] if isinstance(best, dict) else None
    row["nodes"] = run.get("nodes")
except (OSError, ValueError):
    pass
try:
    ev = json.load(open(os.path.join(d, "eval.json")))
except (OSError, ValueError):
    ev = None
if ev is None:
    row["status"] = "no correct kernel" if rc != 124 else "walk timed out"
    try:  # the run's own last words: why it ended without a kernel
        errs = [l.strip() for l in open(os.path.join(d, "run.log")) if l.startswith("error:")]
        if errs:
            row["status"], row["why"] = "run failed", errs[-1][:400]
    except OSError:
        pass
else:
    rep = ev.get("report", ev)
    m = rep.get("metrics", {}) or {}
    b = rep.get("baseline", {}) or {}
    te = b.get("torch_eager", {}) or {}
    first = open(os.path.join(d, "run", "best.cu")).readline().strip()
    row.update(status=rep.get("verdict"), ms=m.get("ms"),
               cublaslt_ms=(b.get("cublaslt") or {}).get("median_ms"),
               vs_cublaslt=m.get("speedup_vs_cublas"), roofline_fraction=m.get("roofline_fraction"),
               eager_ms=te.get("ms"), vs_eager=m.get("speedup_vs_torch"),
               compile_ms=te.get("compile_ms"), vs_compile=m.get("speedup_vs_torch_compile"),
               compile_mode=te.get("compile_mode"),
               torch_error=te.get("error") or te.get("compile_error"), kernel=first[:300])
    try:
        prof = json.load(open(os.path.join(d, "profile.json")))
        row["ncu"] = {"bound": prof.get("bound"), "summary": prof.get("summary")}
    except (OSError, ValueError):
        pass
print(json.dumps(row))
PY
    tail -1 "$OUT/class_rows.jsonl" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("   ", r.get("status"), r.get("why") or {k: r.get(k) for k in ("ms", "vs_cublaslt", "roofline_fraction", "vs_eager", "vs_compile")})'
done
python3 - "$OUT" "$(date -u +%FT%TZ)" "$(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, os, subprocess, sys
out, when, commit = sys.argv[1:4]
rows = [json.loads(l) for l in open(os.path.join(out, "class_rows.jsonl")) if l.strip()]
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()[0]
except (OSError, IndexError):
    gpu = "unknown"
json.dump({"date": when, "gpu": gpu, "commit": commit,
           "note": "shapes are bench/classes.json's own picks per class, not the issue's; one session",
           "rows": rows}, open(os.path.join(out, "class_table.json"), "w"), indent=1)
def x(v):
    return "%.2fx" % v if isinstance(v, (int, float)) else "-"
def f(v, fmt="%.4f"):
    return fmt % v if isinstance(v, (int, float)) else "-"
with open(os.path.join(out, "class_table.md"), "w") as md:
    md.write("# builtin agent per workload class (%s, %s, commit %s)\n\n" % (gpu, when, commit))
    md.write("Speedups are builtin's: >1 means the builtin kernel is faster. Memory-bound ops have "
             "no cuBLASLt figure; their ceiling is the copy roofline.\n\n")
    md.write("| class | task | verdict | builtin ms | cuBLASLt ms | vs cuBLASLt | roofline | "
             "vs eager | vs torch.compile | walk s |\n|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        t = r.get("task") or {}
        shape = t.get("shape") or [t.get("m"), t.get("n"), t.get("k")]
        mode = " (%s)" % r["compile_mode"] if r.get("compile_mode") and r.get("vs_compile") else ""
        md.write("| %s | %s %s %s | %s | %s | %s | %s | %s | %s | %s%s | %s |\n" % (
            r.get("class", ""), r["name"], t.get("dtype", ""), "x".join(str(v) for v in shape if v),
            r.get("status"), f(r.get("ms")), f(r.get("cublaslt_ms")), x(r.get("vs_cublaslt")),
            f(r.get("roofline_fraction"), "%.2f"), x(r.get("vs_eager")), x(r.get("vs_compile")), mode,
            r.get("walk_s", "-")))
    for r in rows:
        if r.get("ncu"):
            md.write("\n## %s below target: Nsight Compute (%s)\n\n```\n%s```\n" % (
                r["name"], r["ncu"].get("bound"), r["ncu"].get("summary") or ""))
print(open(os.path.join(out, "class_table.md")).read())
PY
