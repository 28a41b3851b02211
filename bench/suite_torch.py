#!/usr/bin/env python3
"""A finished suite's best kernels against PyTorch eager and torch.compile (issue 20).

usage: suite_torch.py SUITE_DIR [--cutegen PATH] [--json OUT.json] [--device N] [--deadline S]

For every task of SUITE_DIR/suite.db that ended with a correct kernel, runs
`cutegen eval RUN_DIR/best.cu --task SPEC --torch --json` (the runner's protocol for the kernel
and cuBLASLt, tools/torch_eager.py for eager and torch.compile, one process each, on one GPU),
then prints a table per task and fast_p (the share of ALL the suite's tasks that are correct
and faster than the baseline by more than p) against cuBLASLt, PyTorch eager and torch.compile,
each over the tasks where that figure is present. --deadline S: no evaluation is started after S
seconds; the tasks left are marked "not evaluated" and fast_p is over the tasks evaluated (the
count says so). Needs a GPU and python3 with torch.

`cutegen suite ... --torch` now does this inside the suite: each run judges its best kernel
with the PyTorch baselines when it ends, and the suite's own summary (--json, the printed one,
suite.db, `cutegen report SUITE_DIR`) has fast_p against eager and torch.compile over ALL tasks
(docs/suite.md). Use this script only for a suite that ran without --torch (it re-evaluates the
best kernels afterwards), or to re-measure them later; note its fast_p thresholds (0, 0.9, 1,
1.5, 2) differ from the suite's (0, 0.5, 1, 1.5, 2, 3).
"""
import json
import os
import sqlite3
import subprocess
import sys
import time

THRESHOLDS = (0.0, 0.9, 1.0, 1.5, 2.0)


def fast_p(values, ntasks, p):
    """Share of ntasks whose speedup is present and > p (p = 0: present at all)."""
    return sum(1 for v in values if v is not None and (p == 0 or v > p)) / ntasks if ntasks else 0.0


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    suite = argv[1]
    cutegen = argv[argv.index("--cutegen") + 1] if "--cutegen" in argv else "cutegen"
    out = argv[argv.index("--json") + 1] if "--json" in argv else None
    dev = argv[argv.index("--device") + 1] if "--device" in argv else "0"
    deadline = float(argv[argv.index("--deadline") + 1]) if "--deadline" in argv else None
    t0 = time.time()
    db = os.path.join(suite, "suite.db")
    if not os.path.exists(db):
        print("error: %s has no suite.db: give the directory `cutegen suite --out` wrote" % suite,
              file=sys.stderr)
        return 3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = con.execute("select id, spec, run_dir, status, correct from tasks order by id").fetchall()
    results = []
    for tid, spec, run_dir, status, correct in rows:
        r = {"id": tid, "task": spec, "correct": bool(status == "done" and correct)}
        if not os.path.isdir(run_dir):  # a suite moved since: its runs/ beside suite.db
            run_dir = os.path.join(suite, "runs", os.path.basename(run_dir))
        best = os.path.join(run_dir, "best.cu")
        if deadline is not None and time.time() - t0 > deadline:
            r["not_evaluated"] = "deadline"
        elif r["correct"] and os.path.exists(best):
            p = subprocess.run([cutegen, "eval", best, "--task", spec, "--torch", "--json",
                                "--device", dev], capture_output=True, text=True)
            try:
                d = json.loads(p.stdout)
            except ValueError:
                d = {}
            rep = d.get("report", d)
            m = rep.get("metrics", {})
            te = rep.get("baseline", {}).get("torch_eager", {})
            r.update(verdict=rep.get("verdict"), ms=m.get("ms"),
                     cublas=m.get("speedup_vs_cublas", m.get("speedup_vs_baseline")),
                     eager=m.get("speedup_vs_torch"), compile=m.get("speedup_vs_torch_compile"),
                     compile_mode=te.get("compile_mode"),
                     torch_error=te.get("error") or te.get("compile_error"))
            if r["verdict"] != "pass":
                r["correct"] = False
        results.append(r)

    def fmt(v):
        return "%.3fx" % v if isinstance(v, (int, float)) else "-"
    print("| task | ms | vs cuBLASLt | vs eager | vs torch.compile |")
    print("| --- | --- | --- | --- | --- |")
    for r in results:
        if r.get("not_evaluated"):
            print("| %s | not evaluated (deadline) | - | - | - |" % r["task"])
            continue
        if not r["correct"]:
            print("| %s | no correct kernel | - | - | - |" % r["task"])
            continue
        mode = " (%s)" % r["compile_mode"] if r.get("compile_mode") and r.get("compile") else ""
        print("| %s | %s | %s | %s | %s%s |" % (r["task"], "%.4f" % r["ms"] if r.get("ms") else "-",
                                               fmt(r.get("cublas")), fmt(r.get("eager")),
                                               fmt(r.get("compile")), mode))
    results_all = results
    results = [r for r in results if not r.get("not_evaluated")]
    n = len(results)
    if n < len(results_all):
        print("%d of %d tasks evaluated before the deadline: fast_p is over those" % (n, len(results_all)))
    summary = {"tasks": len(results_all), "evaluated": n}
    for key, name in (("cublas", "cuBLASLt"), ("eager", "PyTorch eager"),
                      ("compile", "torch.compile")):
        vals = [r.get(key) if r["correct"] else None for r in results]
        have = sum(1 for v in vals if v is not None)
        summary[key] = {"tasks_with_figure": have,
                        "fast_p": {str(p): fast_p(vals, n, p) for p in THRESHOLDS}}
        if have:
            print("fast_p vs %-14s (%d of %d tasks with a figure): %s" % (
                name, have, n, ", ".join("fast_%g %.2f" % (p, fast_p(vals, n, p)) for p in THRESHOLDS)))
        else:
            print("fast_p vs %-14s: no figure (no torch, or torch.compile failed everywhere)" % name)
    if out:
        json.dump({"tasks": results_all, "summary": summary}, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
