#!/usr/bin/env bash
# Issue 20 in the suite itself: `cutegen suite ... --torch` passes --torch to every `cutegen run`,
# each run judges its best kernel once more with the PyTorch baselines, and the suite's summary
# (--json, the printed one, suite.db, `cutegen report SUITE_DIR`) has fast_p against PyTorch
# eager and torch.compile beside the baseline's, over ALL tasks.
#
# Three built-in relu tasks on one compile-only worker (--gpus cpu:1): real nvcc compiles, a
# scripted model (tests/data/suite/model.py), recorded evaluations standing in for the GPU.
# How recorded evaluations answer the extra --torch evaluation (agent_judge_torch): first
# EVALS/<sha256 of the kernel>.torch.json (what --torch --record-evals writes on a GPU), else the
# node's own EVALS/<sha256>.json when it carries baseline.torch_eager (a recording made with
# eval --torch). Here task a uses its own record (eager 3.0x, torch.compile 1.5x), task b a
# .torch.json of its own whose torch.compile failed (eager 1.2x), task c has neither (no figure:
# the run says what to record).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
. "$REPO/tests/data/suite/make_tasks.sh"
D="$T/tasks"
make_tasks "$D" a:2.0 b:0.8 c:1.6
python3 - "$D" <<'EOF'
import hashlib, json, sys
d = sys.argv[1]
sha = lambda n: hashlib.sha256(open("%s/%s.cu" % (d, n), "rb").read()).hexdigest()
p = "%s/evals/%s.json" % (d, sha("a"))  # a: the node's own record carries the torch figures
r = json.load(open(p))
r["baseline"] = {"torch_eager": {"ms": 0.03, "torch": "2.5.0", "compile_ms": 0.015,
                                 "compile_mode": "default"}}
r["metrics"].update(speedup_vs_torch=3.0, speedup_vs_torch_compile=1.5)
json.dump(r, open(p, "w"))
r = json.load(open("%s/evals/%s.json" % (d, sha("b"))))  # b: its own .torch.json, compile failed
r["baseline"] = {"torch_eager": {"ms": 0.012, "torch": "2.5.0",
                                 "compile_error": "BackendCompilerFailed: inductor died"}}
r["metrics"]["speedup_vs_torch"] = 1.2
json.dump(r, open("%s/evals/%s.torch.json" % (d, sha("b")), "w"))
EOF
S="$T/suite"
RUNFLAGS=(--llm-cmd "python3 $REPO/tests/data/suite/model.py $D" --recorded-evals "$D/evals" --iters 1)

# ---- 1. the suite with --torch: the summary's fast_p against eager and torch.compile ----
"$CUTEGEN" suite "$D/list.txt" --out "$S" --gpus cpu:1 --json --torch "${RUNFLAGS[@]}" >"$T/out.json" 2>"$T/err"
rc=$?
check "the suite ran (rc $rc): a missing PyTorch figure never fails a run" '[ $rc -eq 0 ] && [ "$(jq_ "$T/out.json" "d[\"done\"], d[\"correct\"]")" = "3 3" ]' || { cat "$T/err"; cat "$T/out.json"; }
torch_flags() { for r in "$S"/runs/*/run.db; do sqlite3 "$r" "select json_extract(config_json, '$.agent.torch') from runs"; done | tr -d '\n'; }
check "--torch went to every run (stored in each run's flags, so resume keeps it)" '[ "$(torch_flags)" = 111 ]'
check "json: fast_p vs PyTorch eager over all 3 tasks (3.0x, 1.2x, none)" \
    '[ "$(jq_ "$T/out.json" "[round(d[\"fast_p_vs_torch\"][k], 4) for k in (\"0\", \"1\", \"1.5\", \"2\", \"3\")]")" = "[0.6667, 0.6667, 0.3333, 0.3333, 0.0]" ]' || jq_ "$T/out.json" 'd["fast_p_vs_torch"]'
check "json: fast_p vs torch.compile over all 3 tasks (1.5x only: b's failed, c has none)" \
    '[ "$(jq_ "$T/out.json" "[round(d[\"fast_p_vs_torch_compile\"][k], 4) for k in (\"0\", \"1\", \"1.5\")]")" = "[0.3333, 0.3333, 0.0]" ]' || jq_ "$T/out.json" 'd["fast_p_vs_torch_compile"]'
check "json: the baseline's fast_p is unchanged beside them" \
    '[ "$(jq_ "$T/out.json" "d[\"fast_p\"][\"1\"], d[\"fast_p\"][\"2\"]")" = "0.6666666666666666 0.0" ]'
check "json: how many tasks have each figure, and their geomeans" \
    '[ "$(jq_ "$T/out.json" "d[\"torch\"][\"tasks_asked\"], d[\"torch\"][\"with_eager\"], d[\"torch\"][\"with_compile\"], round(d[\"torch\"][\"geomean_speedup_vs_torch\"], 4), d[\"torch\"][\"geomean_speedup_vs_torch_compile\"]")" = "3 2 1 1.8974 1.5" ]'
check "json: per task, the figures and why one is missing" \
    '[ "$(jq_ "$T/out.json" "[(r[\"speedup_vs_torch\"], r[\"speedup_vs_torch_compile\"]) for r in d[\"results\"]]")" = "[(3.0, 1.5), (1.2, None), (None, None)]" ] &&
     jq_ "$T/out.json" "d[\"results\"][1][\"torch_error\"]" | grep -q "^torch.compile: BackendCompilerFailed: inductor died" &&
     jq_ "$T/out.json" "d[\"results\"][2][\"torch_error\"]" | grep -q "\.torch\.json.* is missing and .*record them on a GPU with --torch --record-evals"'
check "suite.db holds the figures" \
    '[ "$(sqlite3 "$S/suite.db" "select group_concat(torch || \":\" || torch_speedup || \":\" || compile_speedup, \" \") from (select * from tasks order by id)")" = "1:3.0:1.5 1:1.2:-1.0 1:-1.0:-1.0" ]'

# ---- 2. the printed summary ----
"$CUTEGEN" suite "$D/list.txt" --out "$S" --gpus cpu:1 --resume >"$T/out.txt" 2>"$T/err2"
rc=$?
check "a resumed suite (nothing left to run) prints the summary (rc $rc)" '[ $rc -eq 0 ]' || cat "$T/err2"
check "printed: fast_p vs eager and vs torch.compile, with how many tasks have each figure" \
    'grep -q "^  eager   p=0 67% p=0.5 67% p=1 67% p=1.5 33% p=2 33% p=3 0%  (vs PyTorch eager: 2 of 3 tasks have the figure)" "$T/out.txt" &&
     grep -q "^  compile p=0 33% p=0.5 33% p=1 33% p=1.5 0% p=2 0% p=3 0%  (vs torch.compile: 1 of 3 tasks have the figure)" "$T/out.txt"' || cat "$T/out.txt"
check "printed: the failed torch.compile and the missing figure, counted as not fast" \
    'grep -q "^torch     .*b.json: torch.compile: BackendCompilerFailed: inductor died (counted as not fast)" "$T/out.txt" &&
     grep -q "^torch     .*c.json: PyTorch eager: no recorded evaluation with the PyTorch baselines" "$T/out.txt"' || cat "$T/out.txt"

# ---- 3. one run: its closing lines, show, show --json ----
"$CUTEGEN" show "$S/runs/001-b" >"$T/show.txt" 2>&1
check "show: the run's PyTorch figures and the torch.compile failure" \
    'grep -q "^PyTorch: eager 0.012 ms, speedup 1.200x (torch 2.5.0); torch.compile failed: BackendCompilerFailed: inductor died" "$T/show.txt"' || cat "$T/show.txt"
"$CUTEGEN" show "$S/runs/000-a" --json >"$T/show.json"
check "show --json: the figures as stored" '[ "$(jq_ "$T/show.json" "d[\"torch\"][\"speedup_vs_torch\"], d[\"torch\"][\"speedup_vs_torch_compile\"], d[\"torch\"][\"compile_mode\"]")" = "3.0 1.5 default" ]'
"$CUTEGEN" run "$D/a.json" --out "$T/one" --torch "${RUNFLAGS[@]}" >"$T/one.txt" 2>&1
check "run --torch: the closing lines show eager and torch.compile" \
    'grep -q "^PyTorch   eager 0.03 ms (torch 2.5.0): 3.00x" "$T/one.txt" && grep -q "^PyTorch   torch.compile 0.015 ms (default): 1.50x" "$T/one.txt"' || cat "$T/one.txt"
sqlite3 "$T/one/run.db" "update runs set torch_json = NULL"
"$CUTEGEN" resume "$T/one" --iters 2 >"$T/resume.txt" 2>&1
check "resume (no --torch given) keeps the stored flag and judges the best kernel again" \
    'grep -q "^PyTorch   eager 0.03 ms (torch 2.5.0): 3.00x" "$T/resume.txt" && [ -n "$(sqlite3 "$T/one/run.db" "select torch_json from runs")" ]' || cat "$T/resume.txt"
"$CUTEGEN" run "$D/c.json" --out "$T/onec" --torch --json "${RUNFLAGS[@]}" >"$T/onec.json" 2>"$T/onec.err"
rc=$?
check "run --torch without a figure: the run's result stands (rc $rc), --json says why" \
    '[ $rc -eq 0 ] && [ "$(jq_ "$T/onec.json" "d[\"best\"][\"speedup\"], \"eager_ms\" in d[\"torch\"]")" = "1.6 False" ] && jq_ "$T/onec.json" "d[\"torch\"][\"error\"]" | grep -q "record them on a GPU"'

# ---- 4. report SUITE_DIR: Markdown and HTML ----
"$CUTEGEN" report "$S" --md "$T/s.md" --html "$T/s.html" >/dev/null 2>"$T/rep.err"
rc=$?
check "report reads the suite (rc $rc)" '[ $rc -eq 0 ]' || cat "$T/rep.err"
check "report (Markdown): fast_p against the baseline, eager and torch.compile, over all tasks" \
    'grep -q "^| the baseline | 3 of 3 | 1.00 | 1.00 | 0.67 | 0.67 | 0.00 | 0.00 |" "$T/s.md" &&
     grep -q "^| PyTorch eager | 2 of 3 | 0.67 | 0.67 | 0.67 | 0.33 | 0.33 | 0.00 |" "$T/s.md" &&
     grep -q "^| torch.compile | 1 of 3 | 0.33 | 0.33 | 0.33 | 0.00 | 0.00 | 0.00 |" "$T/s.md" &&
     grep -q "^- .st/b.: torch.compile failed: BackendCompilerFailed: inductor died (counted as not fast)" "$T/s.md"' || cat "$T/s.md"
check "report (HTML): the same table and the failures" \
    'grep -q "<tr data-against=\"compile\"><td>torch.compile</td><td class=\"num\">1 of 3</td><td class=\"num\">0.33</td>" "$T/s.html" &&
     grep -q "<li>st/b: torch.compile failed: BackendCompilerFailed: inductor died (counted as not fast)</li>" "$T/s.html" &&
     grep -q "<li>st/c: no PyTorch figure: " "$T/s.html"'

# ---- 5. a suite without --torch shows none of it ----
"$CUTEGEN" suite "$D/list.txt" --out "$T/plain" --gpus cpu:1 --json "${RUNFLAGS[@]}" >"$T/plain.json" 2>/dev/null
"$CUTEGEN" report "$T/plain" --md "$T/plain.md" >/dev/null 2>&1
check "without --torch: no figures asked, none shown" \
    '[ "$(jq_ "$T/plain.json" "d[\"fast_p_vs_torch\"], d[\"torch\"][\"tasks_asked\"]")" = "None 0" ] && ! grep -q "PyTorch eager" "$T/plain.md"'

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
