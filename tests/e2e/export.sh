#!/usr/bin/env bash
# `cutegen export` and `show --kernel` end to end, on runs made with a fake nvcc and a recorded
# evaluation (a pass on an "NVIDIA H200"). Checks: example.py has a PyTorch reference for every
# op and activation the built-in suites use and reads each scalar by the name export.json gives
# it (run against a stand-in torch module that records nothing but fails on a missing key); an
# export never overwrites a file the user changed (unless --force) but rewrites its own; the
# CMake file says which architecture the kernel was verified on, and that an --arch was not;
# --kernel-only and show --kernel give the plain kernel, which real nvcc compiles (cutegen build).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*'); do unset "$v"; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }

mkdir -p "$T/bin" "$T/rec"
cat >"$T/bin/nvcc" <<'SH'
#!/usr/bin/env bash
[ "$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.48 (fake)"; exit 0; }
while [ $# -gt 0 ]; do [ "$1" = -o ] && { : >"$2"; exit 0; }; shift; done
exit 1
SH
chmod +x "$T/bin/nvcc"
# The fake nvcc's object is empty: a fake objdump gives the object check a clean symbol table.
cat >"$T/bin/objdump" <<'SH'
#!/usr/bin/env bash
[ "$1" = -wtr ] && printf '\nSYMBOL TABLE:\n0000000000000000 g     F .text\t0000000000000010 cutegen_launch\n'
exit 0
SH
chmod +x "$T/bin/objdump"
SEED="$REPO/kernels/relu_fp32.cu"
sha=$(sha256sum "$SEED" | cut -d' ' -f1)
printf '{"verdict":"pass","message":"","device":{"name":"NVIDIA H200","cc":"9.0","index":0},"metrics":{"ms":0.05,"speedup_vs_baseline":1.0,"roofline_fraction":0.6},"runner_s":0.1}\n' >"$T/rec/$sha.json"
# mkrun TASK DIR: a run whose best kernel is the seed
mkrun() {
    PATH="$T/bin:$PATH" NVCC="$T/bin/nvcc" "$CUTEGEN" run "$1" --seed-kernel "$SEED" --recorded-evals "$T/rec" \
        --cache-dir "$T/bc" --out "$2" --quiet >/dev/null 2>"$2.err"
}

# ---- example.py covers every op, activation and dtype of the built-in JSON suites ----
mkdir -p "$T/fake/torch/nn" "$T/fake/torch/utils"
cat >"$T/fake/torch/__init__.py" <<'PY'
# a stand-in for torch: every call gives a tensor-like value; only what example.py reads is real
class T:
    def __getattr__(self, k):
        return lambda *a, **kw: T()
    def _op(self, *a):
        return T()
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = _op
    __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __neg__ = _op
float32 = float16 = bfloat16 = "dtype"
def __getattr__(name):
    return lambda *a, **kw: T()
PY
echo 'from torch import T, __getattr__' >"$T/fake/torch/nn/functional.py"
: >"$T/fake/torch/nn/__init__.py"; : >"$T/fake/torch/utils/__init__.py"
echo 'def load(*a, **kw): raise SystemExit("not here")' >"$T/fake/torch/utils/cpp_extension.py"
cat >"$T/ref.py" <<'PY'
import importlib.util, json, os, sys
d = sys.argv[1]
spec = importlib.util.spec_from_file_location("example", os.path.join(d, "example.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
inputs = [m.torch.T() for t in m.SPEC["tensors"] if not t["output"]]
scalars = {s["name"]: s["value"] for s in m.SPEC["scalars"]}
m.reference(inputs, scalars)
missing = {t["dtype"] for t in m.SPEC["tensors"]} - set(m.DTYPES)
if missing:
    raise SystemExit("no torch dtype for %s" % sorted(missing))
PY
python3 - "$REPO" >"$T/tasks.txt" <<'PY'
import json, sys
seen = set()
for suite in ("kb1", "hopper", "llm"):
    d = json.load(open("%s/tasks/%s.json" % (sys.argv[1], suite)))
    for t in d["tasks"] if isinstance(d, dict) else d:
        key = (t["op"], t.get("dtype"), t.get("activation"), json.dumps(t.get("epilogue")), t.get("mask"),
               t.get("a_layout"), t.get("b_layout"))
        if key not in seen:
            seen.add(key)
            print(t["name"])
PY
nt=0; nbad=0; badlist=
while read -r task; do
    nt=$((nt + 1))
    d="$T/ex$nt"
    mkrun "$task" "$d.run"
    if ! "$CUTEGEN" export "$d.run" --out "$d" >/dev/null 2>"$d.xerr" ||
        ! PYTHONPATH="$T/fake" python3 "$T/ref.py" "$d" >"$d.py.out" 2>&1; then
        nbad=$((nbad + 1)); badlist="$badlist $task($(cat "$d.run.err" "$d.xerr" "$d.py.out" 2>/dev/null | tail -1))"
    fi
done <"$T/tasks.txt"
check "example.py has a reference and dtypes for each of the $nt kinds of task in kb1, hopper and llm ($nbad without:$badlist)" \
    '[ $nt -ge 20 ] && [ $nbad -eq 0 ]'

# ---- never overwrite what the user changed ----
mkrun kb1/19_relu "$T/r"
D="$T/lib"
"$CUTEGEN" export "$T/r" --out "$D" >/dev/null 2>&1
check "export writes a manifest of what it wrote" \
    '[ -s "$D/.cutegen-export" ] && (cd "$D" && sha256sum --quiet -c .cutegen-export)'
"$CUTEGEN" export "$T/r" --out "$D" >/dev/null 2>"$T/x2"
rc=$?
check "export again over its own unchanged files: fine (rc $rc)" '[ $rc -eq 0 ]' || cat "$T/x2"
echo "# my change" >>"$D/example.py"
cp "$D/example.py" "$T/mine.py"
"$CUTEGEN" export "$T/r" --out "$D" >/dev/null 2>"$T/x3"
rc=$?
check "a file the user changed: export refuses, exit 2, names it, writes nothing (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "example.py" "$T/x3" && grep -q -- "--force" "$T/x3" && cmp -s "$D/example.py" "$T/mine.py"' || cat "$T/x3"
"$CUTEGEN" export "$T/r" --out "$D" --force >/dev/null 2>"$T/x4"
rc=$?
check "--force overwrites it (rc $rc)" '[ $rc -eq 0 ] && ! grep -q "# my change" "$D/example.py"'
mkdir -p "$T/other"; echo "project(mine)" >"$T/other/CMakeLists.txt"
"$CUTEGEN" export "$T/r" --out "$T/other" >/dev/null 2>"$T/x5"
rc=$?
check "a file export never wrote there: refused too (rc $rc)" \
    '[ $rc -eq 2 ] && grep -q "CMakeLists.txt" "$T/x5" && [ "$(cat "$T/other/CMakeLists.txt")" = "project(mine)" ]'

# ---- the architecture it was verified on ----
check "CMakeLists.txt: verified on sm_90a, on the GPU of the evaluation" \
    'grep -q "^# sm_90a: the architecture the kernel was verified on (NVIDIA H200, cc 9.0)" "$D/CMakeLists.txt"'
"$CUTEGEN" export "$T/r" --out "$T/a80" --arch sm_80 >/dev/null 2>"$T/x6"
rc=$?
check "--arch sm_80: CMakeLists.txt says it was NOT verified there, and a warning says so (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "verified on sm_90a (NVIDIA H200, cc 9.0), NOT on sm_80" "$T/a80/CMakeLists.txt" && ! grep -q "^# sm_80: the architecture the kernel was verified on" "$T/a80/CMakeLists.txt" && grep -q "not verified on sm_80" "$T/x6"'

# ---- the plain kernel ----
"$CUTEGEN" show "$T/r" --kernel >"$T/k_show.cu"
check "show --kernel prints the best kernel exactly as judged" 'cmp -s "$T/k_show.cu" "$SEED"'
"$CUTEGEN" show "$T/r" --kernel --node 9 >/dev/null 2>"$T/x7"
rc=$?
check "show --kernel --node 9 of a 1-node run: exit 2, says so (rc $rc)" '[ $rc -eq 2 ] && grep -q "no node 9" "$T/x7"'
"$CUTEGEN" export "$T/r" --out "$T/ko" --kernel-only >"$T/x8" 2>&1
rc=$?
check "export --kernel-only writes only NAME.cu, the kernel as verified (rc $rc)" \
    '[ $rc -eq 0 ] && cmp -s "$T/ko/k19_relu.cu" "$SEED" && [ "$(ls "$T/ko")" = k19_relu.cu ]' || { cat "$T/x8"; ls "$T/ko"; }
"$CUTEGEN" export "$T/r" --out "$D" --kernel-only >/dev/null 2>&1
"$CUTEGEN" export "$T/r" --out "$D" --arch sm_80 >/dev/null 2>"$T/x10"
rc=$?
check "a --kernel-only export beside a full one keeps the manifest of the others (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "CMakeLists.txt" "$D/.cutegen-export"' || cat "$T/x10"
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    "$CUTEGEN" build "$T/ko/k19_relu.cu" --cache-dir "$T/real-cache" >"$T/x9" 2>&1
    rc=$?
    check "the --kernel-only file passes cutegen build with the real nvcc (rc $rc)" '[ $rc -eq 0 ] && grep -q "compiled in" "$T/x9"' || tail -20 "$T/x9"
fi

# ---- a long message is stored cut after a whole word, with "..." ----
printf '// another kernel\n' | cat - "$SEED" >"$T/k2.cu"
sha2=$(sha256sum "$T/k2.cu" | cut -d' ' -f1)
long=$(python3 -c 'print(" ".join("word%d" % i for i in range(80)))')
printf '{"verdict":"incorrect","message":"%s","metrics":{}}\n' "$long" >"$T/rec/$sha2.json"
PATH="$T/bin:$PATH" NVCC="$T/bin/nvcc" "$CUTEGEN" run kb1/19_relu --seed-kernel "$T/k2.cu" --recorded-evals "$T/rec" \
    --cache-dir "$T/bc" --out "$T/long" --quiet >/dev/null 2>&1
msg=$(sqlite3 "$T/long/run.db" "select message from nodes where id = 1" 2>/dev/null)
check "a long message is stored cut after a whole word, with '...' (${msg: -24})" \
    'case "$msg" in *"...") p=${msg%...}; [ ${#msg} -le 240 ] && [ "${long#"$p"}" != "$long" ] && [ "${long:${#p}:1}" = " " ] ;; *) false ;; esac'
[ $fails -eq 0 ]
