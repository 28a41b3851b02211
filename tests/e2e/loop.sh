#!/usr/bin/env bash
# The agent loop end to end: the real cutegen binary, the real nvcc (tiny plain-CUDA kernels, so
# the compiles stay fast on small CI machines), a scripted model (the `cmd` backend running
# tests/data/loop/model.py, and the `replay` backend), and recorded runner reports standing in
# for the GPU (--recorded-evals, keyed by the sha256 of each kernel's source).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
D="$REPO/tests/data/loop"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
sql() { sqlite3 "$1/run.db" "$2"; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi

# The kernels: each derived from the last by the edit a reply makes.
cp "$D/k_bad.cu" "$T/k_bad.cu"
sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/' "$T/k_bad.cu" >"$T/k_good.cu"
sed 's/const int threads = 256;/const int threads = 512;/' "$T/k_good.cu" >"$T/k_fast.cu"
sed 's/const int threads = 512;/const int threads = 64;/' "$T/k_fast.cu" >"$T/k_slow.cu"
sed 's/\tif (i < n)$/\tif (i < n - 7)/' "$T/k_fast.cu" >"$T/k_wrong.cu"
sha() { sha256sum "$1" | cut -d' ' -f1; }
for k in good fast slow wrong; do
    cmp -s "$T/k_$k.cu" "$T/k_bad.cu" && { bad "kernel k_$k differs from k_bad"; }
done

# Recorded evaluations with the verdicts we choose.
R="$T/evals"; mkdir -p "$R"
pass() { printf '{"verdict":"pass","message":"","metrics":{"ms":%s,"speedup_vs_baseline":%s,"roofline_fraction":%s},"runner_s":1.5}\n' "$2" "$3" "$4" >"$R/$(sha "$1").json"; }
pass "$T/k_good.cu" 0.050 1.00 0.60
pass "$T/k_fast.cu" 0.040 1.25 0.75
pass "$T/k_slow.cu" 0.060 0.83 0.50
cat >"$R/$(sha "$T/k_wrong.cu").json" <<'J'
{"verdict":"incorrect","message":"7 of 4195328 elements wrong (7 never written) with 'uniform' inputs (seed 0)",
 "checks":[{"dist":"uniform","seed":0,"when":"first","ok":false,"checked":4195328,"bad":7,"nan":0,"inf":0,"unwritten":7,
   "max_err_over_tol":-1,"tolerance":{"eps_scale":0,"rtol":1e-5,"atol":1e-6},
   "where":"7 of 4195328 elements wrong (7 never written) with 'uniform' inputs (seed 0); first at [1023, 4090]; errors only in rows 1023..1023 of 1024",
   "samples":[{"index":[1023,4090],"got":"nan","want":0.25,"tol":1.2e-6}]}]}
J

fence() { printf 'Change: %s\n```cuda\n' "$1"; cat "$2"; printf '```\n'; }
edit() { printf 'Change: %s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n' "$1" "$2" "$3"; }

# ---- 1. compile error -> parsed feedback; unusable reply; edits; rollback; wrong result ----
M="$T/m1"; mkdir -p "$M"
fence "a first relu" "$T/k_bad.cu" >"$M/reply-1.txt"
echo "The kernel looks right to me; nothing to change." >"$M/reply-2.txt"
edit "define the clamp inline" $'\t\ty[i] = clamp_positive(x[i]);' $'\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;' >"$M/reply-3.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M/reply-4.txt"
edit "fewer threads per block" $'\tconst int threads = 512;' $'\tconst int threads = 64;' >"$M/reply-5.txt"
edit "skip the guard on the tail" $'\tif (i < n)' $'\tif (i < n - 7)' >"$M/reply-6.txt"
edit "an edit that does not apply" $'\tthis line is not in the kernel' $'\tnor this' >"$M/reply-7.txt"
RUN="$T/run1"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M" --recorded-evals "$R" \
    --iters 7 --out "$RUN" --json >"$T/out1.json" 2>"$T/err1"
rc=$?
check "run exits 0 with a best kernel (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || { cat "$T/err1"; cat "$T/out1.json"; }
check "the run stopped on its iteration budget" '[ "$(jq_ "$T/out1.json" "d[\"stop\"]")" = iterations ]'
check "seven nodes" '[ "$(sql "$RUN" "select count(*) from nodes")" = 7 ]'
check "five real nvcc compiles, the rest cached or not compiled" '[ "$(jq_ "$T/out1.json" "d[\"compiles\"]")" = 5 ]'
check "node 1 is a compile error" '[ "$(sql "$RUN" "select verdict from nodes where id=1")" = compile_error ]'
check "the next prompt has the parsed error" 'grep -q "kernel.cu:8:10: error: identifier \"clamp_positive\" is undefined" "$M/prompt-2.txt"'
check "the next prompt has the numbered source line" 'grep -q ">     8 | 		y\[i\] = clamp_positive(x\[i\]);" "$M/prompt-2.txt"'
check "a reply with no code is a bad_reply node" '[ "$(sql "$RUN" "select verdict||\" \"||kind from nodes where id=2")" = "bad_reply fix" ]'
check "the model hears its reply had no code block" 'grep -q "your reply had no code block" "$M/prompt-3.txt"'
check "the search/replace fix compiles and passes" '[ "$(sql "$RUN" "select verdict||\" \"||outcome from nodes where id=3")" = "pass best" ]'
check "the fixed kernel is exactly the edited source" '[ "$(sql "$RUN" "select source_sha from nodes where id=3")" = "$(sha "$T/k_good.cu")" ]'
check "stage 1 starts after the first correct kernel" '[ "$(sql "$RUN" "select stage||kind from nodes where id=4")" = 1optimize ]'
check "a faster step becomes the best" '[ "$(sql "$RUN" "select outcome from nodes where id=4")" = best ]'
check "the optimize prompt shows the current kernel" 'grep -q "const int threads = 512;" "$M/prompt-5.txt"'
check "a slower step is rolled back" '[ "$(sql "$RUN" "select outcome from nodes where id=5")" = slower ]'
check "the model is told how much slower" 'grep -q "Your change made it 50% slower: 0.06 ms vs 0.04 ms for the best; it was rolled back" "$M/prompt-6.txt"'
check "the rolled-back kernel is not what the next step edits" 'grep -q "const int threads = 512;" "$M/prompt-6.txt" && ! grep -q "threads = 64" "$M/prompt-6.txt"'
check "a wrong result is a failed step" '[ "$(sql "$RUN" "select verdict||\" \"||outcome from nodes where id=6")" = "incorrect failed" ]'
check "the fix prompt says where the errors are" 'grep -q "errors only in rows 1023..1023 of 1024" "$M/prompt-7.txt" && grep -q "\[1023, 4090\]: got NaN" "$M/prompt-7.txt"'
check "an edit that does not apply is reported precisely" 'sql "$RUN" "select message from nodes where id=7" | grep -q "edit 1 did not apply: its SEARCH text (1 lines, starting \"	this line is not in the kernel\") was not found"'
check "best.cu is the fastest verified kernel" 'cmp -s "$RUN/best.cu" "$T/k_fast.cu"'
check "every model call is stored" '[ "$(sql "$RUN" "select count(*) from llm_calls where node is not null")" = 7 ]'
check "the run row is finished" '[ "$(sql "$RUN" "select status||\" \"||best_node||\" \"||nodes from runs")" = "stopped 4 7" ]'
check "the summary reports the best" '[ "$(jq_ "$T/out1.json" "d[\"best\"][\"node\"], d[\"best\"][\"speedup\"]")" = "4 1.25" ]'

# ---- 2. budgets: tokens (replay backend with usage) ----
python3 - "$T/k_good.cu" >"$T/transcript.jsonl" <<'P'
import json, sys
k = open(sys.argv[1]).read()
for i in range(3):
    print(json.dumps({"reply": "Change: same again\n```cuda\n" + k + "```\n", "usage": {"in": 1000, "out": 500}}))
P
"$CUTEGEN" run "$D/relu_small.json" --replay "$T/transcript.jsonl" --recorded-evals "$R" \
    --max-tokens-total 2000 --out "$T/run2" --json >"$T/out2.json" 2>"$T/err2"
rc=$?
check "token budget: stops after 2 nodes (rc $rc)" '[ $rc -eq 0 ] && [ "$(jq_ "$T/out2.json" "d[\"stop\"], d[\"nodes\"], d[\"tokens_in\"]+d[\"tokens_out\"]")" = "tokens 2 3000" ]'
check "token budget: the message says which budget" 'jq_ "$T/out2.json" "d[\"stop_reason\"]" | grep -q "token budget ran out (3000 of 2000 tokens)"'
check "a pass as fast as the best is kept" '[ "$(sql "$T/run2" "select outcome from nodes where id=2")" = kept ]'
check "no recompiles of a known kernel" '[ "$(jq_ "$T/out2.json" "d[\"compiles\"]")" = 0 ]'

# ---- 3. no model configured ----
# (tests/e2e/builtin.sh runs the builtin agent; here its candidate has no recorded evaluation)
CUTEGEN_BUILTIN_DIR="$REPO/tests/data/builtin" "$CUTEGEN" run "$D/relu_small.json" --recorded-evals "$R" --out "$T/run3" >"$T/out3" 2>"$T/err3"
rc=$?
check "no model: the builtin agent runs; its kernel has no recorded evaluation: exit 4 (rc $rc)" '[ $rc -eq 4 ] && grep -q "no recorded evaluation for this kernel" "$T/err3"'
check "no model: says so, and names the backends" 'grep -q "note: no model configured (OPENAI_API_KEY, ANTHROPIC_API_KEY, --backend cmd/replay): the builtin agent" "$T/err3"'
"$CUTEGEN" run "$D/relu_small.json" --seed-kernel "$T/k_good.cu" --recorded-evals "$R" --out "$T/run3b" --json >"$T/out3b.json" 2>"$T/err3b"
rc=$?
check "no model with a seed: judges the seed only (rc $rc)" '[ $rc -eq 0 ] && [ "$(jq_ "$T/out3b.json" "d[\"stop\"], d[\"nodes\"], d[\"best\"][\"node\"]")" = "no_model 1 1" ]'

# ---- 4. a missing recorded evaluation is a clear error ----
M4="$T/m4"; mkdir -p "$M4"
fence "relu, with another comment" <(sed 's/first try/another try/' "$T/k_good.cu") >"$M4/reply-1.txt"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M4" --recorded-evals "$R" --out "$T/run4" >/dev/null 2>"$T/err4"
rc=$?
check "missing recorded evaluation: exit 4 (rc $rc)" '[ $rc -eq 4 ] && grep -q "no recorded evaluation for this kernel" "$T/err4"'

# ---- 5. kill -9 mid-run, then resume ----
M5="$T/m5"; mkdir -p "$M5"
fence "a relu" "$T/k_good.cu" >"$M5/reply-1.txt"
echo SLEEP >"$M5/reply-2.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M5/reply-3.txt"
RUN5="$T/run5"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M5" --recorded-evals "$R" \
    --iters 2 --out "$RUN5" --quiet >/dev/null 2>"$T/err5" &
pid=$!
for _ in $(seq 1 100); do [ -s "$M5/pid" ] && break; sleep 0.2; done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -s "$M5/pid" ] && kill -9 "$(cat "$M5/pid")" 2>/dev/null
check "killed run: the database opens and is intact" '[ "$(sql "$RUN5" "pragma integrity_check")" = ok ]'
check "killed run: one complete node, still running" '[ "$(sql "$RUN5" "select nodes||\" \"||status from runs")" = "1 running" ]'
"$CUTEGEN" resume "$RUN5" --json >"$T/out5.json" 2>"$T/err5r"
rc=$?
check "resume exits 0 (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || cat "$T/err5r"
check "resume continues the node count" '[ "$(sql "$RUN5" "select group_concat(id||\":\"||iteration||\":\"||kind, \" \") from nodes")" = "1:1:generate 2:2:optimize" ]'
check "resume carried the iteration budget over" '[ "$(jq_ "$T/out5.json" "d[\"stop\"], d[\"nodes\"]")" = "iterations 2" ]'
check "resume picked up the best kernel" '[ "$(sql "$RUN5" "select outcome from nodes where id=2")" = best ] && cmp -s "$RUN5/best.cu" "$T/k_fast.cu"'
check "resume is counted" '[ "$(sql "$RUN5" "select resumes||\" \"||status from runs")" = "1 stopped" ]'

# ---- 7. unusable replies: the next prompt says what was wrong and asks for what can work ----
M7="$T/m7"; mkdir -p "$M7"
echo "I would write a grid-stride loop with float4 loads." >"$M7/reply-1.txt"
fence "a relu" "$T/k_good.cu" >"$M7/reply-2.txt"
echo "Maybe try more threads? I am not sure." >"$M7/reply-3.txt"
head -c $((9 << 20)) /dev/zero | tr '\0' x >"$M7/reply-4.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M7/reply-5.txt"
"$CUTEGEN" run "$D/relu_small.json" --llm-cmd "python3 $D/model.py $M7" --recorded-evals "$R" \
    --iters 5 --out "$T/run7" --json >"$T/out7.json" 2>"$T/err7"
rc=$?
check "unusable replies: the run goes on to its budget (rc $rc)" '[ $rc -eq 0 ] && [ "$(jq_ "$T/out7.json" "d[\"stop\"], d[\"nodes\"]")" = "iterations 5" ]'
check "stage 0, unusable reply: the next prompt shows no empty failed candidate" '! grep -q "candidate that failed" "$M7/prompt-2.txt" && ! grep -q "SEARCH/REPLACE edits of this" "$M7/prompt-2.txt"'
check "stage 0, unusable reply: it says what was wrong and asks for a whole file" 'grep -q "your reply had no code block: reply with the whole kernel in one \`\`\`cuda fenced block (there is no kernel to edit yet)" "$M7/prompt-2.txt" && grep -q "Write the first kernel" "$M7/prompt-2.txt"'
check "optimize step, unusable reply: the best kernel is the current one, not a failed candidate" 'grep -q "The current kernel" "$M7/prompt-4.txt" && ! grep -q "candidate that failed" "$M7/prompt-4.txt"'
check "optimize step, unusable reply: the stage guidance stays" 'grep -q "This stage.s guidance" "$M7/prompt-4.txt" && grep -q "your reply had no code block" "$M7/prompt-4.txt"'
check "a reply over the size limit is a bad_reply node, not the end of the run" '[ "$(sql "$T/run7" "select verdict from nodes where id=4")" = bad_reply ]'
check "the model is told its reply was too large" 'grep -q "passed the cap of" "$M7/prompt-5.txt" && grep -q "Reply with the kernel only" "$M7/prompt-5.txt"'
check "after it, an edit of the best kernel applies" '[ "$(sql "$T/run7" "select verdict||\" \"||outcome from nodes where id=5")" = "pass best" ]'


# ---- 8. prompts: the fixed part first and byte-identical, marked cacheable; cached tokens recorded and priced ----
M8="$T/m8"; mkdir -p "$M8"
fence "a relu" "$T/k_good.cu" >"$M8/reply-1.txt"
edit "more threads per block" $'\tconst int threads = 256;' $'\tconst int threads = 512;' >"$M8/reply-2.txt"
edit "fewer threads per block" $'\tconst int threads = 512;' $'\tconst int threads = 64;' >"$M8/reply-3.txt"
echo "no code this time" >"$M8/reply-4.txt"
for i in 1 2 3 4; do cp "$M8/reply-$i.txt" "$M8/reply-$((i + 4)).txt"; done
echo '{"prices": {"script*": {"in": 10, "out": 20, "cached": 1, "cache_write": 12.5}}}' >"$T/config8.json"
FAKE_REPLIES="$M8" LLM_SERVER_LIFETIME=300 python3 "$REPO/tests/llm_server.py" "$T/port8" "$T/log8" none &
spid8=$!
for _ in $(seq 100); do [ -s "$T/port8" ] && break; sleep 0.1; done
URL8="http://127.0.0.1:$(cat "$T/port8")"
for be in openai anthropic; do
    base=$URL8; [ $be = openai ] && base="$URL8/v1"
    CUTEGEN_CONFIG="$T/config8.json" "$CUTEGEN" run "$D/relu_small.json" --backend $be --base-url "$base" \
        -m script:$be --recorded-evals "$R" --iters 4 --out "$T/run8-$be" --json >"$T/out8-$be.json" 2>"$T/err8-$be"
    rc=$?
    check "$be: a 4-node run against the server (rc $rc)" '[ $rc -eq 0 ] && [ "$(grep -c "\"model\": \"script:$be\"" "$T/log8")" = 4 ]'
    python3 - "$T/log8" "$be" >"$T/p8-$be.txt" <<'P'
import json, sys
log, be = sys.argv[1], sys.argv[2]
reqs = [json.loads(l)["body"] for l in open(log) if json.loads(l).get("model") == "script:" + be]
if be == "openai":
    fixed = [r["messages"][0]["content"] if r["messages"][0]["role"] == "system" else None for r in reqs]
    marked = True
    users = [r["messages"][1]["content"] for r in reqs]
else:
    fixed = [r["system"][0]["text"] for r in reqs]
    marked = all(r["system"][0].get("cache_control") == {"type": "ephemeral"} for r in reqs)
    users = [r["messages"][0]["content"] for r in reqs]
print("identical" if fixed[0] and all(f == fixed[0] for f in fixed) else "differ")
print("marked" if marked else "unmarked")
print("task-once" if all("The task\n" not in u for u in users) and "The task\n" in fixed[0] else "task-repeated")
open(log + "." + be + ".first", "w").write(fixed[0] + "\n\n" + users[0])
P
    first="$T/log8.$be.first"
    check "$be: the fixed part (system, contract, target, task) is byte-identical across calls" '[ "$(sed -n 1p "$T/p8-$be.txt")" = identical ]'
    check "$be: the task is in the fixed part only" '[ "$(sed -n 3p "$T/p8-$be.txt")" = task-once ]'
    check "$be: the first prompt names the target, toolkit, CUTLASS and the exact build line" 'grep -q "GPU architecture: sm_90a (Hopper: H100 / H200)" "$first" && grep -q "CUTLASS / CuTe: " "$first" && grep -q "nvcc -std=c++17 -O3 -Xcompiler -fPIC -gencode arch=compute_90a,code=sm_90a .* -c -o kernel.o kernel.cu" "$first" && grep -q "nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC -gencode arch=compute_90a,code=sm_90a -o kernel.so kernel.o" "$first"'
    check "$be: the first prompt gives the contract's tolerance numbers" 'grep -q "|got - want| <= 1e-06 + 1e-05 \* |want|" "$first"'
    check "$be: the first prompt states the named-namespace rule and a complete ABI example" 'grep -q "named namespace" "$first" && grep -q "kernel::scale<<<" "$first" && ! grep -q "extern \"C\"" "$first"'
    check "$be: later calls read the fixed part from the cache; the store records it" '[ "$(sql "$T/run8-$be" "select cached_tokens = 0 from llm_calls order by id limit 1")" = 1 ] && [ "$(sql "$T/run8-$be" "select min(cached_tokens) > 500 from llm_calls where id > 1")" = 1 ]'
    check "$be: --json totals the cached tokens" '[ "$(jq_ "$T/out8-$be.json" "d[\"tokens_cached\"]")" = "$(sql "$T/run8-$be" "select sum(cached_tokens) from llm_calls")" ]'
    check "$be: cached input is priced at the cached rate, cache writes at theirs" '[ "$(sql "$T/run8-$be" "select count(*) from llm_calls where abs(cost_usd - ((in_tokens - cached_tokens - coalesce(cache_write_tokens, 0)) * 10 + cached_tokens * 1 + coalesce(cache_write_tokens, 0) * 12.5 + out_tokens * 20) / 1e6) > 1e-12")" = 0 ] && [ "$(sql "$T/run8-$be" "select count(*) from llm_calls where id > 1 and cost_usd < (in_tokens * 10 + out_tokens * 20) / 1e6")" = 3 ]'
done
check "anthropic: the fixed part is marked cache_control" '[ "$(sed -n 2p "$T/p8-anthropic.txt")" = marked ]'
check "anthropic: the first call wrote the fixed part to the cache, the store records it" '[ "$(sql "$T/run8-anthropic" "select cache_write_tokens > 500 from llm_calls order by id limit 1")" = 1 ] && [ "$(sql "$T/run8-anthropic" "select max(cache_write_tokens) from llm_calls where id > 1")" = 0 ]'
kill "$spid8" 2>/dev/null


# ---- 6. a keyless local server (vLLM, SGLang, llama.cpp, Ollama) named each way is used ----
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_BASE_URL ANTHROPIC_BASE_URL
export NO_PROXY=127.0.0.1
M6="$T/m6"; mkdir -p "$M6"
fence "a relu" "$T/k_good.cu" >"$M6/reply-1.txt"
for i in 2 3 4 5; do cp "$M6/reply-1.txt" "$M6/reply-$i.txt"; done
FAKE_REPLIES="$M6" LLM_SERVER_LIFETIME=300 python3 "$REPO/tests/llm_server.py" "$T/port6" "$T/log6" none &
spid6=$!
for _ in $(seq 100); do [ -s "$T/port6" ] && break; sleep 0.1; done
URL6="http://127.0.0.1:$(cat "$T/port6")/v1"
local_run() { # NAME ENV... -- ARGS...: one node against the server; its request is the log's last line
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" "$CUTEGEN" run "$D/relu_small.json" --recorded-evals "$R" --iters 1 \
        --out "$T/run6-$name" --json "$@" >"$T/out6-$name.json" 2>"$T/err6-$name"
    echo $?
}
n_before() { [ -f "$T/log6" ] && wc -l <"$T/log6" || echo 0; }
for way in env flag backend; do
    before=$(n_before)
    case $way in
    env) rc=$(local_run env OPENAI_BASE_URL="$URL6" -- -m script:env) ;;
    flag) rc=$(local_run flag X=1 -- --base-url "$URL6" -m script:flag) ;;
    backend) rc=$(local_run backend OPENAI_BASE_URL="$URL6" -- --backend openai --model script:backend) ;;
    esac
    check "local server named by $way: the run used it (rc $rc)" '[ $rc -eq 0 ] && [ "$(n_before)" -gt "$before" ] && tail -1 "$T/log6" | grep -q "\"model\": \"script:$way\""'
    check "local server named by $way: no key was sent, none needed" 'tail -1 "$T/log6" | grep -q "\"had_key\": false"'
    check "local server named by $way: --json names the backend and model" '[ "$(jq_ "$T/out6-$way.json" "d[\"llm\"][\"backend\"], d[\"llm\"][\"model\"]")" = "openai script:$way" ]'
    check "local server named by $way: the store records them" 'sql "$T/run6-$way" "select config_json from runs" | grep -q "\"backend\":\"openai\".*\"model\":\"script:$way\""'
done
before=$(n_before)
"$CUTEGEN" resume "$T/run6-env" --iters 2 --json >"$T/out6-resume.json" 2>"$T/err6-resume"
rc=$?
check "a run on a keyless local server resumes on it (rc $rc)" '[ $rc -eq 0 ] && [ "$(n_before)" -gt "$before" ] && [ "$(jq_ "$T/out6-resume.json" "d[\"nodes\"]")" = 2 ]'
rc=$(local_run nokey X=1 -- --backend openai -m gpt-5)
check "--backend openai at the public URL with no key: an error naming the variable, not the builtin agent (rc $rc)" '[ $rc -ne 0 ] && grep -q "OPENAI_API_KEY" "$T/err6-nokey" && ! grep -q "builtin" "$T/err6-nokey"'
kill "$spid6" 2>/dev/null

[ $fails -eq 0 ]
