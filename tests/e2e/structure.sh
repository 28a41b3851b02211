#!/usr/bin/env bash
# The structure checks of docs/architecture.md: the layer check (no include from a lower layer
# of src/ to a higher one, runner/ only common/ and util/) and the dangling-path check (every
# path named in README.md, docs/ and the comments of src/ exists). Each passes on the tree and
# fails on a copy with a planted violation.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=1; }

out=$(bash "$REPO/scripts/check-layers.sh" "$REPO" 2>&1) && ok "the tree keeps its layers" ||
    bad "the tree keeps its layers: $out"
out=$(bash "$REPO/scripts/check-doc-paths.sh" "$REPO" 2>&1) && ok "no dangling path in the docs" ||
    bad "no dangling path in the docs: $out"

# a copy of what the checks read, to plant violations in
copy() {
    rm -rf "$tmp/r"
    mkdir -p "$tmp/r"
    cp -r "$REPO/src" "$REPO/runner" "$REPO/docs" "$tmp/r/"
    cp "$REPO/README.md" "$tmp/r/"
    for d in tests scripts kernels prompts bench tasks tools builtin; do
        [ -e "$REPO/$d" ] && ln -s "$REPO/$d" "$tmp/r/$d"
    done
}
# expect_layer_failure WHAT FILE LINE PATTERN: plants LINE at the top of FILE, expects the
# layer check to fail naming FILE
expect_layer_failure() {
    copy
    sed -i "1i $3" "$tmp/r/$2"
    out=$(bash "$REPO/scripts/check-layers.sh" "$tmp/r" 2>&1)
    rc=$?
    if [ $rc -eq 1 ] && grep -q "$2:1: .*$4" <<<"$out"; then ok "$1"; else bad "$1 (rc $rc: $out)"; fi
}
expect_layer_failure "util/ including cmd/cutegen.h fails the layer check" src/util/strbuf.c \
    '#include "cmd/cutegen.h"' "util/ includes cmd/"
expect_layer_failure "eval/ including llm/ (a higher layer) fails" src/eval/build.c \
    '#include "llm/llm.h"' "eval/ includes llm/"
expect_layer_failure "store/ including eval/ (the same layer) fails" src/store/store.c \
    '#include "eval/eval.h"' "store/ includes eval/"
expect_layer_failure "the runner including eval/ fails" runner/runner.c \
    '#include "eval/eval.h"' "runner/ includes eval/"
copy
touch "$tmp/r/src/loose.c"
out=$(bash "$REPO/scripts/check-layers.sh" "$tmp/r" 2>&1)
[ $? -eq 1 ] && grep -q 'src/loose.c' <<<"$out" && ok "a source file outside the layer folders fails" ||
    bad "a source file outside the layer folders fails ($out)"

copy
printf '\nSee docs/no-such-page.md and src/eval/gone.c.\n' >>"$tmp/r/docs/agent.md"
out=$(bash "$REPO/scripts/check-doc-paths.sh" "$tmp/r" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q 'docs/agent.md:.*docs/no-such-page.md does not exist' <<<"$out" &&
    grep -q 'src/eval/gone.c does not exist' <<<"$out"; then
    ok "a dangling docs/ or src/ path fails the path check"
else
    bad "a dangling docs/ or src/ path fails the path check (rc $rc: $out)"
fi
copy
sed -i '1i /* see CONVENTIONS.md */' "$tmp/r/src/cmd/main.c"
out=$(bash "$REPO/scripts/check-doc-paths.sh" "$tmp/r" 2>&1)
[ $? -eq 1 ] && grep -q 'src/cmd/main.c:1: CONVENTIONS.md' <<<"$out" &&
    ok "a page named alone that is not in docs/ fails the path check" ||
    bad "a page named alone that is not in docs/ fails the path check ($out)"
# one copy of each kernel: kernels/ is what scripts/gen-kernels.sh writes from builtin/
CUTEGEN=${CUTEGEN:-$REPO/build/cutegen}
# kernels_current FAMILY_DIR: 0 when kernels/ is what the families in FAMILY_DIR give
kernels_current() {
    rm -rf "$tmp/kernels"
    BUILTIN_DIR=$1 CUTEGEN=$CUTEGEN bash "$REPO/scripts/gen-kernels.sh" "$tmp/kernels" >"$tmp/gen.log" 2>&1 &&
        diff -r "$REPO/kernels" "$tmp/kernels" >"$tmp/gen.diff"
}
if kernels_current "$REPO/builtin"; then
    ok "kernels/ is generated from the builtin families and up to date"
else
    bad "kernels/ is generated from the builtin families and up to date (run scripts/gen-kernels.sh): $(head -c 400 "$tmp/gen.log" "$tmp/gen.diff")"
fi
mkdir -p "$tmp/fam"
cp "$REPO"/builtin/*.cu "$tmp/fam/"
sed -i 's/^ \* Not for: broadcasting/ * (changed) Not for: broadcasting/' "$tmp/fam/elementwise.cu"
if ! kernels_current "$tmp/fam" && grep -q 'relu_fp32.cu' "$tmp/gen.diff"; then
    ok "a family changed without regenerating kernels/ fails the check"
else
    bad "a family changed without regenerating kernels/ fails the check ($(head -c 300 "$tmp/gen.diff"))"
fi
exit $failed
