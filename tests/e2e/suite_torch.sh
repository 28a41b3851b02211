#!/usr/bin/env bash
# Issue 20: bench/suite_torch.py evaluates a finished suite's best kernels with --torch and
# reports fast_p against cuBLASLt, PyTorch eager and torch.compile, each over the tasks that
# have the figure. A hand-made suite.db and a stand-in `cutegen` that prints canned eval JSON
# stand in for a suite on the GPU.
set -u
: "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
S="$T/suite"; mkdir -p "$S/runs/001-a" "$S/runs/002-b" "$S/runs/003-c" "$S/runs/004-d"
for r in 001-a 002-b 003-c; do echo "// kernel $r" >"$S/runs/$r/best.cu"; done
sqlite3 "$S/suite.db" "create table tasks (id integer primary key, spec text, run_dir text, status text, correct integer);
insert into tasks values (1, 'llm/a', '/elsewhere/runs/001-a', 'done', 1);
insert into tasks values (2, 'llm/b', '$S/runs/002-b', 'done', 1);
insert into tasks values (3, 'llm/c', '$S/runs/003-c', 'done', 1);
insert into tasks values (4, 'llm/d', '$S/runs/004-d', 'done', 0);"
# the stand-in cutegen: kernel a beats everything, b beats eager only, c has no torch.compile
cat >"$T/cutegen" <<'PY'
#!/usr/bin/env python3
import json, sys
k = open(sys.argv[2]).read()
assert sys.argv[1] == "eval" and "--torch" in sys.argv and "--json" in sys.argv
fig = {"001-a": (1.2, 1.5, 1.1, "default"), "002-b": (0.8, 1.2, 0.7, "max-autotune"),
       "003-c": (1.0, 1.05, None, None)}[k.split()[-1]]
te = {"ms": 1.0, "compile_mode": fig[3]}
m = {"ms": 0.5, "speedup_vs_cublas": fig[0], "speedup_vs_torch": fig[1]}
if fig[2] is None:
    te["compile_error"] = "BackendCompilerFailed"
else:
    m["speedup_vs_torch_compile"] = fig[2]
print(json.dumps({"report": {"verdict": "pass", "metrics": m, "baseline": {"torch_eager": te}}}))
PY
chmod +x "$T/cutegen"
python3 "$REPO/bench/suite_torch.py" "$S" --cutegen "$T/cutegen" --json "$T/out.json" >"$T/out.txt" 2>"$T/err"
rc=$?
check "runs over the suite (rc $rc)" '[ $rc -eq 0 ]' || cat "$T/err"
check "fast_p vs each baseline over all 4 tasks, each over the tasks with its figure" \
    'grep -q "fast_p vs cuBLASLt       (3 of 4 tasks with a figure): fast_0 0.75, fast_0.9 0.50, fast_1 0.25," "$T/out.txt" &&
     grep -q "fast_p vs PyTorch eager  (3 of 4 tasks with a figure): fast_0 0.75, fast_0.9 0.75, fast_1 0.75, fast_1.5 0.00," "$T/out.txt" &&
     grep -q "fast_p vs torch.compile  (2 of 4 tasks with a figure): fast_0 0.50, fast_0.9 0.25, fast_1 0.25," "$T/out.txt"' || cat "$T/out.txt"
check "the table: torch.compile mode shown, the failing task and the incorrect one marked" \
    'grep -q "| llm/b | 0.5000 | 0.800x | 1.200x | 0.700x (max-autotune) |" "$T/out.txt" && grep -q "| llm/c | 0.5000 | 1.000x | 1.050x | - |" "$T/out.txt" && grep -q "| llm/d | no correct kernel |" "$T/out.txt"' || cat "$T/out.txt"
check "--json holds the same figures" \
    '[ "$(python3 -c "import json; d=json.load(open(\"$T/out.json\")); print(d[\"summary\"][\"compile\"][\"fast_p\"][\"1.0\"], d[\"tasks\"][2][\"torch_error\"])")" = "0.25 BackendCompilerFailed" ]'
python3 "$REPO/bench/suite_torch.py" "$T/nosuite" >/dev/null 2>"$T/err2"
rc=$?
check "not a suite directory: exit 3, says what to give (rc $rc)" '[ $rc -eq 3 ] && grep -q "has no suite.db" "$T/err2"'
[ $fails -eq 0 ]
