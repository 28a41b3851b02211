#!/usr/bin/env bash
# Run ON THE GPU MACHINE (bench/gpu_session.sh builtin): the builtin agent over the kb1 and
# hopper suites (`cutegen suite SUITE --backend builtin`), every evaluation recorded, then the
# best kernel of softmax, log-softmax and the one-pass activations (Swish, Softsign, GELUs)
# against PyTorch eager in the same process (`cutegen eval --torch`, where torch is installed).
# Writes $OUT/bench_builtin.json: per task the verdict, speedup vs the baseline (cuBLASLt for
# GEMMs), fraction of the roofline (copy bandwidth for memory-bound ops), speedup vs eager, and
# which of issue #8's targets are met.
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT}"
# BUILTIN_SUITES: suites or task-list files (default "hopper kb1"); BUILTIN_ITERS: a cap on
# each run's nodes (one number, or one per suite in order, "-" for none; default: the walk's
# own end); BUILTIN_TIMEOUT: seconds per task;
# BUILTIN_PER_GPU: workers sharing each GPU (default 8: compiles overlap, evaluations take
# turns); BUILTIN_DEADLINE: seconds for each suite (one number, or one per suite in order),
# after which it is interrupted (^C: no new tasks, the running ones finish; a second ^C 20 s
# later stops them, the summary still written). While a suite runs, nvidia-smi samples the
# GPU's utilization every 0.5 s: the share of the wall time the GPU was busy. A suite whose
# summary is missing anyway (killed) is read from its suite.db.
SUITES=${BUILTIN_SUITES:-"hopper kb1"}
CUTEGEN=${CUTEGEN:-build/cutegen}
# COMMAND... under a deadline of $deadline seconds (none when empty): ^C at it, ^C again 20 s
# later, SIGKILL 20 s after that
under_deadline() {
    [ -n "$deadline" ] || { "$@"; return; }
    "$@" &
    local pid=$!
    ( sleep "$deadline"; kill -INT $pid; sleep 20; kill -INT $pid; sleep 20; kill -KILL $pid ) 2>/dev/null &
    local watch=$!
    wait $pid
    local rc=$?
    kill $watch 2>/dev/null
    return $rc
}
read -r -a DEADLINES <<<"${BUILTIN_DEADLINE:-}"
read -r -a ITERS <<<"${BUILTIN_ITERS:-}"
i=0
# BUILTIN_SUMMARY_ONLY=1: no suite is run, no eager comparison made; $OUT's are summarized again
RUN_SUITES=$SUITES
[ -z "${BUILTIN_SUMMARY_ONLY:-}" ] || RUN_SUITES=
for s in $RUN_SUITES; do
    start=$(date +%s)
    deadline=${DEADLINES[$i]:-${DEADLINES[0]:-}}
    iters=${ITERS[$i]:-${ITERS[0]:-}}
    [ "$iters" = - ] && iters=
    i=$((i + 1))
    name=$(basename "$s" .txt)
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 500 >"$OUT/util-$name.txt" 2>/dev/null &
    smi=$!
    under_deadline "$CUTEGEN" suite "$s" --out "$OUT/suite-$name" --json --backend builtin --gpus all \
        --per-gpu "${BUILTIN_PER_GPU:-8}" ${BUILTIN_TIMEOUT:+--task-timeout $BUILTIN_TIMEOUT} \
        --run-args "--record-evals $OUT/evals ${iters:+--iters $iters}" \
        >"$OUT/suite-$name.json" 2>"$OUT/suite-$name.log"
    echo "suite $s: rc $? in $(( $(date +%s) - start )) s"
    kill "$smi" 2>/dev/null
done
SUITES=$(for s in $SUITES; do basename "$s" .txt; done)
if [ -z "${BUILTIN_SUMMARY_ONLY:-}" ] && python3 -c "import torch" 2>/dev/null; then
    : >"$OUT/torch.jsonl"
    for s in $SUITES; do
        [ -f "$OUT/suite-$s.json" ] || continue
        python3 - "$OUT/suite-$s.json" <<'PY' | while read -r task dir; do
import json, sys
for r in json.load(open(sys.argv[1])).get("results", []):
    # eager PyTorch where it is a target (softmax) or the issue names a gain (one-pass fusions)
    if r.get("correct") and r["task"].startswith("kb1/") and any(
            k in r["task"] for k in ("softmax", "swish", "softsign", "gelu")):
        print(r["task"], r["run_dir"])
PY
            "$CUTEGEN" eval "$dir/best.cu" --task "$task" --torch --json 2>/dev/null |
                python3 -c "import json,sys; d=json.load(sys.stdin); m=d.get('report',d).get('metrics',{}); print(json.dumps({'task': '$task', 'speedup_vs_torch': m.get('speedup_vs_torch'), 'torch_ms': d.get('report',d).get('baseline',{}).get('torch_eager',{}).get('ms'), 'ms': m.get('ms')}))" \
                >>"$OUT/torch.jsonl" || true
        done
    done
fi
python3 - "$OUT" $SUITES <<'PY'
import json, os, subprocess, sys, datetime
out, suites = sys.argv[1], sys.argv[2:]
torch = {}
for line in open(os.path.join(out, "torch.jsonl")) if os.path.exists(os.path.join(out, "torch.jsonl")) else []:
    d = json.loads(line); torch[d["task"]] = d
rows, targets = [], {"met": [], "missed": []}
def target(task):
    if task.startswith("hopper/gemm_bf16_") or task.startswith("hopper/gemm_fp16_"):
        return ("speedup", 0.95) if task.split("_")[-1] in ("4096", "8192") else None
    if task.startswith("kb1/") and "diag" in task:
        return None  # memory-bound: its baseline is the copy roofline, not cuBLAS
    if task.startswith("kb1/") and "matmul" in task:
        return ("speedup", 1.0)
    if "softmax" in task:
        return ("speedup_vs_torch", 1.3)
    if task.startswith("kb1/") and not any(k in task for k in ("matvec", "scalar_mul")):
        return ("roofline_fraction", 0.95)
    return None
def from_db(path):
    """A killed suite's results from its store: the tasks as far as they got."""
    import sqlite3
    db = sqlite3.connect(path)
    res = [{"task": spec, "status": st, "correct": bool(ok), "best_ms": ms if ms >= 0 else None,
            "speedup": sp if sp >= 0 else None, "roofline_fraction": rf if rf >= 0 else None,
            "wall_s": w, "message": msg or ("still running when the suite was killed" if st == "running" else None)}
           for spec, st, ok, ms, sp, rf, w, msg in db.execute(
               "select spec, status, correct, best_ms, best_speedup, best_roof, wall_s, message from tasks order by id")]
    t0, t1 = db.execute("select min(started), max(finished) from tasks").fetchone()
    return {"results": res, "wall_s": (t1 - t0) if t0 and t1 else None,
            "done": sum(r["status"] == "done" for r in res), "failed": sum(r["status"] != "done" for r in res),
            "note": "no summary (the suite was killed): read from suite.db"}
for s in suites:
    p = os.path.join(out, f"suite-{s}.json")
    if not os.path.exists(p):
        continue
    try:
        d = json.load(open(p))
    except ValueError:
        d = from_db(os.path.join(out, f"suite-{s}", "suite.db"))
    for r in d.get("results", []):
        row = {k: r.get(k) for k in ("task", "status", "correct", "best_ms", "speedup",
                                     "roofline_fraction", "wall_s", "message")}
        row["speedup_vs_torch"] = torch.get(r["task"], {}).get("speedup_vs_torch")
        t = target(r["task"])
        if t:
            v = row.get(t[0])
            row["target"] = {"metric": t[0], "at_least": t[1], "met": bool(v and v >= t[1])}
            targets["met" if row["target"]["met"] else "missed"].append(r["task"])
        rows.append(row)
    util = [float(x) for x in open(os.path.join(out, f"util-{s}.txt")).read().split()
            if x.replace(".", "").isdigit()] if os.path.exists(os.path.join(out, f"util-{s}.txt")) else []
    rows.append({"suite": s, "wall_s": d.get("wall_s"), "geomean_speedup": d.get("geomean_speedup"),
                 "fast_p": d.get("fast_p"), "done": d.get("done"), "failed": d.get("failed"),
                 "note": d.get("note"),
                 "workers": len(d.get("workers", [])),
                 "gpu_busy_share": sum(util) / 100 / len(util) if util else None,
                 "gpu_util_samples": len(util)})
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
except OSError:  # summarizing elsewhere: the GPU session's record of its machine
    m = os.path.join(out, "machine.txt")
    gpu = open(m).read().splitlines()[1].split(",")[0] if os.path.exists(m) else "unknown"
json.dump({"date": datetime.date.today().isoformat(), "gpu": gpu,
           "command": " ".join("%s=%s" % (k, v) for k, v in sorted(os.environ.items())
                               if k.startswith("BUILTIN_")) + " OUT=$OUT bash bench/builtin_suite.sh",
           "commit": os.environ.get("CUTEGEN_COMMIT", ""), "results": rows, "targets": targets},
          open(os.path.join(out, "bench_builtin.json"), "w"), indent=1)
print("targets met: %d, missed: %d" % (len(targets["met"]), len(targets["missed"])))
PY
