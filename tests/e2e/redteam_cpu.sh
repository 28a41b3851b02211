#!/usr/bin/env bash
# The red-team kernels that can be caught without a GPU are caught here, in CI, with the real
# nvcc and binutils:
#   - every manifest entry expecting 'policy' gets that verdict from `cutegen eval` (exit 1, no
#     .so built), and the message names each symbol the entry lists ("symbols");
#   - every class-1 entry (forbidden libraries and OS calls by routes the source scan cannot
#     see) is also rejected by the object check alone (`cutegen build --no-source-scan`), with
#     an object rule whose message names each symbol: the object check is the one that decides;
#   - every other entry passes both checks and links, so on a GPU the runner judges it;
#   - the example kernels (kernels/*.cu) and the example of docs/kernel-abi.md pass both checks
#     (CUTEGEN_SKIP_KERNEL_BUILDS=1 skips the slow GEMM ones).
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CG=${CUTEGEN:-$REPO/build/cutegen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
python3 -c 'import json,sys; [print(e["file"], e["task"], e["expect"], e.get("class", 0), ",".join(e.get("symbols", [])) or "-") for e in json.load(open(sys.argv[1]))]' \
    "$REPO/tests/redteam/manifest.json" | sort -u -k1,1 > "$tmp/list"
# names_all FILE.json FIELD SYMBOLS: every symbol of the comma list appears in the field (quoted,
# in an object rule's message, for FIELD=violations)
names_all() {
    python3 - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
field, syms = sys.argv[2], sys.argv[3].split(",")
if field == "violations":
    text = "\n".join(v["rule"] + ": " + v["message"] for v in d.get("violations", [])
                     if v["rule"] in ("symbol-allowlist", "no-syscall", "no-interposing",
                                      "no-load-time-code"))
else:
    text = d.get(field, "")
# the object check quotes the symbol; the source scan's messages name it as a word
word = lambda s: re.search(r"(?<![A-Za-z0-9_])" + re.escape(s) + r"(?![A-Za-z0-9_])", text)
missing = [s for s in syms if s != "-" and
           (("'%s" % s) not in text if field == "violations" else not word(s))]
if missing:
    print("missing " + " ".join(missing) + " in: " + text[:600].replace("\n", " | "))
    sys.exit(1)
PY
}
while read -r file task expect class syms; do
    k="$REPO/tests/redteam/$file"
    t="$REPO/$task"; [ -f "$t" ] || t=$task
    if [ "$expect" = policy ]; then
        "$CG" eval "$k" --task "$t" --json --cache-dir "$tmp/cache" >"$tmp/out.json" 2>"$tmp/err"
        rc=$?
        v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$tmp/out.json" 2>/dev/null)
        if [ "$rc" = 1 ] && [ "$v" = policy ] && ! grep -q '"build"' "$tmp/out.json" &&
            why=$(names_all "$tmp/out.json" message "$syms"); then
            ok "red team $file rejected by the policy (${syms//,/ })"
        else
            bad "red team $file: exit $rc, verdict '$v' (want policy) ${why:-}"
        fi
        [ "$class" = 1 ] || continue
        "$CG" build "$k" --no-source-scan --json --cache-dir "$tmp/cache" >"$tmp/b.json" 2>"$tmp/err"
        rc=$?
        st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stage"])' "$tmp/b.json" 2>/dev/null)
        if [ "$rc" = 1 ] && [ "$st" = policy ] && why=$(names_all "$tmp/b.json" violations "$syms"); then
            ok "red team $file rejected by the object check alone (${syms//,/ })"
        else
            bad "red team $file, object check alone: exit $rc, stage '$st' ${why:-} $(head -c 300 "$tmp/err")"
        fi
    else
        if "$CG" build "$k" --cache-dir "$tmp/cache" >"$tmp/out" 2>&1; then
            ok "red team $file passes the policy and the object check, and links (the runner must judge it)"
        else
            bad "red team $file does not build: $(tail -3 "$tmp/out")"
        fi
    fi
done < "$tmp/list"

# the legitimate examples pass both checks
awk '/^```c\+\+/{n++; inb=1; next} /^```/{inb=0} inb && n==3 {print}' "$REPO/docs/kernel-abi.md" >"$tmp/doc_scalar_mul.cu"
examples=("$tmp/doc_scalar_mul.cu" "$REPO/kernels/relu_fp32.cu")
[ -n "${CUTEGEN_SKIP_KERNEL_BUILDS:-}" ] ||
    examples+=("$REPO/kernels/softmax_fp32.cu" "$REPO/kernels/gemm_fp32_sm80.cu" "$REPO/kernels/gemm_bf16_sm90.cu")
for k in "${examples[@]}"; do
    if ! grep -q cutegen_launch "$k"; then
        bad "example $k: not a kernel (did docs/kernel-abi.md move its example?)"
    elif "$CG" build "$k" --cache-dir "$tmp/cache" >"$tmp/out" 2>&1; then
        ok "example $(basename "$k") passes the policy and the object check, and links"
    else
        bad "example $k does not build: $(tail -5 "$tmp/out")"
    fi
done
[ "$fails" -eq 0 ]
