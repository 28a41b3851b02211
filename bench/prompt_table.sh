#!/usr/bin/env bash
# A scripted 10-node run's prompts, section by section (bench/prompt_sections.py): the loop on
# tests/data/loop's small ReLU task with real nvcc compiles, recorded evaluations in place of
# the GPU, and the replies of a scripted model served over the OpenAI protocol by
# tests/llm_server.py (which counts cached prompt tokens as OpenAI does: the prefix shared with
# an earlier request, from 1024 tokens on). No GPU needed.
#
# usage: bench/prompt_table.sh [CUTEGEN...]     (default: build/cutegen; give two builds for a
#        before/after table; each is run the same way)
set -u
cd "$(dirname "$0")/.."
REPO=$PWD
D=$REPO/tests/data/loop
T=$(mktemp -d)
trap 'rm -rf "$T"; [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_BASE_URL
export NO_PROXY=127.0.0.1 XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo '{}' >"$CUTEGEN_CONFIG"

# the kernels each reply leads to, and their recorded verdicts (as tests/e2e/loop.sh does)
cp "$D/k_bad.cu" "$T/k_bad.cu"
sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/' "$T/k_bad.cu" >"$T/k_good.cu"
sed 's/const int threads = 256;/const int threads = 512;/' "$T/k_good.cu" >"$T/k_fast.cu"
sed 's/const int threads = 512;/const int threads = 64;/' "$T/k_fast.cu" >"$T/k_slow.cu"
sed 's/\tif (i < n)$/\tif (i < n - 7)/' "$T/k_fast.cu" >"$T/k_wrong.cu"
R="$T/evals"; mkdir -p "$R"
sha() { sha256sum "$1" | cut -d' ' -f1; }
pass() { printf '{"verdict":"pass","message":"","metrics":{"ms":%s,"speedup_vs_baseline":%s,"roofline_fraction":%s},"runner_s":1.5}\n' "$2" "$3" "$4" >"$R/$(sha "$1").json"; }
pass "$T/k_good.cu" 0.050 1.00 0.60
pass "$T/k_fast.cu" 0.040 1.25 0.75
pass "$T/k_slow.cu" 0.060 0.83 0.50
printf '{"verdict":"incorrect","message":"7 of 4195328 elements wrong (7 never written) with '"'"'uniform'"'"' inputs (seed 0)"}\n' >"$R/$(sha "$T/k_wrong.cu").json"

# the replies: a compile error, its fix, a speedup, a regression, prose, a wrong result, its
# fix, a regression, the whole file again with a usage snippet, a regression
M="$T/replies"; mkdir -p "$M"
fence() { printf 'Change: %s\n```cuda\n' "$1"; cat "$2"; printf '```\n'; }
edit() { printf 'Change: %s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n' "$1" "$2" "$3"; }
fence "a first relu" "$T/k_bad.cu" >"$M/reply-1.txt"
edit "define the clamp inline" $'\t\ty[i] = clamp_positive(x[i]);' $'\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;' >"$M/reply-2.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M/reply-3.txt"
edit "fewer threads per block" $'\tconst int threads = 512;' $'\tconst int threads = 64;' >"$M/reply-4.txt"
echo "I think the kernel is already optimal." >"$M/reply-5.txt"
edit "skip the guard on the tail" $'\tif (i < n)' $'\tif (i < n - 7)' >"$M/reply-6.txt"
edit "restore the guard" $'\tif (i < n - 7)' $'\tif (i < n)' >"$M/reply-7.txt"
edit "fewer threads again" $'\tconst int threads = 512;' $'\tconst int threads = 64;' >"$M/reply-8.txt"
{ fence "the whole file, as it is" "$T/k_fast.cu"; printf 'Call it as:\n```cpp\nint rc = cutegen_launch(in, 1, out, 1, nullptr, 0, nullptr, 0, stream);\n```\n'; } >"$M/reply-9.txt"
edit "back to 256 threads" $'\tconst int threads = 512;' $'\tconst int threads = 256;' >"$M/reply-10.txt"

FAKE_REPLIES="$M" LLM_SERVER_LIFETIME=900 python3 tests/llm_server.py "$T/port" "$T/log" none &
spid=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$T/port")/v1"

[ $# -gt 0 ] || set -- "$REPO/build/cutegen"
i=0
for cg in "$@"; do
    i=$((i + 1))
    # a key for builds that need one even for a server of one's own (the server takes any)
    OPENAI_API_KEY=sk-any "$cg" run "$D/relu_small.json" --base-url "$URL" -m "script:run$i" \
        --recorded-evals "$R" --iters 10 --out "$T/run$i" --quiet >"$T/out$i" 2>"$T/err$i" ||
        { echo "run $i ($cg) failed:"; cat "$T/err$i"; }
    python3 bench/prompt_sections.py "$T/run$i" --first --label "$cg (run $i)"
    echo
done
